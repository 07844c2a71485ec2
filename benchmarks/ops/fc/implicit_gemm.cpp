// fc / {nchw,nhwc,chwn} / scratch / tiled / implicit_gemm: conv2d implicit_gemm over the 1 x 1
// output image (outputs x images, K = the features), split along the features when the tiles
// are too few (kcnn/fc.hpp, kcnn/conv2d/implicit_gemm.hpp). Weights packed once, untimed.
#include "../conv2d/conv_descriptor.hpp"

namespace {
using namespace kcnn;
using namespace kcnn::bench;

const variant_kind fc_implicit_gemm_kind{
    "implicit_gemm",
    "conv2d implicit_gemm with the images as the pixels: a team a tile of 128 outputs x 128 images on a GPU, or 256 x "
    "64 (64 x 256) where that multiplies at most 3/4 of what 128 x 128 would (fc6 at batch 64), the features in "
    "double-buffered team scratch steps, split over teams when the tiles are too few"};

struct fc_implicit_gemm_call : implicit_gemm_call<fc_implicit_gemm_call, variant::fc_implicit_gemm, true> {};

const registrar reg([](registry& r) {
  using namespace kcnn::layout;
  register_variant<fc_implicit_gemm_call, nchw, nhwc, chwn>(
      r, {"fc", space_axis::scratch, pattern_axis::tiled, &fc_implicit_gemm_kind});
});
}  // namespace
