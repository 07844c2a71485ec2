#pragma once
// The benchmark run's driver: every planned case through Google Benchmark (one iteration whose
// manual time is the harness's median), measured by measure_case, one row each.
#include "cli/options.hpp"
#include "device/context.hpp"
#include "measure/clock.hpp"
#include "measure/measure.hpp"
#include "measure/sampler.hpp"
#include "modes/modes.hpp"
#include "results/results.hpp"
#include "results/status.hpp"
#include "run/calibration.hpp"
#include "run/mpi_job.hpp"

#include <benchmark/benchmark.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace kcnn::bench {

// One timed run of a case: by `ranks` ranks at once (--mpi replicate), else by this rank alone.
struct run_item {
  std::size_t case_index = 0;
  int ranks = 1;
};

// Every planned case through Google Benchmark, one row each to `sink`, a progress line each
// (rank 0's, with MPI).
class benchmark_run {
 public:
  benchmark_run(const options& o, std::vector<planned_case> cases, std::function<void(const result_row&)> sink,
                const run_context& ctx, const run_calibration& cal, const case_settings& settings, mpi_job& job,
                std::size_t cases_in_all, const sampler& timer);

  // Registers every item with Google Benchmark and runs them; SIGINT and SIGTERM (measure/stop.hpp)
  // stop the run after the case in progress.
  void run_all();

  void summary(std::ostream& os) const;

  const status_counts& counts() const { return counts_; }
  const std::vector<measured_case>& measured() const { return measured_; }

 private:
  bool replicate() const { return opt_.mpi == mpi_mode::replicate; }
  void progress(std::size_t i);
  void run_item_guarded(benchmark::State& st, std::size_t i);
  void run_one(benchmark::State& st, std::size_t i);
  void record(benchmark::State& st, const planned_case& pc, result_row& row);

  const options& opt_;
  const timing_policy policy_;
  const sampler& sampler_;
  std::vector<planned_case> cases_;
  std::vector<run_item> items_;
  std::function<void(const result_row&)> sink_;
  const run_context& ctx_;
  const ceilings& ceil_;
  const std::vector<run_calibration::measured_cost>& launch_costs_;
  const case_settings settings_;
  mpi_job& job_;
  std::size_t cases_in_all_;
  std::unique_ptr<cache_flusher> flusher_;
  std::vector<result_row> rows_;
  status_counts counts_;
  std::vector<measured_case> measured_;
  budget_clock clock_;
  std::size_t done_ = 0;
};

// Google Benchmark's own flags (--benchmark_*); false when one is not recognised. Google Benchmark
// keeps pointers into the argv it is given (its context prints argv[0]), so `args` (the caller's)
// must outlive the run.
bool init_google_benchmark(std::vector<std::string>& args);

void add_google_benchmark_context(const run_context& ctx);

}  // namespace kcnn::bench
