// The measurement itself: the cold-cache flush only reads, short cases are timed as several
// back-to-back launches per sample (and only those that may run back to back), and the
// working-set-in-cache mark; a timed run allocates nothing.
#include "measure.hpp"
#include "registry.hpp"
#include "suite.hpp"

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
  const layer_spec l = relu_spec();
  for (const auto& [variant, launches] : {std::pair<std::string, int>{"naive", 7}, {"in_place", 1}}) {
    const variant_info& v = relu_variant(variant);
    const planned_case pc{&v, l, case_key(v, l)};
    result_row row = case_row(pc, "t", false);
    measure_case(pc, case_settings{}, p, 42, nullptr, row);
    ASSERT_EQ(row.status, "ok") << row.note;
    EXPECT_EQ(row.launches, launches) << variant;
    EXPECT_EQ(row.reps, 3);
    EXPECT_EQ(row.note.find("back-to-back") != std::string::npos, launches > 1) << row.note;
  }
  // A flush between samples (--cold) rules batching out too.
  const variant_info& v = relu_variant("naive");
  const planned_case pc{&v, l, case_key(v, l)};
  const cache_flusher flush(1024 * 1024);
  result_row row = case_row(pc, "t", true);
  measure_case(pc, case_settings{}, p, 42, &flush, row);
  ASSERT_EQ(row.status, "ok") << row.note;
  EXPECT_EQ(row.launches, 1);
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
