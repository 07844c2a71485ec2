// conv2d / {nchw,nhwc,chwn} / global / coalesced / direct: one thread per output element
// along the layout's fastest dimension (w, k, or n: cuda-convnet's thread per image).
// On CUDA builds also from managed (cold, prefetched, advised) and host-pinned memory.
#include "conv2d_case.hpp"

#include <kcnn/conv2d/direct_global.hpp>

namespace {
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using namespace kcnn::layout;
  using launch = kcnn::bench::conv2d_tag_launch<kcnn::variant::direct_coalesced>;
  kcnn::bench::register_conv2d<launch, nchw, nhwc, chwn>(r, "global", "coalesced", "direct");
  kcnn::bench::register_conv_cuda_spaces<launch>(r, "conv2d", "coalesced", "direct");
});
}  // namespace
