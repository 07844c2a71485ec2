// conv2d / {nchw,nhwc,chwn} / scratch / tiled / direct: input tile (with halo) and filter
// slice staged in team scratch level 0 (CUDA shared memory), sized from the queried limit.
#include "conv_descriptor.hpp"

#include "../common/variant_kinds.hpp"

#include <kcnn/conv2d/direct_tiled_scratch.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;
using exec = Kokkos::DefaultExecutionSpace;

struct tiled_scratch_conv : conv_call<tiled_scratch_conv, variant::direct_tiled_scratch, false> {
  template <class Layout>
  static std::string unsupported(const conv2d_params& p) {
    const auto t = choose_conv2d_tile<Layout>(p, scratch_limit<exec>(0) - 3 * 128);
    if (t.cc < 1)
      return "no output tile with its input halo fits in " + std::to_string(scratch_limit<exec>(0)) +
             " bytes of team scratch";
    return {};
  }
  // Traffic model: the team's real output tile (images x rows x columns positions, kb filters).
  template <class Layout>
  static conv_tile traffic_tile(const conv2d_params& p) {
    const auto t = choose_conv2d_tile<Layout>(p, scratch_limit<exec>(0) - 3 * 128);
    return {t.nb * t.th * t.tw, t.kb};
  }
};

const registrar reg([](registry& r) {
  using namespace kcnn::layout;
  register_variant<tiled_scratch_conv, nchw, nhwc, chwn>(
      r, {"conv2d", space_axis::scratch, pattern_axis::tiled, &kinds::direct});
});
}  // namespace
