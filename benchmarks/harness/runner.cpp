// kcnn-bench's top level: parse the command line, load the suites, then one mode: --help,
// --list, --catalogue, --ceilings, --memory-plan, or the benchmark run (with --network's forward
// passes after it). Selection (selection.cpp), measurement (measure.cpp) and output (results.cpp)
// are their own units; settings travel as values.
#include "runner.hpp"

#include "catalogue.hpp"
#include "ceilings.hpp"
#include "context.hpp"
#include "format.hpp"
#include "gpu_clocks.hpp"
#include "measure.hpp"
#include "mpi_job.hpp"
#include "modes.hpp"
#include "options.hpp"
#include "registry.hpp"
#include "results.hpp"
#include "selection.hpp"
#include "stats.hpp"
#include "suite.hpp"

#include <kcnn/compat.hpp>

#include <Kokkos_Core.hpp>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#if defined(__SANITIZE_ADDRESS__)
#define KCNN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KCNN_ASAN 1
#endif
#endif
#if defined(KCNN_ASAN)
// Under AddressSanitizer an allocation larger than it supports aborts the process by default;
// kcnn-bench must see it fail as on any build (Kokkos throws, the case is skipped: out of memory).
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

namespace kcnn::bench {

namespace {

// The signal that asked the run to stop (0: none). The running case finishes; the rest are
// skipped; the files are closed as usual.
volatile std::sig_atomic_t stop_signal = 0;
extern "C" void on_stop_signal(int s) { stop_signal = s; }

timing_policy with_overhead(timing_policy p, double overhead_s) {
  p.overhead_s = overhead_s;
  return p;
}

// The case running now, for the message of a rank that has to end the job.
std::string current_case;

// One timed run of a case: by `ranks` ranks at once (--mpi replicate), else by this rank alone.
struct run_item {
  std::size_t case_index = 0;
  int ranks = 1;
};

// The benchmark run: every planned case through Google Benchmark (which sees one iteration whose
// manual time is the harness's median), one row each, a progress line each (rank 0's, with MPI).
// Rows go to `sink`: the results file on rank 0, a rank-local file on the other ranks.
class benchmark_run {
 public:
  benchmark_run(const options& o, std::vector<planned_case> cases, std::function<void(const result_row&)> sink,
                const run_context& ctx, const ceilings& ceil, const case_settings& settings, double overhead_s,
                mpi_job& job, std::size_t cases_in_all)
      : opt_(o), policy_(with_overhead(timing_policy::from(o), overhead_s)), cases_(std::move(cases)),
        sink_(std::move(sink)), ctx_(ctx), ceil_(ceil), settings_(settings), job_(job), cases_in_all_(cases_in_all) {
    if (opt_.cold) flusher_ = std::make_unique<cache_flusher>(ctx.device.l2_or_llc_bytes);
    const std::vector<int> counts = opt_.mpi == mpi_mode::replicate ? replicate_rank_counts(job_.size()) : std::vector<int>{1};
    for (std::size_t i = 0; i < cases_.size(); ++i)
      for (int k : counts) items_.push_back({i, k});
  }

  void add_to_google_benchmark() {
    for (std::size_t i = 0; i < items_.size(); ++i) {
      const auto& it = items_[i];
      const std::string name = cases_[it.case_index].key + (opt_.mpi == mpi_mode::replicate ? "/ranks_" + std::to_string(it.ranks) : "");
      auto* b = benchmark::RegisterBenchmark(name.c_str(), [this, i](benchmark::State& st) { run_case(st, i); });
      b->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
    }
  }

  void summary(std::ostream& os) const {
    std::size_t w = 10;
    for (const auto& r : rows_) w = std::max(w, r.key.size());
    os << "\nkcnn summary (" << rows_.size() << " cases, device " << ctx_.device.name << ", backend "
       << ctx_.device.backend << ")\n";
    os << std::left << std::setw(int(w)) << "case" << std::right << std::setw(12) << "median ms" << std::setw(10)
       << "GB/s" << std::setw(10) << "GFLOP/s" << std::setw(11) << "rel_err" << "  status\n";
    for (const auto& r : rows_) {
      const bool t = r.status == "ok";
      const double s = r.time_ms_median * 1e-3;
      std::ostringstream err;
      err << std::setprecision(2) << r.rel_error;
      os << std::left << std::setw(int(w)) << r.key << std::right << std::setw(12)
         << (t ? fixed(r.time_ms_median, 4) : "-") << std::setw(10) << (t ? fixed(r.bytes / s / 1e9, 2) : "-")
         << std::setw(10) << (t ? fixed(r.flops / s / 1e9, 2) : "-") << std::setw(11)
         << (r.rel_error >= 0 ? err.str() : "-") << "  " << r.status
         << (r.note.empty() || r.status == "ok" ? "" : " (" + r.note + ")") << "\n";
    }
  }

  int failures() const { return failures_; }
  const std::vector<measured_case>& measured() const { return measured_; }
  std::size_t count(const std::string& status) const {
    return std::size_t(std::count_if(rows_.begin(), rows_.end(), [&](const result_row& r) { return r.status == status; }));
  }

 private:
  void progress(std::size_t i) {
    if (job_.rank() != 0) return;  // with MPI, rank 0 speaks for the job
    const double el = clock_.seconds();
    const auto& it = items_[i];
    std::ostringstream o;
    o << "[" << (i + 1) << "/" << items_.size() << "] " << cases_[it.case_index].key;
    if (opt_.mpi == mpi_mode::replicate) o << " on " << it.ranks << " of " << job_.size() << " ranks";
    if (opt_.mpi == mpi_mode::shard) o << " (rank 0's cases; " << cases_in_all_ << " in all on " << job_.size() << " ranks)";
    o << "  elapsed " << fixed(el, 1) << "s";
    if (done_ > 0) o << ", ~" << fixed(el / double(done_) * double(items_.size() - done_), 1) << "s left";
    std::cerr << o.str() << std::endl;
  }

  void run_case(benchmark::State& st, std::size_t i) {
    const run_item& it = items_[i];
    const planned_case& pc = cases_[it.case_index];
    const bool replicate = opt_.mpi == mpi_mode::replicate;
    // Replicate: the ranks agree to stop (a signal may reach them at different cases), and a rank
    // not among the first it.ranks waits for the others at the end of the case.
    const bool stop = replicate ? job_.agree_max(stop_signal != 0, "the start of " + pc.key) != 0 : stop_signal != 0;
    if (stop) {
      st.SkipWithError("interrupted");
      return;
    }
    sample_sync* sync = replicate ? job_.first_ranks(it.ranks) : nullptr;
    if (replicate && !sync) {
      // However long the case takes (host validation of a large layer included): the ranks that
      // run it have bounded waits of their own, and a rank that dies ends the job.
      job_.barrier("the end of " + pc.key + " on " + std::to_string(it.ranks) + " ranks", true);
      st.SkipWithError(("not among the " + std::to_string(it.ranks) + " ranks of this run").c_str());
      return;
    }
    current_case = pc.key;
    progress(i);
    result_row row = case_row(pc, ctx_.suite, opt_.cold);
    row.rank = job_.rank();
    row.ranks = it.ranks;
    timing_policy policy = policy_;
    policy.sync = sync;
    measure_case(pc, settings_, policy, opt_.seed, flusher_.get(), row);
    if (sync) {
      // Each rank's time, and the rate of all of them together.
      const double secs = row.status == "ok" ? row.time_ms_median * 1e-3 : -1;
      const std::vector<double> t = sync->all_gather(secs, "the times of " + pc.key);
      row.note = join_notes(row.note, replicate_note(row.bytes, t));
    }
    if (row.status == "ok") {
      for (auto _ : st) st.SetIterationTime(row.time_ms_median * 1e-3);
      st.counters["bytes"] = benchmark::Counter(row.bytes, benchmark::Counter::kIsRate);
      st.counters["flops"] = benchmark::Counter(row.flops, benchmark::Counter::kIsRate);
      st.counters["reps"] = row.reps;
      st.counters["rel_err"] = row.rel_error;
      row.roofline_pct = roofline_pct(ceil_, row.bytes, row.flops, row.time_ms_median * 1e-3);
      measured_.push_back({pc.variant, pc.spec.network, pc.spec.layer, row.time_ms_median});
    } else {
      st.SkipWithError((row.status == "failed_validation" ? "failed validation: " + row.note : row.note).c_str());
    }
    sink_(row);
    if (row.status == "failed_validation" || row.status == "error") ++failures_;
    rows_.push_back(row);
    ++done_;
    if (replicate) job_.barrier("the end of " + pc.key + " on " + std::to_string(it.ranks) + " ranks", true);
  }

  const options& opt_;
  const timing_policy policy_;
  std::vector<planned_case> cases_;
  std::vector<run_item> items_;
  std::function<void(const result_row&)> sink_;
  const run_context& ctx_;
  const ceilings& ceil_;
  const case_settings settings_;
  mpi_job& job_;
  std::size_t cases_in_all_;
  std::unique_ptr<cache_flusher> flusher_;
  std::vector<result_row> rows_;
  std::vector<measured_case> measured_;
  Kokkos::Timer clock_;
  std::size_t done_ = 0;
  int failures_ = 0;
};

void print_ceilings(std::ostream& os, const ceilings& c, const blas_info& blas) {
  os << "kcnn-bench: ceilings: copy " << fixed(c.copy_gbps, 1) << " GB/s, triad " << fixed(c.triad_gbps, 1)
     << " GB/s, copy in cache " << fixed(c.cache_copy_gbps, 1) << " GB/s, fma " << fixed(c.fma_gflops, 1) << " GFLOP/s, gemm(" << c.gemm_n << ") " << fixed(c.gemm_gflops, 1)
     << " GFLOP/s (" << fixed(c.seconds, 1) << " s)\n";
  os << "kcnn-bench: host BLAS behind KokkosBlas::gemm: " << describe(blas) << "\n";
  if (!blas.warning.empty() && blas.kokkos_kernels_tpl_blas) os << "kcnn-bench: warning: " << blas.warning << "\n";
}

// --ceilings: the ceilings alone, as op `ceiling` rows (variant copy, triad, fma, gemm) and in
// the context.
int run_ceilings_only(int argc, char** argv, const options& opt) {
  const run_context ctx = make_context(argc, argv, "ceilings");
  results_writer writer(opt.out, ctx);
  const ceilings c = measure_ceilings(ctx.device.l2_or_llc_bytes);
  print_ceilings(std::cout, c, ctx.blas);
  auto row = [&](const std::string& variant, double seconds, double bytes, double flops, const std::string& note) {
    result_row r;
    r.suite = "ceilings";
    r.network = "device";
    r.layer = variant;
    r.op = "ceiling";
    r.layout = "-";
    r.memory_space = name(space_axis::global);
    r.access_pattern = name(pattern_axis::coalesced);
    r.variant = variant;
    r.key = "ceiling/" + variant;
    r.cache = "warm";
    r.reps = c.reps;
    r.time_ms_median = r.time_ms_min = r.time_ms_max = r.time_ms_mean = seconds * 1e3;
    r.bytes = bytes;
    r.flops = flops;
    r.status = "ok";
    r.note = note + "; best of " + std::to_string(c.reps);
    r.roofline_pct = roofline_pct(c, bytes, flops, seconds);
    writer.write(r);
  };
  const std::string arrays = fixed(c.array_bytes / 1048576.0, 0) + " MiB arrays";
  row("copy", c.copy_s, 2 * c.array_bytes, 0, "b[i] = a[i] over " + arrays);
  row("triad", c.triad_s, 3 * c.array_bytes, 0, "a[i] = b[i] + s c[i] over " + arrays);
  if (c.cache_copy_s > 0)
    row("cache_copy", c.cache_copy_s, 2 * c.cache_array_bytes, 0,
        "b[i] = a[i] over " + fixed(c.cache_array_bytes / 1048576.0, 1) + " MiB arrays (both in half the last-level cache)");
  row("fma", c.fma_s, 0, c.fma_flops, "independent fp32 FMA chains per work item (128 host, 32 GPU)");
  const double g = double(c.gemm_n);
  row("gemm", c.gemm_s, 3 * 4 * g * g, 2 * g * g * g, "KokkosBlas::gemm fp32 " + std::to_string(c.gemm_n) + "^3");
  writer.close(json::object().set("ceilings", ceilings_json(c)).set("mode", "ceilings"));
  std::cerr << "kcnn-bench: results in " << writer.final_path() << "\n";
  return 0;
}

// --memory-plan: the memory-planning table of every network suite.
int run_memory_plan_mode(int argc, char** argv, const options& opt, std::vector<suite>& suites) {
  const run_context ctx = make_context(argc, argv, "memory_plan");
  results_writer writer(opt.out, ctx);
  const int rc = run_memory_plan(opt, suites, writer);
  writer.close(json::object().set("mode", "memory_plan"));
  std::cerr << "kcnn-bench: results in " << writer.final_path() << "\n";
  return rc;
}

// --list: one key per line on stdout, the reasons on stderr.
int list_cases(const selection& sel) {
  for (const auto& c : sel.cases) std::cout << c.key << "\n";
  for (const auto& [what, why] : registry::instance().unavailable())
    std::cerr << "# not on this build: " << what << ": " << why << "\n";
  for (const auto& s : sel.not_applicable) std::cerr << "# not applicable: " << s << "\n";
  return 0;
}

std::string joined_suite_name(const options& opt, const std::vector<suite>& suites) {
  if (std::find(opt.suites.begin(), opt.suites.end(), "all") != opt.suites.end()) return "all";
  std::string s;
  for (const auto& su : suites) s += (s.empty() ? "" : "+") + su.name;
  return s;
}

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

json run_summary_json(const options& opt, const std::map<std::string, unsigned long>& counts, const ceilings& ceil,
                      double overhead_s, double constant_launch_s, int interrupted_by, const gpu_clocks& clocks_start) {
  const timing_policy p = timing_policy::from(opt);
  json timing = json::object();
  timing.set("warmup", p.warmup)
      .set("min_reps", p.min_reps)
      .set("max_reps", p.max_reps)
      .set("budget_s", p.budget_s)
      .set("target_rel_spread", p.target_spread)
      .set("noisy_rel_spread", p.noisy_spread)
      .set("timer_overhead_us", overhead_s * 1e6)
      .set("constant_launch_us", constant_launch_s * 1e6)
      .set("quick", p.quick)
      .set("cache", opt.cold ? "flushed" : "warm")
      .set("seed", static_cast<unsigned long long>(opt.seed))
      .set("fence", "Kokkos::fence() before and after every timed sample")
      .set("launches",
           "a sample is 1 launch, or (cases that may run back to back, warm) enough back-to-back launches that "
           "it lasts 100x timer_overhead_us, at most " + std::to_string(p.max_launches) +
               "; times are per launch; the row's launches column says which");
  json cases = json::object();
  for (const char* s : {"ok", "failed_validation", "skipped", "error"}) cases.set(s, counts.at(s));
  json extra = json::object();
  extra.set("timing", timing).set("ceilings", ceilings_json(ceil)).set("cases", cases).set("interrupted", interrupted_by != 0);
  extra.set("gpu_clocks", json::object().set("start", gpu_clocks_json(clocks_start)).set("end", gpu_clocks_json(read_gpu_clocks())));
  if (!opt.resume.empty()) extra.set("resumed", opt.resume);
  return extra;
}

// The benchmark run over the selected cases, then --network's plans.
// The rows of the other ranks (--mpi), as CSV lines, written where the rank runs until rank 0
// has merged them: `<rank 0's results file>.rank<r>.partial`, removed after the merge, kept if
// the job dies first.
class rank_rows_file {
 public:
  rank_rows_file(const std::string& path, const run_context& ctx) : path_(path), ctx_(ctx), out_(path, std::ios::trunc) {
    if (!out_) throw std::runtime_error("cannot write " + path_);
  }
  void write(const result_row& r) {
    const std::string line = csv_line(ctx_, r);
    out_ << line << "\n" << std::flush;
    lines_ += line + "\n";
  }
  const std::string& lines() const { return lines_; }
  void remove() {
    out_.close();
    std::remove(path_.c_str());
  }

 private:
  std::string path_;
  const run_context& ctx_;
  std::ofstream out_;
  std::string lines_;
};

int run_benchmarks(int argc, char** argv, const options& opt, const std::vector<suite>& suites,
                   std::vector<planned_case> cases, std::size_t cases_in_all) {
  mpi_job& job = mpi_job::instance();
  const bool rank0 = job.rank() == 0;
  std::vector<char*> gb_argv;
  std::vector<std::string> passthrough = opt.passthrough;
  for (auto& a : passthrough) gb_argv.push_back(a.data());
  int gb_argc = int(gb_argv.size());
  benchmark::Initialize(&gb_argc, gb_argv.data());
  if (benchmark::ReportUnrecognizedArguments(gb_argc, gb_argv.data())) return 2;

  run_context ctx = make_context(argc, argv, joined_suite_name(opt, suites));
  // One run id for the job, rank 0's, with the rank appended: each rank's rows point to its own
  // context (its host and device) in the JSON's `ranks`.
  if (job.active()) ctx.run_id = job.broadcast(ctx.run_id, "the run id") + "-r" + std::to_string(job.rank());
  case_settings settings;
  settings.device_l2_bytes = ctx.device.l2_or_llc_bytes;
  settings.uvm_cap_bytes = opt.uvm_cap_gib * double(1 << 30);
  // Every rank checks its own cases; the job stops if any rank's do not fit.
  if (job.agree_max(fits_device(cases, ctx, settings) ? 0 : 1, "the memory check") != 0) return 2;
  std::unique_ptr<results_writer> writer;
  std::unique_ptr<rank_rows_file> rank_rows;
  std::string error;
  try {
    if (rank0)
      writer = opt.resume.empty() ? std::make_unique<results_writer>(opt.out, ctx)
                                  : std::make_unique<results_writer>(results_writer::append_to{opt.resume}, ctx);
  } catch (const std::exception& e) {
    error = e.what();
  }
  const std::string final_path = job.broadcast(writer ? writer->final_path() : std::string(), "the results file name");
  try {
    if (!rank0 && !final_path.empty())
      rank_rows = std::make_unique<rank_rows_file>(final_path + ".rank" + std::to_string(job.rank()) + ".partial", ctx);
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (job.agree_max(error.empty() ? 0 : 1, "the results files") != 0) {
    if (!error.empty()) std::cerr << "kcnn-bench: error: " << error << "\n";
    return 2;
  }
  benchmark::AddCustomContext("kcnn.device", ctx.device.name);
  benchmark::AddCustomContext("kcnn.backend", ctx.device.backend);
  benchmark::AddCustomContext("kcnn.kokkos_version", ctx.kokkos_version);
  benchmark::AddCustomContext("kcnn.git_commit", ctx.git_commit);
  benchmark::AddCustomContext("kcnn.blas", describe(ctx.blas));

  const gpu_clocks clocks_start = read_gpu_clocks();
  if (clocks_start.available && rank0)
    std::cerr << "kcnn-bench: GPU clocks at the start: SM " << clocks_start.sm_mhz << " of " << clocks_start.sm_max_mhz
              << " MHz, memory " << clocks_start.memory_mhz << " MHz, " << clocks_start.temperature_c << " C\n";
  ceilings ceil;
  if (!opt.no_ceilings) {
    ceil = measure_ceilings(ctx.device.l2_or_llc_bytes);
    if (rank0) print_ceilings(std::cerr, ceil, ctx.blas);
  }
  const double overhead_s = timer_overhead_seconds();
  const double constant_launch_s = constant_launch_seconds();
  auto sink = [&](const result_row& r) {
    if (writer) writer->write(r);
    else rank_rows->write(r);
  };
  job.barrier("the start of the cases");
  benchmark_run run(opt, std::move(cases), sink, ctx, ceil, settings, overhead_s, job, cases_in_all);
  run.add_to_google_benchmark();
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  benchmark::RunSpecifiedBenchmarks();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  current_case.clear();
  benchmark::ClearRegisteredBenchmarks();
  if (rank0) run.summary(std::cout);
  int network_failures = 0;
  int interrupted_by = int(stop_signal);
  if (opt.network && !interrupted_by) network_failures = run_network_plans(opt, suites, run.measured(), *writer, settings);

  // Merge (--mpi): every rank's rows and context to rank 0, whose file then holds them all. No
  // time limit: in shard mode a rank may still have hours of cases.
  std::map<std::string, unsigned long> counts;
  for (const char* st : {"ok", "failed_validation", "skipped", "error"}) counts[st] = run.count(st);
  json rank_contexts = json::array();
  if (job.active()) {
    // Every rank done with its cases (no time limit: in shard mode one may have hours left); the
    // collectives after this point are bounded again.
    job.barrier("the end of every rank's cases", true);
    std::string mine_counts;
    for (const auto& [st, n] : counts) mine_counts += std::to_string(n) + " ";
    const auto rows = job.gather(rank_rows ? rank_rows->lines() : std::string(), "the rows of every rank");
    const auto all_counts = job.gather(mine_counts, "the case counts of every rank");
    // Each rank's own context, with its own ceilings and GPU clocks (ranks may be different GPUs).
    const json mine = context_json(ctx)
                          .set("ceilings", ceilings_json(ceil))
                          .set("gpu_clocks", json::object()
                                                 .set("start", gpu_clocks_json(clocks_start))
                                                 .set("end", gpu_clocks_json(read_gpu_clocks())));
    const auto contexts = job.gather(mine.dump(), "the context of every rank");
    for (std::size_t r = 1; r < rows.size(); ++r) {
      std::istringstream in(rows[r]);
      std::string line;
      while (std::getline(in, line))
        if (!line.empty()) writer->write_line(line);
    }
    for (std::size_t r = 1; r < all_counts.size(); ++r) {
      std::istringstream in(all_counts[r]);
      for (auto& [st, n] : counts) {
        unsigned long k = 0;
        in >> k;
        n += k;
      }
    }
    for (const auto& c : contexts) rank_contexts.push(json::raw(c));
    network_failures = job.agree_max(network_failures, "the failure count");
    interrupted_by = job.agree_max(interrupted_by, "the interruption");
    if (rank_rows) rank_rows->remove();
    if (rank0 && rows.size() > 1)
      std::cerr << "kcnn-bench: merged the rows of " << rows.size() << " ranks into " << writer->final_path() << "\n";
  }
  const int failures = job.agree_max(run.failures() + network_failures > 0 ? 1 : 0, "the verdict");
  int rc = 0;
  if (rank0) {
    try {
      json extra = run_summary_json(opt, counts, ceil, overhead_s, constant_launch_s, interrupted_by, clocks_start);
      if (job.active())
        extra.set("mpi", json::object()
                             .set("mode", opt.mpi == mpi_mode::shard ? "shard" : "replicate")
                             .set("ranks", job.size())
                             .set("timeout_s", opt.mpi_timeout_s))
            .set("ranks", rank_contexts);
      writer->close(extra);
    } catch (const std::exception& e) {
      std::cerr << "kcnn-bench: error: " << e.what() << "\n";
      rc = 1;
    }
    if (rc == 0) std::cerr << "kcnn-bench: results in " << writer->final_path() << " (context " << writer->json_path() << ")\n";
  }
  rc = job.agree_max(rc, "closing the results");
  if (rc) return rc;
  if (interrupted_by) {
    if (rank0)
      std::cerr << "kcnn-bench: interrupted by signal " << interrupted_by << ": " << counts["ok"]
                << " cases finished and written; --resume " << final_path << " runs the rest\n";
    return 128 + interrupted_by;
  }
  return failures > 0 ? 1 : 0;
}

// Shard mode: this rank's cases, chosen by estimated cost (operand bytes at 50 GB/s plus FLOPs at
// 500 GFLOP/s: only the ratios matter) so that every rank gets about as much work.
std::vector<planned_case> this_ranks_share(std::vector<planned_case> cases, const case_settings& settings,
                                           mpi_job& job) {
  // Decided on rank 0 and sent to the others: a case may size itself from its own device's free
  // memory (the UVM study), and every rank must see the same split.
  std::string owners;
  if (job.rank() == 0) {
    std::vector<double> cost;
    for (const auto& c : cases) {
      double est = 0;
      try {
        const case_cost k = c.variant->make(c.spec, settings)->cost();
        est = k.bytes / 50e9 + k.flops / 500e9;
      } catch (const std::exception&) {
      }
      cost.push_back(est);
    }
    for (int o : assign_by_cost(cost, job.size())) owners += std::to_string(o) + " ";
  }
  std::istringstream in(job.broadcast(owners, "the split of the cases"));
  std::vector<int> owner(cases.size(), 0);
  for (auto& o : owner) in >> o;
  std::vector<planned_case> mine;
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (owner[i] == job.rank()) mine.push_back(std::move(cases[i]));
  return mine;
}

int run(int argc, char** argv) {
  mpi_job& job = mpi_job::instance();
  options opt;
  try {
    opt = parse_options(argc, argv);
    if (opt.mpi != mpi_mode::none && opt.network)
      throw usage_error("--mpi and --network exclude each other (a forward pass runs on one device)");
    if (opt.mpi == mpi_mode::replicate && !opt.resume.empty())
      throw usage_error("--resume works with --mpi shard, not replicate (a contention study is rerun whole)");
  } catch (const usage_error& e) {
    if (job.rank() == 0) std::cerr << "kcnn-bench: " << e.what() << "\n";
    return 2;
  }
  job.set_timeout(opt.mpi_timeout_s);
  // Modes that measure nothing per device are rank 0's alone.
  if (job.rank() != 0 && (opt.help || opt.catalogue || opt.list || opt.ceilings_only || opt.memory_plan)) return 0;
  if (opt.help) {
    std::cout << usage_text();
    return 0;
  }
  if (opt.catalogue) {
    std::cout << catalogue_markdown(registry::instance());
    return 0;
  }
  if ((opt.memory_plan || opt.network) && !opt.suites_given) opt.suites = {"all"};

  std::vector<suite> suites;
  selection sel;
  try {
    suites = load_suites(opt);
    if (opt.ceilings_only && !opt.list) return run_ceilings_only(argc, argv, opt);
    if (opt.memory_plan && !opt.list) return run_memory_plan_mode(argc, argv, opt, suites);
    sel = select_cases(opt, suites);
  } catch (const suite_error& e) {
    std::cerr << "kcnn-bench: error: " << e.what() << "\n";
    return 2;
  }
  if (opt.list) return list_cases(sel);
  if (!sel.not_applicable.empty())
    std::cerr << "kcnn-bench: " << sel.not_applicable.size() << " selected case(s) not applicable here (--list says why)\n";
  if (!opt.resume.empty()) {
    const std::size_t before = sel.cases.size();
    // Every rank must agree on the outcome before it goes on (the file may not be readable on
    // every node), so errors are agreed on rather than returned from.
    std::string error;
    try {
      // The rows of ranks whose MPI job ended before the merge join the file first.
      if (job.rank() == 0) {
        const std::size_t adopted = adopt_rank_rows(opt.resume);
        if (adopted) std::cerr << "kcnn-bench: --resume: adopted " << adopted << " rows of other ranks into " << opt.resume << "\n";
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (job.agree_max(error.empty() ? 0 : 1, "the adoption of the other ranks' rows") == 0) {
      try {
        sel.cases = not_yet_finished(std::move(sel.cases), opt.resume);
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    if (job.agree_max(error.empty() ? 0 : 1, "reading the file to resume") != 0) {
      if (!error.empty()) std::cerr << "kcnn-bench: error: " << error << "\n";
      return 2;
    }
    if (job.rank() == 0)
      std::cerr << "kcnn-bench: --resume: " << before - sel.cases.size() << " of " << before << " cases already in "
                << opt.resume << "\n";
    if (sel.cases.empty()) {
      if (job.rank() == 0) std::cerr << "kcnn-bench: nothing left to run\n";
      return 0;
    }
  }
  if (sel.cases.empty()) {
    std::cerr << "kcnn-bench: error: no case matches the filters (try --list)\n";
    return 2;
  }
  const std::size_t cases_in_all = sel.cases.size();
  if (opt.mpi == mpi_mode::shard) {
    case_settings settings;
    settings.uvm_cap_bytes = opt.uvm_cap_gib * double(1 << 30);
    sel.cases = this_ranks_share(std::move(sel.cases), settings, job);
  }
  return run_benchmarks(argc, argv, opt, suites, std::move(sel.cases), cases_in_all);
}

}  // namespace

int run_main(int argc, char** argv) {
  // MPI first (--mpi): Kokkos then maps this rank to a node-local device by the local rank that
  // mpirun or srun exports.
  mpi_job::init(argc, argv);
  Kokkos::initialize(argc, argv);  // removes --kokkos-* flags from argv
  // Host gemm-based variants and their peers at the host backend's thread count (1 on Serial;
  // on a GPU build, the host execution space's: the device's concurrency means nothing to a BLAS).
  set_blas_threads(compat::concurrency(Kokkos::DefaultHostExecutionSpace()));
  int rc = 2;
  try {
    rc = run(argc, argv);
  } catch (const std::exception& e) {
    // With other ranks waiting on this one, end the job rather than leave them hanging.
    if (mpi_job::instance().active())
      mpi_job::instance().abort(std::string("error: ") + e.what() +
                                (current_case.empty() ? std::string() : " (case " + current_case + ")"));
    std::cerr << "kcnn-bench: error: " << e.what() << "\n";
    rc = 1;
  }
  Kokkos::finalize();
  mpi_job::finalize();
  return rc;
}

}  // namespace kcnn::bench
