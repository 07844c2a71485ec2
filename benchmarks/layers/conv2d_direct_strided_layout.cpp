// conv2d / strided / global / coalesced / direct / order_<o>: the coalesced direct kernel over
// runtime LayoutStride tensors holding the physical order <o>. Compared with the same order as
// a compile-time layout, it shows what a layout unknown at compile time costs (index
// arithmetic with run-time strides, no specialised loop order).
#include "conv2d_case.hpp"

#include <kcnn/conv2d/direct_global.hpp>

namespace {
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using launch = kcnn::bench::conv2d_tag_launch<kcnn::variant::direct_coalesced>;
  kcnn::bench::register_conv2d_strided_layout<launch>(r, "global", "coalesced", "direct",
                                                      {"nchw", "nhwc", "chwn"});
});
}  // namespace
