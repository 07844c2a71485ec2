#include "run/benchmark_run.hpp"

#include "device/context.hpp"
#include "device/gpu_clocks.hpp"
#include "measure/ceilings.hpp"
#include "measure/clock.hpp"
#include "measure/measure.hpp"
#include "measure/profiler_range.hpp"
#include "measure/stop.hpp"
#if defined(KCNN_GPU_MODEL)
#include "measure/model_sampler.hpp"
#endif
#include "modes/modes.hpp"
#include "results/format.hpp"
#include "results/rank_rows.hpp"
#include "results/results.hpp"
#include "run/mpi_job.hpp"

#include <Kokkos_Core.hpp>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

namespace kcnn::bench {

namespace {

timing_policy timing_policy_from(const options& o, double overhead_s, const sampler& timer) {
  timing_policy p;
  p.warmup = o.warmup;
  p.min_reps = o.min_reps;
  p.max_reps = o.max_reps;
  p.budget_s = o.budget_s;
  p.target_spread = o.target_spread;
  p.noisy_spread = o.noisy_spread;
  p.quick = o.quick;
  p.overhead_s = overhead_s;
  p.profile = o.profile;
  // A device timer holds a batch only up to its queue-safe size: batches no larger.
  if (timer.max_launches() > 0) p.max_launches = std::min(p.max_launches, timer.max_launches());
  p.profile_only = o.profile_only;
  p.slow_reps = o.slow_reps;
  p.slow_s = o.slow_ms * 1e-3;
  return p;
}

// What the run measures once, before the cases; recorded in the context.
struct run_calibration {
  gpu_clocks clocks_start;
  ceilings ceil;
  double overhead_s = 0;          // the host clock's floor (batching amortises it)
  double device_floor_s = -1;     // the device timer's figure of the same empty kernel (< 0: none)
  struct measured_cost {
    std::string name;
    space_axis space;
    double seconds;
  };
  std::vector<measured_cost> launch_costs_s;  // registry's launch_costs(), measured
};

run_calibration calibrate(const options& opt, const run_context& ctx, const sampler& timer, bool speak) {
  run_calibration cal;
  cal.clocks_start = read_gpu_clocks();
  if (cal.clocks_start.available && speak)
    std::cerr << "kcnn-bench: GPU clocks at the start: SM " << cal.clocks_start.sm_mhz << " of "
              << cal.clocks_start.sm_max_mhz << " MHz, memory " << cal.clocks_start.memory_mhz << " MHz, "
              << cal.clocks_start.temperature_c << " C\n";
  // The gpu-model build models a GPU: the host's ceilings would describe the wrong machine.
#if !defined(KCNN_GPU_MODEL)
  const bool want_ceilings = !opt.no_ceilings && !opt.profile_only;
#else
  const bool want_ceilings = false;
#endif
  if (want_ceilings) {
    cal.ceil = measure_ceilings(ctx.device.l2_or_llc_bytes, timer);
    if (stop_requested()) cal.ceil = {};  // cut short: not ceilings (the cases are skipped too)
    else if (speak) print_ceilings(std::cerr, cal.ceil, ctx.blas);
  }
  // --profile-only times nothing: no calibration either (a profiler sees only the cases' runs).
  if (opt.profile_only) return cal;
  const timer_floor floor = timer_overhead(timer);
  cal.overhead_s = floor.host_s;
  cal.device_floor_s = floor.device_s;
  for (const auto& c : registry::instance().launch_costs())
    cal.launch_costs_s.push_back({c.name, c.space, c.seconds(timer)});
  return cal;
}

// The run's sampler: the device model in the gpu-model build (it models, never times), else the
// device-event timer on CUDA builds (the fenced timer with --host-timer) and the fenced timer on
// host backends.
std::unique_ptr<sampler> make_sampler(const options& o) {
#if defined(KCNN_GPU_MODEL)
  model::trace_limits limits;
  limits.max_accesses_per_launch = std::size_t(o.model_trace_millions * 1e6);
  return std::make_unique<device_model_sampler>(o.model_devices, o.model_device, limits);
#else
  device_timer_settings s;
  s.hold_timeout_s = o.hold_timeout_ms * 1e-3;
  return make_timing_sampler(o.host_timer, s);
#endif
}

// Where this process's rows go: rank 0's results file, or (other MPI ranks) its rank file.
struct row_outputs {
  std::unique_ptr<results_writer> writer;
  std::unique_ptr<rank_rows_file> rank_rows;
  std::string final_path;  // rank 0's results file, on every rank
  void write(const result_row& r) {
    if (writer) writer->write(r);
    else rank_rows->write(r);
  }
};

// Opens rank 0's results file (new, or --resume's) and the other ranks' rank files; false (and
// the message on stderr) when any rank cannot.
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
                std::size_t cases_in_all, const sampler& timer)
      : opt_(o), policy_(timing_policy_from(o, cal.overhead_s, timer)), sampler_(timer),
        cases_(std::move(cases)), sink_(std::move(sink)),
        ctx_(ctx), ceil_(cal.ceil), launch_costs_(cal.launch_costs_s), settings_(settings), job_(job),
        cases_in_all_(cases_in_all) {
    if (opt_.cold) flusher_ = std::make_unique<cache_flusher>(ctx.device.l2_or_llc_bytes);
    const std::vector<int> counts = replicate() ? replicate_rank_counts(job_.size()) : std::vector<int>{1};
    for (std::size_t i = 0; i < cases_.size(); ++i)
      for (int k : counts) items_.push_back({i, k});
  }

  // Registers every item with Google Benchmark and runs them; SIGINT and SIGTERM (measure/stop.hpp)
  // stop the run after the case in progress.
  void run_all() {
    for (std::size_t i = 0; i < items_.size(); ++i) {
      const auto& it = items_[i];
      const std::string name = cases_[it.case_index].key + (replicate() ? "/ranks_" + std::to_string(it.ranks) : "");
      auto* b = benchmark::RegisterBenchmark(name.c_str(), [this, i](benchmark::State& st) { run_item_guarded(st, i); });
      b->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::ClearRegisteredBenchmarks();
  }

  void summary(std::ostream& os) const {
    std::size_t w = 10;
    for (const auto& r : rows_) w = std::max(w, r.key.size());
    os << "\nkcnn summary (" << rows_.size() << " cases, device " << ctx_.device.name << ", backend "
       << ctx_.device.backend << ")\n";
    os << std::left << std::setw(int(w)) << "case" << std::right << std::setw(12) << "median ms" << std::setw(10)
       << "GB/s" << std::setw(10) << "GFLOP/s" << std::setw(11) << "rel_err" << "  status\n";
    for (const auto& r : rows_) {
      const bool t = is_timed(r.status) && r.rate_ms() > 0;
      const double s = r.rate_ms() * 1e-3;
      std::ostringstream err;
      err << std::setprecision(2) << r.rel_error;
      os << std::left << std::setw(int(w)) << r.key << std::right << std::setw(12)
         << (t ? fixed(r.rate_ms(), 4) : "-") << std::setw(10) << (t ? fixed(r.bytes / s / 1e9, 2) : "-")
         << std::setw(10) << (t ? fixed(r.flops / s / 1e9, 2) : "-") << std::setw(11)
         << (r.rel_error >= 0 ? err.str() : "-") << "  " << name(r.status)
         << (r.note.empty() || t ? "" : " (" + r.note + ")") << "\n";
    }
  }

  const status_counts& counts() const { return counts_; }
  const std::vector<measured_case>& measured() const { return measured_; }

 private:
  bool replicate() const { return opt_.mpi == mpi_mode::replicate; }

  void progress(std::size_t i) {
    if (job_.rank() != 0) return;  // with MPI, rank 0 speaks for the job
    const double el = clock_.seconds();
    const auto& it = items_[i];
    std::ostringstream o;
    o << "[" << (i + 1) << "/" << items_.size() << "] " << cases_[it.case_index].key;
    if (replicate()) o << " on " << it.ranks << " of " << job_.size() << " ranks";
    if (opt_.mpi == mpi_mode::shard) o << " (rank 0's cases; " << cases_in_all_ << " in all on " << job_.size() << " ranks)";
    o << "  elapsed " << fixed(el, 1) << "s";
    if (done_ > 0) o << ", ~" << fixed(el / double(done_) * double(items_.size() - done_), 1) << "s left";
    std::cerr << o.str() << std::endl;
  }

  // An exception that escapes a case (a results file that cannot be written) ends the run; with
  // other ranks waiting on this one it ends the job, naming the case.
  void run_item_guarded(benchmark::State& st, std::size_t i) {
    try {
      run_one(st, i);
    } catch (const std::exception& e) {
      if (job_.active()) job_.abort(std::string("error: ") + e.what() + " (case " + cases_[items_[i].case_index].key + ")");
      throw;
    }
  }

  void run_one(benchmark::State& st, std::size_t i) {
    const run_item& it = items_[i];
    const planned_case& pc = cases_[it.case_index];
    const std::string end_of_case = "the end of " + pc.key + " on " + std::to_string(it.ranks) + " ranks";
    // Replicate: the ranks agree to stop (a signal may reach them at different cases), and a rank
    // not among the first it.ranks waits for the others at the end of the case.
    const bool stop = replicate() ? job_.agree_max(stop_requested() != 0, "the start of " + pc.key) != 0 : stop_requested() != 0;
    if (stop) return st.SkipWithError("interrupted");
    local_agreement alone;
    rank_agreement* ranks = replicate() ? job_.first_ranks(it.ranks) : &alone;
    if (!ranks) {
      // However long the case takes (host validation of a large layer included): the ranks that
      // run it have bounded waits of their own, and a rank that dies ends the job.
      job_.barrier(end_of_case, true);
      return st.SkipWithError(("not among the " + std::to_string(it.ranks) + " ranks of this run").c_str());
    }
    progress(i);
    result_row row = case_row(pc, ctx_.suite, opt_.cold);
    row.rank = job_.rank();
    row.ranks = it.ranks;
    measure_case(pc, measurement_env{settings_, policy_, opt_.seed, flusher_.get(), sampler_, *ranks}, row);
    // A launch cost the row's memory space pays per launch: the row is timed gross (what a user
    // pays); the cost's share, and the time net of it, are stated beside it.
    for (const auto& c : launch_costs_) {
      if (row.memory_space != name(c.space) || !is_timed(row.status) || c.seconds <= 0) continue;
      const double cost_ms = c.seconds * 1e3;
      std::ostringstream n;
      n.precision(3);
      n << "includes timing." << c.name << "_us = " << cost_ms * 1e3 << " us per launch ("
        << 100.0 * cost_ms / row.rate_ms() << " % of the median); net of it "
        << std::max(0.0, row.rate_ms() - cost_ms) << " ms";
      row.note = join_notes(row.note, n.str());
    }
    if (replicate()) {
      // Each rank's time, and the rate of all of them together.
      const double secs = is_timed(row.status) ? row.rate_ms() * 1e-3 : -1;
      row.note = join_notes(row.note, replicate_note(row.bytes, ranks->all_gather(secs, "the times of " + pc.key)));
    }
    record(st, pc, row);
    if (replicate()) job_.barrier(end_of_case, true);
  }

  // The row to the sink, its figures to Google Benchmark, the count and the per-layer plan's list.
  void record(benchmark::State& st, const planned_case& pc, result_row& row) {
    if (is_timed(row.status) && row.time_ms_median > 0) {
      for (auto _ : st) st.SetIterationTime(row.rate_ms() * 1e-3);
      st.counters["bytes"] = benchmark::Counter(row.bytes, benchmark::Counter::kIsRate);
      st.counters["flops"] = benchmark::Counter(row.flops, benchmark::Counter::kIsRate);
      st.counters["reps"] = row.reps;
      st.counters["rel_err"] = row.rel_error;
      row.roofline_pct = roofline_pct(ceil_, row.bytes, row.flops, row.rate_ms() * 1e-3);
      measured_.push_back({pc.variant, pc.spec.network, pc.spec.layer, row.rate_ms()});
    } else if (is_timed(row.status)) {  // modelled, or --profile-only: not timed
      for (auto _ : st) st.SetIterationTime(1e-9);
      if (row.model.present) st.counters["model_us"] = row.model.time_us;
      if (row.model.present) measured_.push_back({pc.variant, pc.spec.network, pc.spec.layer, row.model.time_us * 1e-3});
    } else {
      st.SkipWithError((row.status == case_status::failed_validation ? "failed validation: " + row.note : row.note).c_str());
    }
    sink_(row);
    counts_.add(row.status);
    rows_.push_back(row);
    ++done_;
  }

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

// What the whole job ends with: every rank's rows in rank 0's file, the counts and the verdicts.
struct job_totals {
  status_counts counts;
  int network_failures = 0;
  int interrupted_by = 0;
  json rank_contexts = json::array();
};

// --mpi: every rank's rows and context to rank 0, whose file then holds them all.
void merge_ranks(mpi_job& job, row_outputs& out, const run_context& ctx, const run_calibration& cal, job_totals& t) {
  // Every rank done with its cases (no time limit: in shard mode one may have hours left); the
  // collectives after this point are bounded again.
  job.barrier("the end of every rank's cases", true);
  const auto rows = job.gather(out.rank_rows ? out.rank_rows->lines() : std::string(), "the rows of every rank");
  // Each rank's own context, with its own ceilings and GPU clocks (ranks may be different GPUs).
  const json mine = context_json(ctx)
                        .set("ceilings", ceilings_json(cal.ceil))
                        .set("gpu_clocks", json::object()
                                               .set("start", gpu_clocks_json(cal.clocks_start))
                                               .set("end", gpu_clocks_json(read_gpu_clocks())));
  const auto contexts = job.gather(mine.dump(), "the context of every rank");
  if (job.rank() == 0) {
    const status_counts others = merge_rank_rows(*out.writer, std::vector<std::string>(rows.begin() + 1, rows.end()));
    for (case_status s : all_statuses()) t.counts.add(s, others[s]);
    if (rows.size() > 1) std::cerr << "kcnn-bench: merged the rows of " << rows.size() << " ranks into " << out.final_path << "\n";
  }
  for (const auto& c : contexts) t.rank_contexts.push(json::raw(c));
  t.network_failures = job.agree_max(t.network_failures, "the failure count");
  t.interrupted_by = job.agree_max(t.interrupted_by, "the interruption");
  if (out.rank_rows) out.rank_rows->remove();
}

// Rank 0 closes the results file with the run's summary in its context; 0, or 1 when it cannot.
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

// Google Benchmark's own flags (--benchmark_*); false when one is not recognised. Google Benchmark
// keeps pointers into the argv it is given (its context prints argv[0]), so `args` (the caller's)
// must outlive the run.
bool init_google_benchmark(std::vector<std::string>& args) {
  std::vector<char*> gb_argv;
  for (auto& a : args) gb_argv.push_back(a.data());
  int gb_argc = int(gb_argv.size());
  benchmark::Initialize(&gb_argc, gb_argv.data());
  return !benchmark::ReportUnrecognizedArguments(gb_argc, gb_argv.data());
}

void add_google_benchmark_context(const run_context& ctx) {
  benchmark::AddCustomContext("kcnn.device", ctx.device.name);
  benchmark::AddCustomContext("kcnn.backend", ctx.device.backend);
  benchmark::AddCustomContext("kcnn.kokkos_version", ctx.kokkos_version);
  benchmark::AddCustomContext("kcnn.git_commit", ctx.git_commit);
  benchmark::AddCustomContext("kcnn.blas", describe(ctx.blas));
}

}  // namespace

int run_benchmarks(int argc, char** argv, const options& opt, const std::vector<suite>& suites,
                   std::vector<planned_case> cases, std::size_t cases_in_all) {
  mpi_job& job = mpi_job::instance();
  const bool rank0 = job.rank() == 0;
  std::vector<std::string> google_benchmark_args = opt.passthrough;
  if (!init_google_benchmark(google_benchmark_args)) return 2;
  run_context ctx = make_context(argc, argv, joined_suite_name(opt, suites));
  // One run id for the job, rank 0's, with the rank appended: each rank's rows point to its own
  // context (its host and device) in the JSON's `ranks`.
  if (job.active()) ctx.run_id = job.broadcast(ctx.run_id, "the run id") + "-r" + std::to_string(job.rank());
#if defined(KCNN_GPU_MODEL)
  // The rows describe the modelled GPU, not the host that ran the model: their own folder under
  // results/ (gpu-model-<name>) and device name, and the modelled L2 for the traffic formula.
  const auto model_devices = model::load_devices(opt.model_devices.empty() ? model::default_devices_file() : opt.model_devices);
  const model::device_description& modelled = model::find_device(model_devices, opt.model_device);
  ctx.device.name = "GPU model: " + modelled.name + " (run on " + ctx.device.name + ")";
  ctx.device.slug = "gpu-model-" + slugify(modelled.name);
  ctx.device.l2_or_llc_bytes = modelled.l2_bytes;
#endif
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
