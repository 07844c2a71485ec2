// Memory planning on small hand-made graphs (a chain, in-place layers, a skip connection)
// against hand-computed values, and the figures of science.md section 4 for VGG-16 and AlexNet.
#include "modes/memory_plan.hpp"

#include "test_tmp.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

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
  // Under 800 B, a (uses 1 and 5) goes to the host: at step 3 first, its copies overlapped with
  // steps 2 and 4; then step 4 peaks (d runs beside c and a) and a's copy back becomes synchronous
  // (before step 5) so a is off at step 4 too: peak 768, 512 B moved.
  const auto sp = plan_swaps(g.tensors, g.steps, 800);
  ASSERT_EQ(sp.swaps.size(), 1u);
  EXPECT_EQ(sp.swaps[0].tensor, "a");
  EXPECT_EQ(sp.swaps[0].from, 1);
  EXPECT_EQ(sp.swaps[0].to, 5);
  EXPECT_TRUE(sp.swaps[0].overlap_out);
  EXPECT_FALSE(sp.swaps[0].overlap_in);
  EXPECT_TRUE(sp.fits);
  EXPECT_EQ(sp.live_peak, 768);
  EXPECT_EQ(sp.moved_bytes, 512);
  // Placed: c at 0; the input at 0; a's first stay (steps 0-2) at 256; b (1-3) and d (4-6) at
  // 512; a's second stay (step 5) at 0, c being gone.
  EXPECT_EQ(sp.arena, 768);
  EXPECT_EQ(sp.piece_at(1, 2).offset, 256);
  EXPECT_EQ(sp.piece_at(1, 5).offset, 0);
  EXPECT_THROW(sp.piece_at(1, 3), std::logic_error);
  // Under 700 B nothing else can leave at step 3 (b, c and a's window): not met.
  const auto no = plan_swaps(g.tensors, g.steps, 700);
  EXPECT_FALSE(no.fits);
  EXPECT_EQ(no.live_peak, 768);
  // Above the peak nothing is swapped and the arena is the first-fit one.
  const auto none = plan_swaps(g.tensors, g.steps, 1024);
  EXPECT_TRUE(none.fits);
  EXPECT_TRUE(none.swaps.empty());
  EXPECT_EQ(none.arena, 1024);
  EXPECT_EQ(none.moved_bytes, 0);
}

TEST(MemoryPlan, SwapPlanHandComputed) {
  // Steps 0-9. X (100 B) is used at 0 and 9, Z (50 B) at 0, 1, 8 and 9, Y (200 B) at 3-5.
  // Live: 150 at steps 0-2 and 6-9, 350 at 3-5.
  const std::vector<planned_tensor> ts = {t("X", 100, 0, 9, {0, 9}), t("Y", 200, 3, 5, {3, 4, 5}),
                                          t("Z", 50, 0, 9, {0, 1, 8, 9})};
  // Under 300: the peak step 3 has X off the device (steps 2-7, score 9 x 100) or Z (3-6, 7 x 50):
  // X goes, live peak 250. Pieces placed largest first: Y at 0; X's two stays at 0 (steps 0-1
  // and 8-9, beside Y's 3-5); Z (0-9) above both at 200.
  auto p = plan_swaps(ts, 10, 300);
  ASSERT_TRUE(p.fits);
  ASSERT_EQ(p.swaps.size(), 1u);
  EXPECT_EQ(p.swaps[0].tensor, "X");
  EXPECT_EQ(p.swaps[0].from, 0);
  EXPECT_EQ(p.swaps[0].to, 9);
  EXPECT_EQ(p.live_peak, 250);
  EXPECT_EQ(p.arena, 250);
  EXPECT_EQ(p.moved_bytes, 200);
  ASSERT_EQ(p.pieces.size(), 4u);
  EXPECT_EQ(p.piece_at(0, 1).last, 1);   // X out while step 1 runs
  EXPECT_EQ(p.piece_at(0, 8).first, 8);  // and back while step 8 runs
  EXPECT_EQ(p.piece_at(0, 8).offset, 0);
  EXPECT_EQ(p.piece_at(2, 5).offset, 200);
  EXPECT_THROW(p.piece_at(0, 4), std::logic_error);
  // Under 200: Z goes too (off at 3-6): live 200 at steps 3-5; Z's stays (0-2, 7-9) now fit
  // beside X's at 100.
  p = plan_swaps(ts, 10, 200);
  ASSERT_TRUE(p.fits);
  ASSERT_EQ(p.swaps.size(), 2u);
  EXPECT_EQ(p.swaps[1].tensor, "Z");
  EXPECT_EQ(p.swaps[1].from, 1);
  EXPECT_EQ(p.swaps[1].to, 8);
  EXPECT_EQ(p.arena, 200);
  EXPECT_EQ(p.piece_at(2, 0).offset, 100);
  EXPECT_EQ(p.piece_at(2, 9).offset, 100);
  EXPECT_EQ(p.moved_bytes, 300);
  // Under 150: Y, used at consecutive steps, cannot go: not met, and reported at 200.
  p = plan_swaps(ts, 10, 150);
  EXPECT_FALSE(p.fits);
  EXPECT_EQ(p.live_peak, 200);
  EXPECT_EQ(p.arena, 200);
}

TEST(MemoryPlan, SwapPlansAreConsistentOnRandomGraphs) {
  // Whatever the graph and limit: a plan that fits has its arena at or under the limit; every
  // use of a tensor is on the device in exactly one piece; no piece covers a step its tensor is
  // off the device; pieces that share a step never share bytes of the arena.
  std::uint64_t state = 12345;
  auto next = [&](int n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return int((state >> 33) % std::uint64_t(n));
  };
  int swapped_and_fitted = 0, not_fitted = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int steps = 4 + next(20);
    std::vector<planned_tensor> ts;
    for (int i = 0, n = 2 + next(8); i < n; ++i) {
      std::vector<int> uses = {next(steps)};
      for (int u = 0, k = next(4); u < k; ++u) uses.push_back(next(steps));
      std::sort(uses.begin(), uses.end());
      uses.erase(std::unique(uses.begin(), uses.end()), uses.end());
      ts.push_back(t("t" + std::to_string(i), double(16 * (1 + next(16))), uses.front(), uses.back(), uses));
    }
    const double peak = live_bytes_peak(ts, steps);
    const double limit = peak * (0.5 + 0.5 * next(1000) / 1000.0);
    const swap_plan p = plan_swaps(ts, steps, limit);
    if (p.fits) {
      EXPECT_LE(p.arena, limit);
      swapped_and_fitted += !p.swaps.empty();
    } else {
      ++not_fitted;
    }
    EXPECT_GE(p.arena, p.live_peak);
    for (int i = 0; i < int(ts.size()); ++i)
      for (int s : ts[std::size_t(i)].uses) {
        int covering = 0;
        for (const auto& pc : p.pieces) covering += pc.tensor == i && pc.first <= s && s <= pc.last;
        EXPECT_EQ(covering, 1) << "trial " << trial << " tensor " << i << " step " << s;
      }
    for (const auto& sw : p.swaps) {
      // Off the device for at least one step, a copy beside it holding the bytes one step more.
      const int off_first = sw.from + 1 + int(sw.overlap_out), off_last = sw.to - 1 - int(sw.overlap_in);
      EXPECT_LE(off_first, off_last);
      for (const auto& pc : p.pieces)
        if (pc.tensor == sw.tensor_index) EXPECT_TRUE(pc.last < off_first || pc.first > off_last);
    }
    for (std::size_t a = 0; a < p.pieces.size(); ++a)
      for (std::size_t b = a + 1; b < p.pieces.size(); ++b) {
        const auto &x = p.pieces[a], &y = p.pieces[b];
        const bool same_time = x.first <= y.last && y.first <= x.last;
        const bool same_bytes = x.offset < y.offset + ts[std::size_t(y.tensor)].bytes &&
                                y.offset < x.offset + ts[std::size_t(x.tensor)].bytes;
        EXPECT_FALSE(same_time && same_bytes) << "trial " << trial;
      }
  }
  EXPECT_GT(swapped_and_fitted, 20);  // the generator reaches both outcomes
  EXPECT_GT(not_fitted, 20);
  std::cout << swapped_and_fitted << " plans fit by swapping, " << not_fitted << " cannot fit\n";
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
