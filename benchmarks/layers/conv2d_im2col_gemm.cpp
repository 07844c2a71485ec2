// conv2d / {nchw,nhwc,chwn} / global / tiled / im2col_gemm: explicit lowering into a workspace
// and KokkosBlas::gemm per group; the workspace is reported in workspace_bytes.
#include "conv2d_case.hpp"

#include <kcnn/conv2d/im2col_gemm.hpp>

namespace {
struct launch : kcnn::bench::conv_launch_base {
  kcnn::conv2d_im2col_gemm<Kokkos::DefaultExecutionSpace> algo;

  template <class Exec, class In, class Wt, class Bias>
  void prepare(const Exec& e, const kcnn::conv2d_params& p, const In&, const Wt& wt, const Bias&) {
    algo.prepare(e, p, wt);
  }
  template <class Exec, class In, class Wt, class Bias, class Out>
  void operator()(const Exec& e, const In& in, const Wt&, const Bias& b, const Out& out,
                  const kcnn::conv2d_params&) const {
    algo(e, in, b, out);
  }
  double workspace_bytes(const kcnn::conv2d_params& p) const {
    return kcnn::conv2d_im2col_gemm<Kokkos::DefaultExecutionSpace>::workspace_bytes(p);
  }
  // Traffic model: a nominal 64 x 64 GEMM tile (Kokkos Kernels chooses its own blocking), plus
  // the lowered matrix (C R S x N P Q floats), written by im2col and read back by the GEMM.
  template <class Layout>
  static kcnn::conv_tile traffic_tile(const kcnn::conv2d_params&) { return {64, 64}; }
  double extra_dram_bytes(const kcnn::conv2d_params& p) const {
    return 2.0 * sizeof(float) * double(p.c) * p.r * p.s * double(p.n) * p.p() * p.q();
  }
};
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using namespace kcnn::layout;
  kcnn::bench::register_conv2d<launch, nchw, nhwc, chwn>(r, "global", "tiled", "im2col_gemm");
});
}  // namespace
