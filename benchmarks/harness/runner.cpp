#include "runner.hpp"

#include "ceilings.hpp"
#include "context.hpp"
#include "modes.hpp"
#include "options.hpp"
#include "oversubscription.hpp"
#include "registry.hpp"
#include "results.hpp"
#include "stats.hpp"
#include "suite.hpp"

#include <kcnn/compat.hpp>

#include <Kokkos_Core.hpp>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <memory>
#include <new>
#include <set>
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

struct planned_case {
  const variant_info* variant;
  layer_spec spec;
  std::string key;
};

// Evicts caches between repetitions when --cold is given: writes a buffer several times the
// last-level cache (L2 on GPUs) in the default execution space.
class cache_flusher {
 public:
  explicit cache_flusher(double cache_bytes) {
    const std::size_t n = std::size_t(std::max(4.0 * cache_bytes, 64.0 * 1024 * 1024) / sizeof(float));
    buf_ = Kokkos::View<float*>("kcnn::cache_flush", n);
  }
  struct touch {
    Kokkos::View<float*> b;
    KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const { b(i) += 1.0f; }
  };
  void operator()() const {
    Kokkos::parallel_for("kcnn::cache_flush", Kokkos::RangePolicy<>(0, buf_.extent(0)),
                         touch{buf_});
  }

 private:
  Kokkos::View<float*> buf_;
};

std::string fmt(double v, int prec) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(prec) << v;
  return o.str();
}

class run_state {
 public:
  run_state(const options& o, std::vector<planned_case> cases, results_writer& w,
            const run_context& ctx, const ceilings& ceil)
      : opt_(o), cases_(std::move(cases)), writer_(w), ctx_(ctx), ceil_(ceil) {
    if (opt_.cold) flusher_ = std::make_unique<cache_flusher>(ctx.device.l2_or_llc_bytes);
  }

  void register_all() {
    for (std::size_t i = 0; i < cases_.size(); ++i) {
      auto* b = benchmark::RegisterBenchmark(cases_[i].key.c_str(),
                                             [this, i](benchmark::State& st) { run_case(st, i); });
      // The harness decides the number of repetitions itself (noise criterion + budget);
      // Google Benchmark sees one iteration whose manual time is the median.
      b->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
    }
  }

  void summary(std::ostream& os) const {
    std::size_t w = 10;
    for (const auto& r : rows_) w = std::max(w, r.key.size());
    os << "\nkcnn summary (" << rows_.size() << " cases, device " << ctx_.device.name
       << ", backend " << ctx_.device.backend << ")\n";
    os << std::left << std::setw(int(w)) << "case" << std::right << std::setw(12) << "median ms"
       << std::setw(10) << "GB/s" << std::setw(10) << "GFLOP/s" << std::setw(11) << "rel_err"
       << "  status\n";
    for (const auto& r : rows_) {
      const bool t = r.status == "ok";
      const double s = r.time_ms_median * 1e-3;
      os << std::left << std::setw(int(w)) << r.key << std::right << std::setw(12)
         << (t ? fmt(r.time_ms_median, 4) : "-") << std::setw(10)
         << (t ? fmt(r.bytes / s / 1e9, 2) : "-") << std::setw(10)
         << (t ? fmt(r.flops / s / 1e9, 2) : "-") << std::setw(11)
         << (r.rel_error >= 0 ? [&] { std::ostringstream o; o << std::setprecision(2) << r.rel_error; return o.str(); }() : "-")
         << "  " << r.status << (r.note.empty() || r.status == "ok" ? "" : " (" + r.note + ")")
         << "\n";
    }
  }

  int failures() const { return failures_; }
  const std::vector<measured_case>& measured() const { return measured_; }
  std::size_t count(const std::string& status) const {
    std::size_t n = 0;
    for (const auto& r : rows_) n += r.status == status;
    return n;
  }

 private:
  result_row base_row(const planned_case& pc) const {
    result_row r;
    const auto& s = pc.spec;
    r.suite = ctx_.suite;
    r.network = s.network;
    r.layer = s.layer;
    r.op = s.op;
    r.n = s.n; r.c = s.c; r.h = s.h; r.w = s.w; r.k = s.k; r.r = s.r; r.s = s.s;
    r.stride = s.stride; r.pad = s.pad; r.groups = s.groups;
    r.out_h = s.out.h; r.out_w = s.out.w; r.repeat = s.repeat;
    r.layout = pc.variant->layout;
    r.memory_space = pc.variant->space;
    r.access_pattern = pc.variant->pattern;
    r.variant = pc.variant->variant;
    r.tuning = pc.variant->tuning;
    r.key = pc.key;
    r.cache = opt_.cold ? "flushed" : "warm";
    r.tolerance = pc.variant->tolerance;
    return r;
  }

  void progress(std::size_t i) {
    const double el = clock_.seconds();
    std::ostringstream o;
    o << "[" << (i + 1) << "/" << cases_.size() << "] " << cases_[i].key << "  elapsed "
      << fmt(el, 1) << "s";
    if (done_ > 0) o << ", ~" << fmt(el / double(done_) * double(cases_.size() - done_), 1) << "s left";
    std::cerr << o.str() << std::endl;
  }

  // Kokkos reports a failed allocation as a std::bad_alloc or, depending on the version, a
  // std::runtime_error: "Kokkos failed to allocate memory for label ..." (3.x), "Kokkos ERROR:
  // Host memory space failed to allocate 1024 TiB (label=...)" (4.6).
  static bool out_of_memory(const std::exception& e) {
    if (dynamic_cast<const std::bad_alloc*>(&e)) return true;
    const std::string m = e.what();
    return m.find("failed to allocate") != std::string::npos ||
           m.find("cudaErrorMemoryAllocation") != std::string::npos;
  }

  void finish(result_row& row) {
    if (row.status == "ok")
      row.roofline_pct = roofline_pct(ceil_, row.bytes, row.flops, row.time_ms_median * 1e-3);
    writer_.write(row);
    if (row.status == "failed_validation" || row.status == "error") ++failures_;
    rows_.push_back(row);
    ++done_;
  }

  void run_case(benchmark::State& st, std::size_t i) {
    if (stop_signal) {
      st.SkipWithError("interrupted");
      return;
    }
    const planned_case& pc = cases_[i];
    progress(i);
    result_row row = base_row(pc);
    std::unique_ptr<bench_case> c;
    try {
      c = pc.variant->make(pc.spec);
      const case_cost cost = c->cost();
      row.bytes = cost.bytes;
      row.flops = cost.flops;
      row.workspace_bytes = cost.workspace_bytes;
      row.passes = cost.passes;
      row.predicted_dram_bytes = cost.predicted_dram_bytes;
      c->setup(opt_.seed);
      Kokkos::fence();
      // Validate first: one run on poisoned outputs, compared with the host reference.
      c->before_run();
      Kokkos::fence();
      Kokkos::Timer validate_clock;
      c->run();
      Kokkos::fence();
      const double validate_s = validate_clock.seconds();
      const comparison cmp = c->validate();
      row.rel_error = cmp.non_finite > 0 ? -1 : cmp.rel_l2;
      if (!cmp.passed) {
        row.status = "failed_validation";
        row.note = cmp.message;
        finish(row);
        st.SkipWithError(("failed validation: " + cmp.message).c_str());
        return;
      }
      // Quick mode is a smoke pass: a case whose validation run alone exceeded the budget is
      // not run again; that fenced run is its one sample (the row's note says so).
      const bool slow_quick = opt_.quick && validate_s > opt_.budget_s;
      const int warmup = slow_quick ? 0 : opt_.warmup;
      for (int k = 0; k < warmup; ++k) {
        c->before_run();
        Kokkos::fence();
        c->run();
      }
      Kokkos::fence();
      std::vector<double> samples;
      if (slow_quick) samples.push_back(validate_s);
      for (auto _ : st) {
        Kokkos::Timer budget;
        sample_stats s;
        while (!slow_quick) {
          if (flusher_) (*flusher_)();
          c->before_run();
          Kokkos::fence();  // nothing else in flight when the clock starts
          Kokkos::Timer t;
          c->run();
          Kokkos::fence();  // the kernel has finished when the clock stops
          samples.push_back(t.seconds());
          const int n = int(samples.size());
          if (n >= opt_.max_reps) break;
          if (n >= opt_.min_reps) {
            s = summarize(samples);
            if (s.rel_spread() < opt_.target_spread || budget.seconds() > opt_.budget_s) break;
          }
        }
        s = summarize(samples);
        st.SetIterationTime(s.median);
        row.reps = int(samples.size());
        row.time_ms_median = s.median * 1e3;
        row.time_ms_min = s.min * 1e3;
        row.time_ms_max = s.max * 1e3;
        row.time_ms_mean = s.mean * 1e3;
        row.time_ms_stddev = s.stddev * 1e3;
      }
      st.counters["bytes"] = benchmark::Counter(row.bytes, benchmark::Counter::kIsRate);
      st.counters["flops"] = benchmark::Counter(row.flops, benchmark::Counter::kIsRate);
      st.counters["reps"] = row.reps;
      st.counters["rel_err"] = row.rel_error;
      row.status = "ok";
      row.note = c->extra_note();
      if (slow_quick) row.note = join_notes(row.note, "quick: the validation run timed");
      row.note = join_notes(row.note, noisy_note(summarize(samples), samples.size(), opt_.noisy_spread));
      measured_.push_back({pc.variant, pc.spec.network, pc.spec.layer, row.time_ms_median});
      finish(row);
    } catch (const std::exception& e) {
      // A case too big for the device is skipped (the run goes on); anything else is an error.
      row.status = out_of_memory(e) ? "skipped" : "error";
      row.note = out_of_memory(e) ? std::string("out of memory: ") + e.what() : e.what();
      finish(row);
      st.SkipWithError(row.note.c_str());
    }
  }

  const options& opt_;
  std::vector<planned_case> cases_;
  results_writer& writer_;
  const run_context& ctx_;
  const ceilings& ceil_;
  std::unique_ptr<cache_flusher> flusher_;
  std::vector<result_row> rows_;
  std::vector<measured_case> measured_;
  Kokkos::Timer clock_;
  std::size_t done_ = 0;
  int failures_ = 0;
};

// What one timed repetition costs with nothing in it: fence, timer start, an empty one-element
// kernel, fence, timer read (median of 200). Recorded in the context; a case's time includes it.
struct empty_kernel {
  KOKKOS_INLINE_FUNCTION void operator()(const int) const {}
};
double timer_overhead_seconds() {
  std::vector<double> t;
  for (int i = 0; i < 200; ++i) {
    Kokkos::fence();
    Kokkos::Timer timer;
    Kokkos::parallel_for("kcnn::empty", Kokkos::RangePolicy<>(0, 1), empty_kernel{});
    Kokkos::fence();
    t.push_back(timer.seconds());
  }
  return summarize(t).median;
}

void print_ceilings(std::ostream& os, const ceilings& c) {
  os << "kcnn-bench: ceilings: copy " << fmt(c.copy_gbps, 1) << " GB/s, triad " << fmt(c.triad_gbps, 1)
     << " GB/s, fma " << fmt(c.fma_gflops, 1) << " GFLOP/s, gemm(" << c.gemm_n << ") "
     << fmt(c.gemm_gflops, 1) << " GFLOP/s (" << fmt(c.seconds, 1) << " s)\n";
}

// --ceilings: the ceilings alone, as op `ceiling` rows (variant copy, triad, fma, gemm) and in
// the context.
int run_ceilings_only(int argc, char** argv, const options& opt) {
  const run_context ctx = make_context(argc, argv, "ceilings");
  results_writer writer(opt.out, ctx);
  const ceilings c = measure_ceilings(ctx.device.l2_or_llc_bytes);
  print_ceilings(std::cout, c);
  auto row = [&](const std::string& variant, double seconds, double bytes, double flops, const std::string& note) {
    result_row r;
    r.suite = "ceilings";
    r.network = "device";
    r.layer = variant;
    r.op = "ceiling";
    r.layout = "-";
    r.memory_space = "global";
    r.access_pattern = "coalesced";
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
  row("copy", c.copy_s, 2 * c.array_bytes, 0, "b[i] = a[i] over " + fmt(c.array_bytes / 1048576.0, 0) + " MiB arrays");
  row("triad", c.triad_s, 3 * c.array_bytes, 0, "a[i] = b[i] + s c[i] over " + fmt(c.array_bytes / 1048576.0, 0) + " MiB arrays");
  row("fma", c.fma_s, 0, c.fma_flops, "independent fp32 FMA chains per work item (128 host, 32 GPU)");
  const double g = double(c.gemm_n);
  row("gemm", c.gemm_s, 3 * 4 * g * g, 2 * g * g * g, "KokkosBlas::gemm fp32 " + std::to_string(c.gemm_n) + "^3");
  writer.close("  \"ceilings\": " + ceilings_json(c) + ",\n  \"mode\": \"ceilings\"");
  std::cerr << "kcnn-bench: results in " << writer.final_path() << "\n";
  return 0;
}

std::string joined_suite_name(const std::vector<suite>& suites) {
  std::string s;
  for (const auto& su : suites) s += (s.empty() ? "" : "+") + su.name;
  return s;
}

int run(int argc, char** argv) {
  options opt;
  try {
    opt = parse_options(argc, argv);
  } catch (const usage_error& e) {
    std::cerr << "kcnn-bench: " << e.what() << "\n";
    return 2;
  }
  if (opt.help) {
    std::cout << usage_text();
    return 0;
  }
  oversubscription_cap_bytes() = opt.uvm_cap_gib * double(1 << 30);
  if ((opt.memory_plan || opt.network) && !opt.suites_given) opt.suites = {"all"};

  std::vector<suite> suites;
  std::vector<planned_case> cases;
  std::vector<std::string> not_applicable;
  try {
    for (const auto& name : opt.suites) {
      if (name == "all") {
        for (auto& su : all_network_suites()) suites.push_back(std::move(su));
      } else {
        suites.push_back(load_suite(resolve_suite(name)));
      }
    }
    for (auto& su : suites)
      if (opt.batch > 0) set_batch(su, opt.batch);
    if (opt.ceilings_only && !opt.list) return run_ceilings_only(argc, argv, opt);
    if (opt.memory_plan && !opt.list) {
      const run_context ctx = make_context(argc, argv, "memory_plan");
      results_writer writer(opt.out, ctx);
      const int rc = run_memory_plan(opt, suites, writer);
      writer.close("  \"mode\": \"memory_plan\"");
      std::cerr << "kcnn-bench: results in " << writer.final_path() << "\n";
      return rc;
    }
    // --quick on a network suite without variant filters: a smoke pass over every layer, once,
    // with the op's baseline (its first registered global-memory variant without tuning) in
    // nchw unless --layout says otherwise (--network: every layout, its per-layer plan chooses
    // among them), since the full catalogue of a real network takes hours on a host.
    const bool baseline_only = opt.quick && opt.variants.empty() && opt.spaces.empty() && opt.patterns.empty();
    const std::vector<std::string> quick_layouts =
        opt.layouts.empty() && !opt.network ? std::vector<std::string>{"nchw"} : opt.layouts;
    std::set<const variant_info*> baseline;
    {
      std::set<std::pair<std::string, std::string>> seen;
      for (const auto& v : registry::instance().variants())
        if (v.space == "global" && v.tuning.empty() && seen.insert({v.op, v.layout}).second) baseline.insert(&v);
    }
    for (auto& su : suites)
      for (const auto& spec : su.layers) {
        const bool smoke = baseline_only && su.kind == suite_kind::network;
        for (const auto& v : registry::instance().variants()) {
          if (smoke && !baseline.count(&v)) continue;
          if (v.op != spec.op || !matches(opt.ops, v.op) ||
              !matches(smoke ? quick_layouts : opt.layouts, v.layout) ||
              !matches(opt.spaces, v.space) || !matches(opt.patterns, v.pattern) ||
              !matches(opt.variants, v.variant))
            continue;
          const std::string key = case_key(v, spec);
          const std::string why = v.unsupported ? v.unsupported(spec) : std::string();
          if (!why.empty()) not_applicable.push_back(key + ": " + why);
          else cases.push_back({&v, spec, key});
        }
      }
  } catch (const suite_error& e) {
    std::cerr << "kcnn-bench: error: " << e.what() << "\n";
    return 2;
  }

  if (opt.list) {
    for (const auto& c : cases) std::cout << c.key << "\n";
    // Reasons go to stderr so that stdout stays one key per line.
    for (const auto& [what, why] : registry::instance().unavailable())
      std::cerr << "# not on this build: " << what << ": " << why << "\n";
    for (const auto& s : not_applicable) std::cerr << "# not applicable: " << s << "\n";
    return 0;
  }
  if (!not_applicable.empty())
    std::cerr << "kcnn-bench: " << not_applicable.size() << " selected case(s) not applicable here (--list says why)\n";
  if (!opt.resume.empty()) {
    std::set<std::string> done;
    try {
      for (auto& k : finished_keys(opt.resume)) done.insert(k);
    } catch (const std::exception& e) {
      std::cerr << "kcnn-bench: error: " << e.what() << "\n";
      return 2;
    }
    const std::size_t before = cases.size();
    cases.erase(std::remove_if(cases.begin(), cases.end(), [&](const planned_case& c) { return done.count(c.key) > 0; }),
                cases.end());
    std::cerr << "kcnn-bench: --resume: " << before - cases.size() << " of " << before << " cases already in "
              << opt.resume << "\n";
    if (cases.empty()) {
      std::cerr << "kcnn-bench: nothing left to run\n";
      return 0;
    }
  }
  if (cases.empty()) {
    std::cerr << "kcnn-bench: error: no case matches the filters (try --list)\n";
    return 2;
  }

  std::vector<char*> gb_argv;
  for (auto& a : opt.passthrough) gb_argv.push_back(a.data());
  int gb_argc = int(gb_argv.size());
  benchmark::Initialize(&gb_argc, gb_argv.data());
  if (benchmark::ReportUnrecognizedArguments(gb_argc, gb_argv.data())) return 2;

  const bool all = std::find(opt.suites.begin(), opt.suites.end(), "all") != opt.suites.end();
  const run_context ctx = make_context(argc, argv, all ? std::string("all") : joined_suite_name(suites));
  // A layer whose operands alone exceed the device's memory is an input error, found before
  // anything is written.
  for (const auto& c : cases) {
    const case_cost cost = c.variant->make(c.spec)->cost();
    if (ctx.device.memory_bytes > 0 && cost.bytes + cost.workspace_bytes > ctx.device.memory_bytes) {
      std::cerr << "kcnn-bench: error: " << c.spec.file << ":" << c.spec.line << ": field 'n': layer '"
                << c.spec.layer << "' needs " << fmt((cost.bytes + cost.workspace_bytes) / 1073741824.0, 1)
                << " GiB for its operands (" << c.key << "), more than the device's "
                << fmt(ctx.device.memory_bytes / 1073741824.0, 1) << " GiB\n";
      return 2;
    }
  }
  std::unique_ptr<results_writer> writer;
  try {
    writer = opt.resume.empty() ? std::make_unique<results_writer>(opt.out, ctx)
                                : std::make_unique<results_writer>(results_writer::append_to{opt.resume}, ctx);
  } catch (const std::exception& e) {
    std::cerr << "kcnn-bench: error: " << e.what() << "\n";
    return 2;
  }
  benchmark::AddCustomContext("kcnn.device", ctx.device.name);
  benchmark::AddCustomContext("kcnn.backend", ctx.device.backend);
  benchmark::AddCustomContext("kcnn.kokkos_version", ctx.kokkos_version);
  benchmark::AddCustomContext("kcnn.git_commit", ctx.git_commit);

  device_l2_bytes() = ctx.device.l2_or_llc_bytes;
  ceilings ceil;
  if (!opt.no_ceilings) {
    ceil = measure_ceilings(ctx.device.l2_or_llc_bytes);
    print_ceilings(std::cerr, ceil);
  }
  const double overhead_s = timer_overhead_seconds();
  run_state state(opt, std::move(cases), *writer, ctx, ceil);
  state.register_all();
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  benchmark::RunSpecifiedBenchmarks();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  const int interrupted_by = int(stop_signal);
  benchmark::ClearRegisteredBenchmarks();
  state.summary(std::cout);
  int network_failures = 0;
  if (opt.network && !interrupted_by) network_failures = run_network_plans(opt, suites, state.measured(), *writer);

  std::ostringstream extra;
  extra << "  \"timing\": {\n    \"warmup\": " << opt.warmup << ",\n    \"min_reps\": "
        << opt.min_reps << ",\n    \"max_reps\": " << opt.max_reps << ",\n    \"budget_s\": "
        << opt.budget_s << ",\n    \"target_rel_spread\": " << opt.target_spread
        << ",\n    \"noisy_rel_spread\": " << opt.noisy_spread
        << ",\n    \"timer_overhead_us\": " << overhead_s * 1e6
        << ",\n    \"quick\": " << (opt.quick ? "true" : "false") << ",\n    \"cache\": \""
        << (opt.cold ? "flushed" : "warm") << "\",\n    \"seed\": " << opt.seed
        << ",\n    \"fence\": \"Kokkos::fence() before and after every timed repetition\"\n  },\n"
        << "  \"ceilings\": " << ceilings_json(ceil) << ",\n"
        << "  \"cases\": {\"ok\": " << state.count("ok")
        << ", \"failed_validation\": " << state.count("failed_validation")
        << ", \"skipped\": " << state.count("skipped") << ", \"error\": " << state.count("error")
        << "},\n  \"interrupted\": " << (interrupted_by ? "true" : "false");
  if (!opt.resume.empty()) extra << ",\n  \"resumed\": " << "\"" << json_escape(opt.resume) << "\"";
  try {
    writer->close(extra.str());
  } catch (const std::exception& e) {
    std::cerr << "kcnn-bench: error: " << e.what() << "\n";
    return 1;
  }
  std::cerr << "kcnn-bench: results in " << writer->final_path() << " (context "
            << writer->json_path() << ")\n";
  if (interrupted_by) {
    std::cerr << "kcnn-bench: interrupted by signal " << interrupted_by << ": " << state.count("ok")
              << " cases finished and written; --resume " << writer->final_path() << " runs the rest\n";
    return 128 + interrupted_by;
  }
  return state.failures() + network_failures > 0 ? 1 : 0;
}

}  // namespace

int run_main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);  // removes --kokkos-* flags from argv
  int rc = 2;
  try {
    rc = run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "kcnn-bench: error: " << e.what() << "\n";
    rc = 1;
  }
  Kokkos::finalize();
  return rc;
}

}  // namespace kcnn::bench
