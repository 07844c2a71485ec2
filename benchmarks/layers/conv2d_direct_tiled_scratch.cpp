// conv2d / {nchw,nhwc,chwn} / scratch / tiled / direct: input tile (with halo) and filter
// slice staged in team scratch level 0 (CUDA shared memory), sized from the queried limit.
#include "conv2d_case.hpp"

#include <kcnn/conv2d/direct_tiled_scratch.hpp>

namespace {
struct launch : kcnn::bench::conv2d_tag_launch<kcnn::variant::direct_tiled_scratch> {
  template <class Layout>
  static std::string unsupported(const kcnn::conv2d_params& p) {
    using exec = Kokkos::DefaultExecutionSpace;
    const auto t = kcnn::choose_conv2d_tile<Layout>(p, kcnn::scratch_limit<exec>(0) - 3 * 128);
    if (t.cc < 1)
      return "no output tile with its input halo fits in " +
             std::to_string(kcnn::scratch_limit<exec>(0)) + " bytes of team scratch";
    return {};
  }
  // Traffic model: the team's real output tile (images x rows x columns positions, kb filters).
  template <class Layout>
  static kcnn::conv_tile traffic_tile(const kcnn::conv2d_params& p) {
    using exec = Kokkos::DefaultExecutionSpace;
    const auto t = kcnn::choose_conv2d_tile<Layout>(p, kcnn::scratch_limit<exec>(0) - 3 * 128);
    return {t.nb * t.th * t.tw, t.kb};
  }
};
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using namespace kcnn::layout;
  kcnn::bench::register_conv2d<launch, nchw, nhwc, chwn>(r, "scratch", "tiled", "direct");
});
}  // namespace
