// conv2d / {nchw,nhwc,chwn} / global / library / gemm_kk: a 1x1 convolution as KokkosBlas::gemm
// on the tensors' own storage: one GEMM in nhwc and chwn, one per image in nchw.
#include "conv_descriptor.hpp"

#include "../common/variant_kinds.hpp"

#include <kcnn/conv2d/gemm_pointwise.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

struct gemm_pointwise_conv : conv_call<gemm_pointwise_conv, variant::gemm_pointwise, false> {
  template <class Layout>
  static std::string unsupported(const conv2d_params& p) {
    return gemm_pointwise_unsupported<Layout>(p);
  }
  // Traffic model: a nominal 64 x 64 GEMM tile (Kokkos Kernels chooses its own blocking).
  template <class Layout>
  static conv_tile traffic_tile(const conv2d_params&) { return {64, 64}; }
};

const registrar reg([](registry& r) {
  using namespace kcnn::layout;
  register_variant<gemm_pointwise_conv, nchw, nhwc, chwn>(
      r, {"conv2d", space_axis::global, pattern_axis::library, &kinds::gemm_kk});
});
}  // namespace
