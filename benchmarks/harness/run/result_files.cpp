#include "run/result_files.hpp"

#include "measure/ceilings.hpp"

#include <exception>
#include <iostream>

namespace kcnn::bench {

bool open_outputs(const options& opt, const run_context& ctx, mpi_job& job, row_outputs& out) {
  std::string error;
  try {
    if (job.rank() == 0)
      out.writer = opt.resume.empty() ? std::make_unique<results_writer>(opt.out, ctx)
                                      : std::make_unique<results_writer>(results_writer::append_to{opt.resume}, ctx);
  } catch (const std::exception& e) {
    error = e.what();
  }
  out.final_path = job.broadcast(out.writer ? out.writer->final_path() : std::string(), "the results file name");
  try {
    if (job.rank() != 0 && !out.final_path.empty())
      out.rank_rows = std::make_unique<rank_rows_file>(out.final_path, job.rank(), ctx);
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (job.agree_max(error.empty() ? 0 : 1, "the results files") == 0) return true;
  if (!error.empty()) std::cerr << "kcnn-bench: error: " << error << "\n";
  return false;
}

namespace {

json timing_json(const options& opt, const run_calibration& cal, const sampler& timer) {
  const timing_policy p = timing_policy_from(opt, cal.overhead_s, timer);
  json timing = json::object();
  timing.set("sampler", timer.name())
      .set("warmup", p.warmup)
      .set("min_reps", p.min_reps)
      .set("max_reps", p.max_reps)
      .set("budget_s", p.budget_s)
      .set("target_rel_spread", p.target_spread)
      .set("noisy_rel_spread", p.noisy_spread)
      .set("timer_overhead_us", cal.overhead_s * 1e6)
      .set("device_timer_floor_us", cal.device_floor_s >= 0 ? json(cal.device_floor_s * 1e6) : json());
  if (timer.times_device()) timing.set("device_timer", json::raw(timer.context_json()));
  for (const auto& c : cal.launch_costs_s) timing.set(c.name + "_us", c.seconds * 1e6);
  return timing.set("quick", p.quick)
      .set("cache", opt.cold ? "flushed" : "warm")
      .set("seed", static_cast<unsigned long long>(opt.seed))
      .set("fence", "Kokkos::fence() before and after every timed sample")
      .set("launches",
           "a sample is 1 launch, or (cases that may run back to back, warm) enough back-to-back launches that "
           "it lasts 100x timer_overhead_us, at most " + std::to_string(p.max_launches) +
               "; times are per launch; the row's launches column says which");
}

}  // namespace

int close_results(const options& opt, mpi_job& job, row_outputs& out, const run_calibration& cal,
                  const job_totals& t, const sampler& timer) {
  if (job.rank() != 0) return 0;
  try {
    json cases = json::object();
    for (case_status s : all_statuses()) cases.set(name(s), t.counts[s]);
    json extra = json::object();
    extra.set("timing", timing_json(opt, cal, timer))
        .set("ceilings", ceilings_json(cal.ceil))
        .set("cases", cases)
        .set("interrupted", t.interrupted_by != 0)
        .set("gpu_clocks", json::object()
                               .set("start", gpu_clocks_json(cal.clocks_start))
                               .set("end", gpu_clocks_json(read_gpu_clocks())));
    if (!opt.resume.empty()) extra.set("resumed", opt.resume);
    if (timer.models()) extra.set("model", json::raw(timer.context_json()));
    if (job.active())
      extra.set("mpi", json::object()
                           .set("mode", opt.mpi == mpi_mode::shard ? "shard" : "replicate")
                           .set("ranks", job.size())
                           .set("timeout_s", opt.mpi_timeout_s))
          .set("ranks", t.rank_contexts);
    out.writer->close(extra);
  } catch (const std::exception& e) {
    std::cerr << "kcnn-bench: error: " << e.what() << "\n";
    return 1;
  }
  std::cerr << "kcnn-bench: results in " << out.writer->final_path() << " (context " << out.writer->json_path() << ")\n";
  return 0;
}

}  // namespace kcnn::bench
