// conv2d / {nchw,nhwc,chwn} / constant / {coalesced,strided} / direct / warp_{uniform,divergent}:
// weights and bias by value in the functor, launched with HintHeavyWeight (CUDA constant
// memory), with two thread mappings: warp_uniform keeps one filter per warp (every lane reads
// the same weight, a broadcast); warp_divergent puts consecutive filters on consecutive lanes
// (different weights, serialised). The pattern says whether the mapping follows the layout.
// Only for layers whose weights fit the compile-time capacity.
#include "conv2d_case.hpp"

#include <kcnn/conv2d/direct_constant.hpp>

namespace {
template <class Variant>
struct launch : kcnn::bench::constant_weights_launch {
  template <class Exec, class In, class Wt, class Bias, class Out>
  void operator()(const Exec& e, const In& in, const Wt&, const Bias&, const Out& out,
                  const kcnn::conv2d_params& p) const {
    kcnn::conv2d(e, in, *f, out, p, Variant{});
  }
};

template <class Layout>
void register_layout(kcnn::bench::registry& r) {
  using uniform = launch<kcnn::variant::direct_constant_warp_uniform>;
  using divergent = launch<kcnn::variant::direct_constant_warp_divergent>;
  const bool uniform_follows = std::is_same_v<kcnn::warp_uniform_order<Layout>, Layout>;
  const bool divergent_follows = std::is_same_v<kcnn::warp_divergent_order, Layout>;
  kcnn::bench::register_conv2d<uniform, Layout>(r, "constant", uniform_follows ? "coalesced" : "strided",
                                                "direct", "warp_uniform");
  kcnn::bench::register_conv2d<divergent, Layout>(r, "constant", divergent_follows ? "coalesced" : "strided",
                                                  "direct", "warp_divergent");
}

const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  register_layout<kcnn::layout::nchw>(r);
  register_layout<kcnn::layout::nhwc>(r);
  register_layout<kcnn::layout::chwn>(r);
});
}  // namespace
