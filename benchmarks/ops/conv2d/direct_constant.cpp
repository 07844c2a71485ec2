// conv2d / {nchw,nhwc,chwn} / constant / {coalesced,strided} / direct / warp_{uniform,divergent}:
// weights and bias by value in the functor, launched with HintHeavyWeight (CUDA constant
// memory), with two thread mappings: warp_uniform keeps one filter per warp (every lane reads
// the same weight, a broadcast); warp_divergent puts consecutive filters on consecutive lanes
// (different weights, serialised). The pattern says whether the mapping follows the layout.
// Only for layers whose weights fit the compile-time capacity.
#include "conv_descriptor.hpp"

#include "../common/variant_kinds.hpp"

#include <kcnn/conv2d/direct_constant.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

template <class Variant>
using constant_conv = constant_weights<Variant, false>;

template <class Layout>
void add_constant_variants(registry& r) {
  const bool uniform_follows = std::is_same_v<warp_uniform_order<Layout>, Layout>;
  const bool divergent_follows = std::is_same_v<warp_divergent_order, Layout>;
  register_variant<constant_conv<variant::direct_constant_warp_uniform>, Layout>(
      r, {"conv2d", space_axis::constant, uniform_follows ? pattern_axis::coalesced : pattern_axis::strided,
          &kinds::direct, {"warp_uniform", "one filter per warp: every lane reads the same weight (a broadcast)"}});
  register_variant<constant_conv<variant::direct_constant_warp_divergent>, Layout>(
      r, {"conv2d", space_axis::constant, divergent_follows ? pattern_axis::coalesced : pattern_axis::strided,
          &kinds::direct, {"warp_divergent", "consecutive filters on consecutive lanes (different weights, serialised)"}});
}

const registrar reg([](registry& r) {
  add_constant_variants<layout::nchw>(r);
  add_constant_variants<layout::nhwc>(r);
  add_constant_variants<layout::chwn>(r);
});
}  // namespace
