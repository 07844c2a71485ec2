// conv2d / {nchw,nhwc,chwn} / global / strided / direct: the direct kernel with its thread
// mapping deliberately against the layout (consecutive threads a row or more apart).
#include "conv2d_case.hpp"

#include <kcnn/conv2d/direct_global.hpp>

namespace {
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using namespace kcnn::layout;
  using launch = kcnn::bench::conv2d_tag_launch<kcnn::variant::direct_strided>;
  kcnn::bench::register_conv2d<launch, nchw, nhwc, chwn>(r, "global", "strided", "direct");
});
}  // namespace
