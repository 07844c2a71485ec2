// conv2d / nhwc / global / regtile / direct_vector: the direct convolution vectorised along the
// output channels (two 16-float vectors on a host; on a GPU the 32 lanes of a warp, KV channels
// each) with 8 output pixels per work item in registers; depthwise layers put channels in the lanes. The
// weights are repacked once, untimed ([group][block of 32 k][r][s][c][32 k]: workspace_bytes).
#include "conv_descriptor.hpp"

#include <kcnn/conv2d/direct_vector.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

const variant_kind direct_vector_kind{
    "direct_vector",
    "direct convolution, lanes along the output channels (nhwc; depthwise: along the channels), a register tile of "
    "output pixels x channels per work item (host: 8 pixels of a row x 2 vectors of 16; GPU: 8 pixels x KV channels per "
    "lane, 32 apart, the input channels split when the launch is small), weights repacked once as "
    "[group][block of 32 k][r][s][c][32 k] (docs/performance.md)"};

struct direct_vector_conv : conv_call<direct_vector_conv, variant::direct_vector, false> {
  // Traffic model: the unit sharing loads on this build's backend (host: an item of 8 pixels x
  // 32 channels; GPU: a warp of 8 pixels x 32 KV channels).
  template <class Layout>
  static conv_tile traffic_tile(const conv2d_params& p) {
    const auto unit = kcnn::detail::conv_vector_load_unit<Kokkos::DefaultExecutionSpace>(p);
    return {unit[0], unit[1]};
  }
};

const registrar reg([](registry& r) {
  register_variant<direct_vector_conv, layout::nhwc>(
      r, {"conv2d", space_axis::global, pattern_axis::regtile, &direct_vector_kind});
});
}  // namespace
