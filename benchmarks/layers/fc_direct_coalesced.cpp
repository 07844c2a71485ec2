// fc / {nchw,nhwc,chwn} / global / coalesced / direct: one thread per output (n, k) along the
// output's storage order, features walked in the input's storage order; also read-only and,
// on CUDA builds, from managed and host-pinned memory.
#include "conv2d_case.hpp"

namespace {
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using namespace kcnn::layout;
  using launch = kcnn::bench::fc_tag_launch<kcnn::variant::fc_direct_coalesced>;
  kcnn::bench::register_fc<launch, nchw, nhwc, chwn>(r, "global", "coalesced", "direct");
  kcnn::bench::register_fc<kcnn::bench::readonly_launch<launch>, nchw, nhwc, chwn>(r, "readonly", "coalesced", "direct");
  kcnn::bench::register_conv_cuda_spaces<launch>(r, "fc", "coalesced", "direct");
});
}  // namespace
