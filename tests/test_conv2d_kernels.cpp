// conv2d kernels through the public API, in every layout, against the host reference,
// and against each other.
#include <kcnn/kcnn.hpp>

#include "implicit_gemm_check.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace kcnn;

namespace {

template <class L>
std::vector<double> run_direct(const conv2d_params& p, comparison& cmp) {
  tensor4<float, L> in("in", p.input_dims()), wt("wt", p.filter_dims()), out("out", p.output_dims());
  Kokkos::View<float*> bias("bias", p.k);
  fill_random(in, 1);
  fill_random(wt, 2, 0.3f);
  fill_random(bias, 3);
  poison(out);
  conv2d(Kokkos::DefaultExecutionSpace(), in, wt, bias, out, p, variant::direct_coalesced{});
  Kokkos::fence();
  auto in_h = create_mirror_view(in);
  auto wt_h = create_mirror_view(wt);
  auto out_h = create_mirror_view(out);
  auto b_h = Kokkos::create_mirror_view(bias);
  deep_copy(in_h, in);
  deep_copy(wt_h, wt);
  deep_copy(out_h, out);
  Kokkos::deep_copy(b_h, bias);
  const auto ref = reference::conv2d(p, in_h, wt_h, [&](int k) { return b_h(k); });
  cmp = compare(out_h, p.output_dims(), ref, 1e-5);
  std::vector<double> flat;
  const dims4 od = p.output_dims();
  for (std::size_t i = 0; i < od.size(); ++i) {
    int n, c, h, w;
    od.logical_coords(i, n, c, h, w);
    flat.push_back(out_h(n, c, h, w));
  }
  return flat;
}

}  // namespace

namespace kcnn {
// Readable test parameter names instead of a byte dump.
void PrintTo(const conv2d_params& p, std::ostream* os) {
  *os << "n" << p.n << " c" << p.c << " " << p.h << "x" << p.w << " k" << p.k << " " << p.r << "x"
      << p.s << " stride " << p.stride << " pad " << p.pad << " groups " << p.groups;
}
}  // namespace kcnn

namespace {
class DirectConv : public ::testing::TestWithParam<conv2d_params> {};
}  // namespace

TEST_P(DirectConv, MatchesReferenceInEveryLayoutAndAcrossLayouts) {
  const auto p = GetParam();
  ASSERT_EQ(p.check(), "");
  comparison a, b, c;
  const auto oa = run_direct<layout::nchw>(p, a);
  const auto ob = run_direct<layout::nhwc>(p, b);
  const auto oc = run_direct<layout::chwn>(p, c);
  EXPECT_TRUE(a.passed) << "nchw: " << a.message;
  EXPECT_TRUE(b.passed) << "nhwc: " << b.message;
  EXPECT_TRUE(c.passed) << "chwn: " << c.message;
  EXPECT_LT(a.rel_l2, 1e-6);
  ASSERT_EQ(oa.size(), ob.size());
  for (std::size_t i = 0; i < oa.size(); ++i) {
    // Same inputs, same arithmetic per output: layouts agree to rounding.
    ASSERT_NEAR(oa[i], ob[i], 1e-4 * (1 + std::fabs(oa[i]))) << i;
    ASSERT_NEAR(oa[i], oc[i], 1e-4 * (1 + std::fabs(oa[i]))) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, DirectConv,
    ::testing::Values(conv2d_params{2, 3, 7, 6, 4, 3, 3, 1, 1, 1},    // padding, odd sizes
                      conv2d_params{3, 4, 9, 9, 5, 3, 3, 2, 0, 1},    // stride 2
                      conv2d_params{2, 4, 8, 8, 6, 3, 3, 1, 1, 2},    // groups 2
                      conv2d_params{2, 6, 5, 5, 6, 3, 3, 1, 1, 6},    // depthwise
                      conv2d_params{1, 8, 4, 4, 3, 1, 1, 1, 0, 1},    // 1x1
                      conv2d_params{2, 3, 11, 11, 4, 5, 5, 3, 2, 1}),  // 5x5 stride 3 pad 2
    [](const ::testing::TestParamInfo<conv2d_params>& i) {
      const auto& p = i.param;
      return "n" + std::to_string(p.n) + "c" + std::to_string(p.c) + "h" + std::to_string(p.h) +
             "k" + std::to_string(p.k) + "r" + std::to_string(p.r) + "s" + std::to_string(p.stride) +
             "p" + std::to_string(p.pad) + "g" + std::to_string(p.groups);
    });

// The phase tile's lane helpers (direct_vector, host groups of 8 and 16), hand-checked: W = 16
// and 8 (vector types, the AVX broadcast where the build has it) and 4 (the array fallback).
template <int W>
void check_phase_lanes() {
  float src[4] = {1.5f, -2.0f, 3.25f, 4.0f};
  float_lanes<W> q;
  broadcast_quad<W>(q, src);
  for (int l = 0; l < W; ++l) EXPECT_EQ(lane_get<W>(q, l), src[l % 4]) << "W " << W << " lane " << l;
  // a_j lane l = 100 j + l: out lane j W/4 + c = sum over ph of (100 j + 4 c + ph) = 400 j + 16 c + 6.
  float_lanes<W> a[4];
  for (int j = 0; j < 4; ++j) {
    float v[W];
    for (int l = 0; l < W; ++l) v[l] = float(100 * j + l);
    load_lanes<W>(a[j], v);
  }
  float_lanes<W> out;
  sum_phases<W>(out, a[0], a[1], a[2], a[3]);
  for (int o = 0; o < W; ++o) {
    const int j = o / (W / 4), c = o % (W / 4);
    EXPECT_EQ(lane_get<W>(out, o), float(400 * j + 16 * c + 6)) << "W " << W << " output lane " << o;
  }
}
TEST(PhaseLanes, BroadcastQuadAndSumPhases) {
  check_phase_lanes<16>();
  check_phase_lanes<8>();
  check_phase_lanes<4>();
}

// direct_vector's two tunings (kcnn/tuning.hpp) on the layer classes the host tuning has forms
// for: a dense layer, few input channels (an RGB stem), a head of few output channels, depthwise
// (whole and partial blocks), groups of 4 and 8 channels, pointwise, stride 2; nhwc and nchw; and
// fc in both input layouts. Each agrees with the reference (1e-5) and with the other to rounding
// (they sum in different orders). A state prepared for one tuning refuses to run the other.
namespace {
template <class L, class V>
std::vector<double> run_conv_variant(const conv2d_params& p, const V& v0) {
  tensor4<float, L> in("in", p.input_dims()), wt("wt", p.filter_dims()), out("out", p.output_dims());
  Kokkos::View<float*> bias("bias", p.k);
  fill_random(in, 1);
  fill_random(wt, 2, 0.3f);
  fill_random(bias, 3);
  poison(out);
  V v = v0;
  kcnn::prepare(Kokkos::DefaultExecutionSpace(), v, p, in, wt, bias, out);
  conv2d(Kokkos::DefaultExecutionSpace(), in, wt, bias, out, p, v);
  Kokkos::fence();
  auto out_h = create_mirror_view(out);
  deep_copy(out_h, out);
  return to_logical(out_h);
}
}  // namespace

TEST(Tunings, DirectVectorPortableAndDefaultAgree) {
  const conv2d_params shapes[] = {
      {2, 40, 9, 9, 72, 3, 3, 1, 1, 1},    // dense
      {2, 3, 13, 13, 64, 3, 3, 2, 1, 1},   // RGB stem, stride 2
      {2, 48, 7, 7, 3, 1, 1, 1, 0, 1},     // head of 3 channels, pointwise
      {2, 48, 10, 10, 48, 3, 3, 1, 1, 48},  // depthwise, whole blocks of 48
      {1, 40, 9, 9, 40, 5, 5, 2, 2, 40},   // depthwise, a partial block, 5 x 5 / 2
      {2, 64, 8, 8, 64, 3, 3, 1, 1, 16},   // groups of 4
      {2, 64, 8, 8, 64, 3, 3, 1, 1, 8},    // groups of 8 (the phase tile)
  };
  for (const auto& p : shapes) {
    ASSERT_EQ(p.check(), "");
    comparison ref;
    const auto want = run_direct<layout::nchw>(p, ref);
    ASSERT_TRUE(ref.passed) << ref.message;
    const auto cmp = [&](const std::vector<double>& got, const char* what) {
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << what << " at " << i;
    };
    cmp(run_conv_variant<layout::nhwc>(p, variant::direct_vector{}), "nhwc default");
    cmp(run_conv_variant<layout::nhwc>(p, variant::portable<variant::direct_vector>{}), "nhwc portable");
    cmp(run_conv_variant<layout::nchw>(p, variant::direct_vector{}), "nchw default");
    cmp(run_conv_variant<layout::nchw>(p, variant::portable<variant::direct_vector>{}), "nchw portable");
  }
  // A state is its tuning's: prepared by the portable source, the default refuses it on a host
  // with the host tuning (and takes it everywhere else: there both are the portable source).
  const conv2d_params p{1, 8, 5, 5, 32, 3, 3, 1, 1, 1};
  tensor4<float, layout::nhwc> in("in", p.input_dims()), wt("wt", p.filter_dims()), out("out", p.output_dims());
  Kokkos::View<float*> bias("bias", p.k);
  variant::portable<variant::direct_vector> portable;
  kcnn::prepare(Kokkos::DefaultExecutionSpace(), portable, p, in, wt, bias, out);
  const variant::direct_vector& as_default = portable;
  if constexpr (takes_host_tuning<tunings::automatic, Kokkos::DefaultExecutionSpace>)
    EXPECT_THROW(conv2d(Kokkos::DefaultExecutionSpace(), in, wt, bias, out, p, as_default), std::invalid_argument);
  else
    EXPECT_NO_THROW(conv2d(Kokkos::DefaultExecutionSpace(), in, wt, bias, out, p, as_default));
}

TEST(Tunings, FcDirectVectorPortableAndDefaultAgree) {
  const fc_params p(11, 20, 3, 3, 70);
  const auto run = [&](auto lt, const auto& v0) {
    using L = decltype(lt);
    tensor4<float, L> in("in", p.input_dims()), wt("wt", p.filter_dims());
    tensor4<float, layout::nchw> out("out", p.output_dims());
    Kokkos::View<float*> bias("bias", p.k);
    fill_random(in, 4);
    fill_random(wt, 5, 0.3f);
    fill_random(bias, 6);
    auto v = v0;
    kcnn::prepare(Kokkos::DefaultExecutionSpace(), v, p, in, wt, bias, out);
    fc(Kokkos::DefaultExecutionSpace(), in, wt, bias, out, p, v);
    Kokkos::fence();
    auto h = create_mirror_view(out);
    deep_copy(h, out);
    return to_logical(h);
  };
  for (const auto& [a, b] : {std::pair{run(layout::nchw{}, variant::fc_direct_vector{}),
                                       run(layout::nchw{}, variant::portable<variant::fc_direct_vector>{})},
                             std::pair{run(layout::nhwc{}, variant::fc_direct_vector{}),
                                       run(layout::nhwc{}, variant::portable<variant::fc_direct_vector>{})}}) {
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-4 * (1 + std::fabs(a[i]))) << i;
  }
}

// implicit_gemm against outputs known in closed form (tests/implicit_gemm_check.hpp), exactly:
// tiles with ragged edges along both GEMM axes (11 and 136 output channels; pixel counts no
// multiple of a tile), K padded to whole steps (c r s = 45, 27, 9 x 5), groups, stride, dilation,
// asymmetric pads, nhwc's 16-byte input loads (channels a multiple of 4) and its 4-byte ones,
// input and output in different layouts; fc over a 2 x 2 image.
namespace {
template <class LIn, class LOut, class V>
std::string run_closed_form(const conv2d_params& p, const V& v0, bool fc_layer = false) {
  using exec = Kokkos::DefaultExecutionSpace;
  tensor4<float, LIn> in("in", p.input_dims()), wt("wt", fc_layer ? fc_params(p).weight_dims() : p.filter_dims());
  tensor4<float, LOut> out("out", p.output_dims());
  Kokkos::View<float*> bias("bias", p.k);
  auto in_h = create_mirror_view(in);
  auto wt_h = create_mirror_view(wt);
  auto bias_h = Kokkos::create_mirror_view(bias);
  kcnn_test::fill_closed_form(in_h, wt_h, bias_h);
  deep_copy(in, in_h);
  deep_copy(wt, wt_h);
  Kokkos::deep_copy(bias, bias_h);
  poison(out);
  V v = v0;
  kcnn::prepare(exec(), v, p, in, wt, bias, out);
  if constexpr (std::is_same_v<typename V::op, ops::fc>) fc(exec(), in, wt, bias, out, p, v);
  else conv2d(exec(), in, wt, bias, out, p, v);
  Kokkos::fence();
  auto out_h = create_mirror_view(out);
  deep_copy(out_h, out);
  return kcnn_test::closed_form_mismatch(p, out_h);
}
}  // namespace

TEST(ImplicitGemm, OutputsKnownInClosedForm) {
  conv2d_params dense{3, 5, 7, 9, 11, 3, 3, 1, 1, 1};
  conv2d_params wide{2, 8, 15, 13, 136, 3, 3, 1, 1, 1};  // 136 channels: a second tile of 8
  conv2d_params grouped{2, 6, 11, 10, 8, 3, 3, 2, 0, 2};
  grouped.dilation_h = 2;
  grouped.pad_h = 2; grouped.pad_h_end = 1; grouped.pad_w = 0; grouped.pad_w_end = 1;
  conv2d_params depthwise{2, 12, 9, 9, 12, 5, 5, 2, 2, 12};
  conv2d_params pointwise{4, 20, 3, 5, 7, 1, 1, 1, 0, 1};
  for (const auto& p : {dense, wide, grouped, depthwise, pointwise}) {
    ASSERT_EQ(p.check(), "");
    const variant::implicit_gemm v;
    EXPECT_EQ((run_closed_form<layout::nchw, layout::nchw>(p, v)), "") << "nchw";
    EXPECT_EQ((run_closed_form<layout::nhwc, layout::nhwc>(p, v)), "") << "nhwc";
    EXPECT_EQ((run_closed_form<layout::chwn, layout::chwn>(p, v)), "") << "chwn";
    EXPECT_EQ((run_closed_form<layout::nhwc, layout::chwn>(p, v)), "") << "nhwc in, chwn out";
    EXPECT_EQ((run_closed_form<layout::nchw, layout::nhwc>(p, v)), "") << "nchw in, nhwc out";
  }
  const fc_params fc_layer(5, 3, 2, 2, 10);
  EXPECT_EQ((run_closed_form<layout::nchw, layout::nchw>(fc_layer, variant::fc_implicit_gemm{}, true)), "");
  EXPECT_EQ((run_closed_form<layout::nhwc, layout::nchw>(fc_layer, variant::fc_implicit_gemm{}, true)), "");
}

// kappa's order in blocks of channels: a bijection onto (c, r, s) for every block, a group's last
// block shorter; block 1 is the filter's order (c, r, s), block c_per_group nhwc's (r, s, c).
TEST(ImplicitGemm, KappaOrderInChannelBlocksCoversEveryTapOnce) {
  conv2d_params p{1, 22, 9, 9, 4, 3, 2, 1, 1, 2};  // 11 channels a group, 3 x 2 taps
  const int cpg = p.c_per_group(), taps = p.r * p.s;
  for (const int block : {1, 3, 4, 8, cpg}) {
    std::vector<int> seen(std::size_t(cpg) * taps, -1);
    for (int kappa = 0; kappa < cpg * taps; ++kappa) {
      int c, r, s;
      detail::implicit_gemm_kappa(kappa, p, block, c, r, s);
      ASSERT_TRUE(c >= 0 && c < cpg && r >= 0 && r < p.r && s >= 0 && s < p.s) << block << " " << kappa;
      int& slot = seen[std::size_t((c * p.r + r) * p.s + s)];
      ASSERT_EQ(slot, -1) << "block " << block << ": kappa " << kappa << " and " << slot;
      slot = kappa;
      // Within a block, consecutive K indices walk its channels at one tap.
      const int c0 = c / block * block, size = std::min(block, cpg - c0);
      EXPECT_EQ(kappa, c0 * taps + (r * p.s + s) * size + (c - c0)) << block;
      if (block == 1) EXPECT_EQ(kappa, (c * p.r + r) * p.s + s);
      if (block == cpg) EXPECT_EQ(kappa, (r * p.s + s) * cpg + c);
    }
  }
  // The block each path takes: nhwc all channels; a GPU team on a sliding window the step's K;
  // a host backend, and a window that does not slide (fc), the filter's order.
  EXPECT_EQ(detail::implicit_gemm_kappa_block<layout::nhwc>(p, 8, true), cpg);
  EXPECT_EQ(detail::implicit_gemm_kappa_block<layout::nhwc>(p, 8, false), cpg);
  EXPECT_EQ(detail::implicit_gemm_kappa_block<layout::nchw>(p, 8, true), 8);
  EXPECT_EQ(detail::implicit_gemm_kappa_block<layout::chwn>(p, 4, true), 4);
  EXPECT_EQ(detail::implicit_gemm_kappa_block<layout::nchw>(p, 8, false), 1);
  EXPECT_EQ(detail::implicit_gemm_kappa_block<layout::nchw>(conv2d_params(fc_params(4, 3, 6, 6, 10)), 8, true), 1);
  const conv2d_params few{1, 6, 9, 9, 4, 3, 3, 1, 1, 2};  // 3 channels a group: one block of 3
  EXPECT_EQ(detail::implicit_gemm_kappa_block<layout::nchw>(few, 8, true), 3);
  conv2d_params depthwise{1, 16, 9, 9, 16, 3, 3, 1, 1, 16};
  EXPECT_EQ(detail::implicit_gemm_kappa_block<layout::chwn>(depthwise, 8, true), 1);
}

TEST(ImplicitGemm, RefusesWhatItWasNotPreparedFor) {
  using exec = Kokkos::DefaultExecutionSpace;
  const conv2d_params p{1, 4, 5, 5, 6, 3, 3, 1, 1, 1};
  tensor4<float, layout::nhwc> in("in", p.input_dims()), wt("wt", p.filter_dims()), out("out", p.output_dims());
  tensor4<float, layout::nchw> in_nchw("in", p.input_dims());
  Kokkos::View<float*> bias("bias", p.k);
  variant::implicit_gemm v;
  EXPECT_THROW(conv2d(exec(), in, wt, bias, out, p, v), std::logic_error);  // never prepared
  kcnn::prepare(exec(), v, p, in, wt, bias, out);
  EXPECT_NO_THROW(conv2d(exec(), in, wt, bias, out, p, v));
  // The weights were packed in nhwc's K order (r, s, c): an nchw input needs (c, r, s).
  EXPECT_THROW(conv2d(exec(), in_nchw, wt, bias, out, p, v), std::invalid_argument);
  conv2d_params other = p;
  other.pad = 0;
  EXPECT_THROW(conv2d(exec(), in, wt, bias, out, other, v), std::invalid_argument);
}
