#pragma once
// The measurement of one case, in named stages (as nvbench's check, warm-up, trials, summary):
//   make -> set up -> validate -> [profiled run] -> [warm up -> choose launches per sample ->
//   sample until the stopping rule] -> summarise into the row (--profile-only: validate, the
//   profiled run, and a row without times).
// A failure at any stage ends it there with the row's status. How a sample is taken is the
// sampler's (sampler.hpp); what is agreed with other ranks timing the case at once is the
// rank_agreement's (rank_agreement.hpp): neither is decided here. Kernels never time themselves.
#include "cases/registry.hpp"
#include "measure/rank_agreement.hpp"
#include "measure/sampler.hpp"
#include "results/results.hpp"

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
  bool profile = false;         // --profile: one run per case inside a profiler's capture range
  bool profile_only = false;    // --profile-only: that run and no timing
  int slow_reps = 0;            // > 0: a case whose one launch exceeds slow_s is timed at most this often
  double slow_s = 0.01;
};

// Everything one measurement uses besides the case: the run's settings and policy, the seed of
// the fill, the cache flush (--cold; nullptr: warm), how a sample is taken and who agrees.
struct measurement_env {
  const case_settings& settings;
  const timing_policy& policy;
  std::uint64_t seed;
  const cache_flusher* flusher;
  const bench::sampler& sampler;
  rank_agreement& ranks;
};

// The row of a case before it runs: identity, layer and axes.
result_row case_row(const planned_case& pc, const std::string& suite, bool cold);

// True when a warm case's working set (its minimal bytes plus workspace) fits in the last-level
// cache (L2 on a GPU): its GB/s may then exceed the DRAM bandwidth and its roofline_pct 100.
bool fits_in_cache(double bytes, double workspace_bytes, double cache_bytes);

// Runs the stages and completes the row: cost (read after setup), status, error, times and
// note. Exceptions become status `error`, or `skipped` when the device is out of memory.
void measure_case(const planned_case& pc, const measurement_env& env, result_row& row);

// Kokkos reports a failed allocation as a std::bad_alloc or, depending on the version, a
// std::runtime_error: "Kokkos failed to allocate memory for label ..." (3.x), "Kokkos ERROR:
// Host memory space failed to allocate 1024 TiB (label=...)" (4.6).
bool out_of_memory(const std::exception& e);

}  // namespace kcnn::bench
