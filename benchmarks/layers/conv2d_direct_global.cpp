// conv2d / {nchw,nhwc,chwn} / global / coalesced / direct:
// one thread per output element along the layout's fastest dimension.
#include "conv2d_case.hpp"

#include <kcnn/conv2d/direct_global.hpp>

namespace {
struct launch_direct_coalesced {
  template <class Exec, class In, class Wt, class Bias, class Out>
  void operator()(const Exec& exec, const In& in, const Wt& wt, const Bias& bias, const Out& out,
                  const kcnn::conv2d_params& p) const {
    kcnn::conv2d(exec, in, wt, bias, out, p, kcnn::variant::direct_coalesced{});
  }
};

const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  kcnn::bench::register_conv2d<launch_direct_coalesced, kcnn::layout::nchw, kcnn::layout::nhwc,
                               kcnn::layout::chwn>(r, "global", "coalesced", "direct");
});
}  // namespace
