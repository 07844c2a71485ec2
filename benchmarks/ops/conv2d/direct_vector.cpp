// conv2d / nhwc, nchw / global / regtile / direct_vector: the direct convolution vectorised along
// the output's contiguous axis. nhwc: lanes along the output channels (two 16-float vectors on a
// host; on a GPU the 32 lanes of a warp, KV channels each) with 8 output pixels per work item in
// registers; depthwise layers put channels in the lanes. nchw: lanes along the output row (host:
// PV vectors of 16 columns; GPU: a thread per pixel) with a block of KB output channels in
// registers. The weights are repacked once, untimed (workspace_bytes).
#include "conv_descriptor.hpp"

#include <kcnn/conv2d/direct_vector.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

const variant_kind direct_vector_kind{
    "direct_vector",
    "direct convolution, lanes along the output's contiguous axis, a register tile of output pixels x channels per "
    "work item. nhwc: lanes along the output channels (depthwise: along the channels; host: 8 pixels of a row x 2 "
    "vectors of 16, 6 x 4 for few input channels, 16 x 1 for at most 16 output channels per group, 4 pixels x 4 vectors of 4 channels x 4 input channels "
    "(one broadcast load, the phases summed at the store) for groups of 8 and 16; GPU: 8 "
    "pixels x KV channels per lane, 32 apart, the input channels split when the launch is "
    "small), weights repacked once as [group][block of 32 k][r][s][c][32 k]. nchw: lanes along the output row, a "
    "block of KB output channels (2 to 24, from the channels per group) in registers (host: PV x 16 columns; GPU: "
    "one pixel per thread), weights repacked once as [group][block of KB k][c][r][s][KB] (docs/performance.md)"};

template <class V = variant::direct_vector>
struct direct_vector_conv : conv_call<direct_vector_conv<V>, V, false> {
  template <class W>
  using with_variant = direct_vector_conv<W>;
  // Traffic model: the unit sharing loads on the path this build runs (the host tuning: an item of
  // the tile conv_vector_host_tile picks, 8 pixels x 32 channels by default; nchw PV x 16 columns
  // x KB channels; the portable source: a warp of 8 pixels x 32 KV channels; nchw 32 pixels x KB).
  template <class Layout>
  static conv_tile traffic_tile(const conv2d_params& p) {
    using exec = Kokkos::DefaultExecutionSpace;
    std::array<int, 2> unit{};
#if KCNN_HOST_TUNING
    if constexpr (kcnn::takes_host_tuning<kcnn::tunings::automatic, exec> && kcnn::detail::is_host_tunable<V>::value) {
      if constexpr (std::is_same_v<Layout, layout::nchw>)
        unit = kcnn::host_tuning::detail::conv2d_direct_vector_nchw_state<exec>::load_unit(p);
      else
        unit = kcnn::host_tuning::detail::conv_vector_load_unit(p);
      return {unit[0], unit[1]};
    }
#endif
    if constexpr (std::is_same_v<Layout, layout::nchw>) unit = kcnn::detail::conv2d_direct_vector_nchw_state<exec>::load_unit(p);
    else unit = kcnn::detail::conv_vector_load_unit(p);
    return {unit[0], unit[1]};
  }
};

const registrar reg([](registry& r) {
  register_variant<direct_vector_conv<>, layout::nhwc, layout::nchw>(
      r, {"conv2d", space_axis::global, pattern_axis::regtile, &direct_vector_kind});
  register_portable_tuning<direct_vector_conv<>, layout::nhwc, layout::nchw>(
      r, {"conv2d", space_axis::global, pattern_axis::regtile, &direct_vector_kind});
});
}  // namespace
