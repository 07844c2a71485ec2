// Whole-network forward passes: validated against the host reference forward pass in every
// uniform layout and in a mixed-layout plan (with transforms), and the planned-arena pass equal
// to the separate-buffer pass.
#include "modes/forward_pass.hpp"

#include <gtest/gtest.h>

using namespace kcnn::bench;

namespace {
suite small(const std::string& name, int batch) {
  suite su = load_suite(resolve_suite(name));
  set_batch(su, batch);
  return su;
}
constexpr std::uint64_t seed = 99;
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
    suite su = small(net, 1);
    // AlexNet through pool2 (in-place relu and LRN between convolutions and pooling), ResNet-50
    // through two blocks with their skips: enough for every arena rule, in seconds under ASan.
    su.layers.resize(std::string(net) == "resnet50" ? 30 : 8);
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
