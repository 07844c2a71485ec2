// The host references conv2d (packed) and conv2d_naive (the loop-nest definition) against
// small hand-computed cases, and against each other on shapes covering every code path.
#include <kcnn/reference/conv2d.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

using namespace kcnn;

namespace {
// Input 3x3 holding 1..9 row-major.
auto ramp3x3 = [](int, int, int h, int w) { return double(h * 3 + w + 1); };
auto ones = [](int, int, int, int) { return 1.0; };

// Both references must give the hand-computed values; returns the packed one's output.
template <class In, class Wt, class Bias>
std::vector<double> both(const conv2d_params& p, const In& in, const Wt& wt, const Bias& bias) {
  const auto naive = reference::conv2d_naive(p, in, wt, bias);
  const auto packed = reference::conv2d(p, in, wt, bias);
  EXPECT_EQ(naive, packed);
  return packed;
}
}  // namespace

TEST(ReferenceConv2d, ValidWindowStride1) {
  const auto p = conv2d_params{1, 1, 3, 3, 1, 2, 2, 1, 0, 1};
  ASSERT_EQ(p.p(), 2);
  ASSERT_EQ(p.q(), 2);
  const auto out = both(p, ramp3x3, ones, [](int) { return 0.0; });
  EXPECT_EQ(out, (std::vector<double>{12, 16, 24, 28}));
}

TEST(ReferenceConv2d, Stride2Padding1WithBias) {
  const auto p = conv2d_params{1, 1, 3, 3, 1, 3, 3, 2, 1, 1};
  ASSERT_EQ(p.p(), 2);
  const auto out = both(p, ramp3x3, ones, [](int) { return 0.5; });
  // Each window clips to the 2x2 corner of the input it overlaps.
  EXPECT_EQ(out, (std::vector<double>{12.5, 16.5, 24.5, 28.5}));
}

TEST(ReferenceConv2d, PaddingKeepsSizeAndZeroesBorder) {
  // 3x3 ones filter over a 3x3 ramp, pad 1: the centre sees all 9, a corner 4 elements.
  const auto p = conv2d_params{1, 1, 3, 3, 1, 3, 3, 1, 1, 1};
  const auto out = both(p, ramp3x3, ones, [](int) { return 0.0; });
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
  const auto out = both(p, in, wt, [](int k) { return k == 0 ? 0.0 : 7.0; });
  EXPECT_EQ(out, (std::vector<double>{1 * 1 + 10 * 2, 100 * 3 + 1000 * 4 + 7}));
}

TEST(ReferenceConv2d, DepthwiseAndBatchOrder) {
  // groups == c == k: each output channel is its input channel times its own weight.
  const auto p = conv2d_params{2, 3, 1, 2, 3, 1, 1, 1, 0, 3};
  auto in = [](int n, int c, int, int w) { return double(100 * n + 10 * c + w); };
  auto wt = [](int k, int, int, int) { return double(k + 2); };
  const auto out = both(p, in, wt, [](int) { return 0.0; });
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

TEST(ReferenceConv2d, DilationSpacesTheTaps) {
  // 2x2 ones filter dilated by 2 on the 3x3 ramp: the one window reads the corners 1, 3, 7, 9.
  auto p = conv2d_params{1, 1, 3, 3, 1, 2, 2, 1, 0, 1};
  p.dilation_h = p.dilation_w = 2;
  ASSERT_EQ(p.p(), 1);
  ASSERT_EQ(p.q(), 1);
  EXPECT_EQ(both(p, ramp3x3, ones, [](int) { return 0.0; }), (std::vector<double>{1 + 3 + 7 + 9}));
  // Dilation along w only, pad 1 along w: windows (row r, columns ow - 1 and ow + 1).
  auto q = conv2d_params{1, 1, 3, 3, 1, 1, 2, 1, 0, 1}.with_geometry(1, 1, 0, 1, 0, 1, 1, 2);
  ASSERT_EQ(q.p(), 3);
  ASSERT_EQ(q.q(), 3);
  EXPECT_EQ(both(q, ramp3x3, ones, [](int) { return 0.0; }),
            (std::vector<double>{2, 1 + 3, 2, 5, 4 + 6, 5, 8, 7 + 9, 8}));
}

TEST(ReferenceConv2d, AsymmetricPadAndPerAxisStride) {
  // TensorFlow "SAME", stride 2, on the 3x3 ramp with a 2x2 ones filter: no begin pad, one end
  // pad: windows at rows/columns {0, 1} and {2, pad}.
  const auto p = conv2d_params{1, 1, 3, 3, 1, 2, 2, 2, 0, 1}.with_geometry(2, 2, 0, 0, 1, 1);
  ASSERT_EQ(p.p(), 2);
  ASSERT_EQ(p.q(), 2);
  EXPECT_EQ(both(p, ramp3x3, ones, [](int) { return 0.0; }), (std::vector<double>{1 + 2 + 4 + 5, 3 + 6, 7 + 8, 9}));
  // Stride 1 along h, 2 along w; a 1 x 3 filter padded 0 x 1 (Inception v3's 1 x 7 in small).
  const auto q = conv2d_params{1, 1, 3, 3, 1, 1, 3, 1, 0, 1}.with_geometry(1, 2, 0, 1, 0, 1);
  ASSERT_EQ(q.p(), 3);
  ASSERT_EQ(q.q(), 2);
  EXPECT_EQ(both(q, ramp3x3, ones, [](int) { return 0.0; }), (std::vector<double>{1 + 2, 2 + 3, 4 + 5, 5 + 6, 7 + 8, 8 + 9}));
}

TEST(Conv2dParams, OutputSizesOfRealLayers) {
  // Inception v3 17x17 block: 1x7 pad 0x3 and 7x1 pad 3x0 keep 17 x 17.
  const auto i1x7 = conv2d_params{1, 128, 17, 17, 128, 1, 7, 1, 0, 1}.with_geometry(1, 1, 0, 3, 0, 3);
  EXPECT_EQ(i1x7.check(), "");
  EXPECT_EQ(i1x7.p(), 17);
  EXPECT_EQ(i1x7.q(), 17);
  // SSD fc6: 3x3, dilation 6, pad 6 on 19 x 19 keeps 19 (undilated it would be 29).
  auto fc6 = conv2d_params{1, 512, 19, 19, 1024, 3, 3, 1, 6, 1};
  EXPECT_EQ(fc6.p(), 29);
  fc6.dilation_h = fc6.dilation_w = 6;
  EXPECT_EQ(fc6.p(), 19);
  EXPECT_EQ(fc6.q(), 19);
  // EfficientNet stem, TensorFlow "SAME" stride 2 on 224: pad 0 before, 1 after: 112.
  const auto stem = conv2d_params{1, 3, 224, 224, 32, 3, 3, 2, 0, 1}.with_geometry(2, 2, 0, 0, 1, 1);
  EXPECT_EQ(stem.p(), 112);
  EXPECT_EQ((conv2d_params{1, 3, 224, 224, 32, 3, 3, 2, 0, 1}.p()), 111);
  // The symmetric fields and the per-axis ones describe the same layer.
  EXPECT_EQ((conv2d_params{1, 3, 9, 9, 4, 3, 3, 2, 1, 1}), (conv2d_params{1, 3, 9, 9, 4, 3, 3, 1, 0, 1}.with_geometry(2, 2, 1, 1, 1, 1)));
  EXPECT_NE((conv2d_params{1, 3, 9, 9, 4, 3, 3, 2, 1, 1}), (conv2d_params{1, 3, 9, 9, 4, 3, 3, 2, 1, 1}.with_geometry(2, 2, 1, 1, 1, 0)));
  EXPECT_FALSE((conv2d_params{1, 3, 9, 9, 4, 3, 3, 2, 1, 1}.with_geometry(2, 2, 1, 1, 1, 0).symmetric()));
}

TEST(Conv2dParams, CheckNamesTheGeometryField) {
  const auto base = conv2d_params{1, 3, 8, 8, 4, 3, 3, 1, 1, 1};
  EXPECT_EQ(base.with_geometry(0, 1, 1, 1, 1, 1).check().rfind("stride_h:", 0), 0u);
  EXPECT_EQ(base.with_geometry(1, -2, 1, 1, 1, 1).check().rfind("stride_w:", 0), 0u);
  EXPECT_EQ(base.with_geometry(1, 1, -3, 1, 1, 1).check().rfind("pad_h:", 0), 0u);
  EXPECT_EQ(base.with_geometry(1, 1, 1, 1, 1, -2).check().rfind("pad_w_end:", 0), 0u);
  EXPECT_EQ(base.with_geometry(1, 1, 1, 1, 1, 1, 0, 1).check().rfind("dilation_h:", 0), 0u);
  // A 3-tap window dilated by 5 spans 11 rows: more than 8 + 1 + 1.
  EXPECT_EQ(base.with_geometry(1, 1, 1, 1, 1, 1, 5, 1).check().rfind("dilation_h:", 0), 0u);
  EXPECT_EQ(base.with_geometry(1, 1, 1, 1, 1, 1, 1, 4).check(), "");
  // A huge end pad is caught before the output size overflows int.
  EXPECT_EQ(base.with_geometry(1, 1, 1, 1, 2147483640, 1).check().rfind("pad_h:", 0), 0u);
}

TEST(Conv2dParams, BytesAndFlops) {
  const auto p = conv2d_params{2, 4, 5, 5, 6, 3, 3, 1, 1, 2};  // out 2x6x5x5, 2 channels per group
  EXPECT_EQ(p.flops(), 2.0 * 2 * 6 * 5 * 5 * 2 * 3 * 3);  // 2 N K P Q C/g R S
  EXPECT_EQ(p.min_bytes(4), 4.0 * (2 * 4 * 5 * 5 + 6 * 2 * 3 * 3 + 6 + 2 * 6 * 5 * 5));
}

// Deterministic values in [-1, 1) from the index (no global generator state).
static double hashed(std::uint64_t a) {
  a = (a ^ (a >> 33)) * 0xff51afd7ed558ccdULL;
  a = (a ^ (a >> 33)) * 0xc4ceb9fe1a85ec53ULL;
  return double(a >> 11) / double(1ULL << 52) - 1.0;
}

TEST(ReferenceConv2d, PackedEqualsNaiveOnEveryPath) {
  // (n, c, h, w, k, r, s, stride, pad, groups): large and small output planes (both loop
  // forms), k not a multiple of 4, stride and padding, grouped, depthwise, fully connected.
  const conv2d_params shapes[] = {
      {2, 3, 19, 21, 5, 3, 3, 1, 1, 1},   {1, 4, 33, 30, 7, 5, 5, 2, 2, 1},
      {3, 6, 9, 9, 6, 3, 3, 1, 0, 2},     {2, 8, 20, 20, 8, 3, 3, 2, 1, 8},
      {4, 16, 3, 3, 10, 3, 3, 1, 0, 1},   {2, 12, 7, 7, 9, 7, 7, 1, 0, 1},
      {1, 3, 40, 40, 2, 11, 11, 4, 0, 1}, {2, 5, 17, 17, 3, 1, 1, 1, 0, 1},
      // dilation (SSD fc6, DeepLab), per-axis stride and pads (Inception v3), TensorFlow "SAME"
      // end pads, a dilated depthwise layer, and few output positions (the dot form) dilated
      conv2d_params{2, 3, 19, 19, 5, 3, 3, 1, 6, 1}.with_geometry(1, 1, 6, 6, 6, 6, 6, 6),
      conv2d_params{1, 4, 17, 17, 6, 1, 7, 1, 0, 1}.with_geometry(1, 1, 0, 3, 0, 3),
      conv2d_params{1, 4, 17, 16, 6, 7, 1, 1, 0, 1}.with_geometry(2, 1, 3, 0, 3, 0),
      conv2d_params{2, 6, 16, 15, 4, 3, 3, 2, 0, 2}.with_geometry(2, 2, 0, 0, 1, 1),
      conv2d_params{2, 8, 12, 12, 8, 3, 3, 1, 0, 8}.with_geometry(1, 1, 2, 2, 2, 2, 2, 2),
      conv2d_params{1, 5, 7, 7, 3, 3, 3, 1, 0, 1}.with_geometry(1, 2, 1, 0, 2, 1, 3, 2)};
  for (const auto& p : shapes) {
    ASSERT_EQ(p.check(), "");
    SCOPED_TRACE(p.c * 1000 + p.k);
    auto in = [&](int n, int c, int h, int w) { return hashed(((std::uint64_t(n) * 131 + c) * 131 + h) * 131 + w); };
    auto wt = [&](int k, int c, int r, int s) { return hashed(1e9 + ((std::uint64_t(k) * 67 + c) * 67 + r) * 67 + s); };
    auto bias = [&](int k) { return hashed(7e9 + k); };
    const auto a = reference::conv2d_naive(p, in, wt, bias);
    const auto b = reference::conv2d(p, in, wt, bias);
    ASSERT_EQ(a.size(), b.size());
    ASSERT_EQ(a.size(), std::size_t(p.n) * p.k * p.p() * p.q());
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
    EXPECT_LT(worst, 1e-12);
  }
}

TEST(ReferenceConv2d, ThreadedEqualsSerialBitwise) {
  // The reference runs on every host core: its result must not depend on the thread count
  // (more threads than (group, image) pairs included), on both loop forms, grouped or not.
  const conv2d_params shapes[] = {{3, 6, 19, 21, 8, 3, 3, 1, 1, 2}, {5, 16, 3, 3, 10, 3, 3, 1, 0, 1},
                                  {2, 8, 20, 20, 8, 3, 3, 2, 1, 8}, {1, 4, 33, 30, 7, 5, 5, 2, 2, 1}};
  for (const auto& p : shapes) {
    SCOPED_TRACE(p.c * 1000 + p.k);
    auto in = [&](int n, int c, int h, int w) { return hashed(((std::uint64_t(n) * 131 + c) * 131 + h) * 131 + w); };
    auto wt = [&](int k, int c, int r, int s) { return hashed(1e9 + ((std::uint64_t(k) * 67 + c) * 67 + r) * 67 + s); };
    auto bias = [&](int k) { return hashed(7e9 + k); };
    const auto serial = reference::conv2d(p, in, wt, bias, 1);
    for (int threads : {2, 3, 7, 64}) {
      const auto threaded = reference::conv2d(p, in, wt, bias, threads);
      ASSERT_EQ(threaded.size(), serial.size());
      std::size_t differ = 0;
      for (std::size_t i = 0; i < serial.size(); ++i) differ += threaded[i] != serial[i];
      EXPECT_EQ(differ, 0u) << threads << " threads";
    }
  }
  EXPECT_GE(reference::reference_threads(), 1);
}
