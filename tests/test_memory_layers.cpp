// Memory-bound layers: hand-checked small cases for the references and kernels, pooling output
// sizes in floor and ceil mode, softmax stability, exact transform round trips.
#include <kcnn/activation.hpp>
#include <kcnn/batchnorm.hpp>
#include <kcnn/eltwise.hpp>
#include <kcnn/fill.hpp>
#include <kcnn/lrn.hpp>
#include <kcnn/pool.hpp>
#include <kcnn/reference/layers.hpp>
#include <kcnn/reference/pool.hpp>
#include <kcnn/softmax.hpp>
#include <kcnn/transform.hpp>
#include <kcnn/validate.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

using namespace kcnn;
using exec = Kokkos::DefaultExecutionSpace;

namespace {
pool_params pool(int h, int r, int stride, int pad, bool ceil_mode, pool_kind k = pool_kind::max) {
  pool_params p;
  p.n = 1; p.c = 1; p.h = h; p.w = h; p.r = r; p.s = r; p.stride = stride; p.pad = pad;
  p.ceil_mode = ceil_mode;
  p.kind = k;
  return p;
}

// A device tensor holding f(n, c, h, w), and its host copy after a kernel.
template <class L, class F>
tensor4<float, L> make(const dims4& d, const F& f) {
  tensor4<float, L> t("t", d);
  auto h = create_mirror_view(t);
  for (int n = 0; n < d.n; ++n)
    for (int c = 0; c < d.c; ++c)
      for (int y = 0; y < d.h; ++y)
        for (int x = 0; x < d.w; ++x) h(n, c, y, x) = float(f(n, c, y, x));
  deep_copy(t, h);
  return t;
}
template <class T>
std::vector<double> host(const T& t) {
  Kokkos::fence();
  auto h = create_mirror_view(t);
  deep_copy(h, t);
  return to_logical(h);
}
}  // namespace

TEST(Pool, OutputSizeFloorCeilAndCaffeClipping) {
  EXPECT_EQ(pool(55, 3, 2, 0, false).p(), 27);  // AlexNet pool1: both modes agree
  EXPECT_EQ(pool(55, 3, 2, 0, true).p(), 27);
  EXPECT_EQ(pool(32, 3, 2, 0, false).p(), 15);  // cifar10_quick pool1: floor gives 15
  EXPECT_EQ(pool(32, 3, 2, 0, true).p(), 16);   // Caffe's ceil gives 16
  EXPECT_EQ(pool(5, 2, 2, 0, false).p(), 2);
  EXPECT_EQ(pool(5, 2, 2, 0, true).p(), 3);
  // ceil would give 3, but the third window would start in the padding: Caffe clips to 2.
  EXPECT_EQ(pool(5, 2, 4, 1, true).p(), 2);
  EXPECT_EQ(pool(112, 3, 2, 1, false).p(), 56);  // ResNet-50 maxpool
}

TEST(Pool, HandCheckedMaxAndAverage) {
  const dims4 d{1, 1, 4, 4};
  auto ramp = [](int, int, int h, int w) { return h * 4 + w + 1; };  // 1..16
  auto mx = pool(4, 2, 2, 0, false), av = pool(4, 2, 2, 0, false, pool_kind::avg);
  auto in_h = make<layout::nchw>(d, ramp);
  auto host_in = create_mirror_view(in_h);
  deep_copy(host_in, in_h);
  EXPECT_EQ(reference::pool(mx, host_in), (std::vector<double>{6, 8, 14, 16}));
  EXPECT_EQ(reference::pool(av, host_in), (std::vector<double>{3.5, 5.5, 11.5, 13.5}));
  // Kernels, every variant, in chwn.
  auto in = make<layout::chwn>(d, ramp);
  tensor4<float, layout::chwn> out("out", mx.output_dims());
  for (int v = 0; v < 4; ++v) {
    poison(out);
    if (v == 0) kcnn::pool(exec(), in, out, av, variant::pool_naive{});
    if (v == 1) kcnn::pool(exec(), in, out, av, variant::pool_regtile<1, 2>{});
    if (v == 2) kcnn::pool(exec(), in, out, av, variant::pool_regtile<2, 2>{});
    if (v == 3) kcnn::pool(exec(), in, out, av, variant::pool_tiled{});
    EXPECT_EQ(host(out), (std::vector<double>{3.5, 5.5, 11.5, 13.5})) << "variant " << v;
  }
}

TEST(Pool, MaxStartsFromTheLowestFloatInEveryVariant) {
  // A window of -inf gives -FLT_MAX, as the reference's max starts there: every kernel, the
  // vector variant's host column ring (nhwc) included, starts its max from the same identity.
  const float ninf = -std::numeric_limits<float>::infinity();
  auto mx = pool(5, 3, 1, 1, false);
  mx.c = 20;
  auto in = make<layout::nhwc>({1, 20, 5, 5}, [&](int, int, int, int) { return ninf; });
  tensor4<float, layout::nhwc> out("out", {1, 20, 5, 5});
  for (int v = 0; v < 3; ++v) {
    poison(out);
    if (v == 0) kcnn::pool(exec(), in, out, mx, variant::pool_naive{});
    if (v == 1) kcnn::pool(exec(), in, out, mx, variant::pool_vector{});
    if (v == 2) kcnn::pool(exec(), in, out, mx, variant::pool_regtile<2, 2>{});
    for (const double o : host(out)) EXPECT_EQ(o, double(-std::numeric_limits<float>::max())) << "variant " << v;
  }
}

TEST(Pool, AverageDividesByTheWindowClippedToThePaddedInput) {
  // 3x3 ones, 3x3 window, stride 1, pad 1: a corner window holds 4 ones and 5 padding zeros,
  // and Caffe divides by 9.
  auto p = pool(3, 3, 1, 1, false, pool_kind::avg);
  auto in = make<layout::nhwc>({1, 1, 3, 3}, [](int, int, int, int) { return 1; });
  tensor4<float, layout::nhwc> out("out", p.output_dims());
  kcnn::pool(exec(), in, out, p, variant::pool_naive{});
  const auto o = host(out);
  EXPECT_FLOAT_EQ(float(o[0]), 4.0f / 9);
  EXPECT_FLOAT_EQ(float(o[1]), 6.0f / 9);
  EXPECT_FLOAT_EQ(float(o[4]), 1.0f);
}

TEST(Pool, AsymmetricPadAndPerAxisStride) {
  // TensorFlow "SAME" 3x3 / 2 max pooling of 4 x 4 (0..15 row-major): no begin pad, one end pad:
  // 2 x 2 outputs, the last window of each axis reads 2 inputs and the padding.
  auto p = pool(4, 3, 2, 0, false);
  p.pad_h_end = p.pad_w_end = 1;
  ASSERT_EQ(p.check(), "");
  ASSERT_EQ(p.p(), 2);
  ASSERT_EQ(p.q(), 2);
  auto in = make<layout::nchw>({1, 1, 4, 4}, [](int, int, int h, int w) { return h * 4 + w; });
  auto host_in = [&](int, int, int h, int w) { return double(h * 4 + w); };
  EXPECT_EQ(reference::pool(p, host_in), (std::vector<double>{10, 11, 14, 15}));
  // Average: Caffe's divisor counts the end pad as padding (9 per window).
  auto av = p;
  av.kind = pool_kind::avg;
  EXPECT_EQ(reference::pool(av, host_in),
            (std::vector<double>{(0 + 1 + 2 + 4 + 5 + 6 + 8 + 9 + 10) / 9.0, (2 + 3 + 6 + 7 + 10 + 11) / 9.0,
                                 (8 + 9 + 10 + 12 + 13 + 14) / 9.0, (10 + 11 + 14 + 15) / 9.0}));
  // Stride 1 along h, 2 along w, pad 1 before each row only: 4 x 1 outputs of 2x3 windows.
  auto q = pool(4, 2, 1, 0, false);
  q.s = 3;
  q.stride_w = 2;
  q.pad_h = 1;
  q.pad_h_end = 0;
  ASSERT_EQ(q.check(), "");
  ASSERT_EQ(q.p(), 4);
  ASSERT_EQ(q.q(), 1);
  EXPECT_EQ(reference::pool(q, host_in), (std::vector<double>{2, 6, 10, 14}));
  // Every kernel agrees with the reference on both.
  for (const auto& pp : {p, av, q}) {
    const auto want = reference::pool(pp, host_in);
    for (int v = 0; v < 5; ++v) {
      tensor4<float, layout::nchw> out("out", pp.output_dims());
      if (v == 0) kcnn::pool(exec(), in, out, pp, variant::pool_naive{});
      if (v == 1) kcnn::pool(exec(), in, out, pp, variant::pool_regtile<1, 2>{});
      if (v == 2) kcnn::pool(exec(), in, out, pp, variant::pool_regtile<2, 2>{});
      if (v == 3) kcnn::pool(exec(), in, out, pp, variant::pool_tiled{});
      if (v == 4) kcnn::pool(exec(), in, out, pp, variant::pool_vector{});
      const auto o = host(out);
      ASSERT_EQ(o.size(), want.size());
      for (std::size_t i = 0; i < o.size(); ++i) EXPECT_NEAR(double(o[i]), want[i], 1e-5) << "variant " << v << " at " << i;
    }
  }
  // A window wider than the row, valid through its end pad: TensorFlow "SAME" 3x3 / 2 of 2 x 2
  // (one output, the max or average of the 4 inputs and 5 padding zeros). No kernel may read past
  // the row (pool_vector's interior range once did).
  auto tiny = pool(2, 3, 2, 0, false);
  tiny.pad_h_end = tiny.pad_w_end = 1;
  ASSERT_EQ(tiny.check(), "");
  ASSERT_EQ(tiny.p(), 1);
  auto tiny_in = make<layout::nchw>({1, 2, 2, 2}, [](int, int c, int h, int w) { return 1 + c * 4 + h * 2 + w; });
  for (const pool_kind k : {pool_kind::max, pool_kind::avg}) {
    auto tp = tiny;
    tp.c = 2;
    tp.kind = k;
    const std::vector<double> want = k == pool_kind::max ? std::vector<double>{4, 8} : std::vector<double>{10 / 9.0, 26 / 9.0};
    for (int v = 0; v < 5; ++v) {
      tensor4<float, layout::nchw> out("out", tp.output_dims());
      if (v == 0) kcnn::pool(exec(), tiny_in, out, tp, variant::pool_naive{});
      if (v == 1) kcnn::pool(exec(), tiny_in, out, tp, variant::pool_regtile<1, 2>{});
      if (v == 2) kcnn::pool(exec(), tiny_in, out, tp, variant::pool_regtile<2, 2>{});
      if (v == 3) kcnn::pool(exec(), tiny_in, out, tp, variant::pool_tiled{});
      if (v == 4) kcnn::pool(exec(), tiny_in, out, tp, variant::pool_vector{});
      const auto o = host(out);
      ASSERT_EQ(o.size(), 2u);
      for (std::size_t i = 0; i < 2; ++i) EXPECT_NEAR(o[i], want[i], 1e-6) << "variant " << v << " kind " << int(k);
    }
  }
  // Pads must stay smaller than the window along their axis; the field is named.
  auto bad = pool(4, 3, 2, 0, false);
  bad.pad_w_end = 3;
  EXPECT_EQ(bad.check().rfind("pad_w_end:", 0), 0u) << bad.check();
  bad = pool(4, 3, 2, 0, false);
  bad.stride_h = 0;
  EXPECT_EQ(bad.check().rfind("stride_h:", 0), 0u) << bad.check();
}

TEST(Activation, HandCheckedValues) {
  const dims4 d{1, 1, 1, 4};
  const float xs[4] = {-2.0f, -0.5f, 0.0f, 1.5f};
  auto in = make<layout::nchw>(d, [&](int, int, int, int w) { return xs[w]; });
  auto run = [&](activation_kind k, float alpha) {
    tensor4<float, layout::nchw> out("out", d);
    activation(exec(), in, out, activation_params{k, alpha});
    return host(out);
  };
  EXPECT_EQ(run(activation_kind::relu, 0), (std::vector<double>{0, 0, 0, 1.5}));
  const auto leaky = run(activation_kind::leaky_relu, 0.1f);
  EXPECT_FLOAT_EQ(float(leaky[0]), -0.2f);
  EXPECT_FLOAT_EQ(float(leaky[3]), 1.5f);
  EXPECT_FLOAT_EQ(float(run(activation_kind::sigmoid, 0)[2]), 0.5f);
  EXPECT_FLOAT_EQ(float(run(activation_kind::tanh, 0)[3]), std::tanh(1.5f));
  EXPECT_NEAR(run(activation_kind::elu, 1.0f)[0], std::exp(-2.0) - 1.0, 1e-6);
  // swish: x sigmoid(x): -2 / (1 + e^2), 0 at 0, 1.5 / (1 + e^-1.5).
  const auto swish = run(activation_kind::swish, 0);
  EXPECT_NEAR(swish[0], -2.0 / (1.0 + std::exp(2.0)), 1e-6);
  EXPECT_EQ(swish[2], 0.0);
  EXPECT_NEAR(swish[3], 1.5 / (1.0 + std::exp(-1.5)), 1e-6);
  // In place: the same tensor as input and output.
  activation(exec(), in, in, activation_params{activation_kind::relu, 0});
  EXPECT_EQ(host(in), (std::vector<double>{0, 0, 0, 1.5}));
}

TEST(Lrn, HandCheckedAcrossChannelsBothVariants) {
  // size 3, alpha 3 (alpha/size = 1), beta 1, k 1; channels 1, 2, 3 at one pixel:
  // out0 = 1/(1+1+4) = 1/6, out1 = 2/(1+1+4+9) = 2/15, out2 = 3/(1+4+9) = 3/14.
  lrn_params p;
  p.n = 1; p.c = 3; p.h = 1; p.w = 1; p.size = 3; p.alpha = 3; p.beta = 1; p.k = 1;
  auto in = make<layout::nhwc>(p.dims(), [](int, int c, int, int) { return c + 1; });
  tensor4<float, layout::nhwc> a("a", p.dims()), b("b", p.dims());
  lrn(exec(), in, a, p, variant::lrn_naive{});
  lrn(exec(), in, b, p, variant::lrn_sliding{});
  for (const auto& o : {host(a), host(b)}) {
    EXPECT_NEAR(o[0], 1.0 / 6, 1e-6);
    EXPECT_NEAR(o[1], 2.0 / 15, 1e-6);
    EXPECT_NEAR(o[2], 3.0 / 14, 1e-6);
  }
}

// lrn_sliding in place (a network pass's in-place LRN): the ring of squares gives the
// out-of-place kernel's values (to rounding: the compiler may fuse a square into its sum in one
// form and not the other), whatever the window against the channel count; too large a window or
// another layout on the same memory is refused.
template <class L>
void lrn_sliding_in_place_matches_out_of_place() {
  for (const int size : {1, 3, 5, 15})
    for (const int channels : {1, 4, 7, 40}) {
      lrn_params p;
      p.n = 2; p.c = channels; p.h = 3; p.w = 5; p.size = size; p.alpha = 0.5f; p.beta = 0.75f; p.k = 2;
      const auto value = [](int n, int c, int h, int w) { return std::sin(0.37 * n + 1.3 * c + 0.11 * h - 0.07 * w) * 3; };
      auto in = make<L>(p.dims(), value);
      tensor4<float, L> out("out", p.dims());
      lrn(exec(), in, out, p, variant::lrn_sliding{});
      lrn(exec(), in, in, p, variant::lrn_sliding{});
      const auto got = host(in), want = host(out);
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-6 * std::max(1.0, std::abs(want[i]))) << "size " << size << ", " << channels << " channels, element " << i;
    }
  lrn_params big;
  big.n = 1; big.c = 20; big.h = 2; big.w = 2; big.size = 17;
  auto t = make<L>(big.dims(), [](int, int c, int, int) { return c; });
  EXPECT_THROW(lrn(exec(), t, t, big, variant::lrn_sliding{}), std::invalid_argument);
}

TEST(Lrn, SlidingInPlaceMatchesOutOfPlace) {
  lrn_sliding_in_place_matches_out_of_place<layout::nchw>();
  lrn_sliding_in_place_matches_out_of_place<layout::nhwc>();
  lrn_sliding_in_place_matches_out_of_place<layout::chwn>();
  // The same memory seen in two layouts is not "in place".
  lrn_params p;
  p.n = 2; p.c = 3; p.h = 2; p.w = 2; p.size = 3;
  auto a = make<layout::nchw>(p.dims(), [](int, int c, int, int) { return c; });
  tensor4<float, layout::nhwc> b(typename tensor4<float, layout::nhwc>::view_type(a.view().data(), layout::nhwc::make(p.dims())), p.dims());
  EXPECT_THROW(lrn(exec(), a, b, p, variant::lrn_sliding{}), std::invalid_argument);
}

// lrn_vector's three forms (nhwc: windows along the lanes; nchw and chwn: planes longer than a
// host span, with a ragged last span) and both powers (the three-quarter power for beta = 0.75,
// pow otherwise) against the double reference.
template <class L>
void lrn_vector_matches_reference(float beta) {
  lrn_params p;
  p.n = 3; p.c = 11; p.h = 13; p.w = 47; p.size = 5; p.alpha = 0.5f; p.beta = beta; p.k = 2;
  const auto value = [](int n, int c, int h, int w) { return std::sin(0.37 * n + 1.3 * c + 0.11 * h - 0.07 * w) * 3; };
  auto in = make<L>(p.dims(), value);
  tensor4<float, L> out("out", p.dims());
  lrn(exec(), in, out, p, variant::lrn_vector{});
  const auto got = host(out);
  double worst = 0;
  std::size_t i = 0;
  for (int n = 0; n < p.n; ++n)
    for (int c = 0; c < p.c; ++c)
      for (int h = 0; h < p.h; ++h)
        for (int w = 0; w < p.w; ++w, ++i) {
          double sum = 0;
          for (int cc = std::max(0, c - 2); cc <= std::min(p.c - 1, c + 2); ++cc) sum += value(n, cc, h, w) * value(n, cc, h, w);
          const double ref = value(n, c, h, w) * std::pow(2.0 + 0.5 / 5 * sum, -double(beta));
          worst = std::max(worst, std::abs(got[i] - ref) / std::max(1e-3, std::abs(ref)));
        }
  EXPECT_LT(worst, 1e-5) << L::name << " beta " << beta;
}

TEST(Lrn, VectorMatchesReferenceInEveryLayoutForBothPowers) {
  for (const float beta : {0.75f, 0.6f}) {
    lrn_vector_matches_reference<layout::nchw>(beta);
    lrn_vector_matches_reference<layout::nhwc>(beta);
    lrn_vector_matches_reference<layout::chwn>(beta);
  }
}

TEST(Batchnorm, HandCheckedWithAndWithoutRelu) {
  batchnorm_params p;
  p.n = 1; p.c = 1; p.h = 1; p.w = 2; p.eps = 1.0f;
  auto in = make<layout::nchw>(p.dims(), [](int, int, int, int w) { return w == 0 ? 3.0 : -3.0; });
  Kokkos::View<float*> mean("m", 1), var("v", 1), gamma("g", 1), beta("b", 1);
  Kokkos::deep_copy(mean, 1.0f);
  Kokkos::deep_copy(var, 3.0f);  // sqrt(3 + 1) = 2
  Kokkos::deep_copy(gamma, 2.0f);
  Kokkos::deep_copy(beta, 0.5f);
  tensor4<float, layout::nchw> out("out", p.dims());
  batchnorm(exec(), in, mean, var, gamma, beta, out, p, variant::batchnorm_naive{});
  EXPECT_EQ(host(out), (std::vector<double>{2.5, -3.5}));
  p.relu = true;
  batchnorm(exec(), in, mean, var, gamma, beta, out, p, variant::batchnorm_fused{});
  EXPECT_EQ(host(out), (std::vector<double>{2.5, 0.0}));
  batchnorm(exec(), in, mean, var, gamma, beta, out, p, variant::batchnorm_naive{});
  EXPECT_EQ(host(out), (std::vector<double>{2.5, 0.0}));
  // Folded: scale = 2 / 2 = 1, shift = 0.5 - 1 * 1 = -0.5, carried by value.
  auto h = [](const Kokkos::View<float*>& v) { return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v); };
  const auto f = batchnorm_folded<4>::from_host(p, h(mean), h(var), h(gamma), h(beta));
  EXPECT_EQ(f.scale(0), 1.0f);
  EXPECT_EQ(f.shift(0), -0.5f);
  variant::batchnorm_folded_constant folded;
  kcnn::prepare(exec(), folded, p, in, mean, var, gamma, beta, out);
  batchnorm(exec(), in, mean, var, gamma, beta, out, p, folded);
  EXPECT_EQ(host(out), (std::vector<double>{2.5, 0.0}));
  p.relu = false;
  kcnn::prepare(exec(), folded, p, in, mean, var, gamma, beta, out);
  batchnorm(exec(), in, mean, var, gamma, beta, out, p, folded);
  EXPECT_EQ(host(out), (std::vector<double>{2.5, -3.5}));
}

TEST(Softmax, StableWithLargeInputsAndRowsSumToOne) {
  softmax_params p{3, 1000, 1, 1};
  // Logits around 1000 and 5000: exp overflows in float without the max subtraction.
  auto in = make<layout::nchw>(p.dims(), [](int n, int c, int, int) { return 1000.0 * (1 + 2 * n) + (c % 7); });
  tensor4<float, layout::nchw> a("a", p.dims()), b("b", p.dims());
  variant::softmax_multi_kernel multi;
  kcnn::prepare(exec(), multi, p, in, a);
  softmax(exec(), in, a, p, multi);
  softmax(exec(), in, b, p, variant::softmax_fused{});
  for (const auto& o : {host(a), host(b)}) {
    for (int n = 0; n < p.n; ++n) {
      double sum = 0;
      for (int c = 0; c < p.c; ++c) {
        const double v = o[std::size_t(n) * p.c + c];
        ASSERT_TRUE(std::isfinite(v));
        sum += v;
      }
      EXPECT_NEAR(sum, 1.0, 1e-5);
    }
    // Class 6 of each row has the largest logit (offset 6): e^6 / sum over the 7 residues.
    double denom = 0;
    for (int j = 0; j < 7; ++j) denom += std::exp(double(j)) * (j < 1000 % 7 ? 143 : 142);
    EXPECT_NEAR(o[6], std::exp(6.0) / denom, 1e-6);
  }
}

TEST(Transform, RoundTripsExactlyThroughEveryLayout) {
  const dims4 d{3, 37, 5, 33};  // ragged against the 32 x 32 tiles
  tensor4<float, layout::nchw> a("a", d), back_naive("bn", d), back_tiled("bt", d);
  fill_random(a, 99);
  tensor4<float, layout::nhwc> b1("b1", d), b2("b2", d);
  tensor4<float, layout::chwn> c1("c1", d), c2("c2", d);
  transform(exec(), a, b1, variant::transform_naive{});
  transform(exec(), b1, c1, variant::transform_naive{});
  transform(exec(), c1, back_naive, variant::transform_naive{});
  transform(exec(), a, b2, variant::transform_tiled{});
  transform(exec(), b2, c2, variant::transform_tiled{});
  transform(exec(), c2, back_tiled, variant::transform_tiled{});
  const auto orig = host(a);
  EXPECT_EQ(host(back_naive), orig);
  EXPECT_EQ(host(back_tiled), orig);
  EXPECT_EQ(host(c2), orig);  // logical values, whatever the storage
}

// transform_vector between every pair of nchw, nhwc and chwn, whole 16 x 16 blocks and ragged
// edges along each axis (on a host: the register transpose, host_transpose; n = 20 and 3 put the
// chwn pairs' n axis on whole blocks and on a tail only; 3 x 700 pixels span three column spans,
// the last partial), against the naive transform.
template <class LA, class LB>
void check_vector_transform(const dims4& d) {
  tensor4<float, LA> a("a", d);
  tensor4<float, LB> v("v", d), ref("ref", d);
  fill_random(a, 7);
  poison(v);
  transform(exec(), a, v, variant::transform_vector{});
  transform(exec(), a, ref, variant::transform_naive{});
  EXPECT_EQ(host(v), host(ref)) << LA::name << " -> " << LB::name << " " << d.n << "x" << d.c << "x" << d.h << "x" << d.w;
}
TEST(Transform, VectorMatchesNaiveForEveryPair) {
  for (const dims4 d : {dims4{3, 37, 5, 33}, dims4{20, 32, 4, 8}, dims4{17, 48, 1, 16}, dims4{2, 19, 3, 700}}) {
    check_vector_transform<layout::nchw, layout::nhwc>(d);
    check_vector_transform<layout::nhwc, layout::nchw>(d);
    check_vector_transform<layout::nchw, layout::chwn>(d);
    check_vector_transform<layout::chwn, layout::nchw>(d);
    check_vector_transform<layout::nhwc, layout::chwn>(d);
    check_vector_transform<layout::chwn, layout::nhwc>(d);
  }
}

TEST(Eltwise, AddAndConcat) {
  const dims4 d{2, 3, 2, 2};
  auto a = make<layout::chwn>(d, [](int n, int c, int h, int w) { return n + 10 * c + 100 * h + 1000 * w; });
  auto b = make<layout::chwn>(d, [](int, int, int, int) { return 0.5; });
  tensor4<float, layout::chwn> sum("s", d), cat("c", {2, 6, 2, 2});
  add(exec(), a, b, sum);
  const auto s = host(sum);
  EXPECT_EQ(s[d.logical_index(1, 2, 1, 1)], 1 + 20 + 100 + 1000 + 0.5);
  concat(exec(), std::vector<tensor4<float, layout::chwn>>{a, b}, cat);
  const auto c = host(cat);
  const dims4 cd{2, 6, 2, 2};
  EXPECT_EQ(c[cd.logical_index(1, 2, 1, 0)], 1 + 20 + 100);
  EXPECT_EQ(c[cd.logical_index(1, 4, 1, 0)], 0.5);
}

// The GPU's interleaved flat items (kcnn/lanes.hpp's flat_items_of: item i takes elements i, i + q,
// i + 2q, i + 3q, q = ceil(n / 4)), run here on the host's memory so that their index arithmetic
// is checked where no GPU is: every element written once with its own value for n = 0..13 (tails
// of 1, 2 and 3), out of place and in place (out aliasing an input). A host build never takes
// this path through the entry points.
TEST(FlatForms, InterleavedItemsCoverEveryElementOnceInAndOutOfPlace) {
  using host = Kokkos::DefaultHostExecutionSpace;
  for (std::size_t n = 0; n <= 13; ++n) {
    const std::size_t q = (n + flat_interleave - 1) / flat_interleave;
    std::vector<float> a(n), b(n), out(n, -99.0f);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = float(i) - 5.0f;  // negatives for relu
      b[i] = 100.0f + float(i);
    }
    const auto items = [&](const auto& f) {
      Kokkos::parallel_for(Kokkos::RangePolicy<host, Kokkos::IndexType<std::size_t>>(0, q), f);
      Kokkos::fence();
    };
    items(detail::add_flat_functor<flat_interleave>{a.data(), b.data(), out.data(), n, q});
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(out[i], a[i] + b[i]) << "add n " << n << " i " << i;
    std::vector<float> x = a;  // in place: out is the first operand
    items(detail::add_flat_functor<flat_interleave>{x.data(), b.data(), x.data(), n, q});
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(x[i], a[i] + b[i]) << "add in place n " << n << " i " << i;
    std::vector<float> r = a;  // relu in place
    activation_params p = activation_params::relu();
    items(detail::activation_flat_functor<activation_kind::relu, flat_interleave>{r.data(), r.data(), n, q,
                                                                                     p.resolved()});
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(r[i], std::max(a[i], 0.0f)) << "relu in place n " << n << " i " << i;
  }
}

// Which items the portable flat launch takes, on every backend: one element per thread up to the
// threads the device holds at once, four a quarter of the storage apart beyond.
TEST(FlatForms, PortableItemsFollowTheDeviceConcurrency) {
  const std::size_t c = device_concurrency(exec{});
  for (const std::size_t n : {std::size_t(1), c, c + 1, 4 * c + 3}) {
    const flat_items f = flat_items_of(exec{}, n);
    EXPECT_EQ(f.interleaved, n > c) << n;
    EXPECT_EQ(f.items, n > c ? (n + 3) / 4 : n) << n;
  }
  EXPECT_EQ(flat_items_of(exec{}, 0).items, 0u);
}

#if KCNN_HOST_TUNING
// Non-temporal stores (kcnn/host/streaming.hpp's stream_lanes, for outputs of at least the
// variant's streaming_store_bytes) write exactly what ordinary stores write: the host flat
// chunks at a 64-byte aligned output, a 16-byte aligned one (four 16-byte streams) and a 4-byte
// aligned one (ordinary stores), with a partial last chunk and a scalar tail; in place too. Then
// pooling's host path (the ring and the window read straight) in nhwc and chwn with every output
// streamed, against the reference.
// Bit for bit where every compilation computes the same bits (add, leaky relu: one correctly
// rounded operation an element). tanh's rational form is computed by the same source in two inlining contexts (into
// the chunk, or into the L1 buffer the streamed chunk stores from), and a compiler may fuse its
// multiply-adds in one and not in the other (GCC 12 with Kokkos 4's OpenMP backend: 1 ulp apart),
// so it is held to 2 ulp.
TEST(FlatForms, StreamedStoresWriteWhatOrdinaryStoresWrite) {
  using host_exec = Kokkos::DefaultHostExecutionSpace;
  constexpr std::size_t chunk = host_tuning::flat_chunk;
  const std::size_t n = 2 * chunk + 3030;  // 3030 = 11 x 256 + 13 x 16 + 6
  std::vector<float> storage(n + 64), plain(n), a(n), b(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = float(int(i % 23) - 11) * 0.25f;
    b[i] = float(i % 7);
  }
  host_store_options never, always;
  never.streaming_store_bytes = host_store_options::never;
  always.streaming_store_bytes = 0;
  const activation_params th = activation_params::tanh().resolved();
  const activation_params leaky = activation_params::leaky_relu(0.3f).resolved();
  using act = host_tuning::tuned<variant::activation_flat, host_exec>;
  // The most units in the last place by which out differs from plain.
  const auto ulps = [&](const float* out) {
    std::int64_t worst = 0;
    for (std::size_t i = 0; i < n; ++i) {
      std::int32_t p, o;
      std::memcpy(&p, &plain[i], sizeof p);
      std::memcpy(&o, &out[i], sizeof o);
      if ((p < 0) != (o < 0)) {
        if (plain[i] != out[i]) return std::numeric_limits<std::int64_t>::max();  // opposite signs (+0 == -0)
        continue;
      }
      worst = std::max(worst, std::int64_t(p) > o ? std::int64_t(p) - o : std::int64_t(o) - p);
    }
    return worst;
  };
  using add = host_tuning::tuned<variant::add_flat, host_exec>;
  for (const std::size_t offset : {0, 4, 1}) {
    float* base = storage.data();
    while (reinterpret_cast<std::uintptr_t>(base) % 64 != 0) ++base;
    float* out = base + offset;
    add::run(host_exec(), a.data(), b.data(), plain.data(), n, never);
    add::run(host_exec(), a.data(), b.data(), out, n, always);
    Kokkos::fence();
    EXPECT_TRUE(std::equal(plain.begin(), plain.end(), out)) << "add, offset " << offset;
    act::run<activation_kind::leaky_relu>(host_exec(), a.data(), plain.data(), n, leaky, never);
    act::run<activation_kind::leaky_relu>(host_exec(), a.data(), out, n, leaky, always);
    Kokkos::fence();
    EXPECT_TRUE(std::equal(plain.begin(), plain.end(), out)) << "leaky relu, offset " << offset;
    std::copy(a.begin(), a.end(), out);  // in place
    act::run<activation_kind::leaky_relu>(host_exec(), out, out, n, leaky, always);
    Kokkos::fence();
    EXPECT_TRUE(std::equal(plain.begin(), plain.end(), out)) << "leaky relu in place, offset " << offset;
    act::run<activation_kind::tanh>(host_exec(), a.data(), plain.data(), n, th, never);
    act::run<activation_kind::tanh>(host_exec(), a.data(), out, n, th, always);
    Kokkos::fence();
    EXPECT_LE(ulps(out), std::int64_t(2)) << "tanh, offset " << offset;
    std::copy(a.begin(), a.end(), out);  // in place
    act::run<activation_kind::tanh>(host_exec(), out, out, n, th, always);
    Kokkos::fence();
    EXPECT_LE(ulps(out), std::int64_t(2)) << "tanh in place, offset " << offset;
  }

  variant::pool_vector streamed;
  streamed.host_stores = always;  // every output streamed
  for (const pool_kind k : {pool_kind::max, pool_kind::avg})
    for (const int stride : {1, 2}) {  // 3 x 3 / 1: the ring; 3 x 3 / 2: each window straight
      pool_params p = pool(13, 3, stride, 1, false, k);
      p.n = 3;
      p.c = 40;  // two full vectors and a half one
      const dims4 d = p.input_dims();
      const auto value = [](int n, int c, int y, int x) { return (n * 131 + c * 17 + y * 7 + x * 3) % 29 - 14; };
      const auto in_nchw = make<layout::nchw>(d, value);
      auto in_host = create_mirror_view(in_nchw);
      deep_copy(in_host, in_nchw);
      const auto want = reference::pool(p, in_host);
      tensor4<float, layout::nhwc> out_nhwc("out", p.output_dims());
      tensor4<float, layout::chwn> out_chwn("out", p.output_dims());
      kcnn::pool(exec(), make<layout::nhwc>(d, value), out_nhwc, p, streamed);
      kcnn::pool(exec(), make<layout::chwn>(d, value), out_chwn, p, streamed);
      const auto got_nhwc = host(out_nhwc), got_chwn = host(out_chwn);
      for (std::size_t i = 0; i < want.size(); ++i) {
        EXPECT_NEAR(got_nhwc[i], want[i], 1e-5) << "nhwc stride " << stride << " at " << i;
        EXPECT_NEAR(got_chwn[i], want[i], 1e-5) << "chwn stride " << stride << " at " << i;
      }
    }
}
#endif

// A host-tunable variant's two tunings (kcnn/tuning.hpp) compute the same output on every backend
// the build has: the portable source (variant::portable) against the default (the host tuning on
// a host backend), bit for bit (the same arithmetic per element), in every compile-time layout,
// at shapes whose runs are not multiples of a lane block.
TEST(Tunings, PortableAndDefaultAgreeBitForBit) {
  const dims4 d{3, 37, 5, 19};
  const auto va = [](int n, int c, int y, int x) { return float((n * 31 + c * 7 + y * 5 + x * 3) % 17) - 8.5f; };
  const auto vb = [](int n, int c, int y, int x) { return float((n * 11 + c * 13 + y * 3 + x) % 9) * 0.5f; };
  const auto check = [&](auto lt) {
    using L = decltype(lt);
    const auto a = make<L>(d, va), b = make<L>(d, vb);
    tensor4<float, L> x("x", d), y("y", d);
    const auto same = [&](const char* what) {
      const auto hx = host(x), hy = host(y);
      EXPECT_TRUE(hx == hy) << what << " in " << L::name;
    };
    kcnn::add(exec(), a, b, x, variant::add_flat{});
    kcnn::add(exec(), a, b, y, variant::portable<variant::add_flat>{});
    same("add_flat");
    kcnn::add(exec(), a, b, x, variant::add_vector{});
    kcnn::add(exec(), a, b, y, variant::portable<variant::add_vector>{});
    same("add_vector");
    kcnn::activation(exec(), a, x, activation_params::elu(), variant::activation_flat{});
    kcnn::activation(exec(), a, y, activation_params::elu(), variant::portable<variant::activation_flat>{});
    same("activation_flat elu");
    const dims4 half{d.n, 20, d.h, d.w}, rest{d.n, d.c - 20, d.h, d.w};
    const std::vector<tensor4<float, L>> parts{make<L>(half, va), make<L>(rest, vb)};
    kcnn::concat(exec(), parts, x, variant::concat_vector{});
    kcnn::concat(exec(), parts, y, variant::portable<variant::concat_vector>{});
    same("concat_vector");
  };
  check(layout::nchw{});
  check(layout::nhwc{});
  check(layout::chwn{});
}

// The same for the layers whose tunings sum in different orders (pooling's average, LRN's window,
// softmax's segments): within float rounding of each other, and max pooling exactly. Windows and
// strides that take every host path (the ring, the window read straight, the per-pixel window of
// a window wider than the ring) and the portable ones.
TEST(Tunings, PortableAndDefaultAgreeOnTheWindowedLayers) {
  const dims4 d{2, 37, 9, 23};
  const auto va = [](int n, int c, int y, int x) { return float((n * 31 + c * 7 + y * 5 + x * 3) % 17) * 0.25f - 2.0f; };
  const auto close = [](const std::vector<double>& a, const std::vector<double>& b, double tol, const std::string& what) {
    ASSERT_EQ(a.size(), b.size()) << what;
    for (std::size_t i = 0; i < a.size(); ++i)
      ASSERT_NEAR(a[i], b[i], tol * std::max(1.0, std::abs(a[i]))) << what << " at " << i;
  };
  const auto check = [&](auto lt) {
    using L = decltype(lt);
    const std::string in_layout = L::name;
    const auto a = make<L>(d, va);
    for (const pool_kind k : {pool_kind::max, pool_kind::avg})
      for (const int r : {2, 3, 17})
        for (const int stride : {1, 2}) {
          pool_params p = pool(d.h, r, stride, r > 8 ? 0 : r / 2, false, k);
          p.n = d.n; p.c = d.c; p.h = d.h; p.w = d.w; p.s = r > 8 ? 5 : r;
          if (p.r > d.h) p.r = d.h;
          if (!p.check().empty()) continue;
          tensor4<float, L> x("x", p.output_dims()), y("y", p.output_dims());
          kcnn::pool(exec(), a, x, p, variant::pool_vector{});
          kcnn::pool(exec(), a, y, p, variant::portable<variant::pool_vector>{});
          close(host(x), host(y), k == pool_kind::max ? 0.0 : 1e-6,
                "pool " + std::to_string(r) + "/" + std::to_string(stride) + " in " + in_layout);
        }
    tensor4<float, L> x("x", d), y("y", d);
    const lrn_params lp = lrn_params::make(d, 5, 1e-2f, 0.75f, 1.0f);
    kcnn::lrn(exec(), a, x, lp, variant::lrn_vector{});
    kcnn::lrn(exec(), a, y, lp, variant::portable<variant::lrn_vector>{});
    close(host(x), host(y), 1e-5, "lrn in " + in_layout);
    const softmax_params sp = softmax_params::make(d);
    kcnn::softmax(exec(), a, x, sp, variant::softmax_vector{});
    kcnn::softmax(exec(), a, y, sp, variant::portable<variant::softmax_vector>{});
    close(host(x), host(y), 1e-5, "softmax in " + in_layout);
    tensor4<float, layout::nhwc> tx("tx", d), ty("ty", d);
    kcnn::transform(exec(), a, tx, variant::transform_vector{});
    kcnn::transform(exec(), a, ty, variant::portable<variant::transform_vector>{});
    close(host(tx), host(ty), 0.0, "transform from " + in_layout);
  };
  check(layout::nchw{});
  check(layout::nhwc{});
  check(layout::chwn{});
}
