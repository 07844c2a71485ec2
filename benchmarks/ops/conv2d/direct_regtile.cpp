// conv2d / {nchw,nhwc,chwn} / global / regtile / direct / k<KT>: each thread computes KT
// output channels of one pixel, reusing every input load KT times from a register.
#include "conv_descriptor.hpp"

#include "../common/variant_kinds.hpp"

#include <kcnn/conv2d/direct_regtile.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

template <int KT>
struct regtile_conv : conv_call<regtile_conv<KT>, variant::direct_regtile_k<KT>, false> {
  // Traffic model: a warp of 32 threads, each holding KT filters of one position.
  template <class Layout>
  static conv_tile traffic_tile(const conv2d_params&) {
    return std::is_same_v<Layout, layout::nhwc> ? conv_tile{1, 32 * KT} : conv_tile{32, KT};
  }
};

const registrar reg([](registry& r) {
  using namespace kcnn::layout;
  register_variant<regtile_conv<4>, nchw, nhwc, chwn>(
      r, {"conv2d", space_axis::global, pattern_axis::regtile, &kinds::direct, {"k4", "4 output channels per thread"}});
  register_variant<regtile_conv<8>, nchw, nhwc, chwn>(
      r, {"conv2d", space_axis::global, pattern_axis::regtile, &kinds::direct, {"k8", "8 output channels per thread"}});
});
}  // namespace
