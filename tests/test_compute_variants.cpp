// Every registered variant, in every layout it registers, against the host reference on
// representative layer shapes, and against each other.
#include "cases/registry.hpp"
#include "suites/suite.hpp"

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

using namespace kcnn::bench;

namespace {

layer_spec spec(const std::string& name, const std::string& op, int n, int c, int h, int w, int k,
                int r, int s, int stride, int pad, int groups) {
  layer_spec l;
  l.network = "test";
  l.layer = name;
  l.op = op;
  l.n = n; l.c = c; l.h = h; l.w = w; l.k = k; l.r = r; l.s = s;
  l.stride = stride; l.pad = pad; l.groups = groups;
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

TEST(ComputeVariants, Conv2dLeNetConv2) {
  EXPECT_GE(check_all_variants(spec("lenet_conv2", "conv2d", 2, 20, 12, 12, 50, 5, 5, 1, 0, 1)).kcnn_portable, 24);
}
TEST(ComputeVariants, Conv2dAlexNetConv2Grouped) {
  EXPECT_GE(check_all_variants(spec("alexnet_conv2", "conv2d", 1, 16, 13, 13, 32, 5, 5, 1, 2, 2)).kcnn_portable, 24);
}
TEST(ComputeVariants, Conv2dStride2Padded) {
  EXPECT_GE(check_all_variants(spec("s2p1", "conv2d", 3, 8, 15, 15, 12, 3, 3, 2, 1, 1)).kcnn_portable, 24);
}
TEST(ComputeVariants, Conv2dDepthwise) {
  EXPECT_GE(check_all_variants(spec("dw", "conv2d", 2, 16, 10, 10, 16, 3, 3, 1, 1, 16)).kcnn_portable, 24);
  // 48 channels: direct_vector's 3-vector depthwise tile on a host; stride 2, 5 output columns.
  EXPECT_GE(check_all_variants(spec("dw48", "conv2d", 2, 48, 9, 9, 48, 3, 3, 2, 1, 48)).kcnn_portable, 24);
}
TEST(ComputeVariants, Conv2dPointwiseIncludingGemm) {
  // n = 2: gemm_kk in nhwc and chwn; n = 1: also in nchw.
  EXPECT_GE(check_all_variants(spec("pw", "conv2d", 2, 32, 7, 7, 24, 1, 1, 1, 0, 1)).kcnn_portable, 26);
  EXPECT_GE(check_all_variants(spec("pw1", "conv2d", 1, 32, 7, 7, 24, 1, 1, 1, 0, 1)).kcnn_portable, 27);
}
TEST(ComputeVariants, Conv2dLargeWindowStride4) {
  // AlexNet conv1-like: 11x11 window, stride 4 (the tiled variant's halo is largest here).
  EXPECT_GE(check_all_variants(spec("alexnet_conv1", "conv2d", 1, 3, 35, 35, 8, 11, 11, 4, 0, 1)).kcnn_portable, 24);
}
TEST(ComputeVariants, FcSmallAndLeNetIp1) {
  // gemm_kk, direct, readonly, tiled scratch, constant: 5 x 3 layouts; direct_vector: nchw, nhwc
  // (3 images and 10 outputs: partial blocks of 8 and 32). Every peer this build registers runs
  // too (oneDNN's inner product, cuBLAS fp32/TF32), cross-checked with the rest; the CUDA-only
  // spaces add their kcnn variants on CUDA builds.
  const auto small_spec = spec("fc_small", "fc", 3, 8, 2, 2, 10, 0, 0, 1, 0, 1);
  const auto small = check_all_variants(small_spec);
  EXPECT_EQ(small.kcnn_portable, 17);
  EXPECT_GE(small.all, 17 + peers_registered(small_spec));
  // 800 -> 100: too large for constant memory, 14 variants.
  const auto ip1_spec = spec("lenet_ip1", "fc", 5, 50, 4, 4, 100, 0, 0, 1, 0, 1);
  const auto ip1 = check_all_variants(ip1_spec);
  EXPECT_EQ(ip1.kcnn_portable, 14);
  EXPECT_GE(ip1.all, 14 + peers_registered(ip1_spec));
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
