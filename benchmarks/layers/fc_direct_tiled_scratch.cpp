// fc / {nchw,nhwc,chwn} / scratch / tiled / direct: a team per block of images x outputs
// streams feature chunks of inputs and weights through team scratch.
#include "conv2d_case.hpp"

namespace {
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using namespace kcnn::layout;
  using launch = kcnn::bench::fc_tag_launch<kcnn::variant::fc_direct_tiled_scratch>;
  kcnn::bench::register_fc<launch, nchw, nhwc, chwn>(r, "scratch", "tiled", "direct");
});
}  // namespace
