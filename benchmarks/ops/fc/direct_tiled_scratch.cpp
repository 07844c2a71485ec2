// fc / {nchw,nhwc,chwn} / scratch / tiled / direct: a team per block of images x outputs
// streams feature chunks of inputs and weights through team scratch.
#include "../conv2d/conv_descriptor.hpp"

#include "../common/variant_kinds.hpp"

namespace {
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using namespace kcnn::bench;
  using namespace kcnn::layout;
  register_variant<conv_tag<kcnn::variant::fc_direct_tiled_scratch, true>, nchw, nhwc, chwn>(
      r, {"fc", space_axis::scratch, pattern_axis::tiled, &kinds::direct});
});
}  // namespace
