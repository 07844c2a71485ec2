// conv2d / {nchw,nhwc,chwn} / global / tiled / gemm_kk: a 1x1 convolution as one
// KokkosBlas::gemm on the tensors' own storage, where the layout makes it one GEMM.
#include "conv2d_case.hpp"

#include <kcnn/conv2d/gemm_pointwise.hpp>

namespace {
struct launch : kcnn::bench::conv2d_tag_launch<kcnn::variant::gemm_pointwise> {
  template <class Layout>
  static std::string unsupported(const kcnn::conv2d_params& p) {
    return kcnn::gemm_pointwise_unsupported<Layout>(p);
  }
  // Traffic model: a nominal 64 x 64 GEMM tile (Kokkos Kernels chooses its own blocking).
  template <class Layout>
  static kcnn::conv_tile traffic_tile(const kcnn::conv2d_params&) { return {64, 64}; }
};
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using namespace kcnn::layout;
  kcnn::bench::register_conv2d<launch, nchw, nhwc, chwn>(r, "global", "tiled", "gemm_kk");
});
}  // namespace
