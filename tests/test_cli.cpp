// kcnn-bench as a process: --list and its filters, exit codes, results files, and the
// harness catching deliberately wrong kernels (kcnn-bench-faults).
#include <kcnn/compat.hpp>

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

namespace fs = std::filesystem;

namespace {
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
  const fs::path tmp = fs::temp_directory_path() /
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

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / name;
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
                          "/readonly/coalesced/direct/", "/global/tiled/im2col_gemm/"})
      EXPECT_TRUE(has("conv2d/" + L + v)) << L << v;
    for (const char* v : {"/global/tiled/gemm_kk/", "/global/coalesced/direct/", "/scratch/tiled/direct/",
                          "/constant/coalesced/direct/"})
      EXPECT_TRUE(has("fc/" + L + v)) << L << v;
  }
  EXPECT_TRUE(has("conv2d/nhwc/global/tiled/gemm_kk/smoke.conv_1x1/"));
  EXPECT_TRUE(has("conv2d/chwn/global/tiled/gemm_kk/smoke.conv_1x1/"));
  EXPECT_TRUE(has("conv2d/strided/global/coalesced/direct/smoke.conv_3x3/n8/order_nhwc"));
  // Combinations that do not apply are explained on stderr.
  EXPECT_NE(r.err.find("conv2d/nchw/global/tiled/gemm_kk/smoke.conv_1x1/n8: nchw interleaves"),
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
  const fs::path suite = fs::temp_directory_path() / "kcnn_cli_bad.csv";
  std::ofstream(suite) << "network,layer,op,n,c,h,w,k,r,s,stride,pad,groups\n"
                          "x,a,conv2d,1,1,8,8,1,3,3,1,1,1\nx,b,conv2d,1,1,8,8,1,3,3,0,1,1\n";
  const auto r = run(KCNN_BENCH_EXE, "--quick --suite " + suite.string() + " --out " + out.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("kcnn_cli_bad.csv:3: field 'stride'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST(Cli, QuickRunWritesValidatedRowsAndContext) {
  const fs::path out = fresh_dir("kcnn_cli_run");
  const auto r = run(KCNN_BENCH_EXE, "--quick --layout nchw,nhwc,chwn --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto csvs = files_with(out, ".csv");
  ASSERT_EQ(csvs.size(), 1u);
  EXPECT_TRUE(files_with(out, ".partial").empty());
  EXPECT_EQ(csvs[0].filename().string().substr(15), "Z-smoke.csv");
  const auto rows = lines(slurp(csvs[0]));
  const auto head = split(rows[0], ',');
  const auto expected = lines(run(KCNN_BENCH_EXE, "--list --layout nchw,nhwc,chwn").out);
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
    EXPECT_GT(std::stod(f[col(head, "roofline_pct")]), 0.0) << rows[i];
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
  for (const char* key : {"\"copy_gbps\"", "\"triad_gbps\"", "\"fma_gflops\"", "\"gemm_gflops\"", "\"peak_gflops\""})
    EXPECT_NE(j.find(key), std::string::npos) << key;
  EXPECT_EQ(j.find("\"ceilings\": null"), std::string::npos);
  EXPECT_NE(r.out.find("kcnn summary"), std::string::npos);
  EXPECT_NE(r.err.find("[1/"), std::string::npos) << "progress line";
}

TEST(Cli, CeilingsAloneWriteFourPlausibleRows) {
  const fs::path out = fresh_dir("kcnn_cli_ceilings");
  const auto r = run(KCNN_BENCH_EXE, "--ceilings --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto csvs = files_with(out, ".csv");
  ASSERT_EQ(csvs.size(), 1u);
  const auto rows = lines(slurp(csvs[0]));
  ASSERT_EQ(rows.size(), 5u);
  const auto head = split(rows[0], ',');
  std::map<std::string, std::vector<std::string>> by;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto f = split(rows[i], ',');
    EXPECT_EQ(f[col(head, "op")], "ceiling");
    by[f[col(head, "variant")]] = f;
  }
  ASSERT_EQ(by.size(), 4u);
  // Any machine this runs on moves more than 0.5 GB/s and computes more than 0.5 GFLOP/s.
  for (const char* v : {"copy", "triad"}) EXPECT_GT(std::stod(by[v][col(head, "gbps")]), 0.5) << v;
  for (const char* v : {"fma", "gemm"}) EXPECT_GT(std::stod(by[v][col(head, "gflops")]), 0.5) << v;
  // Each ceiling is at (copy or triad: the better one is the roof) or under its own roof.
  EXPECT_NEAR(std::max(std::stod(by["copy"][col(head, "roofline_pct")]), std::stod(by["triad"][col(head, "roofline_pct")])), 100.0, 0.01);
  EXPECT_LE(std::stod(by["gemm"][col(head, "roofline_pct")]), 100.01);
  EXPECT_NE(r.out.find("ceilings: copy"), std::string::npos) << r.out;
  EXPECT_EQ(run(KCNN_BENCH_EXE, "--ceilings --no-ceilings").code, 2);
}

#if defined(KCNN_HAVE_ONEDNN)
TEST(Cli, OneDnnPeersAreListedValidatedAndSayTheirThreads) {
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
    EXPECT_NE(rows[i].find("oneDNN 2."), std::string::npos) << rows[i];
    // oneDNN runs on as many threads as the Kokkos backend (1 on Serial).
    const int threads = kcnn::compat::concurrency(Kokkos::DefaultExecutionSpace());
    EXPECT_NE(rows[i].find(", " + std::to_string(threads) + " thread"), std::string::npos) << rows[i];
  }
}
#endif

TEST(Cli, WrongKernelsAreFailedNotTimedAndExit1) {
  const fs::path out = fresh_dir("kcnn_cli_faults");
  const auto r = run(KCNN_FAULTS_EXE, "--quick --suite smoke --op conv2d --layout nchw,chwn --out " + out.string());
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
}
