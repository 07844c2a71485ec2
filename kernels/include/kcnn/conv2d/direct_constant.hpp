#pragma once
// conv2d, direct algorithm, filter weights and bias embedded by value in the functor.
//
// On CUDA a functor between 512 B and 32 KiB launched with the HintHeavyWeight property is
// copied to __constant__ memory and its members are read with ld.const: one broadcast per warp
// when all lanes read the same weight, serialised when they do not. The capacity is a compile-
// time constant so the functor stays under 32 KiB; layers whose weights do not fit cannot use
// this variant. On host backends the weights simply travel inside the functor.
#include <kcnn/conv2d/direct_global.hpp>
#include <kcnn/conv2d_params.hpp>
#include <kcnn/constant.hpp>

#include <Kokkos_Core.hpp>

#include <stdexcept>
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

namespace variant {
struct direct_constant {};
// Constant weights with the threads of a warp on one filter (every lane reads the same weight:
// a broadcast) or on consecutive filters (every lane a different weight: serialised).
struct direct_constant_warp_uniform {};
struct direct_constant_warp_divergent {};
}  // namespace variant

// Thread orders of the two constant-memory mappings for an output layout: uniform keeps k fixed
// along consecutive threads (the layout's own order unless k is its fastest axis, then nchw's);
// divergent makes k the fastest axis.
template <class Layout>
using warp_uniform_order =
    std::conditional_t<Layout::order[3] == axis::c, layout::nchw, Layout>;
using warp_divergent_order = layout::nhwc;

// One thread per output along the output layout (as direct_coalesced), weights from `f`.
template <class Exec, class In, class Out, int Capacity>
void conv2d(const Exec& exec, const In& in, const constant_filter<Capacity>& f, const Out& out,
            const conv2d_params& p, variant::direct_constant) {
  using functor = detail::conv2d_constant_functor<detail::mapping::coalesced, Capacity, In, Out>;
  parallel_for_constant("kcnn::conv2d_direct_constant", exec, out.size(), functor{in, out, p, f});
}

template <class Exec, class In, class Out, int Capacity>
void conv2d(const Exec& exec, const In& in, const constant_filter<Capacity>& f, const Out& out,
            const conv2d_params& p, variant::direct_constant_warp_uniform) {
  using order = warp_uniform_order<typename Out::layout_tag>;
  using functor = detail::conv2d_constant_functor<detail::mapping::in_order<order>, Capacity, In, Out>;
  parallel_for_constant("kcnn::conv2d_direct_constant_uniform", exec, out.size(), functor{in, out, p, f});
}

template <class Exec, class In, class Out, int Capacity>
void conv2d(const Exec& exec, const In& in, const constant_filter<Capacity>& f, const Out& out,
            const conv2d_params& p, variant::direct_constant_warp_divergent) {
  using functor = detail::conv2d_constant_functor<detail::mapping::in_order<warp_divergent_order>,
                                                  Capacity, In, Out>;
  parallel_for_constant("kcnn::conv2d_direct_constant_divergent", exec, out.size(), functor{in, out, p, f});
}

}  // namespace kcnn
