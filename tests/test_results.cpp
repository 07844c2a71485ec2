// The results CSV has exactly the documented columns and appears atomically.
#include "results/rank_rows.hpp"
#include "results/results.hpp"
#include "results/status.hpp"
#include "measure/stats.hpp"

#include "test_tmp.hpp"

#include <gtest/gtest.h>

#include <set>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

using namespace kcnn::bench;
namespace fs = std::filesystem;

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}
}  // namespace

TEST(Results, EveryColumnIsDocumentedInOrder) {
  // results/README.md documents one column per table row: | `name` | ... |
  std::ifstream f(std::string(KCNN_SOURCE_DIR) + "/results/README.md");
  ASSERT_TRUE(f) << "results/README.md missing";
  std::vector<std::string> documented;
  std::string line;
  const std::regex row(R"(^\|\s*`([a-z_0-9]+)`\s*\|)");
  std::smatch m;
  bool in_csv_section = false;
  while (std::getline(f, line)) {
    if (line.rfind("## ", 0) == 0) in_csv_section = line.rfind("## CSV columns", 0) == 0;
    if (in_csv_section && std::regex_search(line, m, row)) documented.push_back(m[1]);
  }
  EXPECT_EQ(documented, result_columns());
}

TEST(Results, ContainsTheDesignContractColumns) {
  const std::vector<std::string> contract = {
      "run_id", "timestamp", "device", "backend", "kokkos_version", "suite", "network", "layer",
      "op", "n", "c", "h", "w", "k", "r", "s", "stride", "pad", "groups", "layout",
      "memory_space", "access_pattern", "variant", "reps", "time_ms_median", "time_ms_min",
      "time_ms_max", "time_ms_stddev", "bytes", "flops", "gbps", "gflops", "roofline_pct",
      "rel_error", "status", "note"};
  const auto& cols = result_columns();
  for (const auto& c : contract)
    EXPECT_NE(std::find(cols.begin(), cols.end(), c), cols.end()) << c;
}

TEST(Results, WrittenToPartialThenRenamedAtomically) {
  const fs::path out = kcnn_test_tmp() / "kcnn_results_test";
  fs::remove_all(out);
  run_context ctx;
  ctx.run_id = "20260101T000000Z-abcdef01";
  ctx.timestamp = "2026-01-01T00:00:00Z";
  ctx.suite = "unit";
  ctx.device.name = "Test Device, \"quoted\"";
  ctx.device.slug = "test-device";
  ctx.device.backend = "serial";
  ctx.kokkos_version = "9.9.9";
  results_writer w(out.string(), ctx);
  const fs::path final_csv = out / "test-device" / "20260101T000000Z-unit.csv";
  EXPECT_EQ(fs::path(w.final_path()), final_csv);
  EXPECT_FALSE(fs::exists(final_csv));
  EXPECT_TRUE(fs::exists(final_csv.string() + ".partial"));

  result_row r;
  r.op = "conv2d";
  r.key = "conv2d/nchw/global/coalesced/direct/x.y/n1";
  r.status = case_status::ok;
  r.reps = 10;
  r.time_ms_median = 2.0;
  r.bytes = 4e9;
  r.flops = 8e9;
  r.rel_error = 1e-7;
  r.note = "a note, with a comma";
  w.write(r);
  // Flushed per row: the partial file already holds it.
  EXPECT_NE(slurp(final_csv.string() + ".partial").find("a note, with a comma"), std::string::npos);

  w.close(json::object().set("extra", 1));
  EXPECT_TRUE(fs::exists(final_csv));
  EXPECT_FALSE(fs::exists(final_csv.string() + ".partial"));
  const std::string csv = slurp(final_csv);
  std::istringstream lines(csv);
  std::string head, row;
  std::getline(lines, head);
  std::getline(lines, row);
  std::string expect_head;
  for (const auto& c : result_columns()) expect_head += (expect_head.empty() ? "" : ",") + c;
  EXPECT_EQ(head, expect_head);
  EXPECT_NE(row.find("\"Test Device, \"\"quoted\"\"\""), std::string::npos) << row;
  EXPECT_NE(row.find(",2000,4000,"), std::string::npos) << "GB/s and GFLOP/s from 2 ms: " << row;
  EXPECT_NE(row.find("\"a note, with a comma\""), std::string::npos);
  const std::string json = slurp(out / "test-device" / "20260101T000000Z-unit.json");
  EXPECT_NE(json.find("\"schema_version\": 9"), std::string::npos);
  EXPECT_NE(json.find("\"name\": \"Test Device, \\\"quoted\\\"\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"extra\": 1"), std::string::npos);
  // A second run in the same second does not overwrite the first.
  results_writer again(out.string(), ctx);
  EXPECT_EQ(fs::path(again.final_path()), out / "test-device" / "20260101T000000Z-unit-2.csv");
  again.close(json::object());
  EXPECT_EQ(slurp(final_csv), csv);
  fs::remove_all(out);
}

TEST(Results, CsvEscaping) {
  EXPECT_EQ(csv_escape("plain"), "plain");
  EXPECT_EQ(csv_escape("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_escape("say \"hi\""), "\"say \"\"hi\"\"\"");
  // A multi-line message (Kokkos' allocation errors) stays on its row's line.
  EXPECT_EQ(csv_escape("failed:\n  Allocation of size 1 G failed,\r\nlikely"), "\"failed:   Allocation of size 1 G failed,  likely\"");
  EXPECT_EQ(json_escape("a\"b\\c\n"), "a\\\"b\\\\c\\n");
}

TEST(Results, JsonWriterNestsEscapesAndDropsNonFiniteNumbers) {
  json j = json::object();
  j.set("s", "a\"b").set("n", 2).set("x", 0.5).set("nan", std::nan("")).set("list", json::array_of(std::vector<std::string>{"p", "q"}));
  j.set("obj", json::object().set("t", true)).set("raw", json::raw("[1, 2]")).set("n", 3);
  EXPECT_EQ(j.dump(), "{\n  \"s\": \"a\\\"b\",\n  \"n\": 3,\n  \"x\": 0.5,\n  \"nan\": null,\n  \"list\": [\n    \"p\",\n    \"q\"\n  ],\n"
                    "  \"obj\": {\n    \"t\": true\n  },\n  \"raw\": [1, 2]\n}\n");
  EXPECT_EQ(json::object().dump(), "{}\n");
}

TEST(Stats, NoisyRowsAreMarkedWithTheirSpread) {
  // Samples 1, 1, 1, 1.4: mean 1.1, stddev 0.2 (sample), 18.2 % > 5 %.
  const auto noisy = kcnn::bench::summarize({1.0, 1.0, 1.0, 1.4});
  EXPECT_NEAR(noisy.rel_spread(), 0.2 / 1.1, 1e-12);
  EXPECT_EQ(kcnn::bench::noisy_note(noisy, 4, 0.05), "noisy: stddev/mean 18.2% after 4 reps");
  EXPECT_EQ(kcnn::bench::noisy_note(noisy, 4, 0.20), "");
  const auto quiet = kcnn::bench::summarize({1.0, 1.01, 0.99});
  EXPECT_EQ(kcnn::bench::noisy_note(quiet, 3, 0.05), "");
  EXPECT_EQ(kcnn::bench::noisy_note(noisy, 1, 0.05), "");  // one sample: no spread to judge
  // The stopping rule's running spread is summarize's, sample by sample.
  kcnn::bench::running_spread r;
  EXPECT_EQ(r.rel_spread(), 0.0);
  r.add(1.4);
  EXPECT_EQ(r.rel_spread(), 0.0);  // one sample
  for (double x : {1.0, 1.0, 1.0}) r.add(x);
  EXPECT_NEAR(r.rel_spread(), 0.2 / 1.1, 1e-12);
  const std::vector<double> v = {3e-4, 1.2e-4, 1.25e-4, 9e-5, 1.1e-4};
  kcnn::bench::running_spread w;
  for (double x : v) w.add(x);
  EXPECT_NEAR(w.rel_spread(), kcnn::bench::summarize(v).rel_spread(), 1e-12);
}

TEST(Results, ResumeAdoptsTheRowsOtherRanksLeftBesideTheFile) {
  // An MPI job killed before its merge leaves rank 0's <file>.csv.partial and, beside it, each
  // other rank's <file>.csv.rank<r>.partial: --resume appends their whole rows and removes them.
  const fs::path dir = kcnn_test_tmp() / "adopt";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string header;
  for (const auto& c : result_columns()) header += (header.empty() ? "" : ",") + c;
  auto row = [](const std::string& key, case_status status) {
    run_context ctx;
    ctx.run_id = "R-r1";
    result_row r;
    r.key = key;
    r.status = status;
    r.rank = 1;
    return csv_line(ctx, r);
  };
  const fs::path main = dir / "20261124T000000Z-smoke.csv.partial";
  std::ofstream(main) << header << "\n" << row("a", case_status::ok) << "\n";
  std::ofstream(dir / "20261124T000000Z-smoke.csv.rank1.partial")
      << row("b", case_status::ok) << "\n" << row("c", case_status::failed_validation) << "\n"
      << row("d", case_status::ok).substr(0, 20);  // cut short
  std::ofstream(dir / "20261124T000000Z-other.csv.rank1.partial") << row("z", case_status::ok) << "\n";  // another run's
  EXPECT_EQ(adopt_rank_rows(main.string()), 2u);
  EXPECT_FALSE(fs::exists(dir / "20261124T000000Z-smoke.csv.rank1.partial"));
  EXPECT_TRUE(fs::exists(dir / "20261124T000000Z-other.csv.rank1.partial"));
  EXPECT_EQ(finished_keys(main.string()), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(adopt_rank_rows(main.string()), 0u);  // nothing left to adopt
}

TEST(Results, StatusIsATypeWithOneSpellingEach) {
  // Every status round-trips through its CSV spelling and is documented; nothing else parses.
  std::set<std::string> names;
  for (case_status st : all_statuses()) {
    EXPECT_EQ(parse_status(name(st)), st);
    EXPECT_GT(std::string(doc(st)).size(), 10u) << name(st);
    names.insert(name(st));
  }
  EXPECT_EQ(names, (std::set<std::string>{"ok", "failed_validation", "skipped", "error"}));
  EXPECT_FALSE(parse_status("OK").has_value());
  EXPECT_FALSE(parse_status("").has_value());
  EXPECT_TRUE(is_failure(case_status::failed_validation));
  EXPECT_TRUE(is_failure(case_status::error));
  EXPECT_FALSE(is_failure(case_status::skipped));
  EXPECT_TRUE(is_timed(case_status::ok));
  EXPECT_FALSE(is_timed(case_status::skipped));
}

TEST(Results, EveryStatusIsDocumentedInTheSchema) {
  std::ifstream in(std::string(KCNN_SOURCE_DIR) + "/results/README.md");
  std::string line, row;
  while (std::getline(in, line))
    if (line.rfind("| `status` |", 0) == 0) row = line;
  ASSERT_FALSE(row.empty()) << "results/README.md documents the status column";
  for (case_status st : all_statuses())
    EXPECT_NE(row.find(std::string("`") + name(st) + "`"), std::string::npos) << name(st);
}

TEST(Results, RankRowsMergeIntoRankZerosFileWithTheirCounts) {
  // The other ranks' lines join rank 0's file as they are, and their statuses are counted from
  // the rows themselves; a row whose status is not a status is refused.
  const fs::path dir = kcnn_test_tmp() / "merge";
  fs::remove_all(dir);
  run_context ctx;
  ctx.run_id = "R";
  ctx.suite = "merge";
  ctx.device.slug = "dev";
  results_writer w(dir.string(), ctx);
  auto line = [&](const std::string& key, case_status st) {
    result_row r;
    r.key = key;
    r.status = st;
    return csv_line(ctx, r) + "\n";
  };
  const status_counts c = merge_rank_rows(
      w, {line("a", case_status::ok) + line("b", case_status::error), line("c", case_status::ok) + "\n"});
  EXPECT_EQ(c[case_status::ok], 2u);
  EXPECT_EQ(c[case_status::error], 1u);
  EXPECT_EQ(c[case_status::skipped], 0u);
  EXPECT_EQ(c.failures(), 1u);
  std::string bad = line("d", case_status::ok);
  bad.replace(bad.find(",ok,"), 4, ",fine,");
  // Checked before anything is written: the good row before the bad one is not merged either.
  EXPECT_THROW(merge_rank_rows(w, {line("e", case_status::ok) + bad}), std::runtime_error);
  w.close(json::object());
  EXPECT_EQ(finished_keys(w.final_path()), (std::vector<std::string>{"a", "c"}));
}
