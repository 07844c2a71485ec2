#pragma once
// conv2d, direct algorithm, register tiling over filters: each thread computes KT output
// channels of one output pixel, so every input value it loads is reused KT times from a
// register (the outputs' accumulators live in registers too). Threads run along the output
// layout's storage order with k counted in blocks of KT.
#include <kcnn/conv2d/direct_global.hpp>
#include <kcnn/conv2d/entry.hpp>
#include <kcnn/conv2d_params.hpp>
#include <kcnn/map.hpp>
#include <kcnn/layout.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace kcnn {

namespace detail {

template <int KT, class In, class Wt, class Bias, class Out>
struct conv2d_regtile_k_functor {
  In in;
  Wt wt;
  Bias bias;
  Out out;
  conv2d_params p;
  dims4 grid;    // (n, k blocks over all groups, p, q)
  int kblocks;   // k blocks per group

  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, kbi, oh, ow;
    Out::layout_tag::storage_coords(i, grid, n, kbi, oh, ow);
    const int g = kbi / kblocks, kpg = p.k_per_group(), cpg = p.c_per_group();
    const int k0 = g * kpg + (kbi % kblocks) * KT;
    const int kn = (k0 + KT <= (g + 1) * kpg) ? KT : (g + 1) * kpg - k0;
    const int c0 = g * cpg;
    float acc[KT];
    for (int j = 0; j < KT; ++j) acc[j] = (j < kn) ? bias(k0 + j) : 0.0f;
    conv2d_for_each_tap<typename In::layout_tag>(p, oh, ow, [&](int c, int r, int s, int ih, int iw) {
      const float v = in(n, c0 + c, ih, iw);  // loaded once, used KT times
      for (int j = 0; j < KT; ++j)
        if (j < kn) acc[j] += v * wt(k0 + j, c, r, s);
    });
    for (int j = 0; j < kn; ++j) out(n, k0 + j, oh, ow) = acc[j];
  }
};

}  // namespace detail

namespace variant {
// KT output channels per thread, reusing each input load KT times from registers. Compile-time
// output layouts.
template <int KT>
struct direct_regtile_k {
  static_assert(KT >= 1 && KT <= 32, "register tile must be 1..32");
  static constexpr int factor = KT;
  using op = ops::conv2d;
  template <class Exec, class In, class Wt, class Bias, class Out>
  void run(const Exec& exec, const In& in, const Wt& wt, const Bias& bias, const Out& out, const conv2d_params& p) const {
    static_assert(!Out::layout_tag::runtime_strided, "kcnn::conv2d: direct_regtile_k needs a compile-time layout");
    const int kblocks = (p.k_per_group() + KT - 1) / KT;
    const dims4 grid{p.n, kblocks * p.groups, p.p(), p.q()};
    launch_range("kcnn::conv2d_direct_regtile_k", exec, grid.size(),
                         detail::conv2d_regtile_k_functor<KT, In, Wt, Bias, Out>{in, wt, bias, out, p, grid, kblocks});
  }
};
}  // namespace variant

}  // namespace kcnn
