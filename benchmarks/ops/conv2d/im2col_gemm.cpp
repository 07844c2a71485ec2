// conv2d / {nchw,nhwc,chwn} / global / library / im2col_gemm: explicit lowering into a
// workspace and KokkosBlas::gemm per group; the workspace is reported in workspace_bytes.
#include "conv_descriptor.hpp"

#include <kcnn/conv2d/im2col_gemm.hpp>

#include <algorithm>

#include <algorithm>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

const variant_kind im2col_gemm_kind{"im2col_gemm", "lowering into a (C R S) x (N P Q) workspace, then KokkosBlas::gemm per group"};

struct im2col_gemm_conv : conv_call<im2col_gemm_conv, variant::im2col_gemm, false> {
  // Exact once prepared; before that (the footprint check), the lowered matrix it will allocate.
  double workspace_bytes(const conv2d_params& p) const {
    return std::max(kcnn::workspace_bytes(v), conv2d_im2col_gemm<Kokkos::DefaultExecutionSpace>::workspace_bytes(p));
  }
  // Traffic model: a nominal 64 x 64 GEMM tile (Kokkos Kernels chooses its own blocking), plus
  // the lowered matrix (C R S x N P Q floats), written by im2col and read back by the GEMM.
  template <class Layout>
  static conv_tile traffic_tile(const conv2d_params&) { return {64, 64}; }
  double extra_dram_bytes(const conv2d_params& p) const {
    return 2.0 * sizeof(float) * double(p.c) * p.r * p.s * double(p.n) * p.p() * p.q();
  }
};

const registrar reg([](registry& r) {
  using namespace kcnn::layout;
  register_variant<im2col_gemm_conv, nchw, nhwc, chwn>(
      r, {"conv2d", space_axis::global, pattern_axis::library, &im2col_gemm_kind});
});
}  // namespace
