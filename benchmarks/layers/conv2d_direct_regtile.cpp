// conv2d / {nchw,nhwc,chwn} / global / regtile / direct / k<KT>: each thread computes KT
// output channels of one pixel, reusing every input load KT times from a register.
#include "conv2d_case.hpp"

#include <kcnn/conv2d/direct_regtile.hpp>

namespace {
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using namespace kcnn::layout;
  using kcnn::bench::conv2d_tag_launch;
  using kcnn::variant::direct_regtile_k;
  kcnn::bench::register_conv2d<conv2d_tag_launch<direct_regtile_k<4>>, nchw, nhwc, chwn>(
      r, "global", "regtile", "direct", "k4");
  kcnn::bench::register_conv2d<conv2d_tag_launch<direct_regtile_k<8>>, nchw, nhwc, chwn>(
      r, "global", "regtile", "direct", "k8");
});
}  // namespace
