// The host reference conv2d against small hand-computed cases.
#include <kcnn/reference/conv2d.hpp>

#include <gtest/gtest.h>

#include <vector>

using namespace kcnn;

namespace {
// Input 3x3 holding 1..9 row-major.
auto ramp3x3 = [](int, int, int h, int w) { return double(h * 3 + w + 1); };
auto ones = [](int, int, int, int) { return 1.0; };
}  // namespace

TEST(ReferenceConv2d, ValidWindowStride1) {
  const auto p = conv2d_params{1, 1, 3, 3, 1, 2, 2, 1, 0, 1};
  ASSERT_EQ(p.p(), 2);
  ASSERT_EQ(p.q(), 2);
  const auto out = reference::conv2d(p, ramp3x3, ones, [](int) { return 0.0; });
  EXPECT_EQ(out, (std::vector<double>{12, 16, 24, 28}));
}

TEST(ReferenceConv2d, Stride2Padding1WithBias) {
  const auto p = conv2d_params{1, 1, 3, 3, 1, 3, 3, 2, 1, 1};
  ASSERT_EQ(p.p(), 2);
  const auto out = reference::conv2d(p, ramp3x3, ones, [](int) { return 0.5; });
  // Each window clips to the 2x2 corner of the input it overlaps.
  EXPECT_EQ(out, (std::vector<double>{12.5, 16.5, 24.5, 28.5}));
}

TEST(ReferenceConv2d, PaddingKeepsSizeAndZeroesBorder) {
  // 3x3 ones filter over a 3x3 ramp, pad 1: the centre sees all 9, a corner 4 elements.
  const auto p = conv2d_params{1, 1, 3, 3, 1, 3, 3, 1, 1, 1};
  const auto out = reference::conv2d(p, ramp3x3, ones, [](int) { return 0.0; });
  ASSERT_EQ(out.size(), 9u);
  EXPECT_EQ(out[4], 45);               // 1+...+9
  EXPECT_EQ(out[0], 1 + 2 + 4 + 5);    // top-left
  EXPECT_EQ(out[8], 5 + 6 + 8 + 9);    // bottom-right
  EXPECT_EQ(out[1], 1 + 2 + 3 + 4 + 5 + 6);
}

TEST(ReferenceConv2d, GroupsSeeOnlyTheirChannels) {
  // c=4, k=2, groups=2: filter 0 sees channels 0,1 and filter 1 sees channels 2,3.
  const auto p = conv2d_params{1, 4, 1, 1, 2, 1, 1, 1, 0, 2};
  auto in = [](int, int c, int, int) { return double(c + 1); };
  auto wt = [](int k, int c, int, int) { return k == 0 ? (c == 0 ? 1.0 : 10.0) : (c == 0 ? 100.0 : 1000.0); };
  const auto out = reference::conv2d(p, in, wt, [](int k) { return k == 0 ? 0.0 : 7.0; });
  EXPECT_EQ(out, (std::vector<double>{1 * 1 + 10 * 2, 100 * 3 + 1000 * 4 + 7}));
}

TEST(ReferenceConv2d, DepthwiseAndBatchOrder) {
  // groups == c == k: each output channel is its input channel times its own weight.
  const auto p = conv2d_params{2, 3, 1, 2, 3, 1, 1, 1, 0, 3};
  auto in = [](int n, int c, int, int w) { return double(100 * n + 10 * c + w); };
  auto wt = [](int k, int, int, int) { return double(k + 2); };
  const auto out = reference::conv2d(p, in, wt, [](int) { return 0.0; });
  // Logical nchw order: n, then k, then h, then w.
  const std::vector<double> expect = {0 * 2, 1 * 2, 10 * 3, 11 * 3, 20 * 4, 21 * 4,
                                      100 * 2, 101 * 2, 110 * 3, 111 * 3, 120 * 4, 121 * 4};
  EXPECT_EQ(out, expect);
}

TEST(Conv2dParams, CheckNamesTheField) {
  EXPECT_EQ((conv2d_params{1, 3, 8, 8, 4, 3, 3, 1, 1, 1}).check(), "");
  EXPECT_EQ((conv2d_params{1, 3, 8, 8, 4, 3, 3, 0, 1, 1}).check().rfind("stride:", 0), 0u);
  EXPECT_EQ((conv2d_params{1, 3, 8, 8, 4, 3, 3, 1, 1, 2}).check().rfind("groups:", 0), 0u);
  EXPECT_EQ((conv2d_params{1, 4, 8, 8, 6, 3, 3, 1, 1, 4}).check().rfind("groups:", 0), 0u);
  EXPECT_EQ((conv2d_params{1, 3, 2, 8, 4, 5, 3, 1, 1, 1}).check().rfind("r:", 0), 0u);
  EXPECT_EQ((conv2d_params{0, 3, 8, 8, 4, 3, 3, 1, 1, 1}).check().rfind("n:", 0), 0u);
}

TEST(Conv2dParams, BytesAndFlops) {
  const auto p = conv2d_params{2, 4, 5, 5, 6, 3, 3, 1, 1, 2};  // out 2x6x5x5, 2 channels per group
  EXPECT_EQ(p.flops(), 2.0 * 2 * 6 * 5 * 5 * 2 * 3 * 3);  // 2 N K P Q C/g R S
  EXPECT_EQ(p.min_bytes(4), 4.0 * (2 * 4 * 5 * 5 + 6 * 2 * 3 * 3 + 6 + 2 * 6 * 5 * 5));
}
