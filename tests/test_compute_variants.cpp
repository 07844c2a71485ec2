// Every registered variant, in every layout it registers, against the host reference on
// representative layer shapes, and against each other.
#include "cases/registry.hpp"
#include "suites/suite.hpp"

#include <kcnn/tuning.hpp>

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <vector>

using namespace kcnn::bench;

namespace {

layer_spec spec(const std::string& name, const std::string& op, int n, int c, int h, int w, int k,
                int r, int s, int stride, int pad, int groups,
                const std::function<void(layer_spec&)>& geometry = {}) {
  layer_spec l;
  l.network = "test";
  l.layer = name;
  l.op = op;
  l.n = n; l.c = c; l.h = h; l.w = w; l.k = k; l.r = r; l.s = s;
  l.stride = stride; l.pad = pad; l.groups = groups;
  if (geometry) geometry(l);
  const op_info* oi = registry::instance().find_op(op);
  EXPECT_NE(oi, nullptr);
  EXPECT_FALSE(oi->check(l)) << name;
  l.out = oi->output_shape(l);
  return l;
}

double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += a[i] * a[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// How many variants ran: all of them, and those of kcnn's own in the spaces every backend has
// (the counts a test can fix; peers and the CUDA-only spaces depend on the build).
struct ran_count {
  int all = 0, kcnn_portable = 0;
};

// Runs every applicable variant of spec.op on spec, checks each against the reference and
// against the first one (within the sum of their tolerances: TF32 peers are looser than fp32).
ran_count check_all_variants(const layer_spec& l) {
  std::vector<double> first;
  std::string first_key;
  double first_tol = 0;
  ran_count ran;
  case_settings settings;  // the variants share the layer's host reference, as in a run
  settings.references = std::make_shared<reference_cache>();
  for (const auto& v : registry::instance().variants()) {
    if (v.op != l.op || v.origin() == origin::fault) continue;
    const std::string key = case_key(v, l);
    if (v.unsupported && !v.unsupported(l).empty()) continue;
    auto c = v.make(l, settings);
    c->setup(1234);
    c->run();
    Kokkos::fence();
    const auto cmp = c->validate();
    EXPECT_TRUE(cmp.passed) << key << ": " << cmp.message;
    EXPECT_LE(cmp.rel_l2, std::max(1e-5, c->tolerance())) << key;
    const auto out = c->output();
    EXPECT_EQ(out.size(), l.out.size()) << key;
    if (first.empty()) {
      first = out;
      first_key = key;
      first_tol = c->tolerance();
    } else {
      EXPECT_LT(rel_diff(first, out), std::max(1e-5, first_tol + c->tolerance())) << key << " disagrees with " << first_key;
    }
    // A second run on the same buffers gives the same answer (no state left behind).
    if (c->idempotent()) {
      c->run();
      Kokkos::fence();
      EXPECT_LT(rel_diff(out, c->output()), 1e-6) << key << " is not repeatable";
    }
    ++ran.all;
    if (v.origin() == origin::kcnn && !cuda_only(v.space)) ++ran.kcnn_portable;
  }
  return ran;
}

// The peers this build registers (oneDNN on host builds; cuDNN, cuBLAS, native CUDA on CUDA
// builds) that can run layer l: asked of the registry, whatever configure found.
int peers_registered(const layer_spec& l) {
  int n = 0;
  for (const auto& v : registry::instance().variants())
    n += v.op == l.op && v.origin() == origin::peer && (!v.unsupported || v.unsupported(l).empty());
  return n;
}

}  // namespace

void check_geometry(const layer_spec& l);
TEST(ComputeVariants, Conv2dLeNetConv2) {
  EXPECT_GE(check_all_variants(spec("lenet_conv2", "conv2d", 2, 20, 12, 12, 50, 5, 5, 1, 0, 1)).kcnn_portable, 24);
}
TEST(ComputeVariants, Conv2dAlexNetConv2Grouped) {
  EXPECT_GE(check_all_variants(spec("alexnet_conv2", "conv2d", 1, 16, 13, 13, 32, 5, 5, 1, 2, 2)).kcnn_portable, 24);
}
TEST(ComputeVariants, Conv2dStride2Padded) {
  EXPECT_GE(check_all_variants(spec("s2p1", "conv2d", 3, 8, 15, 15, 12, 3, 3, 2, 1, 1)).kcnn_portable, 24);
}
TEST(ComputeVariants, Conv2dGroupsOfFewChannels) {
  // ResNeXt's groups of 4 channels in and out, and of 2, 8 and 16: on a host direct_vector's
  // grouped lanes (2, 4: a block of lanes spans several groups) and its phase tile (8, 16);
  // stride 2 and a dilated, asymmetric layer.
  EXPECT_GE(check_all_variants(spec("g4", "conv2d", 2, 64, 9, 19, 64, 3, 3, 1, 1, 16)).kcnn_portable, 24);
  EXPECT_GE(check_all_variants(spec("g2", "conv2d", 1, 32, 8, 12, 32, 3, 3, 1, 1, 16)).kcnn_portable, 24);
  EXPECT_GE(check_all_variants(spec("g8", "conv2d", 1, 64, 8, 11, 64, 3, 3, 1, 1, 8)).kcnn_portable, 24);
  EXPECT_GE(check_all_variants(spec("g16", "conv2d", 1, 32, 7, 10, 32, 3, 3, 1, 1, 2)).kcnn_portable, 24);
  EXPECT_GE(check_all_variants(spec("g4_s2", "conv2d", 2, 64, 11, 17, 64, 3, 3, 2, 1, 16)).kcnn_portable, 24);
  // The host's phase tile (groups of 8 and 16): stride 2 (8 output columns: whole 4-pixel
  // tiles), 1 x 1 (6 columns) and 5 x 3 filters (9 columns), the last two with partial tiles.
  EXPECT_GE(check_all_variants(spec("g8_s2", "conv2d", 1, 64, 9, 15, 64, 3, 3, 2, 1, 8)).kcnn_portable, 24);
  EXPECT_GE(check_all_variants(spec("g16_1x1", "conv2d", 2, 64, 5, 6, 64, 1, 1, 1, 0, 4)).kcnn_portable, 24);
  EXPECT_GE(check_all_variants(spec("g8_5x3", "conv2d", 1, 32, 7, 9, 32, 5, 3, 1, 1, 4)).kcnn_portable, 24);
  check_geometry(spec("g4_dil", "conv2d", 1, 128, 12, 13, 128, 3, 3, 1, 0, 32, [](layer_spec& l) {
    l.dilation_h = l.dilation_w = 2; l.pad_h = l.pad_w = 1; l.pad_h_end = l.pad_w_end = 3;
  }));
  check_geometry(spec("g8_dil", "conv2d", 1, 64, 12, 13, 64, 3, 3, 1, 0, 8, [](layer_spec& l) {
    l.dilation_h = 2; l.dilation_w = 3; l.pad_h = 2; l.pad_w = 1; l.pad_h_end = 1; l.pad_w_end = 3;
  }));
}
TEST(ComputeVariants, Conv2dDepthwise) {
  EXPECT_GE(check_all_variants(spec("dw", "conv2d", 2, 16, 10, 10, 16, 3, 3, 1, 1, 16)).kcnn_portable, 24);
  // 48 channels: direct_vector's 3-vector depthwise tile on a host; stride 2, 5 output columns.
  EXPECT_GE(check_all_variants(spec("dw48", "conv2d", 2, 48, 9, 9, 48, 3, 3, 2, 1, 48)).kcnn_portable, 24);
  // Rows wide enough for direct_vector's interior paths on a host (a tile of 8 or 4 pixels whose
  // taps are all inside the input): the stride-1 sliding rows (3- and 5-wide; 32 channels: 2
  // vectors x 8 pixels, 48: 3 x 4, 80: 1 x 8), and stride 2 (the sliding rows of 3 and 5).
  EXPECT_GE(check_all_variants(spec("dw32_wide", "conv2d", 2, 32, 6, 26, 32, 3, 3, 1, 1, 32)).kcnn_portable, 24);
  EXPECT_GE(check_all_variants(spec("dw48_5x5", "conv2d", 1, 48, 7, 30, 48, 5, 5, 1, 2, 48)).kcnn_portable, 24);
  EXPECT_GE(check_all_variants(spec("dw80_5x5", "conv2d", 1, 80, 6, 29, 80, 5, 5, 1, 2, 80)).kcnn_portable, 24);
  EXPECT_GE(check_all_variants(spec("dw64_s2", "conv2d", 1, 64, 9, 41, 64, 3, 3, 2, 1, 64)).kcnn_portable, 24);
  // Stride 2 through the sliding rows too (5-wide, 48 channels: 3 vectors x 4 pixels).
  EXPECT_GE(check_all_variants(spec("dw48_5x5_s2", "conv2d", 1, 48, 9, 37, 48, 5, 5, 2, 2, 48)).kcnn_portable, 24);
  // direct_vector's host row walk (whole channel blocks): a 5-wide row (96 channels: one tile of
  // 4 pixels and a partial one of 1), a row narrower than a tile (2 columns; 64 channels: tiles
  // of 4), a narrow padded row (3 columns, pad 1), per-axis strides (2 x 1 and 1 x 2) and a
  // dilation along h only (the walk takes any stride and dilation along h).
  EXPECT_GE(check_all_variants(spec("dw96_5x5plane", "conv2d", 2, 96, 5, 5, 96, 3, 3, 1, 1, 96)).kcnn_portable, 24);
  EXPECT_GE(check_all_variants(spec("dw64_q2", "conv2d", 1, 64, 7, 7, 64, 5, 5, 2, 0, 64)).kcnn_portable, 24);
  EXPECT_GE(check_all_variants(spec("dw32_q3", "conv2d", 2, 32, 5, 3, 32, 3, 3, 1, 1, 32)).kcnn_portable, 24);
  // A row's last pixels past its whole tiles (tiles of 8 for 16 and 32 channels): 7 with no
  // whole tile, 6, and 1 after two whole tiles.
  EXPECT_GE(check_all_variants(spec("dw16_q7", "conv2d", 2, 16, 7, 7, 16, 3, 3, 1, 1, 16)).kcnn_portable, 24);
  EXPECT_GE(check_all_variants(spec("dw32_q14", "conv2d", 1, 32, 5, 14, 32, 3, 3, 1, 1, 32)).kcnn_portable, 24);
  EXPECT_GE(check_all_variants(spec("dw16_q17", "conv2d", 1, 16, 4, 17, 16, 3, 3, 1, 1, 16)).kcnn_portable, 24);
  check_geometry(spec("dw48_s2x1", "conv2d", 1, 48, 11, 13, 48, 3, 3, 1, 1, 48, [](layer_spec& l) { l.stride_h = 2; }));
  check_geometry(spec("dw64_s1x2", "conv2d", 1, 64, 9, 21, 64, 5, 5, 1, 2, 64, [](layer_spec& l) { l.stride_w = 2; }));
  check_geometry(spec("dw32_dil_h", "conv2d", 1, 32, 12, 20, 32, 3, 3, 1, 1, 32, [](layer_spec& l) {
    l.dilation_h = 2; l.pad_h = 2; l.pad_h_end = 1;
  }));
}
TEST(ComputeVariants, Conv2dPointwiseIncludingGemm) {
  // gemm_kk in every layout (nchw: one GEMM per image, n = 2).
  EXPECT_GE(check_all_variants(spec("pw", "conv2d", 2, 32, 7, 7, 24, 1, 1, 1, 0, 1)).kcnn_portable, 27);
  EXPECT_GE(check_all_variants(spec("pw1", "conv2d", 1, 32, 7, 7, 24, 1, 1, 1, 0, 1)).kcnn_portable, 27);
}
TEST(ComputeVariants, Conv2dFewInputChannels) {
  // U-Net's single input channel and an RGB stem, rows wide enough for direct_vector's merged
  // (s, c) loop on a host; k = 40: a full block and a partial one.
  EXPECT_GE(check_all_variants(spec("c1", "conv2d", 2, 1, 12, 40, 40, 3, 3, 1, 0, 1)).kcnn_portable, 24);
  EXPECT_GE(check_all_variants(spec("c3_s2", "conv2d", 1, 3, 20, 44, 32, 7, 7, 2, 3, 1)).kcnn_portable, 24);
  // Whole blocks of 64 output channels: direct_vector's 4 x 6 host tile (its second pair of
  // vectors in the next block of the packed weights): an RGB stem (4 whole tiles and a partial
  // one), one input channel with two blocks of 64, and 2 groups of 4 input channels each.
  EXPECT_GE(check_all_variants(spec("c3_k64_s2", "conv2d", 1, 3, 13, 50, 64, 7, 7, 2, 3, 1)).kcnn_portable, 24);
  EXPECT_GE(check_all_variants(spec("c1_k128", "conv2d", 2, 1, 9, 30, 128, 3, 3, 1, 0, 1)).kcnn_portable, 24);
  EXPECT_GE(check_all_variants(spec("g2_c4_k128", "conv2d", 1, 8, 9, 20, 128, 3, 3, 1, 1, 2)).kcnn_portable, 24);
}
TEST(ComputeVariants, Conv2dNchwVectorFewChannels) {
  // direct_vector in nchw (kcnn/conv2d/direct_vector_nchw.hpp): lanes along the output row, a
  // block of KB output channels in registers. Heads of 1 to 30 output channels (KB = 2, 3, 4, 8,
  // 12, 24; 30: blocks of 8, the last partial) on pointwise layers (one row per image: 185
  // pixels, partial last items); a 3 x 3 pad 1 head (stride-1 loads inside, gathers at the
  // edges); a 7 x 7 / 2 stem on rows wide enough for the stride-2 loads (two vectors and a
  // permute); stride 3 (gathers); dilation with 2 groups of 3 outputs.
  for (const int k : {1, 2, 3, 4, 5, 12, 21, 30})
    EXPECT_GE(check_all_variants(spec("head_k" + std::to_string(k), "conv2d", 2, 19, 5, 37, k, 1, 1, 1, 0, 1)).kcnn_portable, 27)
        << k;
  EXPECT_GE(check_all_variants(spec("head3x3", "conv2d", 1, 7, 9, 50, 3, 3, 3, 1, 1, 1)).kcnn_portable, 24);
  EXPECT_GE(check_all_variants(spec("stem_s2", "conv2d", 1, 3, 9, 150, 10, 7, 7, 2, 3, 1)).kcnn_portable, 24);
  EXPECT_GE(check_all_variants(spec("s3", "conv2d", 2, 4, 10, 61, 5, 3, 3, 3, 1, 1)).kcnn_portable, 24);
  check_geometry(spec("dil_g2", "conv2d", 1, 8, 11, 40, 6, 3, 3, 1, 2, 2, [](layer_spec& l) { l.dilation_h = l.dilation_w = 2; }));
}
TEST(ComputeVariants, Conv2dLargeWindowStride4) {
  // AlexNet conv1-like: 11x11 window, stride 4 (the tiled variant's halo is largest here).
  EXPECT_GE(check_all_variants(spec("alexnet_conv1", "conv2d", 1, 3, 35, 35, 8, 11, 11, 4, 0, 1)).kcnn_portable, 24);
}
// Per-axis stride and pads and dilation: every variant that takes the layer (all of kcnn's but
// gemm_kk, which takes only unpadded 1 x 1 layers) against the reference and each other, and the
// peers this build has (oneDNN's own convolution with the same geometry) in the same check.
int portable_conv_variants(const layer_spec& l) {
  int n = 0;
  for (const auto& v : registry::instance().variants())
    n += v.op == l.op && v.origin() == origin::kcnn && !cuda_only(v.space) && (!v.unsupported || v.unsupported(l).empty());
  return n;
}
void check_geometry(const layer_spec& l) {
  const auto ran = check_all_variants(l);
  EXPECT_GE(ran.kcnn_portable, 24) << l.layer;
  EXPECT_EQ(ran.kcnn_portable, portable_conv_variants(l)) << l.layer;
  EXPECT_EQ(ran.all - ran.kcnn_portable >= peers_registered(l), true) << l.layer << ": a peer did not run";
}
TEST(ComputeVariants, Conv2dPerAxisStrideAndPad) {
  // Inception v3's 1 x 7 (pad 0 x 3) and 7 x 1 (pad 3 x 0), and a 3 x 3 stride 2 x 1.
  check_geometry(spec("i1x7", "conv2d", 2, 8, 9, 9, 12, 1, 7, 1, 0, 1, [](layer_spec& l) { l.pad_h = 0; l.pad_w = 3; }));
  check_geometry(spec("i7x1", "conv2d", 2, 8, 9, 9, 12, 7, 1, 1, 0, 1, [](layer_spec& l) { l.pad_h = 3; l.pad_w = 0; }));
  check_geometry(spec("s2x1", "conv2d", 2, 8, 9, 10, 12, 3, 3, 1, 1, 1, [](layer_spec& l) { l.stride_h = 2; l.stride_w = 1; }));
}
TEST(ComputeVariants, Conv2dAsymmetricPad) {
  // TensorFlow "SAME" stride 2 on even inputs: the pad only after (EfficientNet); dense, and
  // depthwise with 48 and 40 channels (direct_vector's depthwise tiles, a partial block).
  const auto same = [](layer_spec& l) { l.pad_h = l.pad_w = 0; l.pad_h_end = l.pad_w_end = 1; };
  check_geometry(spec("same_s2", "conv2d", 2, 8, 12, 12, 16, 3, 3, 2, 0, 1, same));
  check_geometry(spec("same_dw48", "conv2d", 2, 48, 10, 10, 48, 3, 3, 2, 0, 48, same));
  check_geometry(spec("same_dw40_5x5", "conv2d", 1, 40, 10, 10, 40, 5, 5, 2, 0, 40,
                      [](layer_spec& l) { l.pad_h = l.pad_w = 1; l.pad_h_end = l.pad_w_end = 2; }));
}
TEST(ComputeVariants, Conv2dDilated) {
  // SSD's fc6 and DeepLab's atrous layers in small: 3 x 3 dilated 6 (pad 6) and 2 (pad 2),
  // dilated depthwise, and unequal dilations with an asymmetric pad.
  check_geometry(spec("fc6", "conv2d", 1, 16, 19, 19, 24, 3, 3, 1, 6, 1, [](layer_spec& l) { l.dilation_h = l.dilation_w = 6; }));
  check_geometry(spec("atrous2", "conv2d", 2, 8, 11, 11, 40, 3, 3, 1, 2, 1, [](layer_spec& l) { l.dilation_h = l.dilation_w = 2; }));
  check_geometry(spec("atrous_dw", "conv2d", 2, 32, 12, 12, 32, 3, 3, 1, 2, 32, [](layer_spec& l) { l.dilation_h = l.dilation_w = 2; }));
  check_geometry(spec("dil3x2", "conv2d", 1, 6, 13, 12, 10, 3, 3, 1, 0, 2, [](layer_spec& l) {
    l.dilation_h = 3; l.dilation_w = 2; l.pad_h = 3; l.pad_w = 1; l.pad_h_end = 2; l.pad_w_end = 2;
  }));
}
TEST(ComputeVariants, PoolingPerAxisAndAsymmetric) {
  // TensorFlow "SAME" 3 x 3 / 2 max and average pooling of an even input, and a per-axis stride.
  for (const char* op : {"pool_max", "pool_avg"}) {
    const auto a = check_all_variants(spec("same_pool", op, 2, 16, 12, 12, 0, 3, 3, 2, 0, 1,
                                           [](layer_spec& l) { l.pad_h_end = l.pad_w_end = 1; }));
    EXPECT_GE(a.kcnn_portable, 12) << op;
    const auto b = check_all_variants(spec("axis_pool", op, 2, 16, 12, 11, 0, 3, 2, 1, 0, 1,
                                           [](layer_spec& l) { l.stride_h = 2; l.stride_w = 1; l.pad_h = 1; l.pad_h_end = 0; }));
    EXPECT_GE(b.kcnn_portable, 12) << op;
  }
}
TEST(ComputeVariants, PoolingSlidingColumns) {
  // The vector variant's host path for nhwc and chwn reduces each input column once into a ring
  // of column results (kcnn/pool.hpp, pool_vector_slide_body): 3000 channels (the ring holds
  // 2048 per chunk: two chunks, the second partial), a 16-wide window (the widest it takes) and
  // a 17-wide one (the per-pixel path), a stride wider than the window (columns skipped), a
  // ceil-rounded window past the input, and 20 images in chwn (a full block and an overlapping
  // one). Windows that overlap little (skip, ceil, direct5: 5 x 5 / 4 with pad 2, odd column
  // counts at the clipped edges) take the path without the ring (use_ring false).
  for (const char* op : {"pool_max", "pool_avg"}) {
    check_all_variants(spec("chunks", op, 2, 3000, 5, 6, 0, 3, 3, 1, 1, 1));
    check_all_variants(spec("wide16", op, 1, 20, 3, 40, 0, 3, 16, 1, 0, 1, [](layer_spec& l) { l.stride_w = 3; }));
    check_all_variants(spec("wide17", op, 1, 20, 3, 40, 0, 2, 17, 1, 0, 1));
    check_all_variants(spec("skip", op, 2, 24, 9, 11, 0, 2, 2, 3, 0, 1));
    check_all_variants(spec("ceil", op, 2, 18, 8, 8, 0, 3, 3, 2, 1, 1, [](layer_spec& l) { l.rounding = "ceil"; }));
    check_all_variants(spec("direct5", op, 2, 40, 11, 13, 0, 5, 5, 4, 2, 1));
    const auto a = check_all_variants(spec("images20", op, 20, 3, 7, 7, 0, 3, 3, 1, 1, 1));
    EXPECT_GE(a.kcnn_portable, 12) << op;
  }
}
TEST(ComputeVariants, SwishEveryVariantAndLayout) {
  // EfficientNet's activation: naive (global, readonly), in_place and flat in 3 layouts, and the
  // peers (oneDNN's eltwise_swish).
  const auto l = spec("swish", "swish", 2, 24, 7, 9, 0, 0, 0, 1, 0, 1);
  const auto ran = check_all_variants(l);
  EXPECT_GE(ran.kcnn_portable, 12);
  EXPECT_GE(ran.all, ran.kcnn_portable + peers_registered(l));
}
TEST(ComputeVariants, FcSmallAndLeNetIp1) {
  // gemm_kk, direct, readonly, tiled scratch, constant, implicit_gemm: 6 x 3 layouts;
  // direct_vector: nchw, nhwc (3 images and 10 outputs: partial blocks of 8 and 32). Every peer this build registers runs
  // too (oneDNN's inner product, cuBLAS fp32/TF32), cross-checked with the rest; the CUDA-only
  // spaces add their kcnn variants on CUDA builds, and a host build direct_vector's portable
  // source (tuning `portable`, nchw and nhwc: kcnn/tuning.hpp).
  const int portable = kcnn::takes_host_tuning<kcnn::tunings::automatic, Kokkos::DefaultExecutionSpace> ? 2 : 0;
  const auto small_spec = spec("fc_small", "fc", 3, 8, 2, 2, 10, 0, 0, 1, 0, 1);
  const auto small = check_all_variants(small_spec);
  EXPECT_EQ(small.kcnn_portable, 20 + portable);
  EXPECT_GE(small.all, 20 + portable + peers_registered(small_spec));
  // 800 -> 100: too large for constant memory, 17 variants.
  const auto ip1_spec = spec("lenet_ip1", "fc", 5, 50, 4, 4, 100, 0, 0, 1, 0, 1);
  const auto ip1 = check_all_variants(ip1_spec);
  EXPECT_EQ(ip1.kcnn_portable, 17 + portable);
  EXPECT_GE(ip1.all, 17 + portable + peers_registered(ip1_spec));
}

TEST(AllVariants, EverySmokeLayerEveryVariantAtReducedBatch) {
  const auto su = load_suite(std::string(KCNN_SOURCE_DIR) + "/suites/smoke.csv");
  std::set<std::string> ops;
  for (auto l : su.layers) {
    l.n = std::min(l.n, 2);
    l.out = registry::instance().find_op(l.op)->output_shape(l);
    EXPECT_GE(check_all_variants(l).all, 1) << l.layer;
    ops.insert(l.op);
  }
  EXPECT_GE(ops.size(), 15u);
}
