#include "run/case_driver.hpp"

#include "measure/ceilings.hpp"
#include "measure/rank_agreement.hpp"
#include "measure/stop.hpp"
#include "results/format.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>

#include <unistd.h>

namespace kcnn::bench {

namespace {
// Google Benchmark's console reporter, less the "Library was built as DEBUG. Timings may be
// affected." line that a libbenchmark built with assertions (Debian's) prints: it is about
// Google Benchmark's own timing loop, and kcnn takes every figure itself (its sampler) and hands
// it over as the manual time of one iteration, so it does not apply; a new user would read it as
// kcnn's numbers being wrong. The rest of the context (CPU, caches, load, scaling) is kept.
class console_reporter : public benchmark::ConsoleReporter {
 public:
  using benchmark::ConsoleReporter::ConsoleReporter;
  bool ReportContext(const Context& context) override {
    std::ostream& err = GetErrorStream();
    std::ostringstream basic;
    SetErrorStream(&basic);
    const bool ok = benchmark::ConsoleReporter::ReportContext(context);
    SetErrorStream(&err);
    std::istringstream lines(basic.str());
    for (std::string line; std::getline(lines, line);)
      if (line.find("Library was built as DEBUG") == std::string::npos) err << line << '\n';
    return ok;
  }
};

// The display Google Benchmark's flags ask for: console (kcnn's reporter, with the flags' colour
// and tabular options) unless --benchmark_format names another.
struct display_flags {
  bool console = true;
  benchmark::ConsoleReporter::OutputOptions options = benchmark::ConsoleReporter::OO_None;
};
display_flags display;

// Google Benchmark's (1.7) reading of a boolean flag's value: anything but a false word is true.
bool truthy(std::string v) {
  if (v.size() == 1) return std::isalnum(static_cast<unsigned char>(v[0])) && std::string("0fFnN").find(v[0]) == std::string::npos;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
  return !(v == "false" || v == "no" || v == "off");
}
// A flag's default from its environment variable (BENCHMARK_FORMAT for --benchmark_format), as
// Google Benchmark takes it.
std::string flag_default(const char* env, const char* fallback) {
  const char* v = std::getenv(env);
  return v != nullptr ? v : fallback;
}
// Google Benchmark's colour test for "auto": a terminal it knows on standard output.
bool colour_terminal() {
  static const char* const known[] = {"xterm", "xterm-color", "xterm-256color", "screen", "screen-256color", "tmux",
                                      "tmux-256color", "rxvt-unicode", "rxvt-unicode-256color", "linux", "cygwin",
                                      "xterm-kitty", "alacritty", "foot", "foot-extra", "wezterm"};
  const char* term = std::getenv("TERM");
  if (isatty(fileno(stdout)) == 0 || term == nullptr) return false;
  return std::any_of(std::begin(known), std::end(known), [&](const char* k) { return std::string(k) == term; });
}
}  // namespace

benchmark_run::benchmark_run(const options& o, std::vector<planned_case> cases, std::function<void(const result_row&)> sink,
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

void benchmark_run::run_all() {
  for (std::size_t i = 0; i < items_.size(); ++i) {
    const auto& it = items_[i];
    const std::string name = cases_[it.case_index].key + (replicate() ? "/ranks_" + std::to_string(it.ranks) : "");
    auto* b = benchmark::RegisterBenchmark(name.c_str(), [this, i](benchmark::State& st) { run_item_guarded(st, i); });
    b->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
  }
  if (display.console) {
    console_reporter r(display.options);
    benchmark::RunSpecifiedBenchmarks(&r);
  } else {
    benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::ClearRegisteredBenchmarks();
}

void benchmark_run::summary(std::ostream& os) const {
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

void benchmark_run::progress(std::size_t i) {
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
void benchmark_run::run_item_guarded(benchmark::State& st, std::size_t i) {
  try {
    run_one(st, i);
  } catch (const std::exception& e) {
    if (job_.active()) job_.abort(std::string("error: ") + e.what() + " (case " + cases_[items_[i].case_index].key + ")");
    throw;
  }
}

void benchmark_run::run_one(benchmark::State& st, std::size_t i) {
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
void benchmark_run::record(benchmark::State& st, const planned_case& pc, result_row& row) {
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

bool init_google_benchmark(std::vector<std::string>& args) {
  // The display flags, read as Google Benchmark reads them (environment defaults, then the flags;
  // its reporter is replaced only for the console format).
  std::string format = flag_default("BENCHMARK_FORMAT", "console"), color = flag_default("BENCHMARK_COLOR", "auto");
  bool tabular = truthy(flag_default("BENCHMARK_COUNTERS_TABULAR", "false"));
  for (const std::string& a : args) {
    const auto value = [&](const std::string& flag) -> const char* {
      return a.rfind(flag + "=", 0) == 0 ? a.c_str() + flag.size() + 1 : nullptr;
    };
    if (const char* v = value("--benchmark_format")) format = v;
    if (const char* v = value("--benchmark_color")) color = v;
    if (const char* v = value("--benchmark_counters_tabular")) tabular = truthy(v);
    if (a == "--benchmark_counters_tabular") tabular = true;
  }
  display.console = format == "console";
  const bool colour = color == "auto" ? colour_terminal() : truthy(color);
  display.options = benchmark::ConsoleReporter::OutputOptions((colour ? benchmark::ConsoleReporter::OO_Color : 0) |
                                                              (tabular ? benchmark::ConsoleReporter::OO_Tabular : 0));
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

}  // namespace kcnn::bench
