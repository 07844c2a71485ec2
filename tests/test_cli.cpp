// kcnn-bench as a process: --list and its filters, exit codes, results files, and the
// harness catching deliberately wrong kernels (kcnn-bench-faults).
#include "cases/registry.hpp"
#include "test_tmp.hpp"

#include <kcnn/compat.hpp>
#include <kcnn/lanes.hpp>

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace fs = std::filesystem;

namespace {
// --quick with one timed repetition, no warm-up and a negligible budget: for the tests of what a
// run writes (interrupted, resumed, sharded), where a case's time is not what is checked and its
// setup and validation are what is left.
const std::string quickest = "--quick --budget 0.001 --min-reps 1 --warmup 0";

struct proc_result {
  int code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

proc_result run(const std::string& exe, const std::string& args) {
  // Unique per process and call: ctest runs tests in parallel processes.
  static int calls = 0;
  const fs::path tmp = kcnn_test_tmp() /
                       ("kcnn_cli_test_" + std::to_string(::getpid()) + "_" + std::to_string(calls++));
  fs::create_directories(tmp);
  const std::string o = (tmp / "stdout").string(), e = (tmp / "stderr").string();
  const std::string cmd = "cd '" + std::string(KCNN_SOURCE_DIR) + "' && '" + exe + "' " + args +
                          " >'" + o + "' 2>'" + e + "'";
  const int st = std::system(cmd.c_str());
  proc_result r;
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = slurp(o);
  r.err = slurp(e);
  fs::remove_all(tmp);
  return r;
}

// Runs exe with args from the source folder, SIGINT ignored as a script's `cmd &` starts it, and
// sends it SIGINT as soon as its standard error has printed `marker`: the signal lands in the stage
// the marker opens however fast the host is. `seconds`: from the signal to the exit (-1: never sent).
proc_result run_interrupted_after(const std::string& exe, const std::vector<std::string>& args,
                                  const std::string& marker, double& seconds) {
  std::vector<char*> argv{const_cast<char*>(exe.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int err_pipe[2];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) return {};
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(err_pipe[0]);
    ::close(err_pipe[1]);
    return {};
  }
  if (pid == 0) {  // only async-signal-safe calls until exec (dup2 clears the copy's close-on-exec)
    std::signal(SIGINT, SIG_IGN);
    ::dup2(err_pipe[1], 2);
    ::close(err_pipe[0]);
    ::close(err_pipe[1]);
    const int null_out = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null_out >= 0) ::dup2(null_out, 1);
    if (::chdir(KCNN_SOURCE_DIR) != 0) ::_exit(126);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(err_pipe[1]);
  proc_result r;
  seconds = -1;
  std::chrono::steady_clock::time_point sent{};
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(err_pipe[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    r.err.append(buf, std::size_t(n));
    if (seconds < 0 && r.err.find(marker) != std::string::npos) {
      ::kill(pid, SIGINT);
      sent = std::chrono::steady_clock::now();
      seconds = 0;
    }
  }
  ::close(err_pipe[0]);
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (seconds == 0) seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  std::string l;
  while (std::getline(in, l))
    if (!l.empty()) v.push_back(l);
  return v;
}

// Splits on sep; for ',' (CSV rows) a field in double quotes may hold commas and "" quotes.
std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> v;
  if (sep == ',') {
    std::string f;
    bool quoted = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const char ch = s[i];
      if (quoted && ch == '"' && i + 1 < s.size() && s[i + 1] == '"') { f += '"'; ++i; }
      else if (ch == '"') quoted = !quoted;
      else if (ch == ',' && !quoted) { v.push_back(f); f.clear(); }
      else f += ch;
    }
    v.push_back(f);
    return v;
  }
  std::size_t start = 0;
  while (true) {
    const auto pos = s.find(sep, start);
    v.push_back(s.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return v;
}

// A suite file `name`.csv in the test's scratch folder with the standard header and `rows`.
fs::path write_suite(const std::string& name, const std::string& rows) {
  const fs::path p = kcnn_test_tmp() / (name + ".csv");
  std::ofstream(p) << "network,layer,op,n,c,h,w,k,r,s,stride,pad,groups\n" << rows;
  return p;
}

fs::path fresh_dir(const std::string& name) {
  const fs::path d = kcnn_test_tmp() / name;
  fs::remove_all(d);
  return d;
}

std::vector<fs::path> files_with(const fs::path& root, const std::string& ext) {
  std::vector<fs::path> v;
  if (!fs::exists(root)) return v;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.path().string().size() >= ext.size() &&
        e.path().string().compare(e.path().string().size() - ext.size(), ext.size(), ext) == 0)
      v.push_back(e.path());
  return v;
}

// Column index by name in a CSV header.
std::size_t col(const std::vector<std::string>& head, const std::string& name) {
  for (std::size_t i = 0; i < head.size(); ++i)
    if (head[i] == name) return i;
  ADD_FAILURE() << "no column " << name;
  return 0;
}
}  // namespace

TEST(Cli, ListConv2dCoversAllThreeLayoutsWithWellFormedKeys) {
  const auto r = run(KCNN_BENCH_EXE, "--list --op conv2d");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto keys = lines(r.out);
  ASSERT_FALSE(keys.empty());
  bool seen[3] = {false, false, false};
  for (const auto& k : keys) {
    const auto parts = split(k, '/');
    ASSERT_GE(parts.size(), 7u) << k;
    EXPECT_EQ(parts[0], "conv2d");
    seen[0] |= parts[1] == "nchw";
    seen[1] |= parts[1] == "nhwc";
    seen[2] |= parts[1] == "chwn";
    EXPECT_EQ(parts[5].rfind("smoke.", 0), 0u) << k;
    EXPECT_EQ(parts[6].rfind("n", 0), 0u) << k;
  }
  EXPECT_TRUE(seen[0] && seen[1] && seen[2]);
  EXPECT_NE(std::find(keys.begin(), keys.end(), "conv2d/nhwc/global/coalesced/direct/smoke.conv_s2/n8"),
            keys.end());
}

TEST(Cli, ListFiltersNarrowTheCases) {
  const auto all = lines(run(KCNN_BENCH_EXE, "--list").out);
  ASSERT_FALSE(all.empty());
  // Each filter keeps exactly the keys whose axis has one of the given values.
  auto expect_subset = [&](const std::string& args, std::size_t part,
                           const std::vector<std::string>& values) {
    const auto got = lines(run(KCNN_BENCH_EXE, "--list " + args).out);
    std::vector<std::string> want;
    for (const auto& k : all)
      if (std::find(values.begin(), values.end(), split(k, '/')[part]) != values.end())
        want.push_back(k);
    EXPECT_FALSE(got.empty()) << args;
    EXPECT_EQ(got, want) << args;
  };
  expect_subset("--layout nhwc", 1, {"nhwc"});
  expect_subset("--layout nhwc,chwn", 1, {"nhwc", "chwn"});
  expect_subset("--space scratch", 2, {"scratch"});
  expect_subset("--pattern regtile,strided", 3, {"regtile", "strided"});
  expect_subset("--variant im2col_gemm", 4, {"im2col_gemm"});
  expect_subset("--op fc", 0, {"fc"});
  // Filters combine: every axis must match.
  const auto combo = lines(run(KCNN_BENCH_EXE, "--list --op conv2d --layout chwn --space global --pattern coalesced --variant direct").out);
  ASSERT_FALSE(combo.empty());
  for (const auto& k : combo) EXPECT_EQ(k.rfind("conv2d/chwn/global/coalesced/direct/", 0), 0u) << k;
  const auto batch = lines(run(KCNN_BENCH_EXE, "--list --batch 3 --layout chwn").out);
  ASSERT_FALSE(batch.empty());
  for (const auto& k : batch) EXPECT_EQ(split(k, '/')[6], "n3") << k;
  // A known value that no registered case has lists nothing (and succeeds).
  const auto none = run(KCNN_BENCH_EXE, "--list --space uvm_cold");
  EXPECT_EQ(none.code, 0);
  EXPECT_TRUE(lines(none.out).empty());
}

TEST(Cli, ListShowsEveryComputeVariantAndExplainsTheMissingOnes) {
  const auto r = run(KCNN_BENCH_EXE, "--list --op conv2d,fc");
  ASSERT_EQ(r.code, 0);
  const auto keys = lines(r.out);
  auto has = [&](const std::string& prefix) {
    for (const auto& k : keys)
      if (k.rfind(prefix, 0) == 0) return true;
    return false;
  };
  for (const char* l : {"nchw", "nhwc", "chwn"}) {
    const std::string L = l;
    for (const char* v : {"/global/coalesced/direct/", "/global/strided/direct/", "/scratch/tiled/direct/",
                          "/global/regtile/direct/", "/constant/coalesced/direct/",
                          "/readonly/coalesced/direct/", "/global/library/im2col_gemm/"})
      EXPECT_TRUE(has("conv2d/" + L + v)) << L << v;
    for (const char* v : {"/global/library/gemm_kk/", "/global/coalesced/direct/", "/scratch/tiled/direct/",
                          "/constant/coalesced/direct/"})
      EXPECT_TRUE(has("fc/" + L + v)) << L << v;
  }
  EXPECT_TRUE(has("conv2d/nhwc/global/library/gemm_kk/smoke.conv_1x1/"));
  EXPECT_TRUE(has("conv2d/chwn/global/library/gemm_kk/smoke.conv_1x1/"));
  EXPECT_TRUE(has("conv2d/nchw/global/library/gemm_kk/smoke.conv_1x1/"));  // a GEMM per image
  EXPECT_TRUE(has("conv2d/strided/global/coalesced/direct/smoke.conv_3x3/n8/order_nhwc"));
  // Combinations that do not apply are explained on stderr.
  EXPECT_NE(r.err.find("conv2d/nchw/global/library/gemm_kk/smoke.conv_3x3/n8: not a 1x1"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fc/nhwc/constant/coalesced/direct/smoke.fc_800_500/n8: weights and bias"),
            std::string::npos) << r.err;
}

TEST(Cli, UnknownValuesListTheValidOnesAndExit2) {
  auto r = run(KCNN_BENCH_EXE, "--list --layout nwhc");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("'nwhc'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nchw, nhwc, chwn, strided"), std::string::npos) << r.err;
  r = run(KCNN_BENCH_EXE, "--list --op conv3d");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("conv2d"), std::string::npos) << r.err;
  r = run(KCNN_BENCH_EXE, "--frobnicate");
  EXPECT_EQ(r.code, 2);
  r = run(KCNN_BENCH_EXE, "--batch 0 --list");
  EXPECT_EQ(r.code, 2);
  r = run(KCNN_BENCH_EXE, "--list --suite no_such_suite");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown suite 'no_such_suite'"), std::string::npos) << r.err;
}

TEST(Cli, BadSuiteExits2AndWritesNothing) {
  const fs::path out = fresh_dir("kcnn_cli_bad_suite");
  const fs::path suite =
      write_suite("kcnn_cli_bad", "x,a,conv2d,1,1,8,8,1,3,3,1,1,1\nx,b,conv2d,1,1,8,8,1,3,3,0,1,1\n");
  const auto r = run(KCNN_BENCH_EXE, "--quick --suite " + suite.string() + " --out " + out.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("kcnn_cli_bad.csv:3: field 'stride'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// Debian's libbenchmark is built with assertions and would print "Library was built as DEBUG.
// Timings may be affected." on every run; kcnn takes its own times (its sampler, handed over as
// manual time), so the console shows Google Benchmark's context without it. The console still
// lists the cases; another --benchmark_format keeps Google Benchmark's own reporter.
TEST(Cli, ConsoleHasNoDebugLibraryWarning) {
  const fs::path out = fresh_dir("kcnn_cli_banner");
  const std::string args = "--quick --no-ceilings --op relu --layout nchw --variant naive --out " + out.string();
  const auto j = run(KCNN_BENCH_EXE, args + " --benchmark_format=json");  // Google Benchmark's own reporter
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_NE(j.out.find("\"benchmarks\""), std::string::npos) << j.out;
  const auto r = run(KCNN_BENCH_EXE, args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ((r.out + r.err).find("Library was built as DEBUG"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Run on ("), std::string::npos) << r.err;  // the rest of the context is kept
  EXPECT_NE(r.out.find("relu/nchw/global"), std::string::npos) << r.out;
  if (j.out.find("\"library_build_type\": \"debug\"") == std::string::npos)
    GTEST_SKIP() << "this libbenchmark is a release build: it prints no DEBUG line to keep out";
}

namespace {
// The ceilings a run measured, in its JSON context.
void expect_ceilings_in_context(const std::string& j) {
  for (const char* key : {"\"copy_gbps\"", "\"copy4_gbps\"", "\"copy_stream_gbps\"", "\"triad_gbps\"", "\"fma_gflops\"", "\"gemm_gflops\"", "\"peak_gflops\""})
    EXPECT_NE(j.find(key), std::string::npos) << key;
  EXPECT_EQ(j.find("\"ceilings\": null"), std::string::npos);
}
}  // namespace

TEST(Cli, QuickRunWritesValidatedRowsAndContext) {
  const fs::path out = fresh_dir("kcnn_cli_run");
#if defined(KCNN_TEST_SANITIZED)
  // One layout and no ceilings under the sanitizers (three layouts, or the ceilings, made this
  // one of the slowest tests there): the smoke suite in every layout runs there as its own test
  // (smoke_suite_sanitized), the ceilings in CeilingsAloneWritePlausibleRows.
  const std::string layouts = "nhwc";
  constexpr bool ceilings = false;
#else
  const std::string layouts = "nchw,nhwc,chwn";
  constexpr bool ceilings = true;
#endif
  const auto r = run(KCNN_BENCH_EXE, "--quick --layout " + layouts + (ceilings ? "" : " --no-ceilings") + " --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto csvs = files_with(out, ".csv");
  ASSERT_EQ(csvs.size(), 1u);
  EXPECT_TRUE(files_with(out, ".partial").empty());
  EXPECT_EQ(csvs[0].filename().string().substr(15), "Z-smoke.csv");
  const auto rows = lines(slurp(csvs[0]));
  const auto head = split(rows[0], ',');
  const auto expected = lines(run(KCNN_BENCH_EXE, "--list --layout " + layouts).out);
  ASSERT_EQ(rows.size(), expected.size() + 1);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto f = split(rows[i], ',');
    ASSERT_EQ(f.size(), head.size()) << rows[i];
    EXPECT_EQ(f[col(head, "status")], "ok") << rows[i];
    EXPECT_GT(std::stod(f[col(head, "time_ms_median")]), 0.0);
    // Quick mode: 3 repetitions; one only for a case whose validation run exceeded the 0.05 s budget.
    EXPECT_GE(std::stoi(f[col(head, "reps")]), std::stod(f[col(head, "time_ms_median")]) < 2 ? 3 : 1);
    EXPECT_GT(std::stod(f[col(head, "gbps")]), 0.0);
    if (std::stod(f[col(head, "flops")]) > 0) EXPECT_GT(std::stod(f[col(head, "gflops")]), 0.0);
    EXPECT_LT(std::stod(f[col(head, "rel_error")]), 1e-4);
    EXPECT_LE(std::stod(f[col(head, "time_ms_min")]), std::stod(f[col(head, "time_ms_median")]));
    // Ceilings were measured first, so every timed row has a roofline_pct (above 100 % is
    // possible: warm smoke cases run from cache, the roof is DRAM), and every conv2d/fc row
    // carries the traffic model's DRAM bytes, never below the compulsory bytes.
    if (ceilings) EXPECT_GT(std::stod(f[col(head, "roofline_pct")]), 0.0) << rows[i];
    else EXPECT_EQ(f[col(head, "roofline_pct")], "") << rows[i];
    const std::string op = f[col(head, "op")];
    if (op == "conv2d" || op == "fc")
      EXPECT_GE(std::stod(f[col(head, "predicted_dram_bytes")]), std::stod(f[col(head, "bytes")])) << rows[i];
    else
      EXPECT_EQ(f[col(head, "predicted_dram_bytes")], "") << rows[i];
  }
  const auto json = files_with(out, ".json");
  ASSERT_EQ(json.size(), 1u);
  const std::string j = slurp(json[0]);
  for (const char* key : {"\"kokkos\"", "\"version\"", "\"backends\"", "\"device\"", "\"host\"",
                          "\"compiler\"", "\"git\"", "\"command_line\"", "\"timing\""})
    EXPECT_NE(j.find(key), std::string::npos) << key;
  if (ceilings) expect_ceilings_in_context(j);
  else EXPECT_NE(j.find("\"ceilings\": null"), std::string::npos);
  EXPECT_NE(r.out.find("kcnn summary"), std::string::npos);
  EXPECT_NE(r.err.find("[1/"), std::string::npos) << "progress line";
}

TEST(Cli, ProfileRunsEachCaseOnceMoreAndSaysWhenThereIsNoCaptureRange) {
  const fs::path out = fresh_dir("kcnn_cli_profile");
  const auto r = run(KCNN_BENCH_EXE, "--quick --no-ceilings --profile --op relu,add --layout nchw --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
#if defined(KOKKOS_ENABLE_CUDA)
  EXPECT_EQ(r.err.find("--profile: this build has no device profiler"), std::string::npos) << r.err;
#else
  EXPECT_NE(r.err.find("warning: --profile: this build has no device profiler capture range"), std::string::npos)
      << r.err;
#endif
  const auto csvs = files_with(out, ".csv");
  ASSERT_EQ(csvs.size(), 1u);
  const auto rows = lines(slurp(csvs[0]));
  ASSERT_GT(rows.size(), 1u);
  const auto head = split(rows[0], ',');
  for (std::size_t i = 1; i < rows.size(); ++i) EXPECT_EQ(split(rows[i], ',')[col(head, "status")], "ok") << rows[i];
  EXPECT_EQ(run(KCNN_BENCH_EXE, "--profile=yes --list").code, 2);  // a flag, no value
}

TEST(Cli, ProfileOnlyValidatesRunsOnceAndTimesNothing) {
  const fs::path out = fresh_dir("kcnn_cli_profile_only");
  const auto r = run(KCNN_BENCH_EXE, "--profile-only --key '^(relu|add)/nchw/global/coalesced/naive/' --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("ceilings:"), std::string::npos) << "no ceilings: " << r.err;
  const auto csvs = files_with(out, ".csv");
  ASSERT_EQ(csvs.size(), 1u);
  const auto rows = lines(slurp(csvs[0]));
  ASSERT_EQ(rows.size(), 1u + 2u) << "relu and add, naive, nchw: " << slurp(csvs[0]);
  const auto head = split(rows[0], ',');
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto f = split(rows[i], ',');
    EXPECT_EQ(f[col(head, "status")], "ok") << rows[i];
    EXPECT_EQ(f[col(head, "reps")], "0") << rows[i];
    EXPECT_EQ(f[col(head, "time_ms_median")], "") << rows[i];
    EXPECT_FALSE(f[col(head, "rel_error")].empty()) << "validated: " << rows[i];
  }
  EXPECT_NE(slurp(csvs[0]).find("profile only: validated, one run in the capture range, not timed"), std::string::npos);
  // It excludes what would time or profile differently.
  EXPECT_EQ(run(KCNN_BENCH_EXE, "--profile-only --profile --list").code, 2);
  EXPECT_EQ(run(KCNN_BENCH_EXE, "--profile-only --ceilings").code, 2);
}

TEST(Cli, KeyPatternsSelectCasesAndBadOnesNameWhere) {
  const auto all = lines(run(KCNN_BENCH_EXE, "--list").out);
  const auto got = lines(run(KCNN_BENCH_EXE, "--list --key '^pool_max/nhwc/' --key '/concat/'").out);
  std::vector<std::string> want;
  for (const auto& k : all)
    if (k.rfind("pool_max/nhwc/", 0) == 0) want.push_back(k);
  ASSERT_FALSE(want.empty());
  EXPECT_EQ(got, want) << "'/concat/' is no key's part (the op is the key's first field)";
  // A key file: comments and blank lines skipped, each line a pattern; a bad line names file:line.
  const fs::path dir = fresh_dir("kcnn_cli_keys");
  fs::create_directories(dir);
  std::ofstream(dir / "keys.txt") << "# relu in nchw\n\n^relu/nchw/global/coalesced/naive/\n  ^add/nhwc/global/  \n";
  const auto from_file = lines(run(KCNN_BENCH_EXE, "--list --key-file " + (dir / "keys.txt").string()).out);
  ASSERT_FALSE(from_file.empty());
  for (const auto& k : from_file)
    EXPECT_TRUE(k.rfind("relu/nchw/global/coalesced/naive/", 0) == 0 || k.rfind("add/nhwc/global/", 0) == 0) << k;
  {
    std::ofstream bad(dir / "bad.txt");
    bad << "^relu/\n# fine\n^conv2d/(nchw\n";
  }
  // A pattern that selects nothing (a typo, or another build's case) is named, with where it is.
  const auto typo = run(KCNN_BENCH_EXE, "--list --key '^relu/nchw/global/coalesced/naive/' --key '^rleu/'");
  EXPECT_FALSE(lines(typo.out).empty());
  EXPECT_NE(typo.err.find("# selects no case of this build: --key: '^rleu/'"), std::string::npos) << typo.err;
  EXPECT_EQ(typo.err.find("'^relu/nchw/global/coalesced/naive/'"), std::string::npos) << typo.err;
  const auto bad = run(KCNN_BENCH_EXE, "--list --key-file " + (dir / "bad.txt").string());
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find((dir / "bad.txt").string() + ":3: '^conv2d/(nchw' is not a regular expression"), std::string::npos)
      << bad.err;
  EXPECT_EQ(run(KCNN_BENCH_EXE, "--list --key-file " + (dir / "none.txt").string()).code, 2);
  const auto none = run(KCNN_BENCH_EXE, "--quick --no-ceilings --key '^nothing$' --out " + dir.string());
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("no case matches the filters"), std::string::npos) << none.err;
}

TEST(Cli, NcuCaseListSpansEveryOpLayoutAndSpace) {
  // The GPU check's Nsight Compute list: each line names one case at most; on this build the
  // lines of CUDA-only spaces and peers name none, and the rest between them span every op,
  // every layout and every memory space this build has.
  const std::string list = std::string(KCNN_SOURCE_DIR) + "/suites/ncu_cases.txt";
  const auto selected = lines(run(KCNN_BENCH_EXE, "--list --suite ncu --key-file " + list).out);
  const auto every = lines(run(KCNN_BENCH_EXE, "--list --suite ncu").out);
  // The values of key field `part` (0 op, 1 layout, 2 memory space) among `keys`.
  const auto values = [](const std::vector<std::string>& keys, std::size_t part) {
    std::set<std::string> v;
    for (const auto& k : keys) v.insert(split(k, '/')[part]);
    return v;
  };
  for (std::size_t part : {0u, 1u, 2u}) EXPECT_EQ(values(selected, part), values(every, part)) << "key field " << part;
  int patterns = 0, cuda_only = 0;
  std::ifstream f(list);
  for (std::string line; std::getline(f, line);) {
    if (line.empty() || line[0] == '#') continue;
    ++patterns;
    const auto one = lines(run(KCNN_BENCH_EXE, "--list --suite ncu --key '" + line + "'").out);
    EXPECT_LE(one.size(), 1u) << line;
    if (one.empty()) {
      ++cuda_only;
      EXPECT_TRUE(line.find("cudnn") != std::string::npos || line.find("cublas") != std::string::npos ||
                  line.find("native_cuda") != std::string::npos || line.find("uvm_") != std::string::npos ||
                  line.find("pinned") != std::string::npos)
          << line << " selects nothing on this build";
    }
  }
#if !defined(KOKKOS_ENABLE_CUDA)
  EXPECT_EQ(int(selected.size()), patterns - cuda_only);
#endif
  EXPECT_GE(patterns, 40);
  EXPECT_LE(patterns, 60);
  EXPECT_GE(selected.size(), 40u);
}

TEST(Cli, NcuWarpStateListNamesOneCaseALineOfTheNcuList) {
  // The session's warp-state step profiles few cases (each kernel replayed for every pass of the
  // sections): each line names exactly one case, on a host build too, and one the Nsight Compute
  // list profiles, so that its counters and its warp states are of the same kernels.
  const std::string dir = std::string(KCNN_SOURCE_DIR) + "/suites/";
  const auto profiled = lines(run(KCNN_BENCH_EXE, "--list --suite ncu --key-file " + dir + "ncu_cases.txt").out);
  const std::set<std::string> in_ncu_list(profiled.begin(), profiled.end());
  int patterns = 0;
  std::ifstream f(dir + "ncu_stall_cases.txt");
  for (std::string line; std::getline(f, line);) {
    if (line.empty() || line[0] == '#') continue;
    ++patterns;
    const auto one = lines(run(KCNN_BENCH_EXE, "--list --suite ncu --key '" + line + "'").out);
    ASSERT_EQ(one.size(), 1u) << line;
    EXPECT_EQ(in_ncu_list.count(one[0]), 1u) << one[0] << " is not in suites/ncu_cases.txt's selection";
  }
  EXPECT_GE(patterns, 4);
  EXPECT_LE(patterns, 10);
}

TEST(Cli, MemoryLimitsGiveOneSwapRowEachAndNeedAMode) {
  // ResNet-50 at batch 1: 6.9 MiB in a first-fit arena; under 6.5 MiB three swaps bring it to
  // 6.1 MiB (block outputs waiting for their residual add); 6.0 MiB is below what any swap can
  // free at the peak step (a block's add: its two 3.1 MiB inputs).
  const fs::path out = fresh_dir("kcnn_cli_memory_limits");
  const auto r = run(KCNN_BENCH_EXE, "--memory-plan --suite resnet50 --batch 1 --memory-limit 6.5,6 --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto csvs = files_with(out, ".csv");
  ASSERT_EQ(csvs.size(), 1u);
  const auto rows = lines(slurp(csvs[0]));
  const auto head = split(rows[0], ',');
  std::map<std::string, std::vector<std::string>> swap_rows;  // by tuning
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto f = split(rows[i], ',');
    if (f[col(head, "variant")] == "swap") swap_rows[f[col(head, "tuning")]] = f;
  }
  ASSERT_EQ(swap_rows.size(), 2u);
  const auto& met = swap_rows.at("limit_6.5MiB");
  EXPECT_EQ(met[col(head, "status")], "ok");
  EXPECT_NEAR(std::stod(met[col(head, "bytes")]) / 1048576.0, 6.1, 0.05);
  const auto& not_met = swap_rows.at("limit_6MiB");
  EXPECT_EQ(not_met[col(head, "status")], "skipped");
  EXPECT_EQ(run(KCNN_BENCH_EXE, "--list --memory-limit 6").code, 2);
  EXPECT_EQ(run(KCNN_BENCH_EXE, "--memory-plan --memory-limit 6,-1").code, 2);
}

// KCNN_STREAMING_STORE_BYTES (device/host_stores.hpp) takes decimal digits only: a
// negative, suffixed, padded or overflowing value is refused before anything runs, naming it.
TEST(Cli, MalformedStreamingStoreBytesIsRefused) {
  const std::string exe = KCNN_BENCH_EXE;
  for (const char* v : {"-1", "12k", " 5", "", "18446744073709551616"}) {
    const auto r = run("env", std::string("KCNN_STREAMING_STORE_BYTES='") + v + "' '" + exe + "' --list --op relu");
    EXPECT_EQ(r.code, 2) << "'" << v << "'";
    EXPECT_NE(r.err.find("KCNN_STREAMING_STORE_BYTES"), std::string::npos) << r.err;
  }
  EXPECT_EQ(run("env", "KCNN_STREAMING_STORE_BYTES=18446744073709551615 '" + exe + "' --list --op relu").code, 0);
}

TEST(Cli, CeilingsAloneWritePlausibleRows) {
  const fs::path out = fresh_dir("kcnn_cli_ceilings");
  const auto r = run(KCNN_BENCH_EXE, "--ceilings --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto csvs = files_with(out, ".csv");
  ASSERT_EQ(csvs.size(), 1u);
  const auto rows = lines(slurp(csvs[0]));
  // copy, copy4, triad, cache_copy, fma, gemm; on a host also the streamed copy.
  constexpr bool host = kcnn::host_backend<Kokkos::DefaultExecutionSpace>;
  const std::size_t ceilings = host ? 7 : 6;
  ASSERT_EQ(rows.size(), ceilings + 1);
  const auto head = split(rows[0], ',');
  std::map<std::string, std::vector<std::string>> by;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto f = split(rows[i], ',');
    EXPECT_EQ(f[col(head, "op")], "ceiling");
    by[f[col(head, "variant")]] = f;
  }
  ASSERT_EQ(by.size(), ceilings);
  // Any machine this runs on moves more than 0.05 GB/s and computes more than 0.05 GFLOP/s, even
  // with builds beside it on two cores (copy4 measured 0.3 GB/s so): a unit slip (1000x) fails.
  constexpr double floor = 0.05;
  for (const char* v : {"copy", "copy4", "triad", "cache_copy"}) EXPECT_GT(std::stod(by[v][col(head, "gbps")]), floor) << v;
  if (host) EXPECT_GT(std::stod(by["copy_stream"][col(head, "gbps")]), floor);
  for (const char* v : {"fma", "gemm"}) EXPECT_GT(std::stod(by[v][col(head, "gflops")]), floor) << v;
  // Each ceiling is at (copy, triad or the streamed copy: the best is the roof) or under its own roof.
  double roof_pct = std::max(std::stod(by["copy"][col(head, "roofline_pct")]), std::stod(by["triad"][col(head, "roofline_pct")]));
  if (host) roof_pct = std::max(roof_pct, std::stod(by["copy_stream"][col(head, "roofline_pct")]));
  EXPECT_NEAR(roof_pct, 100.0, 0.01);
  EXPECT_LE(std::stod(by["gemm"][col(head, "roofline_pct")]), 100.01);
  EXPECT_NE(r.out.find("ceilings: copy"), std::string::npos) << r.out;
  const auto json = files_with(out, ".json");
  ASSERT_EQ(json.size(), 1u);
  expect_ceilings_in_context(slurp(json[0]));
  EXPECT_EQ(run(KCNN_BENCH_EXE, "--ceilings --no-ceilings").code, 2);
}

TEST(Cli, OneDnnPeersAreListedValidatedAndSayTheirThreads) {
  // What this build registers, not what configure found: a CUDA build finds oneDNN but has no
  // host-side peer to run.
  bool registered = false;
  for (const auto& v : kcnn::bench::registry::instance().variants())
    registered |= std::string(v.variant_name()) == "onednn";
  if (!registered) GTEST_SKIP() << "no oneDNN peer on this build";
  const auto listed = lines(run(KCNN_BENCH_EXE, "--list --variant onednn").out);
  // conv2d, fc, both pools, six activations, LRN, batch norm, softmax (nchw, nhwc) and the
  // nchw <-> nhwc transforms, on the smoke suite's layers.
  for (const char* op : {"conv2d/", "fc/", "pool_max/", "pool_avg/", "relu/", "sigmoid/", "lrn/", "batchnorm/",
                         "softmax/", "transform/"}) {
    bool found = false;
    for (const auto& k : listed) found = found || k.rfind(op, 0) == 0;
    EXPECT_TRUE(found) << op;
  }
  for (const auto& k : listed) EXPECT_EQ(k.find("/chwn/"), std::string::npos) << k;
  const fs::path out = fresh_dir("kcnn_cli_onednn");
  const auto r = run(KCNN_BENCH_EXE, "--quick --no-ceilings --variant onednn --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto rows = lines(slurp(files_with(out, ".csv").at(0)));
  ASSERT_EQ(rows.size(), listed.size() + 1);
  const auto head = split(rows[0], ',');
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto f = split(rows[i], ',');
    EXPECT_EQ(f[col(head, "status")], "ok") << rows[i];
    EXPECT_EQ(f[col(head, "variant")], "onednn");
    EXPECT_EQ(f[col(head, "origin")], "peer");
    EXPECT_EQ(f[col(head, "access_pattern")], "library");
    EXPECT_NE(rows[i].find("oneDNN 2."), std::string::npos) << rows[i];
    // oneDNN runs on as many threads as the Kokkos backend (1 on Serial).
    const int threads = kcnn::compat::concurrency(Kokkos::DefaultExecutionSpace());
    EXPECT_NE(rows[i].find(", " + std::to_string(threads) + " thread"), std::string::npos) << rows[i];
  }
}

TEST(Cli, WrongKernelsAreFailedNotTimedAndExit1) {
  const fs::path out = fresh_dir("kcnn_cli_faults");
  const auto r = run(KCNN_FAULTS_EXE, "--quick --no-ceilings --suite smoke --op conv2d --layout nchw,chwn "
                     "--variant direct,faulty_halo_off_by_one,faulty_unwritten,faulty_written_only_in_prepare --out " +
                     out.string());
  EXPECT_EQ(r.code, 1) << r.err;
  const auto csvs = files_with(out, ".csv");
  ASSERT_EQ(csvs.size(), 1u);
  const auto rows = lines(slurp(csvs[0]));
  const auto head = split(rows[0], ',');
  int ok = 0, failed = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    // Notes may hold commas inside quotes; the leading columns never do.
    const auto f = split(rows[i], ',');
    const std::string variant = f[col(head, "variant")];
    const std::string status = f[col(head, "status")];
    if (variant.rfind("faulty_", 0) != 0) {
      EXPECT_EQ(status, "ok") << rows[i];
      ++ok;
    } else {
      EXPECT_EQ(status, "failed_validation") << rows[i];
      EXPECT_EQ(f[col(head, "reps")], "0") << "a failed case is never timed: " << rows[i];
      EXPECT_EQ(f[col(head, "time_ms_median")], "") << rows[i];
      ++failed;
    }
  }
  EXPECT_GT(ok, 0);
  EXPECT_GT(failed, 0);
  EXPECT_NE(r.out.find("failed_validation"), std::string::npos);
  EXPECT_NE(r.out.find("unwritten"), std::string::npos) << "NaN-poisoned outputs are reported";
  EXPECT_NE(slurp(csvs[0]).find("faulty_written_only_in_prepare"), std::string::npos) << "the prepare-only case ran";
}

TEST(Cli, EveryOpsBrokenVariantsAreCaughtAndNeverTimed) {
  // Production kcnn-bench does not know the broken variants at all.
  EXPECT_EQ(run(KCNN_BENCH_EXE, "--list --variant faulty_off_by_one").code, 2);
  const fs::path out = fresh_dir("kcnn_cli_faults_all");
  const auto r = run(KCNN_FAULTS_EXE, "--quick --no-ceilings --suite smoke "
                     "--variant faulty_off_by_one,faulty_wrong_channel,faulty_unwritten,faulty_missing_channel --out " + out.string());
  EXPECT_EQ(r.code, 1) << r.err;
  const auto rows = lines(slurp(files_with(out, ".csv").at(0)));
  const auto head = split(rows[0], ',');
  std::map<std::string, std::set<std::string>> caught;  // op -> defects reported
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto f = split(rows[i], ',');
    EXPECT_EQ(f[col(head, "status")], "failed_validation") << rows[i];
    EXPECT_EQ(f[col(head, "reps")], "0") << rows[i];
    EXPECT_EQ(f[col(head, "time_ms_median")], "") << rows[i];
    caught[f[col(head, "op")]].insert(f[col(head, "variant")]);
  }
  // Every op of the smoke suite, each with the defects registered for it.
  for (const char* op : {"pool_max", "pool_avg", "lrn", "batchnorm", "add", "relu", "leaky_relu", "sigmoid", "tanh",
                         "elu", "softmax", "concat", "transform"})
    EXPECT_EQ(caught[op].size(), 3u) << op;
  EXPECT_EQ(caught["fc"], std::set<std::string>{"faulty_missing_channel"});
  EXPECT_NE(r.out.find("NaN/Inf or unwritten"), std::string::npos) << "an unwritten element is named as such: " << r.out;
}

TEST(Cli, ARaceInATeamReductionIsCaughtWhereTeamsHaveThreads) {
  const fs::path out = fresh_dir("kcnn_cli_race");
  const auto r = run(KCNN_FAULTS_EXE, "--quick --no-ceilings --suite smoke --op softmax --layout nchw "
                     "--variant fused,faulty_team_race --out " + out.string());
  const auto rows = lines(slurp(files_with(out, ".csv").at(0)));
  const auto head = split(rows[0], ',');
  std::map<std::string, std::vector<std::string>> status;  // variant -> statuses
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto f = split(rows[i], ',');
    status[f[col(head, "variant")]].push_back(f[col(head, "status")]);
    if (f[col(head, "variant")] == "faulty_team_race") EXPECT_EQ(f[col(head, "reps")], "0") << rows[i];
  }
  EXPECT_EQ(status["fused"], std::vector<std::string>(2, "ok"));  // smoke's two softmax layers
  if (kcnn::compat::concurrency(Kokkos::DefaultExecutionSpace()) < 2) {
    // Serial: one thread per team, no race can happen; the variant says why it does not run.
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(status["faulty_team_race"].empty());
    EXPECT_NE(r.err.find("2 selected case(s) not applicable here"), std::string::npos) << r.err;
    const auto list = run(KCNN_FAULTS_EXE, "--list --suite smoke --op softmax --variant faulty_team_race");
    EXPECT_EQ(list.out, "");
    EXPECT_NE(list.err.find("# not applicable: softmax/nchw/scratch/tiled/faulty_team_race/smoke.softmax_1000/n128: "
                            "a race in a team needs two or more threads per team; this backend runs 1"),
              std::string::npos) << list.err;
  } else {
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_EQ(status["faulty_team_race"], std::vector<std::string>(2, "failed_validation"));
  }
}

TEST(Cli, OutOfMemoryInACaseIsSkippedAndTheRunGoesOn) {
  const fs::path out = fresh_dir("kcnn_cli_oom");
  const auto r = run(KCNN_FAULTS_EXE, "--quick --no-ceilings --suite smoke --op relu,softmax --layout nchw "
                     "--space global --variant naive,multi_kernel,faulty_out_of_memory --out " + out.string());
  EXPECT_EQ(r.code, 0) << "a skipped case is not a failure: " << r.err;
  const auto rows = lines(slurp(files_with(out, ".csv").at(0)));
  const auto head = split(rows[0], ',');
  int skipped = 0, ok_after_skip = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto f = split(rows[i], ',');
    if (f[col(head, "variant")] == "faulty_out_of_memory") {
      EXPECT_EQ(f[col(head, "status")], "skipped") << rows[i];
      EXPECT_EQ(f[col(head, "reps")], "0") << rows[i];
      EXPECT_NE(rows[i].find("out of memory: "), std::string::npos) << rows[i];
      EXPECT_NE(rows[i].find("kcnn::fault_huge_workspace"), std::string::npos) << "Kokkos names the allocation: " << rows[i];
      ++skipped;
    } else {
      EXPECT_EQ(f[col(head, "status")], "ok") << rows[i];
      if (skipped > 0) ++ok_after_skip;
    }
  }
  EXPECT_EQ(skipped, 3);  // relu and smoke's two softmax layers
  EXPECT_GT(ok_after_skip, 0) << "the run went on after an out-of-memory case";
}

TEST(Cli, InterruptedRunKeepsItsRowsAndResumeFinishesIt) {
  const fs::path out = fresh_dir("kcnn_cli_interrupt");
#if defined(KCNN_TEST_SANITIZED)
  const std::string layouts = "nhwc";  // one layout is enough to be interrupted; sanitized, it is slow
#else
  const std::string layouts = "nchw,nhwc,chwn";
#endif
  // SIGINT as the 20th case starts (its progress line), however fast the host: the running case
  // finishes, the rest is skipped.
  std::vector<std::string> args = split(quickest, ' ');
  args.insert(args.end(), {"--no-ceilings", "--suite", "smoke", "--layout", layouts, "--out", out.string()});
  double seconds = -1;
  const auto r = run_interrupted_after(KCNN_BENCH_EXE, args, "[20/", seconds);
  ASSERT_GE(seconds, 0.0) << "the 20th case was announced: " << r.err;
  EXPECT_EQ(r.code, 130) << r.err;
  EXPECT_NE(r.err.find("interrupted by signal 2"), std::string::npos) << r.err;
  const auto csvs = files_with(out, ".csv");
  ASSERT_EQ(csvs.size(), 1u) << "the file is renamed into place";
  EXPECT_TRUE(files_with(out, ".partial").empty());
  const auto expected = lines(run(KCNN_BENCH_EXE, "--list --layout " + layouts).out);
  const auto first = lines(slurp(csvs[0]));
  ASSERT_GT(first.size(), 1u);
  ASSERT_LT(first.size(), expected.size() + 1);
  const auto head = split(first[0], ',');
  for (std::size_t i = 1; i < first.size(); ++i) {
    ASSERT_EQ(split(first[i], ',').size(), head.size()) << "a whole row: " << first[i];
    EXPECT_EQ(split(first[i], ',')[col(head, "status")], "ok");
  }
  const std::string json = csvs[0].string().substr(0, csvs[0].string().size() - 4) + ".json";
  EXPECT_NE(slurp(json).find("\"interrupted\": true"), std::string::npos);
  // --resume runs exactly the cases that are missing and appends them to the same file.
  const auto r2 = run(KCNN_BENCH_EXE, quickest + " --no-ceilings --suite smoke --layout " + layouts + " --resume " +
                      csvs[0].string());
  ASSERT_EQ(r2.code, 0) << r2.err;
  EXPECT_NE(r2.err.find(std::to_string(first.size() - 1) + " of " + std::to_string(expected.size()) + " cases already in"),
            std::string::npos) << r2.err;
  const auto all = lines(slurp(csvs[0]));
  ASSERT_EQ(all.size(), expected.size() + 1);
  std::set<std::string> keys;
  for (std::size_t i = 1; i < all.size(); ++i) keys.insert(split(all[i], ',')[col(head, "key")]);
  EXPECT_EQ(keys, std::set<std::string>(expected.begin(), expected.end()));
  EXPECT_NE(slurp(json).find("\"interrupted\": false"), std::string::npos);
  // A file of another kind is refused.
  const fs::path bogus = out / "bogus.csv";
  std::ofstream(bogus) << "a,b\n1,2\n";
  const auto r3 = run(KCNN_BENCH_EXE, "--quick --resume " + bogus.string());
  EXPECT_EQ(r3.code, 2);
  EXPECT_NE(r3.err.find("bogus.csv: not a results file of this version"), std::string::npos) << r3.err;
}

TEST(Cli, SigintDuringTheCeilingsStopsPromptlyEvenWhenInheritedIgnored) {
  // Started with SIGINT ignored (a script's `cmd &`), interrupted once it says it measures the
  // ceilings: the run stops within a sample, writes its (empty) file and says so.
  const fs::path out = fresh_dir("kcnn_cli_sigint_ceilings");
  double seconds = -1;
  const auto r = run_interrupted_after(KCNN_BENCH_EXE, {"--quick", "--suite", "smoke", "--out", out.string()},
                                       "kcnn-bench: measuring the ceilings", seconds);
  ASSERT_GE(seconds, 0.0) << "the ceilings were announced: " << r.err;
  EXPECT_EQ(r.code, 130) << r.err;
  EXPECT_NE(r.err.find("interrupted by signal 2"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("kcnn-bench: ceilings:"), std::string::npos) << "ceilings cut short are not printed: " << r.err;
  // Promptly: within the kernel running when the signal came (a copy of up to 1 GiB); a sanitized
  // build runs it several times slower.
#if defined(KCNN_TEST_SANITIZED)
  EXPECT_LT(seconds, 30.0) << "stopped promptly";
#else
  EXPECT_LT(seconds, 8.0) << "stopped promptly";
#endif
  const auto csvs = files_with(out, ".csv");
  ASSERT_EQ(csvs.size(), 1u);
  EXPECT_EQ(lines(slurp(csvs[0])).size(), 1u) << "the header only";
  const auto json = files_with(out, ".json");
  ASSERT_EQ(json.size(), 1u);
  EXPECT_NE(slurp(json[0]).find("\"interrupted\": true"), std::string::npos);
}

TEST(Cli, SessionRunsItsStepsInOrderUnderItsBudgetAndRecordsThem) {
  const fs::path out = fresh_dir("kcnn_cli_session");
  // 30 s: the first step (smoke) starts, the budget ends during it or soon after, and every step
  // left is skipped; no ncu on this PATH. Options not the session's reach each step.
  const auto r = run("/usr/bin/env", "PATH=/usr/bin:/bin '" + std::string(KCNN_BENCH_EXE) +
                     "' --session first-gpu --session-minutes 0.5 --quick --no-ceilings --layout nchw --out " +
                     out.string());
  EXPECT_NE(r.out.find("kcnn-bench: session first-gpu on "), std::string::npos) << r.out << r.err;
  const auto records = files_with(out, "-session.json");
  ASSERT_EQ(records.size(), 1u) << r.out << r.err;
  const std::string rec = slurp(records[0]);
  const std::vector<std::string> order = {"\"smoke\"", "\"ncu (model against hardware)\"",
                                          "\"perf_memory memory-bound forms\"", "\"vgg16_conv3_1 ranking\"",
                                          "\"ncu warp states (why kernels wait)\"", "\"perf_memory\"", "\"perf_compute\"",
                                          "\"memory spaces over the link\"", "\"transfer\"",
                                          "\"uvm_oversubscription\""};
  std::size_t at = 0;
  for (const auto& step : order) {
    const auto pos = rec.find(step, at);
    ASSERT_NE(pos, std::string::npos) << step << " in order in " << rec;
    at = pos;
  }
  EXPECT_NE(rec.find("--suite smoke --space global,scratch,constant,readonly --quick --no-ceilings --layout nchw --out"),
            std::string::npos)
      << rec;
  // Only the link study runs the spaces that cross the link.
  EXPECT_NE(rec.find("--suite perf_memory --key-file "), std::string::npos) << rec;
  EXPECT_NE(rec.find("suites/perf_memory_model.txt --quick"), std::string::npos) << rec;
  for (const char* step : {"--suite vgg16_conv3_1 --batch 32 --space global,scratch,constant,readonly --quick",
                           "--suite perf_memory --fill --space global,scratch,constant,readonly --quick",
                           "--suite perf_compute --fill --space global,scratch,constant,readonly --quick"})
    EXPECT_NE(rec.find(step), std::string::npos) << step << " in " << rec;
  EXPECT_NE(rec.find("--space uvm_cold,uvm_prefetch,uvm_advise,pinned --slow-reps 3"), std::string::npos) << rec;
  const auto smoke = rec.find("\"status\"", rec.find("\"smoke\""));
  const std::string smoke_status = rec.substr(smoke, rec.find('\n', smoke) - smoke);
  EXPECT_TRUE(smoke_status.find("\"ok\"") != std::string::npos ||
              smoke_status.find("\"interrupted at the budget\"") != std::string::npos) << rec;
  // The last steps cannot fit in what is left of 30 s.
  const auto uvm = rec.find("\"status\"", rec.find("\"uvm_oversubscription\""));
  const std::string skipped = "\"status\": \"skipped: budget spent\"";
  EXPECT_EQ(rec.compare(uvm, skipped.size(), skipped), 0) << rec;
  EXPECT_NE(rec.find("\"status\": \"skipped: ncu not on PATH\""), std::string::npos) << rec;
  EXPECT_NE(rec.find("\"budget_minutes\": 0.5"), std::string::npos) << rec;
  // The smoke step's rows are whole and validated, its file closed.
  const auto csvs = files_with(out, "-smoke.csv");
  ASSERT_EQ(csvs.size(), 1u);
  EXPECT_TRUE(files_with(out, ".partial").empty());
  const auto rows = lines(slurp(csvs[0]));
  ASSERT_GT(rows.size(), 1u);
  const auto head = split(rows[0], ',');
  for (std::size_t i = 1; i < rows.size(); ++i) {
    EXPECT_EQ(split(rows[i], ',')[col(head, "status")], "ok") << rows[i];
    EXPECT_EQ(split(rows[i], ',')[col(head, "layout")], "nchw") << rows[i];
  }
  // Its own options are refused with anything that would choose the suites.
  const auto bad = run(KCNN_BENCH_EXE, "--session first-gpu --suite smoke");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--session runs its own suites"), std::string::npos) << bad.err;
  const auto unknown = run(KCNN_BENCH_EXE, "--session second-gpu");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("--session: unknown session 'second-gpu' (valid: first-gpu)"), std::string::npos)
      << unknown.err;
}

TEST(Cli, SessionRunsNcuWhenItIsOnPathAndTheReportPassesItsCsvOver) {
  const fs::path out = fresh_dir("kcnn_cli_session_ncu");
  // A stand-in for Nsight Compute: writes a CSV where --log-file says, the capture setting and
  // the target's command line beside it, then runs the target.
  const fs::path bin = kcnn_test_tmp() / "kcnn_cli_fake_ncu";
  fs::create_directories(bin);
  std::ofstream(bin / "ncu") << "#!/bin/sh\nlog=''\nfrom=on\nwhile [ $# -gt 0 ]; do\n  case \"$1\" in\n"
                                "    --log-file) log=$2; shift 2 ;;\n    --metrics) m=\"$m $2\"; shift 2 ;;\n"
                                "    --page) page=$2; shift 2 ;;\n    --section) m=\"$m $2\"; shift 2 ;;\n"
                                "    --profile-from-start) from=$2; shift 2 ;;\n"
                                "    --clock-control) clock=$2; shift 2 ;;\n"
                                "    --print-nvtx-rename) rename=$2; shift 2 ;;\n    --print-units) shift 2 ;;\n"
                                "    --nvtx) nvtx=1; shift ;;\n"
                                "    --csv) shift ;;\n    *) break ;;\n  esac\ndone\n"
                                "printf '\"ID\",\"Metric Name\",\"Metric Value\"\\n\"0\",\"%s\",\"1\"\\n' \"$m\" > \"$log\"\n"
                                "echo \"from-start=$from clock=$clock nvtx=$nvtx rename=$rename page=$page target: $*\" > \"$log.args\"\n"
                                "exec \"$@\"\n";
  fs::permissions(bin / "ncu", fs::perms::owner_all);
  // One concat form, the one-element nhwc walk, and only where the smoke and Nsight Compute lists
  // hold it: the smoke step and the profiled run are short; the other steps select nothing (no
  // concat, or the perf_memory steps' DRAM-sized concat, which the key leaves out) and fail at
  // once (exit 2), which the record says.
  const auto r = run("/usr/bin/env", "PATH=" + bin.string() + ":/usr/bin:/bin '" + std::string(KCNN_BENCH_EXE) +
                     "' --session first-gpu --session-minutes 5 --quick --no-ceilings --op concat --layout nhwc "
                     "--variant naive --key '^concat/nhwc/global/coalesced/naive/(smoke|ncu)\\.' --out " +
                     out.string());
  EXPECT_EQ(r.code, 1) << r.out << r.err;  // the steps without concat failed
  const auto records = files_with(out, "-session.json");
  ASSERT_EQ(records.size(), 1u) << r.out << r.err;
  const std::string rec = slurp(records[0]);
  const auto ncu_at = rec.find("\"ncu (model against hardware)\"");
  ASSERT_NE(ncu_at, std::string::npos) << rec;
  EXPECT_NE(rec.find("\"status\": \"ok\"", ncu_at), std::string::npos) << rec;
  EXPECT_NE(rec.find("\"status\": \"failed (exit 2)\""), std::string::npos) << rec;
  const auto metrics = files_with(out, "-ncu-metrics.csv");
  ASSERT_EQ(metrics.size(), 1u);
  EXPECT_EQ(metrics[0].parent_path(), records[0].parent_path()) << "beside the session's results";
  EXPECT_NE(slurp(metrics[0]).find("dram__bytes_read.sum"), std::string::npos);
  // ncu captures only the capture ranges, and the target opens one per case (--profile-only):
  // the committed list of DRAM-sized cases, nothing timed; kernels are named after the case's
  // NVTX range (scripts/ncu-counters reads them so); the GPU's own clocks.
  const std::string args = slurp(fs::path(metrics[0].string() + ".args"));
  EXPECT_NE(args.find("from-start=off clock=none nvtx=1 rename=kernel "), std::string::npos) << args;
  EXPECT_NE(args.find(" --suite ncu --key-file "), std::string::npos) << args;
  EXPECT_NE(args.find("suites/ncu_cases.txt"), std::string::npos) << args;
  EXPECT_NE(args.find(" --profile-only"), std::string::npos) << args;
  // It follows smoke: the second step.
  EXPECT_LT(rec.find("\"smoke\""), ncu_at);
  EXPECT_LT(ncu_at, rec.find("\"vgg16_conv3_1 ranking\"")) << rec;
  // The warp-state step: Nsight Compute's sections (no metric named here) over its own short
  // list, one row per kernel (--page raw), after the VGG ranking; it selects nothing of this run's
  // concat key, and fails as the other steps without concat do.
  const auto states_at = rec.find("\"ncu warp states (why kernels wait)\"");
  ASSERT_NE(states_at, std::string::npos) << rec;
  EXPECT_LT(rec.find("\"vgg16_conv3_1 ranking\""), states_at) << rec;
  const auto states = files_with(out, "-ncu-warp-states.csv");
  ASSERT_EQ(states.size(), 1u);
  EXPECT_EQ(states[0].parent_path(), records[0].parent_path());
  EXPECT_NE(slurp(states[0]).find(" WarpStateStats SchedulerStats gpu__time_duration.sum"), std::string::npos)
      << slurp(states[0]);
  const std::string states_args = slurp(fs::path(states[0].string() + ".args"));
  EXPECT_NE(states_args.find("from-start=off clock=none nvtx=1 rename=kernel page=raw "), std::string::npos) << states_args;
  EXPECT_NE(states_args.find("suites/ncu_stall_cases.txt"), std::string::npos) << states_args;
  EXPECT_NE(states_args.find(" --profile-only"), std::string::npos) << states_args;
  EXPECT_NE(states_args.find("/ncu-profiled-warp-states"), std::string::npos) << states_args;
  // The profiled run's rows are apart from the timed ones, and validated.
  const auto profiled = files_with(out / "ncu-profiled", "-ncu.csv");
  ASSERT_EQ(profiled.size(), 1u);
  const auto rows = lines(slurp(profiled[0]));
  ASSERT_GT(rows.size(), 1u);
  const auto head = split(rows[0], ',');
  for (std::size_t i = 1; i < rows.size(); ++i) EXPECT_EQ(split(rows[i], ',')[col(head, "op")], "concat");
  // The report went through, the metrics CSV beside the results notwithstanding.
  EXPECT_NE(rec.find("report/index.html\""), std::string::npos) << rec;
  EXPECT_TRUE(fs::exists(records[0].parent_path() / "report" / "index.html"));
}

TEST(Cli, SessionInterruptedBySigintStopsItsStepAndRecordsIt) {
  const fs::path out = fresh_dir("kcnn_cli_session_int");
  // SIGINT reaches the session only (its steps run in process groups of their own): it passes
  // the signal on, the step closes its files, the rest is skipped and the record written.
  const auto r = run("/usr/bin/timeout", "--preserve-status -s INT 4 '" + std::string(KCNN_BENCH_EXE) +
                     "' --session first-gpu --session-minutes 10 --quick --no-ceilings --out " + out.string());
  EXPECT_EQ(r.code, 130) << r.out << r.err;
  const auto records = files_with(out, "-session.json");
  ASSERT_EQ(records.size(), 1u) << r.out << r.err;
  const std::string rec = slurp(records[0]);
  EXPECT_NE(rec.find("\"status\": \"interrupted by signal 2\""), std::string::npos) << rec;
  EXPECT_NE(rec.find("\"status\": \"skipped: session interrupted\""), std::string::npos) << rec;
  EXPECT_NE(rec.find("\"report\": \"skipped: session interrupted\""), std::string::npos) << rec;
  EXPECT_TRUE(files_with(out, ".partial").empty());
  const auto contexts = files_with(out, "-smoke.json");
  ASSERT_EQ(contexts.size(), 1u);
  EXPECT_NE(slurp(contexts[0]).find("\"interrupted\": true"), std::string::npos);
}

TEST(Cli, CrashLeavesTheFinishedRowsReadable) {
  const fs::path out = fresh_dir("kcnn_cli_crash");
  const fs::path suite = write_suite("kcnn_cli_crash", "t,act,relu,2,4,8,8,,,,,,\nt,conv,conv2d,2,4,8,8,4,3,3,1,1,1\n");
  const auto r = run(KCNN_FAULTS_EXE, "--quick --no-ceilings --layout nchw --variant naive,faulty_abort --suite " +
                     suite.string() + " --out " + out.string());
  EXPECT_EQ(r.code, 128 + 6) << "killed by SIGABRT: " << r.err;
  const auto partial = files_with(out, ".partial");
  ASSERT_EQ(partial.size(), 1u);
  const auto rows = lines(slurp(partial[0]));
  ASSERT_GE(rows.size(), 2u) << "header and the relu rows finished before the crash";
  const auto head = split(rows[0], ',');
  for (std::size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(split(rows[i], ',').size(), head.size()) << rows[i];
    EXPECT_EQ(split(rows[i], ',')[col(head, "op")], "relu");
    EXPECT_EQ(split(rows[i], ',')[col(head, "status")], "ok");
  }
  // ... and --resume picks it up, finishing the file under its final name (the abort again).
  const auto r2 = run(KCNN_BENCH_EXE, "--quick --no-ceilings --layout nchw --variant naive,direct --suite " +
                      suite.string() + " --resume " + partial[0].string());
  EXPECT_EQ(r2.code, 0) << r2.err;
  EXPECT_EQ(files_with(out, ".csv").size(), 1u);
  EXPECT_TRUE(files_with(out, ".partial").empty());
}

TEST(Cli, LayerLargerThanTheDeviceMemoryIsAnInputError) {
  const fs::path out = fresh_dir("kcnn_cli_footprint");
  const fs::path suite = write_suite("kcnn_cli_footprint", "t,ok,relu,1,4,8,8,,,,,,\nt,huge,relu,1000000,1024,224,224,,,,,,\n");
  const auto r = run(KCNN_BENCH_EXE, "--quick --no-ceilings --suite " + suite.string() + " --out " + out.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("kcnn_cli_footprint.csv:3: field 'n': layer 'huge' needs"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

#if defined(KCNN_HAVE_MPI)
// --mpi: two ranks on this host (mpirun --oversubscribe; as root, Open MPI needs its
// allow-run-as-root variables). Each test is bounded by `timeout` so that a hang fails it.
namespace {
std::string mpirun(int ranks, const std::string& exe) {
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  return "-k 10 240 '" + std::string(KCNN_MPIEXEC) + "' -n " + std::to_string(ranks) +
         " --oversubscribe --mca btl self,vader --mca btl_vader_single_copy_mechanism none '" + exe + "'";
}
std::set<std::string> column_values(const std::vector<std::string>& rows, const std::string& name) {
  const auto head = split(rows.at(0), ',');
  std::set<std::string> v;
  for (std::size_t i = 1; i < rows.size(); ++i) v.insert(split(rows[i], ',')[col(head, name)]);
  return v;
}
}  // namespace

TEST(Cli, MpiShardMergesEveryRanksRowsIntoOneFileWithTheCasesOfOneRank) {
  const auto listed = lines(run(KCNN_BENCH_EXE, "--suite smoke --list").out);
  ASSERT_GT(listed.size(), 100u);
  const fs::path out = fresh_dir("kcnn_cli_mpi_shard");
  const auto r = run("timeout", mpirun(2, KCNN_BENCH_EXE) + " --mpi shard --suite smoke " + quickest +
                                    " --no-ceilings --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto csvs = files_with(out, ".csv");
  ASSERT_EQ(csvs.size(), 1u);  // one merged file
  EXPECT_TRUE(files_with(out, ".partial").empty()) << "the ranks' own files are removed after the merge";
  const auto rows = lines(slurp(csvs[0]));
  const auto head = split(rows[0], ',');
  std::multiset<std::string> keys;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto f = split(rows[i], ',');
    keys.insert(f[col(head, "key")]);
    EXPECT_EQ(f[col(head, "status")], "ok") << rows[i];
    EXPECT_EQ(f[col(head, "ranks")], "1");
  }
  EXPECT_EQ(keys, std::multiset<std::string>(listed.begin(), listed.end()));
  EXPECT_EQ(column_values(rows, "rank"), (std::set<std::string>{"0", "1"}));  // both ranks worked
  // Each rank's rows point to its own context.
  const auto run_ids = column_values(rows, "run_id");
  EXPECT_EQ(run_ids.size(), 2u);
  const std::string json = slurp(files_with(out, ".json").at(0));
  EXPECT_NE(json.find("\"mode\": \"shard\""), std::string::npos);
  for (const auto& id : run_ids) EXPECT_NE(json.find(id), std::string::npos) << id;
  EXPECT_NE(json.find("\"ok\": " + std::to_string(listed.size())), std::string::npos) << "case counts of both ranks";
}

TEST(Cli, MpiReplicateGivesPerRankRowsAndAggregateRates) {
  const fs::path suite = write_suite("mpi_replicate", "t,copy,transfer,1,1,1,4000000,,,,,,\n"
                                                      "t,relu,relu,4,16,128,128,,,,,,\n");
  const fs::path out = fresh_dir("kcnn_cli_mpi_replicate");
  const auto r = run("timeout", mpirun(2, KCNN_BENCH_EXE) + " --mpi replicate --suite " + suite.string() +
                                    " --variant h2h,naive --layout nchw --space global --quick --no-ceilings --out " +
                                    out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto rows = lines(slurp(files_with(out, ".csv").at(0)));
  const auto head = split(rows[0], ',');
  std::map<std::string, std::multiset<std::string>> ranks_of;  // "key ranks" -> ranks that timed it
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto f = split(rows[i], ',');
    EXPECT_EQ(f[col(head, "status")], "ok") << rows[i];
    ranks_of[f[col(head, "key")] + " " + f[col(head, "ranks")]].insert(f[col(head, "rank")]);
    const std::string note = f[col(head, "note")];
    EXPECT_NE(note.find(f[col(head, "ranks")] + (f[col(head, "ranks")] == "1" ? " rank at once" : " ranks at once") +
                        ": aggregate "), std::string::npos) << note;
  }
  ASSERT_EQ(ranks_of.size(), 4u) << "2 cases x (1 rank, 2 ranks at once)";
  for (const auto& [k, rs] : ranks_of)
    EXPECT_EQ(rs, (k.back() == '1' ? std::multiset<std::string>{"0"} : std::multiset<std::string>{"0", "1"})) << k;
}

TEST(Cli, MpiAFailedValidationOnOneRankEndsTheJobWith1WithoutHanging) {
  const fs::path out = fresh_dir("kcnn_cli_mpi_fault");
  const auto r = run("timeout", mpirun(2, KCNN_FAULTS_EXE) + " --mpi shard --quick --no-ceilings --suite smoke "
                                    "--op conv2d --layout nchw --variant direct,faulty_halo_off_by_one --out " + out.string());
  EXPECT_EQ(r.code, 1) << r.err;  // not 124 (timeout) nor a crash
  const auto rows = lines(slurp(files_with(out, ".csv").at(0)));
  const auto head = split(rows[0], ',');
  int failed = 0, ok = 0;
  std::set<std::string> failing_ranks;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto f = split(rows[i], ',');
    if (f[col(head, "status")] == "failed_validation") {
      ++failed;
      failing_ranks.insert(f[col(head, "rank")]);
    }
    ok += f[col(head, "status")] == "ok";
  }
  EXPECT_GT(failed, 0);
  EXPECT_GT(ok, 0);
  EXPECT_FALSE(failing_ranks.empty());
}
#endif

#if defined(KCNN_HAVE_MPI)
TEST(Cli, MpiJobKilledBeforeItsMergeIsFinishedByResume) {
  // mpirun, sent SIGTERM, kills its ranks at once: rank 0's file stays .partial and the other
  // rank's rows wait beside it. --resume adopts them and runs only what is missing.
  const auto listed = lines(run(KCNN_BENCH_EXE, "--suite smoke --list").out);
  const fs::path out = fresh_dir("kcnn_cli_mpi_killed");
  const std::string cmd = "timeout -s TERM 6 " + mpirun(2, KCNN_BENCH_EXE).substr(std::string("-k 10 240 ").size()) +
                          " --mpi shard --suite smoke --quick --no-ceilings --out " + out.string();
  (void)std::system(("cd '" + std::string(KCNN_SOURCE_DIR) + "' && " + cmd + " >/dev/null 2>&1").c_str());
  auto partial = files_with(out, ".csv.partial");
  auto done = files_with(out, ".csv");
  ASSERT_EQ(partial.size() + done.size(), 1u);
  const fs::path file = partial.empty() ? done[0] : partial[0];
  const auto r = run("timeout", mpirun(2, KCNN_BENCH_EXE) + " --mpi shard --suite smoke --quick --no-ceilings --resume " +
                                    file.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(files_with(out, ".partial").empty());
  const auto rows = lines(slurp(files_with(out, ".csv").at(0)));
  const auto head = split(rows[0], ',');
  std::multiset<std::string> keys;
  for (std::size_t i = 1; i < rows.size(); ++i) keys.insert(split(rows[i], ',')[col(head, "key")]);
  EXPECT_EQ(keys, std::multiset<std::string>(listed.begin(), listed.end())) << "every case once";
}
#endif
