#pragma once
// conv2d, direct algorithm, operands in global memory, one thread per output element.
//
// Coalesced mapping: thread i computes the output element stored at address i, i.e. threads
// are laid along the output layout's fastest dimension (w for nchw, k for nhwc, n for chwn, the
// last one being cuda-convnet's one-thread-per-image mapping).
#include <kcnn/conv2d/entry.hpp>
#include <kcnn/conv2d_params.hpp>
#include <kcnn/map.hpp>
#include <kcnn/tensor.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace kcnn {

namespace detail {

// Visits every tap (c in group, r, s) of the window of output (oh, ow) that lies inside the
// input, calling f(c, r, s, ih, iw). The loop order follows the layout: channels innermost when
// they are contiguous (nhwc), the filter row innermost otherwise, so host backends stream
// through memory in both cases. Shared by every direct conv2d variant.
template <class Layout, class F>
KOKKOS_FORCEINLINE_FUNCTION void conv2d_for_each_tap(const conv2d_params& p, int oh, int ow,
                                                     const F& f) {
  const int cpg = p.c_per_group(), dh = p.dilation_h, dw = p.dilation_w;
  const int ih0 = oh * p.row_stride() - p.pad_top(), iw0 = ow * p.col_stride() - p.pad_left();
  if constexpr (std::is_same_v<Layout, layout::nhwc>) {
    for (int r = 0; r < p.r; ++r) {
      const int ih = ih0 + r * dh;
      if (ih < 0 || ih >= p.h) continue;
      for (int s = 0; s < p.s; ++s) {
        const int iw = iw0 + s * dw;
        if (iw < 0 || iw >= p.w) continue;
        for (int c = 0; c < cpg; ++c) f(c, r, s, ih, iw);
      }
    }
  } else {
    for (int c = 0; c < cpg; ++c)
      for (int r = 0; r < p.r; ++r) {
        const int ih = ih0 + r * dh;
        if (ih < 0 || ih >= p.h) continue;
        for (int s = 0; s < p.s; ++s) {
          const int iw = iw0 + s * dw;
          if (iw < 0 || iw >= p.w) continue;
          f(c, r, s, ih, iw);
        }
      }
  }
}

// The arithmetic of one output element.
template <class In, class Wt, class Bias>
KOKKOS_INLINE_FUNCTION float conv2d_direct_point(const In& in, const Wt& wt, const Bias& bias,
                                                 const conv2d_params& p, int n, int k, int oh,
                                                 int ow) {
  const int c0 = (k / p.k_per_group()) * p.c_per_group();
  float acc = bias(k);
  conv2d_for_each_tap<typename In::layout_tag>(p, oh, ow, [&](int c, int r, int s, int ih, int iw) {
    acc += in(n, c0 + c, ih, iw) * wt(k, c, r, s);
  });
  return acc;
}

// Thread mappings of the one-thread-per-output kernels.
namespace mapping {
// Consecutive threads take consecutive output addresses (the layout's fastest dimension).
struct coalesced {
  template <class Out>
  KOKKOS_FORCEINLINE_FUNCTION static void coords(const Out& out, std::size_t i, int& n, int& k,
                                                 int& oh, int& ow) {
    out.storage_coords(i, n, k, oh, ow);
  }
};
// The same outputs walked against the memory order: consecutive threads are a row or more
// apart, so neither their loads nor their stores coalesce.
struct against_layout {
  template <class Out>
  KOKKOS_FORCEINLINE_FUNCTION static void coords(const Out& out, std::size_t i, int& n, int& k,
                                                 int& oh, int& ow) {
    Out::layout_tag::against::storage_coords(i, out.dims(), n, k, oh, ow);
  }
};
// Threads follow a fixed physical order whatever the layout (e.g. k fastest), used to choose
// which operand consecutive threads share.
template <class Order>
struct in_order {
  template <class Out>
  KOKKOS_FORCEINLINE_FUNCTION static void coords(const Out& out, std::size_t i, int& n, int& k,
                                                 int& oh, int& ow) {
    Order::storage_coords(i, out.dims(), n, k, oh, ow);
  }
};
}  // namespace mapping

template <class Mapping, class In, class Wt, class Bias, class Out>
struct conv2d_direct_functor {
  In in;
  Wt wt;
  Bias bias;
  Out out;
  conv2d_params p;

  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, k, oh, ow;
    Mapping::coords(out, i, n, k, oh, ow);
    out(n, k, oh, ow) = conv2d_direct_point(in, wt, bias, p, n, k, oh, ow);
  }
};

}  // namespace detail

namespace variant {
// Direct conv2d in global memory, one thread per output, coalesced along the output layout.
// Works on every layout, including the runtime-strided one. The default.
struct direct_coalesced {
  using op = ops::conv2d;
  template <class Exec, class In, class Wt, class Bias, class Out>
  void run(const Exec& exec, const In& in, const Wt& wt, const Bias& bias, const Out& out, const conv2d_params& p) const {
    launch_range("kcnn::conv2d_direct_coalesced", exec, out.size(),
        detail::conv2d_direct_functor<detail::mapping::coalesced, In, Wt, Bias, Out>{in, wt, bias, out, p});
  }
};
// The same, with the thread mapping deliberately against the layout. Compile-time layouts.
struct direct_strided {
  using op = ops::conv2d;
  template <class Exec, class In, class Wt, class Bias, class Out>
  void run(const Exec& exec, const In& in, const Wt& wt, const Bias& bias, const Out& out, const conv2d_params& p) const {
    static_assert(!Out::layout_tag::runtime_strided, "kcnn::conv2d: direct_strided needs a compile-time layout");
    launch_range("kcnn::conv2d_direct_strided", exec, out.size(),
        detail::conv2d_direct_functor<detail::mapping::against_layout, In, Wt, Bias, Out>{in, wt, bias, out, p});
  }
};
// The same, consecutive threads on consecutive outputs of a fixed physical Order (e.g. layout::nhwc:
// consecutive filters), whatever the tensors' layout. The global-memory twin of the constant-memory
// warp mappings (direct_constant_warp_uniform / _divergent): with the same Order, a constant row and
// a global row differ only in where the weights are read from. Compile-time layouts.
template <class Order>
struct direct_in_order {
  using op = ops::conv2d;
  template <class Exec, class In, class Wt, class Bias, class Out>
  void run(const Exec& exec, const In& in, const Wt& wt, const Bias& bias, const Out& out, const conv2d_params& p) const {
    launch_range("kcnn::conv2d_direct_in_order", exec, out.size(),
        detail::conv2d_direct_functor<detail::mapping::in_order<Order>, In, Wt, Bias, Out>{in, wt, bias, out, p});
  }
};
}  // namespace variant

}  // namespace kcnn
