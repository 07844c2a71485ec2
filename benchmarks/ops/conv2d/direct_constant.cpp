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

#include "measure/sampler.hpp"
#include "measure/stats.hpp"

#include <kcnn/constant.hpp>
#include <kcnn/conv2d/direct_constant.hpp>

#include <vector>

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

// A one-element kernel carrying as many floats by value as a constant-memory conv2d does.
struct constant_sized_kernel {
  Kokkos::Array<float, constant_filter_capacity> w;
  Kokkos::View<float*> out;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const { out(i) = w[int(i)]; }
};

// What one back-to-back launch of a one-element kernel carrying conv2d's constant capacity by
// value costs, through kcnn::parallel_for_constant (median over samples of 10). On CUDA each such
// launch uploads its ~31 KB driver to constant memory and waits on the host for the previous one:
// the constant rows' time includes this per launch.
double constant_launch_seconds(const sampler& timer) {
  constant_sized_kernel k{};
  k.out = Kokkos::View<float*>("kcnn::constant_launch", 1);
  timed_work w;
  w.launches = 10;
  w.launch = [&] { parallel_for_constant("kcnn::constant_launch", Kokkos::DefaultExecutionSpace(), 1, k); };
  w.kind = work_kind::synchronising;  // each launch waits on the host for the one before
  w.launch();
  std::vector<double> t;
  for (int i = 0; i < 50; ++i) t.push_back(timer.take(w).seconds());
  return summarize(t).median;
}

const registrar reg([](registry& r) {
  r.add_launch_cost({"constant_launch",
                     "one back-to-back launch of a kernel carrying conv2d's constant capacity (" +
                         std::to_string(constant_filter_capacity) + " floats) by value",
                     constant_launch_seconds, space_axis::constant});
  add_constant_variants<layout::nchw>(r);
  add_constant_variants<layout::nhwc>(r);
  add_constant_variants<layout::chwn>(r);
});
}  // namespace
