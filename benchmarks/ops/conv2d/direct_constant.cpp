// conv2d / {nchw,nhwc,chwn} / constant / {coalesced,strided} / direct / warp_{uniform,divergent}:
// weights and bias by value in the functor, launched with HintHeavyWeight (CUDA constant
// memory), with two thread mappings: warp_uniform keeps one filter per warp (every lane reads
// the same weight, a broadcast); warp_divergent puts consecutive filters on consecutive lanes
// (different weights, serialised). The pattern says whether the mapping follows the layout.
// Only for layers whose weights fit the compile-time capacity. Each mapping also changes which
// global loads and stores coalesce, so each has a global-memory twin with the same thread order
// (space global, same tuning, variant direct_in_order): the constant-cache effect is the difference
// between the constant row and its twin, not between the constant row and direct.
#include "conv_descriptor.hpp"

#include "../common/variant_kinds.hpp"

#include <kcnn/conv2d/direct_constant.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

template <class Variant>
using constant_conv = constant_weights<Variant, false>;

const variant_kind direct_in_order_kind{"direct_in_order",
                                        "direct in global memory with the thread order of a constant-memory mapping "
                                        "(tuning warp_uniform or warp_divergent): the constant rows' twin"};

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
  register_variant<conv_tag<variant::direct_in_order<warp_uniform_order<Layout>>>, Layout>(
      r, {"conv2d", space_axis::global, uniform_follows ? pattern_axis::coalesced : pattern_axis::strided,
          &direct_in_order_kind, {"warp_uniform", "the thread order of constant warp_uniform, weights in global memory"}});
  register_variant<conv_tag<variant::direct_in_order<warp_divergent_order>>, Layout>(
      r, {"conv2d", space_axis::global, divergent_follows ? pattern_axis::coalesced : pattern_axis::strided,
          &direct_in_order_kind, {"warp_divergent", "the thread order of constant warp_divergent, weights in global memory"}});
}

const registrar reg([](registry& r) {
  add_constant_variants<layout::nchw>(r);
  add_constant_variants<layout::nhwc>(r);
  add_constant_variants<layout::chwn>(r);
});
}  // namespace
