// Whole-network forward passes: validated against the host reference forward pass in every
// uniform layout and in a mixed-layout plan (with transforms), and the planned-arena pass equal
// to the separate-buffer pass.
#include "cases/registry.hpp"
#include "modes/forward_pass.hpp"

#include <gtest/gtest.h>

#include <iostream>

using namespace kcnn::bench;

namespace {
suite small(const std::string& name, int batch) {
  suite su = load_suite(resolve_suite(name));
  set_batch(su, batch);
  return su;
}
constexpr std::uint64_t seed = 99;
// ResNet-50's stem and first two blocks (block 1's output waits for block 2's add) at a seventh of
// the height and width (224 x 224 -> 32 x 32; every layer there is at 224, 112 or 56, so the chain
// still fits): the same lifetimes, arena rules and swaps as at full size with 49 times fewer pixels
// (a full-size pass took 130-220 s under the sanitizers).
suite resnet50_two_blocks_small() {
  suite su = small("resnet50", 1);
  su.layers.resize(30);
  for (auto& l : su.layers) {
    EXPECT_EQ(l.h % 7, 0) << l.layer;
    l.h /= 7;
    l.w /= 7;
    l.out = registry::instance().find_op(l.op)->output_shape(l);
  }
  for (std::size_t i = 1; i < su.layers.size(); ++i)
    if (su.layers[i].inputs.empty()) EXPECT_EQ(su.layers[i].h, su.layers[i - 1].out.h) << su.layers[i].layer;
  return su;
}
}  // namespace

TEST(ForwardPass, EveryUniformLayoutMatchesTheHostReference) {
  const suite su = small("cifar10_quick", 2);
  const auto ref = reference_forward(su, seed);
  ASSERT_EQ(ref.size(), 2u * 10);
  std::vector<double> first;
  for (layout_axis lay : {layout_axis::nchw, layout_axis::nhwc, layout_axis::chwn}) {
    const auto r = run_forward(su, uniform_plan(su, lay), seed, ref, 1e-4, 1, 1, 0.0, activation_memory::separate);
    EXPECT_TRUE(r.check.passed) << name(lay) << ": " << r.check.message;
    EXPECT_EQ(r.transforms, 0);
    EXPECT_EQ(r.steps.size(), su.layers.size());
    EXPECT_GT(r.total_ms, 0.0);
    // Softmax rows sum to one.
    for (int n = 0; n < 2; ++n) {
      double s = 0;
      for (int c = 0; c < 10; ++c) s += r.output[std::size_t(n * 10 + c)];
      EXPECT_NEAR(s, 1.0, 1e-5);
    }
  }
}

TEST(ForwardPass, MixedLayoutsInsertTransformsAndStillValidate) {
  const suite su = small("lenet", 3);
  const auto ref = reference_forward(su, seed);
  // Alternate layouts layer by layer: every layer needs its input converted.
  forward_plan mixed{"mixed", {}};
  const layout_axis lays[] = {layout_axis::nchw, layout_axis::chwn, layout_axis::nhwc};
  for (std::size_t i = 0; i < su.layers.size(); ++i)
    mixed.variants.push_back(uniform_plan(su, lays[i % 3]).variants[i]);
  const auto r = run_forward(su, mixed, seed, ref, 1e-4, 1, 1, 0.0, activation_memory::separate);
  EXPECT_TRUE(r.check.passed) << r.check.message;
  EXPECT_EQ(r.transforms, int(su.layers.size()) - 1);
  EXPECT_EQ(r.steps.size(), 2 * su.layers.size() - 1);
  // A wrong reference is caught.
  auto wrong = ref;
  wrong[0] += 0.5;
  EXPECT_FALSE(run_forward(su, mixed, seed, wrong, 1e-6, 1, 1, 0.0, activation_memory::separate).check.passed);
}

TEST(ForwardPass, ArenaPassEqualsTheSeparateBufferPass) {
  for (const char* net : {"alexnet", "resnet50"}) {
    // AlexNet through pool2 (in-place relu and LRN between convolutions and pooling), ResNet-50
    // through two blocks with their skips: enough for every arena rule.
    suite su = std::string(net) == "resnet50" ? resnet50_two_blocks_small() : small(net, 1);
    if (std::string(net) == "alexnet") su.layers.resize(8);
    const auto ref = reference_forward(su, seed);
    const auto plan = uniform_plan(su, layout_axis::nhwc);
    const auto sep = run_forward(su, plan, seed, ref, 1e-4, 1, 1, 0.0, activation_memory::separate);
    const auto arena = run_forward(su, plan, seed, ref, 1e-4, 1, 1, 0.0, activation_memory::arena);
    ASSERT_TRUE(sep.check.passed) << net << ": " << sep.check.message;
    EXPECT_TRUE(arena.check.passed) << net << ": " << arena.check.message;
    EXPECT_EQ(arena.output, sep.output) << net;  // bit for bit
    EXPECT_LT(arena.arena_bytes, sep.arena_bytes) << net;
  }
}

TEST(ForwardPass, InPlacePlanPutsLrnInPlaceAndShrinksTheArena) {
  suite su = small("alexnet", 1);  // the peaks below compare the same way at any batch
  su.layers.resize(8);  // conv1, relu1, norm1 (LRN), pool1, conv2, relu2, norm2, pool2
  const auto ref = reference_forward(su, seed);
  const auto plain = uniform_plan(su, layout_axis::nchw);
  const auto in_place = in_place_plan(su, layout_axis::nchw);
  EXPECT_EQ(in_place.name, "uniform_nchw_in_place");
  EXPECT_EQ(std::string(in_place.variants[2]->variant_name()), "sliding");  // the baseline LRN is not safe in place
  EXPECT_EQ(in_place.variants[1], plain.variants[1]);          // relu's baseline is
  const auto a = run_forward(su, plain, seed, ref, 1e-4, 1, 1, 0.0, activation_memory::arena);
  const auto b = run_forward(su, in_place, seed, ref, 1e-4, 1, 1, 0.0, activation_memory::arena);
  ASSERT_TRUE(b.check.passed) << b.check.message;
  // The peak was norm1 (conv1's output and its own, 96 x 55 x 55 floats each); in place it is
  // conv1 (the input, 3 x 227 x 227, and its output).
  const double conv1_out = 96.0 * 55 * 55 * 4, input = 3.0 * 227 * 227 * 4;
  EXPECT_EQ(a.arena_bytes, 2 * conv1_out);
  EXPECT_EQ(b.arena_bytes, input + conv1_out);
}

TEST(ForwardPass, SwappedPassStaysUnderTheLimitAndEqualsTheArenaPass) {
  const suite su = resnet50_two_blocks_small();
  const auto ref = reference_forward(su, seed);
  const auto plan = in_place_plan(su, layout_axis::nchw);
  const auto arena = run_forward(su, plan, seed, ref, 1e-4, 1, 1, 0.0, activation_memory::arena);
  ASSERT_TRUE(arena.check.passed) << arena.check.message;
  // A limit just under the arena: met by swapping, the output bit for bit the arena pass's.
  const double limit = arena.arena_bytes - 1;
  const auto sw = run_forward(su, plan, seed, ref, 1e-4, 2, 2, 0.0, activation_memory::swapped, {}, limit);
  ASSERT_TRUE(sw.limit_met);
  EXPECT_TRUE(sw.check.passed) << sw.check.message;
  EXPECT_EQ(sw.output, arena.output);
  EXPECT_LE(sw.arena_bytes, limit);
  ASSERT_FALSE(sw.swaps.swaps.empty());
  EXPECT_GT(sw.swaps.moved_bytes, 0.0);
  EXPECT_EQ(sw.reps, 2);
  // Without a limit to meet nothing moves and the arena is the plain one.
  const auto loose = run_forward(su, plan, seed, ref, 1e-4, 1, 1, 0.0, activation_memory::swapped, {}, arena.arena_bytes);
  EXPECT_TRUE(loose.swaps.swaps.empty());
  EXPECT_EQ(loose.arena_bytes, arena.arena_bytes);
  EXPECT_EQ(loose.output, arena.output);
  // Under the largest layer's own input and output, nothing can help: not run.
  const auto tight = run_forward(su, plan, seed, ref, 1e-4, 1, 1, 0.0, activation_memory::swapped, {}, 1024.0);
  EXPECT_FALSE(tight.limit_met);
  EXPECT_TRUE(tight.output.empty());
  std::cout << "arena " << arena.arena_bytes << " B; swapped " << sw.arena_bytes << " B with " << sw.swaps.swaps.size()
            << " swaps moving " << sw.swaps.moved_bytes << " B\n";
}
