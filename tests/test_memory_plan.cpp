// Memory planning on small hand-made graphs (a chain, in-place layers, a skip connection)
// against hand-computed values, and the figures of science.md section 4 for VGG-16 and AlexNet.
#include "modes/memory_plan.hpp"

#include "test_tmp.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace kcnn::bench;
namespace fs = std::filesystem;

namespace {
suite load_net(const std::string& name, const std::string& rows) {
  const fs::path dir = kcnn_test_tmp() / "kcnn_plan_tests";
  fs::create_directories(dir);
  const fs::path p = dir / (name + ".csv");
  std::ofstream(p) << "#@ kind: network\n#@ source: test\n#@ rounding: floor\n"
                      "network,layer,op,n,c,h,w,k,r,s,stride,pad,groups,input\n"
                   << rows;
  return load_suite(p.string());
}
planned_tensor t(const std::string& name, double bytes, int first, int last, std::vector<int> uses = {}) {
  if (uses.empty()) uses = {first, last};
  return {name, bytes, first, last, uses, -1};
}
constexpr double mib = 1024.0 * 1024.0;
}  // namespace

TEST(MemoryPlan, ChainWithInPlaceReluHandComputed) {
  // input 1x1x8x8 (256 B) -> conv a 2x8x8 (512 B) -> relu in place -> conv b 4x8x8 (1024 B)
  // -> conv c 1x8x8 (256 B).
  const auto su = load_net("chain", "x,a,conv2d,1,1,8,8,2,3,3,1,1,,\nx,r,relu,1,2,8,8,,,,,,,\n"
                                    "x,b,conv2d,1,2,8,8,4,3,3,1,1,,\nx,c,conv2d,1,4,8,8,1,1,1,1,0,,\n");
  const auto g = build_tensor_graph(su);
  ASSERT_EQ(g.tensors.size(), 4u);  // input, a (= r), b, c
  EXPECT_EQ(g.output_of[1], g.output_of[0]);
  EXPECT_EQ(g.tensors[1].first, 0);
  EXPECT_EQ(g.tensors[1].last, 2);  // read by b at step 2
  // Live bytes per step: 0: in + a = 768; 1: a = 512; 2: a + b = 1536; 3: b + c = 1280.
  EXPECT_EQ(live_bytes(g.tensors, g.steps), (std::vector<double>{768, 512, 1536, 1280}));
  EXPECT_EQ(live_bytes_peak(g.tensors, g.steps), 1536);
  auto ts = g.tensors;
  EXPECT_EQ(place_in_arena(ts, fit::first), 1536);  // a chain reaches the bound
  // Caching allocator: in(256) a(512) -> free in -> b(1024) new -> free a -> c(256) reuses in's block.
  EXPECT_EQ(free_after_last_use_peak(g.tensors, g.steps), 256 + 512 + 1024);
}

TEST(MemoryPlan, SkipConnectionKeepsTheBlockInputAlive) {
  // a -> b -> relu (in place) -> c (8 channels) -> d -> add(d, a) -> relu (in place): a, the
  // block's input, stays alive across the branch. 4 channels of 4x4 floats = 256 B.
  const auto su = load_net("skip", "x,a,conv2d,1,4,4,4,4,3,3,1,1,,\nx,b,conv2d,1,4,4,4,4,3,3,1,1,,\n"
                                   "x,br,relu,1,4,4,4,,,,,,,\nx,c,conv2d,1,4,4,4,8,3,3,1,1,,\n"
                                   "x,d,conv2d,1,8,4,4,4,3,3,1,1,,\nx,s,add,1,4,4,4,,,,,,,d a\n"
                                   "x,sr,relu,1,4,4,4,,,,,,,\n");
  const auto g = build_tensor_graph(su);
  ASSERT_EQ(g.tensors.size(), 5u);  // input, a, b (= br), c, d (= s, added into in place, = sr)
  EXPECT_EQ(g.tensors[1].name, "a");
  EXPECT_EQ(g.tensors[1].uses, (std::vector<int>{0, 1, 5}));
  EXPECT_EQ(g.output_of[2], g.output_of[1]);
  EXPECT_EQ(g.output_of[5], g.output_of[4]);
  EXPECT_EQ(g.output_of[6], g.output_of[5]);
  // 0: in, a; 1-2: a, b; 3: a, b, c; 4: a, c, d; 5: a, d; 6: d.
  EXPECT_EQ(live_bytes(g.tensors, g.steps), (std::vector<double>{512, 512, 512, 1024, 1024, 512, 256}));
  auto ts = g.tensors;
  EXPECT_EQ(place_in_arena(ts, fit::first), 1024);
  EXPECT_EQ(ts[3].offset, 0);    // c, the largest
  EXPECT_EQ(ts[1].offset, 512);  // a avoids c and the input
  EXPECT_EQ(ts[2].offset, 768);  // b avoids c and a
  EXPECT_EQ(ts[4].offset, 768);  // d avoids c and a, reuses b's place
  // Blocks created: in, a, c; b reuses in's block, d b's.
  EXPECT_EQ(free_after_last_use_peak(g.tensors, g.steps), 1024);
  // Under 800 B, a goes to the host between its uses at steps 1 and 5 (the only tensor whose
  // gap straddles the peak at step 3): peak 768, 512 B moved.
  const auto sp = plan_swaps(g.tensors, g.steps, 800);
  ASSERT_EQ(sp.swaps.size(), 1u);
  EXPECT_EQ(sp.swaps[0].tensor, "a");
  EXPECT_EQ(sp.swaps[0].from, 1);
  EXPECT_EQ(sp.swaps[0].to, 5);
  EXPECT_TRUE(sp.fits);
  EXPECT_EQ(sp.peak, 768);
  EXPECT_EQ(sp.moved_bytes, 512);
  // Under 700 B nothing else straddles the peak: reported as not met.
  const auto no = plan_swaps(g.tensors, g.steps, 700);
  EXPECT_FALSE(no.fits);
  EXPECT_EQ(no.peak, 768);
}

TEST(MemoryPlan, FirstFitTakesTheLowestGapBestFitTheSmallest) {
  // Busy [0, 30), [70, 100), [115, 130): gaps of 40 at 30 and 15 at 100.
  const std::vector<std::pair<double, double>> busy = {{115, 15}, {0, 30}, {70, 30}};
  EXPECT_EQ(choose_offset(busy, 10, fit::first), 30);
  EXPECT_EQ(choose_offset(busy, 10, fit::best), 100);
  EXPECT_EQ(choose_offset(busy, 40, fit::first), 30);
  EXPECT_EQ(choose_offset(busy, 40, fit::best), 30);
  EXPECT_EQ(choose_offset(busy, 41, fit::best), 130);  // no gap fits: on top
  EXPECT_EQ(choose_offset({}, 41, fit::first), 0);
  // Placed largest first: A(100, steps 0-1) at 0; B(60, 2-3) at 0 (A is dead); C(50, 1-2)
  // avoids A and B: 100; D(40, 3-3) avoids B only: 60.
  std::vector<planned_tensor> ts = {t("A", 100, 0, 1), t("B", 60, 2, 3), t("C", 50, 1, 2), t("D", 40, 3, 3)};
  EXPECT_EQ(place_in_arena(ts, fit::first), 150);
  EXPECT_EQ(ts[0].offset, 0);
  EXPECT_EQ(ts[1].offset, 0);
  EXPECT_EQ(ts[2].offset, 100);
  EXPECT_EQ(ts[3].offset, 60);
  EXPECT_EQ(live_bytes_peak(ts, 4), 150);  // steps 1 (A + C) and 2 (B + C... 110): the bound is 150
}

TEST(MemoryPlan, VggAndAlexNetAgreeWithScienceSection4) {
  auto vgg = load_suite(resolve_suite("vgg16"));
  set_batch(vgg, 1);
  auto m = summarize_memory_plan(vgg);
  EXPECT_NEAR(m.no_reuse / mib, 58.1, 0.05);
  EXPECT_NEAR(m.lower_bound / mib, 24.5, 0.05);
  EXPECT_EQ(m.first_fit, m.lower_bound);  // a chain reaches the bound
  EXPECT_EQ(m.best_fit, m.lower_bound);
  set_batch(vgg, 64);
  m = summarize_memory_plan(vgg);
  EXPECT_NEAR(m.no_reuse / mib, 3720.1, 0.05);
  EXPECT_NEAR(m.lower_bound / mib, 1568.0, 0.05);
  auto alex = load_suite(resolve_suite("alexnet"));
  set_batch(alex, 64);
  m = summarize_memory_plan(alex);
  EXPECT_NEAR(m.no_reuse / mib, 228.6, 0.05);
  EXPECT_NEAR(m.lower_bound / mib, 108.6, 0.05);
  EXPECT_GE(m.free_after_last_use, m.lower_bound);
}
