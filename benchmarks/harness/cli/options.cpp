#include "cli/options.hpp"

#include "cases/registry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>

namespace kcnn::bench {

namespace {

std::vector<std::string> split_list(const std::string& flag, const std::string& v) {
  std::vector<std::string> out;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  if (out.empty()) throw usage_error(flag + ": expected a comma-separated list, got '" + v + "'");
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

void check_values(const std::string& flag, const std::vector<std::string>& given,
                  const std::vector<std::string>& valid) {
  for (const auto& g : given)
    if (std::find(valid.begin(), valid.end(), g) == valid.end())
      throw usage_error(flag + ": unknown value '" + g + "' (valid: " + join(valid) + ")");
}

template <class T>
T parse_number(const std::string& flag, const std::string& v, T lo) {
  T x{};
  if (!parse_int_exact(v, x) || x < lo)
    throw usage_error(flag + ": expected a number >= " + std::to_string(lo) + ", got '" + v + "'");
  return x;
}

key_pattern make_key_pattern(const std::string& text, const std::string& where) {
  try {
    return {text, where, std::regex(text, std::regex::ECMAScript)};
  } catch (const std::regex_error& e) {
    throw usage_error(where + ": '" + text + "' is not a regular expression (" + e.what() + ")");
  }
}

double parse_double(const std::string& flag, const std::string& v) {
  try {
    std::size_t pos = 0;
    const double x = std::stod(v, &pos);
    if (pos == v.size() && x > 0 && std::isfinite(x)) return x;
  } catch (const std::exception&) {
  }
  throw usage_error(flag + ": expected a positive number, got '" + v + "'");
}

// A comma list of values of one axis; an unknown name is refused with the valid ones listed.
template <class Axis>
std::vector<Axis> parse_axis_list(const std::string& flag, const std::string& text) {
  std::vector<Axis> out;
  for (const auto& item : split_list(flag, text)) {
    const auto v = parse<Axis>(item);
    if (!v) {
      std::vector<std::string> valid;
      for (Axis a : all_values<Axis>()) valid.push_back(name(a));
      throw usage_error(flag + ": unknown value '" + item + "' (valid: " + join(valid) + ")");
    }
    out.push_back(*v);
  }
  return out;
}

}  // namespace

std::string usage_text() {
  return R"(usage: kcnn-bench [options] [--benchmark_* flags] [--kokkos-* flags]

Runs every registered case (op x layout x memory space x access pattern x variant) on the
layers of a suite: validate against the host reference, then time. Writes
<out>/<device>/<timestamp>-<suite>.csv and a .json context next to it.

  --list               print the key of every case that would run, one per line, and exit
  --catalogue          print the catalogue of ops, layouts, memory spaces, access patterns,
                       variants and tunings this build registers, as Markdown, and exit
  --suite S[,S...]     suite names (from suites/) or CSV paths; default: smoke; `all`: every
                       network suite (#@ kind: network)
  --op LIST            filter by op (e.g. conv2d)
  --layout LIST        filter by layout: nchw, nhwc, chwn, strided
  --space LIST         filter by memory space: global, scratch, constant, readonly, uvm_cold,
                       uvm_prefetch, uvm_advise, pinned
  --pattern LIST       filter by access pattern: coalesced, strided, tiled, regtile, library
  --variant LIST       filter by variant (algorithm), e.g. direct
  --batch N            override every layer's batch size n
  --out DIR            results root (default: results)
  --quick              small time budget and few repetitions (smoke tests)
  --cold               flush the caches between repetitions (default: warm)
  --seed N             seed of the input fill (default 20161113)
  --model-device NAME  gpu-model build: the GPU the model describes (default h100_sxm; see
                       benchmarks/model/devices.csv)
  --model-devices FILE gpu-model build: another file of GPU descriptions in that format
  --model-trace M      gpu-model build: millions of accesses traced per launch before the
                       rest of its blocks run untraced (counts scaled; default 8)
  --uvm-cap GIB        cap on the device memory left to the UVM oversubscription study's
                       chain (CUDA builds; default 4)
  --warmup N           untimed runs before timing (default 2, quick 1)
  --min-reps N         minimum timed repetitions (default 10, quick 3)
  --max-reps N         maximum timed repetitions (default 10000)
  --budget SECONDS     time budget per case for the timed repetitions (default 1.0, quick 0.05)
  --target-spread X    stop once stddev/mean < X after min-reps (default 0.01, quick 0.05)
  --noisy-spread X     mark a row `noisy` in its note when its final stddev/mean > X (default 0.05)
  --memory-plan        print the peak activation memory of each allocation strategy (no reuse,
                       free after last use, first-fit and best-fit arenas, lower bound) for
                       every network suite (default --suite all) at batch 1 and 64 (or --batch)
  --memory-limit MIB[,MIB...]  with --memory-plan: also a swap plan that keeps the peak under
                       each MIB; with --network: also a pass uniform_nchw_swap per limit, the
                       arena under MIB with that plan executed (copies to host memory and back)
  --network            run network suites as validated forward passes: per-layer cases first,
                       then the uniform nchw, nhwc and chwn plans, the per-layer plan, the
                       optimal layout plan and the first-fit arena pass
  --session NAME       a whole session in one command, under a time budget: `first-gpu`
                       (docs/gpu-session.md; scripts/gpu-check runs it on a lent GPU) runs the
                       smoke suite in the device's own memory spaces, with ncu on PATH the cases
                       of suites/ncu_cases.txt under Nsight Compute (<stamp>-ncu-metrics.csv; at most a
                       third of the budget, ended by SIGINT), perf_memory's memory-bound forms
                       (suites/perf_memory_model.txt), the VGG-16 conv3_1 ranking at batch
                       32, with ncu the warp states of suites/ncu_stall_cases.txt
                       (<stamp>-ncu-warp-states.csv; at most a tenth of the budget), perf_memory
                       and perf_compute sized by --fill, the managed and pinned
                       spaces once (--slow-reps 3), transfer and the UVM study (each a kcnn-bench
                       of its own, the other options passed on), then writes
                       <out>/<device>/<stamp>-session.json and runs kcnn-report on that folder
  --session-minutes M  the session's budget (default 30), report included: a step that would
                       overrun it is interrupted (its rows so far are kept), the steps after it
                       are skipped
  --print-device       print the device's results folder name and its name (tab-separated) and
                       exit
  --ceilings           only measure the device's ceilings (stream copy and triad bandwidth,
                       FMA peak, KokkosBlas::gemm rate): printed, and written as op `ceiling`
                       rows; every other run measures them first for its roofline_pct
  --no-ceilings        do not measure them (saves the seconds their line prints; roofline_pct
                       stays empty)
  --profile            after its validation, run each case once more, before its timed runs, inside
                       a profiler capture range: on a CUDA build cudaProfilerStart/Stop in an NVTX
                       range named by the case's key, so that `ncu --profile-from-start off`
                       profiles exactly those runs' kernels, once each; other builds have no
                       capture range (the extra run is still made; a warning says so)
  --profile-only       validate each case, then run it once inside the profiler capture range of
                       --profile, and time nothing (no ceilings, no calibration, no samples):
                       what an `ncu --profile-from-start off` run needs, and nothing else
  --key REGEX          only cases whose key contains a match of REGEX (ECMAScript; ^...$ for a
                       whole key); repeatable: a case matching any is selected; a pattern that
                       selects no case of this build is named on stderr
  --key-file FILE      the same, one REGEX per line of FILE (# comments and blank lines skipped;
                       e.g. suites/ncu_cases.txt, the session's Nsight Compute list)
  --fill               size each layer's batch to the device: the smallest batch at which its
                       activations (inputs and output) are at least 4x the last-level cache (L2
                       on a GPU), never below the suite's own, at most 64 and at most what keeps
                       them under a quarter of the device's memory; a network suite's layers
                       share one batch (the session's perf_memory and perf_compute steps)
  --slow-reps N        a case whose one launch takes longer than --slow-ms (default 10) is timed
                       at most N times (min-reps lowered to match): the long UVM and pinned rows
  --host-timer         time with the host clock between two fences on a GPU too (the fenced
                       timer of host backends), not with device events: the fallback should
                       the device timer's blocking kernel misbehave
  --hold-timeout-ms MS how long the device timer's blocking kernel holds a sample before it
                       ends by itself (default 20; CUDA builds): a case that waits for the
                       device on the host inside its run costs this once, then is timed unheld
  --resume FILE        run only the cases FILE (a results .csv, or the .csv.partial of an
                       interrupted or crashed run) does not already hold with status ok, and
                       append their rows to it
  --mpi MODE           under mpirun or srun, one rank per device (MPI builds): `shard` divides
                       the cases among the ranks by estimated cost and merges every rank's rows
                       into one results file on rank 0; `replicate` runs every case on 1, 2, 4,
                       ... all ranks at once, each sample started together, for contention
                       (rows per rank, column ranks; the aggregate rate in the note)
  --mpi-timeout S      the longest wait for the other ranks inside a case (default 600 s):
                       past it the job is aborted, naming the rank and the case
  --help               this text

SIGINT or SIGTERM: the case running finishes and is written, the rest is skipped, the files
are closed (the JSON says "interrupted": true) and the exit status is 128 + the signal.

Exit status: 0 all cases ok; 1 a case failed validation or errored; 2 usage or input error.
)";
}

std::vector<key_pattern> read_key_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw usage_error("--key-file: cannot read " + path);
  std::vector<key_pattern> out;
  std::string line;
  for (int n = 1; std::getline(f, line); ++n) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const auto last = line.find_last_not_of(" \t\r");
    out.push_back(make_key_pattern(line.substr(first, last - first + 1), path + ":" + std::to_string(n)));
  }
  if (out.empty()) throw usage_error("--key-file: " + path + " holds no pattern");
  return out;
}

options parse_options(int argc, char** argv) {
  options o;
  std::vector<std::string> variant_names;
  bool quick_set_budget = false, quick_set_min = false, quick_set_warm = false,
       quick_set_spread = false;
  if (argc > 0) o.passthrough.push_back(argv[0]);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--benchmark_", 0) == 0) {
      o.passthrough.push_back(a);
      continue;
    }
    std::string value;
    bool has_value = false;
    const auto eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_value = true;
    }
    auto need = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= argc) throw usage_error(a + ": missing value");
      return argv[++i];
    };
    auto flag_only = [&]() {
      if (has_value) throw usage_error(a + ": takes no value");
    };
    if (a == "--list") { flag_only(); o.list = true; }
    else if (a == "--catalogue") { flag_only(); o.catalogue = true; }
    else if (a == "--help" || a == "-h") { flag_only(); o.help = true; }
    else if (a == "--quick") { flag_only(); o.quick = true; }
    else if (a == "--cold") { flag_only(); o.cold = true; }
    else if (a == "--suite") { o.suites = split_list(a, need()); o.suites_given = true; }
    else if (a == "--memory-plan") { flag_only(); o.memory_plan = true; }
    else if (a == "--memory-limit") {
      o.memory_limits_mib.clear();
      for (const auto& v : split_list(a, need())) o.memory_limits_mib.push_back(parse_double(a, v));
    }
    else if (a == "--network") { flag_only(); o.network = true; }
    else if (a == "--session") o.session = need();
    else if (a == "--session-minutes") { o.session_minutes = parse_double(a, need()); o.session_minutes_given = true; }
    else if (a == "--print-device") { flag_only(); o.print_device = true; }
    else if (a == "--ceilings") { flag_only(); o.ceilings_only = true; }
    else if (a == "--no-ceilings") { flag_only(); o.no_ceilings = true; }
    else if (a == "--profile") { flag_only(); o.profile = true; }
    else if (a == "--host-timer") { flag_only(); o.host_timer = true; }
    else if (a == "--profile-only") { flag_only(); o.profile_only = true; }
    else if (a == "--key") o.keys.push_back(make_key_pattern(need(), "--key"));
    else if (a == "--key-file") {
      const auto more = read_key_file(need());
      o.keys.insert(o.keys.end(), more.begin(), more.end());
    }
    else if (a == "--fill") { flag_only(); o.fill = true; }
    else if (a == "--slow-reps") o.slow_reps = parse_number<int>(a, need(), 1);
    else if (a == "--slow-ms") o.slow_ms = parse_double(a, need());
    else if (a == "--hold-timeout-ms") {
      o.hold_timeout_ms = parse_double(a, need());
      if (o.hold_timeout_ms >= 3.6e6) throw usage_error("--hold-timeout-ms: under an hour");
    }
    else if (a == "--resume") { o.resume = need(); if (o.resume.empty()) throw usage_error("--resume: empty path"); }
    else if (a == "--op") o.ops = split_list(a, need());
    else if (a == "--layout") o.layouts = parse_axis_list<layout_axis>(a, need());
    else if (a == "--space") o.spaces = parse_axis_list<space_axis>(a, need());
    else if (a == "--pattern") o.patterns = parse_axis_list<pattern_axis>(a, need());
    else if (a == "--variant") variant_names = split_list(a, need());
    else if (a == "--batch") o.batch = parse_number<int>(a, need(), 1);
    else if (a == "--out") { o.out = need(); if (o.out.empty()) throw usage_error("--out: empty path"); }
    else if (a == "--seed") o.seed = parse_number<std::uint64_t>(a, need(), 0);
    else if (a == "--model-device" || a == "--model-devices" || a == "--model-trace") {
#if !defined(KCNN_GPU_MODEL)
      throw usage_error(a + ": needs the GPU-model build (cmake --preset gpu-model)");
#endif
      if (a == "--model-trace") {
        o.model_trace_millions = parse_double(a, need());
        if (!(o.model_trace_millions > 0)) throw usage_error("--model-trace: must be positive");
      } else {
        (a == "--model-device" ? o.model_device : o.model_devices) = need();
      }
    }
    else if (a == "--uvm-cap") o.uvm_cap_gib = parse_double(a, need());
    else if (a == "--mpi") {
      const std::string m = need();
      if (m == "shard") o.mpi = mpi_mode::shard;
      else if (m == "replicate") o.mpi = mpi_mode::replicate;
      else throw usage_error("--mpi: '" + m + "' is not a mode (shard, replicate)");
      if (!have_mpi()) throw usage_error("--mpi: this kcnn-bench was built without MPI (configure found none)");
    }
    else if (a == "--mpi-timeout") o.mpi_timeout_s = parse_double(a, need());
    else if (a == "--warmup") { o.warmup = parse_number<int>(a, need(), 0); quick_set_warm = true; }
    else if (a == "--min-reps") { o.min_reps = parse_number<int>(a, need(), 1); quick_set_min = true; }
    else if (a == "--max-reps") o.max_reps = parse_number<int>(a, need(), 1);
    else if (a == "--budget") { o.budget_s = parse_double(a, need()); quick_set_budget = true; }
    else if (a == "--target-spread") { o.target_spread = parse_double(a, need()); quick_set_spread = true; }
    else if (a == "--noisy-spread") o.noisy_spread = parse_double(a, need());
    else throw usage_error("unknown option '" + std::string(argv[i]) + "' (see --help)");
  }
  if (o.quick) {
    if (!quick_set_budget) o.budget_s = 0.05;
    if (!quick_set_min) o.min_reps = 3;
    if (!quick_set_warm) o.warmup = 1;
    if (!quick_set_spread) o.target_spread = 0.05;
  }
  if (o.max_reps < o.min_reps) throw usage_error("--max-reps must be >= --min-reps");
  if (o.ceilings_only && o.no_ceilings) throw usage_error("--ceilings and --no-ceilings exclude each other");
  if (o.profile_only && (o.profile || o.ceilings_only || o.network || o.memory_plan))
    throw usage_error("--profile-only runs each case once for a profiler: it takes no --profile, --ceilings, "
                      "--network or --memory-plan");
  if (o.fill && (o.batch > 0 || o.network))
    throw usage_error("--fill chooses each layer's batch: it takes no --batch or --network");
  if (o.session_minutes_given && o.session.empty()) throw usage_error("--session-minutes needs --session");
  if (!o.memory_limits_mib.empty() && !o.memory_plan && !o.network)
    throw usage_error("--memory-limit needs --memory-plan or --network");
  if (!o.session.empty()) {
    if (o.session != "first-gpu") throw usage_error("--session: unknown session '" + o.session + "' (valid: first-gpu)");
    if (o.suites_given || o.batch || o.list || o.catalogue || o.memory_plan || o.network || o.ceilings_only ||
        !o.resume.empty() || o.mpi != mpi_mode::none)
      throw usage_error("--session runs its own suites: it takes no --suite, --batch, --list, --catalogue, "
                        "--memory-plan, --network, --ceilings, --resume or --mpi");
  }
  // Ops and variants are validated against the registry (known only once layers registered).
  std::vector<std::string> ops, variants;
  for (const auto& op : registry::instance().ops()) ops.push_back(op.name);
  for (const auto& v : registry::instance().variants())
    if (std::find(variants.begin(), variants.end(), v.variant->name) == variants.end())
      variants.push_back(v.variant->name);
  check_values("--op", o.ops, ops);
  check_values("--variant", variant_names, variants);
  // Names resolve to the variant kinds of that name (several ops may each declare one).
  for (const auto& v : registry::instance().variants())
    for (const auto& n : variant_names)
      if (n == v.variant->name && std::find(o.variants.begin(), o.variants.end(), v.variant) == o.variants.end())
        o.variants.push_back(v.variant);
  return o;
}

}  // namespace kcnn::bench
