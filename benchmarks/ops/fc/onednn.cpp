// fc / {nchw,nhwc} / global / library / onednn: oneDNN's inner_product_forward
// (../conv2d/onednn_conv.hpp).
#include "../conv2d/onednn_conv.hpp"

#if defined(KCNN_HAVE_ONEDNN)
namespace {
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using namespace kcnn::bench;
  using namespace kcnn::layout;
  if (!onednn::usable) return;
  register_variant<onednn_conv<true>, nchw, nhwc>(r, {"fc", space_axis::global, pattern_axis::library, &kinds::onednn});
});
}  // namespace
#endif
