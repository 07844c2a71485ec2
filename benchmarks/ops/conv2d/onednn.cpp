// conv2d / {nchw,nhwc} / global / library / onednn: oneDNN's convolution_forward (onednn_conv.hpp).
#include "onednn_conv.hpp"

#if defined(KCNN_HAVE_ONEDNN)
namespace {
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using namespace kcnn::bench;
  using namespace kcnn::layout;
  if (!onednn::usable) return;
  register_variant<onednn_conv<false>, nchw, nhwc>(r, {"conv2d", space_axis::global, pattern_axis::library, &kinds::onednn});
});
}  // namespace
#endif
