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
  static timing_policy from(const options& o);
};

// Evicts caches between repetitions (--cold): writes a buffer several times the last-level
// cache (L2 on GPUs) in the default execution space.
class cache_flusher {
 public:
  explicit cache_flusher(double cache_bytes);
  void operator()() const;

 private:
  Kokkos::View<float*> buf_;
};

// The row of a case before it runs: identity, layer and axes.
result_row case_row(const planned_case& pc, const std::string& suite, bool cold);

// Runs one case and completes its row: cost (read after setup), status, error, times and note.
// Exceptions become status `error`, or `skipped` when the device is out of memory.
void measure_case(const planned_case& pc, const case_settings& settings, const timing_policy& policy,
                  std::uint64_t seed, const cache_flusher* flusher, result_row& row);

// What one timed repetition costs with nothing in it: fence, timer start, an empty one-element
// kernel, fence, timer read (median of 200). Recorded in the context; a case's time includes it.
double timer_overhead_seconds();

// Kokkos reports a failed allocation as a std::bad_alloc or, depending on the version, a
// std::runtime_error: "Kokkos failed to allocate memory for label ..." (3.x), "Kokkos ERROR:
// Host memory space failed to allocate 1024 TiB (label=...)" (4.6).
bool out_of_memory(const std::exception& e);

}  // namespace kcnn::bench
