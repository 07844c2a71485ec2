#pragma once
// How one sample of a case is taken. The measurement's stages (measure.hpp) decide how many
// samples and how many launches each; a sampler turns launches into seconds. fenced_timer, the
// wall clock between two fences, is the first; a device model is another (it runs the same
// launches and returns modelled seconds), and the stages do not change.
#include "cases/registry.hpp"
#include "measure/rank_agreement.hpp"
#include "results/results.hpp"

#include <Kokkos_Core.hpp>

#include <string>

namespace kcnn::bench {

class sampler {
 public:
  virtual ~sampler() = default;
  // What the rows' times are, for the context (e.g. "fenced_timer").
  virtual const char* name() const = 0;
  // One sample: seconds per launch over `launches` back-to-back c.run() calls, every rank in
  // `ranks` starting together. Untimed work (before_run, a flush) is the caller's, before it.
  virtual double sample(bench_case& c, int launches, rank_agreement& ranks, const std::string& what) const = 0;
  // A device model (the gpu-model build) models instead of timing: the case is validated, its
  // one traced run gives the row's model figures, and nothing is timed.
  virtual bool models() const { return false; }
  // The model's figures of the last sample of case `c` (models() only).
  virtual model_figures last_model(const bench_case& c) const {
    (void)c;
    return {};
  }
  // The model's part of the run's context, as JSON text (empty: none).
  virtual std::string context_json() const { return {}; }
};

// The harness's one timed region: fence (nothing else in flight when the clock starts),
// at_start() (e.g. a barrier with the other ranks), start the clock, `launches` back-to-back
// calls of launch(), fence (the kernels have finished when the clock stops): seconds per launch.
// Every timing in kcnn-bench (cases, ceilings, overheads, launch costs) goes through it.
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

// A sample is the wall-clock time of timed_sample: what the device did, with the launch and fence
// overhead included once per sample.
class fenced_timer final : public sampler {
 public:
  const char* name() const override { return "fenced_timer"; }
  double sample(bench_case& c, int launches, rank_agreement& ranks, const std::string& what) const override;
};

// How many back-to-back launches one sample times. One, unless a fenced launch (one_launch_s,
// overhead included) is so short that the fence-and-timer overhead would be more than 1 % of
// it and the case may run back to back: then enough launches that a sample lasts 100x the
// overhead, at most max_launches (nvbench's batch measurement). The row's time is the sample
// divided by the launches.
int launches_per_sample(double one_launch_s, double overhead_s, bool back_to_back, int max_launches);

// What one timed repetition costs with nothing in it: fence, timer start, an empty one-element
// kernel, fence, timer read (median of 200). Recorded in the context; a one-launch sample
// includes it once, a batched sample once per `launches` launches.
double timer_overhead_seconds();

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

}  // namespace kcnn::bench
