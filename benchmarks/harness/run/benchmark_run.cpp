#include "run/benchmark_run.hpp"

#include "device/context.hpp"
#include "measure/profiler_range.hpp"
#include "measure/stop.hpp"
#include "modes/modes.hpp"
#include "results/format.hpp"
#include "run/calibration.hpp"
#include "run/case_driver.hpp"
#include "run/job_coordination.hpp"
#include "run/model_session.hpp"
#include "run/mpi_job.hpp"
#include "run/result_files.hpp"

#include <algorithm>
#include <iostream>
#include <memory>

namespace kcnn::bench {

namespace {

// A layer whose operands alone exceed the device's memory is an input error, found before
// anything is written (cost() before setup: operand bytes plus the workspace estimate).
bool fits_device(const std::vector<planned_case>& cases, const run_context& ctx, const case_settings& settings) {
  if (ctx.device.memory_bytes <= 0) return true;
  for (const auto& c : cases) {
    // A case that cannot even be made (a study sized from free memory, say) is not an input
    // error of the whole run: the run records it as status error and goes on.
    case_cost cost;
    try {
      cost = c.variant->make(c.spec, settings)->cost();
    } catch (const std::exception&) {
      continue;
    }
    if (cost.bytes + cost.workspace_bytes > ctx.device.memory_bytes) {
      std::cerr << "kcnn-bench: error: " << c.spec.file << ":" << c.spec.line << ": field 'n': layer '" << c.spec.layer
                << "' needs " << fixed((cost.bytes + cost.workspace_bytes) / 1073741824.0, 1)
                << " GiB for its operands (" << c.key << "), more than the device's "
                << fixed(ctx.device.memory_bytes / 1073741824.0, 1) << " GiB\n";
      return false;
    }
  }
  return true;
}

std::string joined_suite_name(const options& opt, const std::vector<suite>& suites) {
  if (std::find(opt.suites.begin(), opt.suites.end(), "all") != opt.suites.end()) return "all";
  std::string s;
  for (const auto& su : suites) s += (s.empty() ? "" : "+") + su.name;
  return s;
}

}  // namespace

int run_benchmarks(int argc, char** argv, const options& opt, const std::vector<suite>& suites,
                   std::vector<planned_case> cases, std::size_t cases_in_all) {
  mpi_job& job = mpi_job::instance();
  const bool rank0 = job.rank() == 0;
  std::vector<std::string> google_benchmark_args = opt.passthrough;
  if (!init_google_benchmark(google_benchmark_args)) return 2;
  run_context ctx = make_context(argc, argv, joined_suite_name(opt, suites));
  share_run_id(job, ctx);
  describe_modelled_device(opt, ctx);
  // The run's one sampler: every figure of the run is taken through it (measure/sampler.hpp).
  const std::unique_ptr<sampler> timer = make_sampler(opt);
  case_settings settings;
  settings.timer = timer.get();
  settings.device_l2_bytes = ctx.device.l2_or_llc_bytes;
  settings.uvm_cap_bytes = opt.uvm_cap_gib * double(1 << 30);
  settings.references = std::make_shared<reference_cache>();
  // Every rank checks its own cases; the job stops if any rank's do not fit.
  if (job.agree_max(fits_device(cases, ctx, settings) ? 0 : 1, "the memory check") != 0) return 2;
  row_outputs out;
  if (!open_outputs(opt, ctx, job, out)) return 2;
  add_google_benchmark_context(ctx);
  const run_calibration cal = calibrate(opt, ctx, *timer, rank0);
  if ((opt.profile || opt.profile_only) && !profiler_capture_available() && rank0)
    std::cerr << "kcnn-bench: warning: --profile: this build has no device profiler capture range (a CUDA build "
                 "has); each case's extra run is made outside any\n";
  job.barrier("the start of the cases");

  benchmark_run run(opt, std::move(cases), [&](const result_row& r) { out.write(r); }, ctx, cal, settings, job, cases_in_all,
                    *timer);
  run.run_all();
  if (rank0) run.summary(std::cout);
  job_totals totals;
  totals.counts = run.counts();
  if (opt.network && !stop_requested())
    totals.network_failures = run_network_plans(opt, suites, run.measured(), *out.writer, settings, *timer);
  totals.interrupted_by = stop_requested();
  if (job.active()) merge_ranks(job, out, ctx, cal, totals);

  const int failures = job.agree_max(run.counts().failures() + unsigned(totals.network_failures) > 0 ? 1 : 0, "the verdict");
  const int rc = job.agree_max(close_results(opt, job, out, cal, totals, *timer), "closing the results");
  if (rc) return rc;
  if (totals.interrupted_by) {
    if (rank0)
      std::cerr << "kcnn-bench: interrupted by signal " << totals.interrupted_by << ": " << totals.counts[case_status::ok]
                << " cases finished and written; --resume " << out.final_path << " runs the rest\n";
    return 128 + totals.interrupted_by;
  }
  return failures > 0 ? 1 : 0;
}

}  // namespace kcnn::bench
