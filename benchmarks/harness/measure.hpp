#pragma once
// Measurement of one case: its life cycle (make, set up, validate, warm up, time), fenced and
// timed here and nowhere else, and the result row it produces.
#include "options.hpp"
#include "registry.hpp"
#include "results.hpp"
#include "selection.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <exception>
#include <string>

namespace kcnn::bench {

// When to stop repeating (from the command line; quick mode lowers these).
struct timing_policy {
  int warmup = 2, min_reps = 10, max_reps = 10000;
  double budget_s = 1.0;        // per case, for the timed repetitions
  double target_spread = 0.01;  // stop once stddev/mean falls below this
  double noisy_spread = 0.05;   // a row whose final stddev/mean exceeds this is marked noisy
  bool quick = false;           // a validation run over budget is the case's one sample
  double overhead_s = 0;        // timer_overhead_seconds() of this run; 0: never batch launches
  int max_launches = 1000;      // launches per sample at most
  // Set when several ranks time the case together (--mpi replicate): measure_case then agrees
  // with them on validation, batching and stopping, and starts every sample after a barrier.
  sample_sync* sync = nullptr;
  static timing_policy from(const options& o);
};

// The harness's one timed sample: fence (nothing else in flight when the clock starts),
// at_start() (e.g. a barrier with the other ranks), start the clock, `launches` back-to-back
// calls of launch(), fence (the kernels have finished when the clock stops): seconds per launch.
// Every timing in kcnn-bench (cases, ceilings, overheads) goes through it.
struct nothing_at_start {
  void operator()() const {}
};
template <class Launch, class AtStart = nothing_at_start>
double timed_sample(int launches, const Launch& launch, const AtStart& at_start = {}) {
  Kokkos::fence();
  at_start();
  Kokkos::Timer t;
  for (int i = 0; i < launches; ++i) launch();
  Kokkos::fence();
  return t.seconds() / launches;
}

// How many back-to-back launches one sample times. One, unless a fenced launch (one_launch_s,
// overhead included) is so short that the fence-and-timer overhead would be more than 1 % of
// it and the case may run back to back: then enough launches that a sample lasts 100x the
// overhead, at most max_launches (nvbench's batch measurement). The row's time is the sample
// divided by the launches.
int launches_per_sample(double one_launch_s, double overhead_s, bool back_to_back, int max_launches);

// Evicts caches between repetitions (--cold): reads a buffer of at least 4x the last-level
// cache (L2 on GPUs), and 64 MiB, in the default execution space. It only reads, so no dirty
// line is left to be written back during the timed kernel.
class cache_flusher {
 public:
  explicit cache_flusher(double cache_bytes);
  void operator()() const;
  std::size_t bytes() const { return buf_.span() * sizeof(float); }
  // The buffer it reads (tests check that a flush leaves it as it was).
  const Kokkos::View<float*>& buffer() const { return buf_; }

 private:
  Kokkos::View<float*> buf_;
  Kokkos::View<int> found_marker_;
};

// The row of a case before it runs: identity, layer and axes.
result_row case_row(const planned_case& pc, const std::string& suite, bool cold);

// True when a warm case's working set (its minimal bytes plus workspace) fits in the last-level
// cache (L2 on a GPU): its GB/s may then exceed the DRAM bandwidth and its roofline_pct 100.
bool fits_in_cache(double bytes, double workspace_bytes, double cache_bytes);

// Runs one case and completes its row: cost (read after setup), status, error, times and note.
// Exceptions become status `error`, or `skipped` when the device is out of memory.
void measure_case(const planned_case& pc, const case_settings& settings, const timing_policy& policy,
                  std::uint64_t seed, const cache_flusher* flusher, result_row& row);

// What one timed repetition costs with nothing in it: fence, timer start, an empty one-element
// kernel, fence, timer read (median of 200). Recorded in the context; a one-launch sample
// includes it once, a batched sample once per `launches` launches.
double timer_overhead_seconds();

// What one back-to-back launch of a one-element kernel carrying conv2d's constant capacity
// (7680 floats) by value costs, through kcnn::parallel_for_constant (median over samples of 10).
// On CUDA each such launch uploads its ~31 KB driver to constant memory and waits on the host for
// the previous one: the constant rows' time includes this per launch. Recorded in the context.
double constant_launch_seconds();

// Kokkos reports a failed allocation as a std::bad_alloc or, depending on the version, a
// std::runtime_error: "Kokkos failed to allocate memory for label ..." (3.x), "Kokkos ERROR:
// Host memory space failed to allocate 1024 TiB (label=...)" (4.6).
bool out_of_memory(const std::exception& e);

}  // namespace kcnn::bench
