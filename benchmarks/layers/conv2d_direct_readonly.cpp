// conv2d / {nchw,nhwc,chwn} / readonly / coalesced / direct: the coalesced direct kernel with
// inputs, weights and bias as const MemoryTraits<RandomAccess> views (CUDA: the read-only /
// texture cache path, ld.global.nc).
#include "conv2d_case.hpp"

#include <kcnn/conv2d/direct_global.hpp>

namespace {
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using namespace kcnn::layout;
  using launch = kcnn::bench::readonly_launch<kcnn::bench::conv2d_tag_launch<kcnn::variant::direct_coalesced>>;
  kcnn::bench::register_conv2d<launch, nchw, nhwc, chwn>(r, "readonly", "coalesced", "direct");
});
}  // namespace
