#pragma once
// conv2d, direct algorithm, filter weights and bias embedded by value in the functor.
//
// On CUDA a functor between 512 B and 32 KiB launched with the HintHeavyWeight property is
// copied to __constant__ memory and its members are read with ld.const: one broadcast per warp
// when all lanes read the same weight, serialised when they do not. The capacity is a compile-
// time constant so the functor stays under 32 KiB; layers whose weights do not fit cannot use
// this variant. On host backends the weights simply travel inside the functor.
#include <kcnn/conv2d/direct_global.hpp>
#include <kcnn/conv2d/entry.hpp>
#include <kcnn/conv2d_params.hpp>
#include <kcnn/constant.hpp>

#include <Kokkos_Core.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace kcnn {

// Weights (logical k, c, r, s order) followed by the bias, by value.
template <int Capacity>
struct constant_filter {
  static constexpr int capacity = Capacity;
  Kokkos::Array<float, Capacity> w;
  int bias_offset = 0;

  static bool fits(const conv2d_params& p) { return p.weight_count() <= double(Capacity); }

  // wt(k, c, r, s) and bias(k): host-accessible.
  template <class HostWt, class HostBias>
  static constant_filter from_host(const conv2d_params& p, const HostWt& wt, const HostBias& bias) {
    if (!fits(p)) throw std::invalid_argument("constant_filter: weights exceed capacity");
    constant_filter f{};
    int i = 0;
    const int cpg = p.c_per_group();
    for (int k = 0; k < p.k; ++k)
      for (int c = 0; c < cpg; ++c)
        for (int r = 0; r < p.r; ++r)
          for (int s = 0; s < p.s; ++s) f.w[i++] = float(wt(k, c, r, s));
    f.bias_offset = i;
    for (int k = 0; k < p.k; ++k) f.w[i++] = float(bias(k));
    return f;
  }
  KOKKOS_FORCEINLINE_FUNCTION float weight(const conv2d_params& p, int k, int c, int r,
                                           int s) const {
    return w[((k * p.c_per_group() + c) * p.r + r) * p.s + s];
  }
  KOKKOS_FORCEINLINE_FUNCTION float bias(int k) const { return w[bias_offset + k]; }
};

// 7680 floats = 30 KiB: the functor (weights, two tensor handles, shape) stays under CUDA's
// 32 KiB constant-memory launch limit.
inline constexpr int constant_filter_capacity = 7680;

namespace detail {

template <class Mapping, int Capacity, class In, class Out>
struct conv2d_constant_functor {
  In in;
  Out out;
  conv2d_params p;
  constant_filter<Capacity> f;

  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, k, oh, ow;
    Mapping::coords(out, i, n, k, oh, ow);
    const int c0 = (k / p.k_per_group()) * p.c_per_group();
    float acc = f.bias(k);
    conv2d_for_each_tap<typename In::layout_tag>(p, oh, ow, [&](int c, int r, int s, int ih, int iw) {
      acc += in(n, c0 + c, ih, iw) * f.weight(p, k, c, r, s);
    });
    out(n, k, oh, ow) = acc;
  }
};

}  // namespace detail

// Thread orders of the two constant-memory mappings for an output layout: uniform keeps k fixed
// along consecutive threads (the layout's own order unless k is its fastest axis, then nchw's);
// divergent makes k the fastest axis.
template <class Layout>
using warp_uniform_order =
    std::conditional_t<Layout::order[3] == axis::c, layout::nchw, Layout>;
using warp_divergent_order = layout::nhwc;

namespace detail {
// 0: coalesced (direct_constant), 1: warp_uniform, 2: warp_divergent.
template <int Which, class Exec, class In, class Out, int Capacity>
void conv2d_constant_launch(const Exec& exec, const In& in, const constant_filter<Capacity>& f, const Out& out,
                            const conv2d_params& p) {
  if constexpr (Which == 0) {
    using functor = conv2d_constant_functor<mapping::coalesced, Capacity, In, Out>;
    parallel_for_constant("kcnn::conv2d_direct_constant", exec, out.size(), functor{in, out, p, f});
  } else if constexpr (Which == 1) {
    static_assert(!Out::layout_tag::runtime_strided,
                  "kcnn::conv2d: direct_constant_warp_uniform needs a compile-time output layout");
    using order = warp_uniform_order<typename Out::layout_tag>;
    using functor = conv2d_constant_functor<mapping::in_order<order>, Capacity, In, Out>;
    parallel_for_constant("kcnn::conv2d_direct_constant_uniform", exec, out.size(), functor{in, out, p, f});
  } else {
    using functor = conv2d_constant_functor<mapping::in_order<warp_divergent_order>, Capacity, In, Out>;
    parallel_for_constant("kcnn::conv2d_direct_constant_divergent", exec, out.size(), functor{in, out, p, f});
  }
}

// Host copy of a filter tensor's and a bias' values, and the constant filter built from them.
template <int Capacity, class Wt, class Bias>
constant_filter<Capacity> constant_filter_from_device(const char* op, const char* variant, const conv2d_params& p,
                                                      const Wt& wt, const Bias& bias) {
  using filter = constant_filter<Capacity>;
  if (!filter::fits(p))
    fail(op, std::string(variant) + ": " + std::to_string(std::size_t(p.weight_count())) +
                 " weights and biases exceed the constant capacity of " + std::to_string(Capacity) + " floats");
  const auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), wt.view());
  const auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), bias);
  using L = typename Wt::layout_tag;
  const auto w = [&](int k, int c, int r, int s) { return L::at(hw, k, c, r, s); };
  return filter::from_host(p, w, hb);
}

// The stateful constant-memory conv2d variants: kcnn::prepare copies the weights and bias to the
// host once and embeds them in the variant; runs take them by value (constant memory on CUDA).
template <int Which>
struct conv2d_constant_variant : stateful_variant<conv2d_params> {
  using op = ops::conv2d;
  using filter = constant_filter<constant_filter_capacity>;
  static constexpr const char* variant_name =
      Which == 0 ? "direct_constant" : Which == 1 ? "direct_constant_warp_uniform" : "direct_constant_warp_divergent";

  template <class Exec, class In, class Wt, class Bias, class Out>
  void prepare(const Exec&, const conv2d_params& p, const In& in, const Wt& wt, const Bias& bias, const Out& out) {
    conv2d_check<Exec>(in, wt, bias, out, p);
    auto f = std::make_shared<filter>(constant_filter_from_device<constant_filter_capacity>("conv2d", variant_name, p, wt, bias));
    state_.set(typeid(void), p, f, 4.0 * p.weight_count());
  }
  template <class Exec, class In, class Wt, class Bias, class Out>
  void run(const Exec& exec, const In& in, const Wt&, const Bias&, const Out& out, const conv2d_params& p) const {
    const filter& f = state_.template get<filter, Exec>("conv2d", variant_name, p);
    conv2d_constant_launch<Which>(exec, in, f, out, p);
  }
};
}  // namespace detail

namespace variant {
// Weights and bias by value in the functor (constant memory on CUDA), one thread per output along
// the output layout. Stateful: kcnn::prepare(exec, v, p, in, wt, bias, out) embeds wt and bias
// (later changes to them are not seen until the next prepare); refuses layers with more than
// constant_filter_capacity (7680) weights and biases. Every layout.
struct direct_constant : detail::conv2d_constant_variant<0> {};
// Constant weights with the threads of a warp on one filter (every lane reads the same weight:
// a broadcast; compile-time layouts) or on consecutive filters (every lane a different weight:
// serialised). Stateful as direct_constant.
struct direct_constant_warp_uniform : detail::conv2d_constant_variant<1> {};
struct direct_constant_warp_divergent : detail::conv2d_constant_variant<2> {};
}  // namespace variant

namespace detail {
template <class Exec, class In, class Out>
void conv2d_check_in_out(const In& in, const Out& out, const conv2d_params& p) {
  const checker<Exec> check{"conv2d"};
  check.params(p.check());
  check.tensor("in", in, p.input_dims());
  check.tensor("out", out, p.output_dims());
}
}  // namespace detail




}  // namespace kcnn
