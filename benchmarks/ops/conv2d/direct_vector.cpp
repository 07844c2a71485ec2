// conv2d / nhwc, nchw / global / regtile / direct_vector: the direct convolution vectorised along
// the output's contiguous axis (kcnn/conv2d/direct_vector.hpp and direct_vector_nchw.hpp describe
// the portable source's tiles, kcnn/host/conv2d_direct_vector.hpp the host tuning's); on a host
// build also its portable source as tuning `portable`. The weights are repacked once, untimed
// (workspace_bytes).
#include "conv_descriptor.hpp"

#include <kcnn/conv2d/direct_vector.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

const variant_kind direct_vector_kind{
    "direct_vector",
    "direct convolution, lanes along the output's contiguous axis (nhwc: output channels; nchw: the output row), a "
    "register tile of output pixels x output channels per work item, weights repacked once; the tiles: "
    "kcnn/conv2d/direct_vector.hpp (portable source), kcnn/host/conv2d_direct_vector.hpp (host tuning)"};

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
