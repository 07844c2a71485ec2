// kcnn-bench as a process: --list and its filters, exit codes, results files, and the
// harness catching deliberately wrong kernels (kcnn-bench-faults).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
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

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> v;
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
  const auto nhwc = lines(run(KCNN_BENCH_EXE, "--list --layout nhwc").out);
  ASSERT_FALSE(nhwc.empty());
  EXPECT_EQ(nhwc.size() * 3, all.size());
  for (const auto& k : nhwc) EXPECT_NE(k.find("/nhwc/"), std::string::npos) << k;
  const auto two = lines(run(KCNN_BENCH_EXE, "--list --layout nhwc,chwn --space global --pattern coalesced --variant direct").out);
  EXPECT_EQ(two.size(), 2 * nhwc.size());
  for (const auto& k : two) EXPECT_EQ(k.find("/nchw/"), std::string::npos) << k;
  const auto batch = lines(run(KCNN_BENCH_EXE, "--list --batch 3 --layout chwn").out);
  ASSERT_FALSE(batch.empty());
  for (const auto& k : batch) EXPECT_EQ(k.substr(k.size() - 3), "/n3") << k;
  // A filter that matches a known value with no cases lists nothing (and succeeds).
  const auto none = run(KCNN_BENCH_EXE, "--list --layout strided");
  EXPECT_EQ(none.code, 0);
  EXPECT_TRUE(lines(none.out).empty());
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
  const auto expected = lines(run(KCNN_BENCH_EXE, "--list").out);
  ASSERT_EQ(rows.size(), expected.size() + 1);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto f = split(rows[i], ',');
    ASSERT_EQ(f.size(), head.size()) << rows[i];
    EXPECT_EQ(f[col(head, "status")], "ok") << rows[i];
    EXPECT_GT(std::stod(f[col(head, "time_ms_median")]), 0.0);
    EXPECT_GE(std::stoi(f[col(head, "reps")]), 3);
    EXPECT_GT(std::stod(f[col(head, "gflops")]), 0.0);
    EXPECT_LT(std::stod(f[col(head, "rel_error")]), 1e-4);
    EXPECT_LE(std::stod(f[col(head, "time_ms_min")]), std::stod(f[col(head, "time_ms_median")]));
  }
  const auto json = files_with(out, ".json");
  ASSERT_EQ(json.size(), 1u);
  const std::string j = slurp(json[0]);
  for (const char* key : {"\"kokkos\"", "\"version\"", "\"backends\"", "\"device\"", "\"host\"",
                          "\"compiler\"", "\"git\"", "\"command_line\"", "\"timing\""})
    EXPECT_NE(j.find(key), std::string::npos) << key;
  EXPECT_NE(r.out.find("kcnn summary"), std::string::npos);
  EXPECT_NE(r.err.find("[1/"), std::string::npos) << "progress line";
}

TEST(Cli, WrongKernelsAreFailedNotTimedAndExit1) {
  const fs::path out = fresh_dir("kcnn_cli_faults");
  const auto r = run(KCNN_FAULTS_EXE, "--quick --suite smoke --layout nchw,chwn --out " + out.string());
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
    if (variant == "direct") {
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
