// The measurement itself: the cold-cache flush only reads, short cases are timed as several
// back-to-back launches per sample (and only those that may run back to back), and the
// working-set-in-cache mark; a timed run allocates nothing.
#include "measure/measure.hpp"
#include "measure/sampler.hpp"
#include "run/mpi_job.hpp"
#include "cases/registry.hpp"
#include "suites/suite.hpp"

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <cstdint>
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
  double sample(bench_case& c, int k, rank_agreement& ranks, const std::string& what) const override {
    ranks.barrier(what);
    for (int i = 0; i < k; ++i) c.run();
    Kokkos::fence();
    ++samples;
    launches += k;
    return 2e-3;
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
