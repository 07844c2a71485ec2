// fc / {nchw,nhwc,chwn} / global / coalesced / direct: one thread per output (n, k) along the
// output's storage order, features walked in the input's storage order.
#include "conv2d_case.hpp"

namespace {
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using namespace kcnn::layout;
  using launch = kcnn::bench::fc_tag_launch<kcnn::variant::fc_direct_coalesced>;
  kcnn::bench::register_fc<launch, nchw, nhwc, chwn>(r, "global", "coalesced", "direct");
});
}  // namespace
