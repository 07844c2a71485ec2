// conv2d and fc / {nchw,nhwc} / global / library / onednn: oneDNN's convolution_forward and
// inner_product_forward, both through onednn_conv.hpp (a fully connected layer is the
// convolution whose window is the whole input, so one descriptor serves both).
#include "onednn_conv.hpp"

#if defined(KCNN_HAVE_ONEDNN)
namespace {
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using namespace kcnn::bench;
  using namespace kcnn::layout;
  if (!onednn::usable) return r.add_unavailable("*/*/global/library/onednn", "oneDNN runs on host backends only");
  register_variant<onednn_conv<false>, nchw, nhwc>(r, {"conv2d", space_axis::global, pattern_axis::library, &kinds::onednn});
  register_variant<onednn_conv<true>, nchw, nhwc>(r, {"fc", space_axis::global, pattern_axis::library, &kinds::onednn});
});
}  // namespace
#else
namespace {
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  r.add_unavailable("*/*/global/library/onednn", "oneDNN was not found at configure time (apt-get install libdnnl-dev)");
});
}  // namespace
#endif
