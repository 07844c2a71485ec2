// conv2d / nhwc / global / regtile / direct_vector: the direct convolution vectorised along the
// output channels (two 16-float vectors on a host, adjacent threads on a GPU) with 8 output pixels
// of a row per work item in registers (4 on a GPU); depthwise layers put channels in the lanes. The
// weights are repacked once, untimed ([group][block of 32 k][r][s][c][32 k]: workspace_bytes).
#include "conv_descriptor.hpp"

#include <kcnn/conv2d/direct_vector.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

const variant_kind direct_vector_kind{
    "direct_vector",
    "direct convolution, lanes along the output channels (nhwc; depthwise: along the channels), a row of output pixels "
    "per work item in registers, weights repacked once as [group][block of 32 k][r][s][c][32 k] (docs/performance.md)"};

struct direct_vector_conv : conv_call<direct_vector_conv, variant::direct_vector, false> {
  // Traffic model: a work item is 8 pixels x 32 channels on a host.
  template <class Layout>
  static conv_tile traffic_tile(const conv2d_params&) { return {8, 32}; }
};

const registrar reg([](registry& r) {
  register_variant<direct_vector_conv, layout::nhwc>(
      r, {"conv2d", space_axis::global, pattern_axis::regtile, &direct_vector_kind});
});
}  // namespace
