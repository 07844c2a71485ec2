// conv2d / {nchw,nhwc,chwn} / global / regtile / direct / k<KT>: each thread computes KT
// output channels of one pixel, reusing every input load KT times from a register.
#include "conv2d_case.hpp"

#include <kcnn/conv2d/direct_regtile.hpp>

namespace {
template <int KT>
struct launch : kcnn::bench::conv2d_tag_launch<kcnn::variant::direct_regtile_k<KT>> {
  // Traffic model: a warp of 32 threads, each holding KT filters of one position.
  template <class Layout>
  static kcnn::conv_tile traffic_tile(const kcnn::conv2d_params&) {
    return std::is_same_v<Layout, kcnn::layout::nhwc> ? kcnn::conv_tile{1, 32 * KT} : kcnn::conv_tile{32, KT};
  }
};
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using namespace kcnn::layout;
  kcnn::bench::register_conv2d<launch<4>, nchw, nhwc, chwn>(r, "global", "regtile", "direct", "k4");
  kcnn::bench::register_conv2d<launch<8>, nchw, nhwc, chwn>(r, "global", "regtile", "direct", "k8");
});
}  // namespace
