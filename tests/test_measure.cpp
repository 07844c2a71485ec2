// The measurement itself: the cold-cache flush only reads, short cases are timed as several
// back-to-back launches per sample (and only those that may run back to back), and the
// working-set-in-cache mark; a timed run allocates nothing; a device timer's figures become the
// row's GPU time, its throttled samples are discarded and counted, a hold that timed out is
// sampled again unheld.
#include "device/context.hpp"
#include "measure/measure.hpp"
#include "measure/sampler.hpp"
#include "run/mpi_job.hpp"
#include "cases/registry.hpp"
#include "suites/suite.hpp"

#include "test_tmp.hpp"

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace kcnn::bench;

namespace {
layer_spec relu_spec() {
  layer_spec l;
  l.network = "t";
  l.layer = "relu";
  l.op = "relu";
  l.n = 2; l.c = 3; l.h = 5; l.w = 7;
  l.out = registry::instance().find_op("relu")->output_shape(l);
  return l;
}
const variant_info& relu_variant(const std::string& variant) {
  for (const auto& v : registry::instance().variants())
    if (v.op == "relu" && v.variant_name() == variant && v.layout == layout_axis::nchw && v.space == space_axis::global)
      return v;
  throw std::runtime_error("no relu/nchw/global variant " + variant);
}
}  // namespace

TEST(Measure, CacheFlushReadsTheWholeBufferAndWritesNothing) {
  const cache_flusher flush(1024 * 1024);
  EXPECT_GE(flush.bytes(), std::size_t(64) << 20);  // at least 64 MiB, whatever the cache
  EXPECT_GE(cache_flusher(32.0 * 1024 * 1024).bytes(), std::size_t(128) << 20);  // 4x a 32 MiB L2
  Kokkos::deep_copy(flush.buffer(), 0.5f);
  flush();
  Kokkos::fence();
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), flush.buffer());
  std::size_t changed = 0;
  for (std::size_t i = 0; i < h.extent(0); ++i) changed += h(i) != 0.5f;
  EXPECT_EQ(changed, 0u) << "a flush must not write: dirty lines would be written back in the timed kernel";
}

// The ceilings' arrays, --cold's flush and --fill's batches are sized by the last-level cache the
// run's CPUs reach: on a stubbed sysfs of an AMD-like host (4 CPUs, two L3 slices of 32 MiB, one per
// pair of CPUs; per-CPU L1 and L2) each slice counts once, and only the slices the CPUs reach.
TEST(Measure, LastLevelCacheIsTheSlicesTheCpusReachEachOnce) {
  namespace fs = std::filesystem;
  const fs::path root = kcnn_test_tmp() / "sysfs_cpu";
  const auto cache = [&](int cpu, int index, const char* level, const char* type, const char* size,
                         const std::string& shared) {
    const fs::path dir = root / ("cpu" + std::to_string(cpu)) / "cache" / ("index" + std::to_string(index));
    fs::create_directories(dir);
    std::ofstream(dir / "level") << level << "\n";
    std::ofstream(dir / "type") << type << "\n";
    std::ofstream(dir / "size") << size << "\n";
    std::ofstream(dir / "shared_cpu_list") << shared << "\n";
  };
  for (int cpu = 0; cpu < 4; ++cpu) {
    cache(cpu, 0, "1", "Data", "32K", std::to_string(cpu));
    cache(cpu, 1, "1", "Instruction", "64K", std::to_string(cpu));
    cache(cpu, 2, "2", "Unified", "512K", std::to_string(cpu));
    cache(cpu, 3, "3", "Unified", "32768K", cpu < 2 ? "0-1" : "2-3");
  }
  // CPU 4 lists no L3 (its highest level is its own L2, 1 MiB); CPU 5 lists only an instruction cache.
  cache(4, 0, "1", "Data", "48K", "4");
  cache(4, 1, "2", "Unified", "1M", "4");
  cache(5, 0, "1", "Instruction", "32K", "5");
  constexpr double mib = 1024.0 * 1024.0;
  const std::string r = root.string();
  EXPECT_EQ(reachable_llc_bytes(r, {0}), 32 * mib);
  EXPECT_EQ(reachable_llc_bytes(r, {0, 1}), 32 * mib) << "one slice shared by both CPUs counts once";
  EXPECT_EQ(reachable_llc_bytes(r, {0, 2}), 64 * mib);
  EXPECT_EQ(reachable_llc_bytes(r, {0, 1, 2, 3}), 64 * mib);
  EXPECT_EQ(reachable_llc_bytes(r, {4}), 1 * mib);
  EXPECT_EQ(reachable_llc_bytes(r, {4, 3}), 32 * mib) << "the highest level listed wins";
  EXPECT_EQ(reachable_llc_bytes(r, {5}), 0.0) << "an instruction cache is no last-level cache";
  EXPECT_EQ(reachable_llc_bytes(r, {9}), 0.0) << "a CPU sysfs does not list";
  EXPECT_EQ(reachable_llc_bytes((root / "missing").string(), {0}), 0.0);
}

TEST(Measure, LaunchesPerSampleAmortiseTheTimerOverhead) {
  const double overhead = 10e-6;  // a GPU's fence + launch floor
  EXPECT_EQ(launches_per_sample(2e-3, overhead, true, 1000), 1);    // 2 ms: 0.5 % overhead
  EXPECT_EQ(launches_per_sample(1e-3, overhead, true, 1000), 1);    // exactly 100x
  EXPECT_EQ(launches_per_sample(100e-6, overhead, true, 1000), 10);
  EXPECT_EQ(launches_per_sample(30e-6, overhead, true, 1000), 34);  // ceil(1 ms / 30 us)
  EXPECT_EQ(launches_per_sample(1e-7, overhead, true, 1000), 1000);  // capped
  EXPECT_EQ(launches_per_sample(1e-7, overhead, true, 50), 50);
  // Never batched: cases that need work between runs, or no overhead measured.
  EXPECT_EQ(launches_per_sample(30e-6, overhead, false, 1000), 1);
  EXPECT_EQ(launches_per_sample(30e-6, 0.0, true, 1000), 1);
}

TEST(Measure, ShortCasesAreBatchedOnlyWhenTheyMayRunBackToBack) {
  timing_policy p;
  p.min_reps = p.max_reps = 3;
  p.warmup = 0;
  p.overhead_s = 1.0;  // pretend the overhead is huge: every case counts as short
  p.max_launches = 7;
  const case_settings settings;
  const fenced_timer timer;
  local_agreement alone;
  const layer_spec l = relu_spec();
  for (const auto& [variant, launches] : {std::pair<std::string, int>{"naive", 7}, {"in_place", 1}}) {
    const variant_info& v = relu_variant(variant);
    const planned_case pc{&v, l, case_key(v, l)};
    result_row row = case_row(pc, "t", false);
    measure_case(pc, {settings, p, 42, nullptr, timer, alone}, row);
    ASSERT_EQ(row.status, case_status::ok) << row.note;
    EXPECT_EQ(row.launches, launches) << variant;
    EXPECT_EQ(row.fits_in_cache, 1) << "420 B in the default 50 MB cache";
    EXPECT_EQ(row.reps, 3);
    EXPECT_EQ(row.note.find("back-to-back") != std::string::npos, launches > 1) << row.note;
  }
  // A flush between samples (--cold) rules batching out too.
  const variant_info& v = relu_variant("naive");
  const planned_case pc{&v, l, case_key(v, l)};
  const cache_flusher flush(1024 * 1024);
  result_row row = case_row(pc, "t", true);
  measure_case(pc, {settings, p, 42, &flush, timer, alone}, row);
  ASSERT_EQ(row.status, case_status::ok) << row.note;
  EXPECT_EQ(row.launches, 1);
  EXPECT_EQ(row.fits_in_cache, 0) << "flushed before every sample";
}

namespace {
// A sampler that runs the launches and reports a fixed time: what a device model looks like to
// the stages.
struct fixed_sampler final : sampler {
  mutable int samples = 0, launches = 0;
  const char* name() const override { return "fixed"; }
  timing_sample take(const timed_work& w) const override {
    if (w.at_start) w.at_start();
    for (int i = 0; i < w.launches; ++i) w.launch();
    Kokkos::fence();
    ++samples;
    launches += w.launches;
    timing_sample s;
    s.host_s = 2e-3;
    return s;
  }
};
// A device timer as the stages see it: runs the launches and reports a host figure and a device
// figure; sample number `throttled_from` on is throttled, and the first held sample's hold
// times out when `first_hold_times_out`.
struct scripted_device_sampler final : sampler {
  mutable int samples = 0, held = 0, unheld = 0;
  int throttled_from = 1 << 30;
  bool first_hold_times_out = false;
  const char* name() const override { return "scripted_events"; }
  bool times_device() const override { return true; }
  timing_sample take(const timed_work& w) const override {
    for (int i = 0; i < w.launches; ++i) w.launch();
    Kokkos::fence();
    timing_sample s;
    s.host_s = 10e-3;
    s.gpu_s = 1e-3 * (1 + samples % 3);  // 1, 2, 3 ms: median 2
    s.held = w.kind == work_kind::device && w.launches == 1;
    (s.held ? held : unheld) += 1;
    s.hold_timed_out = s.held && first_hold_times_out && held == 1;
    s.throttled = samples >= throttled_from;
    ++samples;
    return s;
  }
};
// The agreement of two ranks whose other rank may have failed the validation.
struct other_rank_disagrees final : rank_agreement {
  bool fail_validation = false;
  int barriers = 0;
  void barrier(const std::string&) override { ++barriers; }
  int agree_max(int v, const std::string&) override { return v; }
  int agree_min(int v, const std::string& what) override {
    return what.rfind("the validation", 0) == 0 && fail_validation ? 0 : v;
  }
  std::vector<double> all_gather(double v, const std::string&) override { return {v, v}; }
  int size() const override { return 2; }
  void abandon_case(const std::string&) override {}
};
}  // namespace

TEST(Measure, TheStagesTakeTheirSamplesFromTheSamplerAndAgreeThroughTheRanks) {
  timing_policy p;
  p.min_reps = 4;
  p.max_reps = 50;
  p.warmup = 1;
  const case_settings settings;
  const layer_spec l = relu_spec();
  const variant_info& v = relu_variant("naive");
  const planned_case pc{&v, l, case_key(v, l)};
  // A constant sample has no spread: the stopping rule ends at min_reps; the row's time is the
  // sampler's, not the clock's.
  const fixed_sampler fixed;
  other_rank_disagrees ranks;
  result_row row = case_row(pc, "t", false);
  measure_case(pc, {settings, p, 42, nullptr, fixed, ranks}, row);
  ASSERT_EQ(row.status, case_status::ok) << row.note;
  EXPECT_EQ(row.reps, 4);
  EXPECT_DOUBLE_EQ(row.time_ms_median, 2.0);
  EXPECT_DOUBLE_EQ(row.time_ms_stddev, 0.0);
  EXPECT_EQ(fixed.samples, 1 + 1 + 4);  // validation run, launch choice, 4 samples
  EXPECT_EQ(ranks.barriers, 1 + 4) << "every sample but the validation run starts with the other ranks";
  // Another rank failed the validation: this one does not time the case.
  other_rank_disagrees failed;
  failed.fail_validation = true;
  result_row skipped = case_row(pc, "t", false);
  measure_case(pc, {settings, p, 42, nullptr, fixed, failed}, skipped);
  EXPECT_EQ(skipped.status, case_status::skipped);
  EXPECT_NE(skipped.note.find("another rank failed the validation"), std::string::npos) << skipped.note;
  EXPECT_EQ(skipped.reps, 0);
}

TEST(Measure, WorkingSetInCacheIsMarked) {
  EXPECT_TRUE(fits_in_cache(40e6, 0, 50e6));
  EXPECT_TRUE(fits_in_cache(40e6, 10e6, 50e6));
  EXPECT_FALSE(fits_in_cache(40e6, 10.5e6, 50e6));
  EXPECT_FALSE(fits_in_cache(0, 0, 50e6));  // nothing declared
  EXPECT_FALSE(fits_in_cache(1e3, 0, 0));   // cache size unknown
}

namespace {
int allocations_seen = 0;
void count_allocation(Kokkos_Profiling_SpaceHandle, const char*, const void*, std::uint64_t) { ++allocations_seen; }
void no_init(int, std::uint64_t, std::uint32_t, Kokkos_Profiling_KokkosPDeviceInfo*) {}
}  // namespace

TEST(Measure, TimedRunsAllocateNothingAfterSetup) {
  // A timed repetition is the kernel only: workspaces, handles and execution-space instances are
  // made in setup (an instance made inside run allocates, and its destruction synchronises the
  // device). Every variant of every smoke layer (batch 1), counted through Kokkos' tool hooks.
  namespace kt = Kokkos::Tools::Experimental;
  kt::set_init_callback(no_init);  // Kokkos calls the hooks only while a tool is "loaded"
  kt::set_allocate_data_callback(count_allocation);
  int runs = 0, setup_allocations = 0;
  std::vector<std::string> allocating;
  const auto su = load_suite(std::string(KCNN_SOURCE_DIR) + "/suites/smoke.csv");
  for (auto l : su.layers) {
    l.n = 1;
    l.out = registry::instance().find_op(l.op)->output_shape(l);
    for (const auto& v : registry::instance().variants()) {
      if (v.op != l.op || v.origin() == origin::fault || (v.unsupported && !v.unsupported(l).empty())) continue;
      auto c = v.make(l, case_settings{});
      allocations_seen = 0;
      c->setup(7);
      setup_allocations += allocations_seen;
      c->before_run();
      c->run();
      Kokkos::fence();
      c->before_run();
      allocations_seen = 0;
      c->run();
      Kokkos::fence();
      if (allocations_seen > 0) allocating.push_back(case_key(v, l) + ": " + std::to_string(allocations_seen));
      ++runs;
    }
  }
  kt::set_allocate_data_callback(nullptr);
  kt::set_init_callback(nullptr);
  EXPECT_GT(runs, 100);
  EXPECT_GT(setup_allocations, runs);  // the hooks did fire: every setup allocates its operands
  EXPECT_TRUE(allocating.empty()) << allocating.size() << " variants allocate in run(), e.g. " << allocating.front();
}

TEST(Mpi, ShardsAreBalancedByCostNotByCount) {
  // One expensive case and five cheap ones on two ranks: the expensive one alone on one rank.
  const std::vector<double> cost{1.0, 1.0, 10.0, 1.0, 1.0, 1.0};
  const auto owner = assign_by_cost(cost, 2);
  ASSERT_EQ(owner.size(), cost.size());
  EXPECT_EQ(owner[2], 0);
  for (std::size_t i : {0, 1, 3, 4, 5}) EXPECT_EQ(owner[i], 1) << i;
  // Equal costs alternate, in the listed order; one rank takes everything; the same input gives
  // the same assignment (every rank computes it itself).
  EXPECT_EQ(assign_by_cost({2, 2, 2, 2}, 2), (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(assign_by_cost({3, 1, 2}, 1), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(assign_by_cost({5, 4, 3, 3, 2, 2}, 3), assign_by_cost({5, 4, 3, 3, 2, 2}, 3));
  std::vector<double> load(3, 0);
  const std::vector<double> c3{5, 4, 3, 3, 2, 2};
  const auto o3 = assign_by_cost(c3, 3);
  for (std::size_t i = 0; i < c3.size(); ++i) load[std::size_t(o3[i])] += c3[i];
  EXPECT_EQ(load, (std::vector<double>{7, 6, 6}));
}

TEST(Mpi, ReplicateRunsOnOneTwoFourAndAllRanks) {
  EXPECT_EQ(replicate_rank_counts(1), (std::vector<int>{1}));
  EXPECT_EQ(replicate_rank_counts(2), (std::vector<int>{1, 2}));
  EXPECT_EQ(replicate_rank_counts(6), (std::vector<int>{1, 2, 4, 6}));
  EXPECT_EQ(replicate_rank_counts(8), (std::vector<int>{1, 2, 4, 8}));
}

TEST(Mpi, ReplicateNoteSumsTheRanksRates) {
  // 2 GB in 1 s and in 2 s: 2 + 1 = 3 GB/s together; a rank that did not time it is left out.
  EXPECT_EQ(replicate_note(2e9, {1.0, 2.0}), "2 ranks at once: aggregate 3.00 GB/s (per rank 2.00, 1.00)");
  EXPECT_EQ(replicate_note(2e9, {1.0, -1.0}), "2 ranks at once: aggregate 2.00 GB/s (per rank 2.00, -)");
  EXPECT_EQ(replicate_note(1e9, {0.5}), "1 rank at once: aggregate 2.00 GB/s (per rank 2.00)");
}

TEST(Mpi, WithoutMpiTheJobIsOneRankAndCollectivesAreTheIdentity) {
  mpi_job& job = mpi_job::instance();
  ASSERT_FALSE(job.active());  // the tests run without --mpi
  EXPECT_EQ(job.rank(), 0);
  EXPECT_EQ(job.size(), 1);
  EXPECT_EQ(job.agree_max(7, "t"), 7);
  EXPECT_EQ(job.broadcast("x", "t"), "x");
  EXPECT_EQ(job.gather("rows", "t"), std::vector<std::string>{"rows"});
  ASSERT_NE(job.first_ranks(1), nullptr);
  EXPECT_EQ(job.first_ranks(2), nullptr);
  EXPECT_EQ(job.first_ranks(1)->agree_min(3, "t"), 3);
}

namespace {
// relu's `variant` on the small layer, measured by `timer` with exactly `reps` repetitions and no
// warm-up.
result_row measure_relu(const std::string& variant, int reps, const sampler& timer) {
  timing_policy p;
  p.min_reps = p.max_reps = reps;
  p.warmup = 0;
  const case_settings settings;
  const layer_spec l = relu_spec();
  const variant_info& v = relu_variant(variant);
  const planned_case pc{&v, l, case_key(v, l)};
  local_agreement alone;
  result_row row = case_row(pc, "t", false);
  measure_case(pc, {settings, p, 42, nullptr, timer, alone}, row);
  return row;
}
}  // namespace

TEST(Measure, DeviceTimesAreTheRowsRateAndHostTimesStayBeside) {
  const scripted_device_sampler dev;
  const result_row row = measure_relu("naive", 6, dev);
  ASSERT_EQ(row.status, case_status::ok) << row.note;
  EXPECT_EQ(row.timer, "scripted_events");
  EXPECT_DOUBLE_EQ(row.time_ms_median, 10.0);  // the host clock's figure
  EXPECT_DOUBLE_EQ(row.gpu_time_ms_median, 2.0);
  EXPECT_DOUBLE_EQ(row.gpu_time_ms_min, 1.0);
  EXPECT_DOUBLE_EQ(row.gpu_time_ms_max, 3.0);
  EXPECT_DOUBLE_EQ(row.rate_ms(), 2.0);
  EXPECT_EQ(row.throttled_samples, 0);
  EXPECT_EQ(dev.unheld, 1) << "the validation run is never held";
  // The CSV's rates come from the device time: 2 ms for the row's bytes.
  run_context ctx;
  const auto f = csv_fields(csv_line(ctx, row));
  EXPECT_EQ(f[column_index("timer")], "scripted_events");
  EXPECT_DOUBLE_EQ(std::stod(f[column_index("gbps")]), row.bytes / 2e-3 / 1e9);
  EXPECT_DOUBLE_EQ(std::stod(f[column_index("gpu_time_ms_median")]), 2.0);
  // The fenced timer's rows have no device figures and say which timer they are.
  const fenced_timer host;
  const result_row hr = measure_relu("naive", 6, host);
  ASSERT_EQ(hr.status, case_status::ok) << hr.note;
  EXPECT_EQ(hr.timer, "fenced_timer");
  EXPECT_LT(hr.gpu_time_ms_median, 0);
  EXPECT_DOUBLE_EQ(hr.rate_ms(), hr.time_ms_median);
  EXPECT_EQ(csv_fields(csv_line(ctx, hr))[column_index("gpu_time_ms_median")], "");
}

TEST(Measure, ThrottledSamplesAreDiscardedAndCounted) {
  // Samples 0 (validation) and 1 (launch choice) are clean; from sample 2 on every sample is
  // throttled: after as many discards as the minimum repetitions they are kept, and the note
  // says the clock stayed low.
  scripted_device_sampler dev;
  dev.throttled_from = 2;
  const result_row row = measure_relu("in_place", 4, dev);  // one launch per sample
  ASSERT_EQ(row.status, case_status::ok) << row.note;
  EXPECT_EQ(row.reps, 4);
  EXPECT_EQ(row.throttled_samples, 4 + 4) << "min_reps discarded, then 4 kept, all counted";
  EXPECT_NE(row.note.find("then kept"), std::string::npos) << row.note;
}

TEST(Measure, AHoldThatTimesOutIsSampledAgainUnheld) {
  scripted_device_sampler dev;
  dev.first_hold_times_out = true;
  const result_row row = measure_relu("in_place", 3, dev);
  ASSERT_EQ(row.status, case_status::ok) << row.note;
  EXPECT_EQ(dev.held, 1) << "one held sample, which timed out";
  EXPECT_EQ(dev.unheld, 1 + 1 + 3) << "validation, the launch choice again, 3 samples";
  EXPECT_NE(row.note.find("device timer: the blocking kernel timed out"), std::string::npos) << row.note;
}

TEST(Measure, TheTimerFloorIsTakenThroughTheSampler) {
  const fixed_sampler fixed;
  const timer_floor f = timer_overhead(fixed);
  EXPECT_EQ(fixed.samples, 200);
  EXPECT_DOUBLE_EQ(f.host_s, 2e-3);
  EXPECT_LT(f.device_s, 0);
  const scripted_device_sampler dev;
  EXPECT_DOUBLE_EQ(timer_overhead(dev).device_s, 2e-3);
}
