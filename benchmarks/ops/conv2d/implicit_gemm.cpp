// conv2d / {nchw,nhwc,chwn} / scratch / tiled / implicit_gemm: the convolution as a GEMM never
// materialised, weight and input tiles of each K step double-buffered in team scratch, an 8 x 8
// register fragment per thread (kcnn/conv2d/implicit_gemm.hpp). The weights are packed once,
// untimed (workspace_bytes).
#include "conv_descriptor.hpp"

namespace {
using namespace kcnn;
using namespace kcnn::bench;

const variant_kind implicit_gemm_kind{
    "implicit_gemm",
    "implicit GEMM (output channels x pixels, K = c r s): a team a tile of 128 x 128 on a GPU, or 64 x 256 or 256 x "
    "64 where that multiplies at most 3/4 of what 128 x 128 would (8 x 8 on a host), each K step of 8 (4 in 64 x "
    "256) staged in double-buffered team scratch, an 8 x 8 register fragment per thread from 16-byte shared loads, "
    "16-byte weight loads from the packed weights (4-byte in 64 x 256), the input gathered through a K -> (c, r, s) "
    "table, K in blocks of a step's channels at one tap on a GPU (all channels in nhwc); K split over teams when the "
    "tiles are too few (kcnn/conv2d/implicit_gemm.hpp)"};

struct implicit_gemm_conv : implicit_gemm_call<implicit_gemm_conv, variant::implicit_gemm, false> {};

const registrar reg([](registry& r) {
  using namespace kcnn::layout;
  register_variant<implicit_gemm_conv, nchw, nhwc, chwn>(
      r, {"conv2d", space_axis::scratch, pattern_axis::tiled, &implicit_gemm_kind});
});
}  // namespace
