#pragma once
// A 1x1, stride-1, unpadded, ungrouped conv2d is a matrix product with no lowering at all,
// when the layout keeps the pixels of all images in one matrix dimension:
//   nhwc: out(NHW x K) = in(NHW x C) * W(K x C)^T      (W stored KRSC = K x C)
//   chwn: out(K x HWN) = W(C x K)^T * in(C x HWN)      (W stored CRSK = C x K)
//   nchw: only for N = 1: out(K x HW) = W(K x C) * in(C x HW); for N > 1 the images are
//         interleaved between channels and the layer is N separate products.
// The bias is broadcast into the output first and the product accumulates onto it (beta = 1).
#include <kcnn/conv2d/entry.hpp>
#include <kcnn/conv2d_params.hpp>
#include <kcnn/map.hpp>
#include <kcnn/layout.hpp>

#include <kcnn/compat_blas.hpp>
#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>

namespace kcnn {

// Empty if the layer is a single GEMM in this layout, otherwise why not.
template <class Layout>
std::string gemm_pointwise_unsupported(const conv2d_params& p) {
  if (!p.is_pointwise()) return "not a 1x1, stride-1, unpadded, ungrouped convolution";
  if constexpr (Layout::runtime_strided) return "needs a compile-time layout";
  return {};
}

namespace detail {
template <class Bias, class Out>
struct broadcast_bias {
  Bias bias;
  Out out;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, k, h, w;
    out.storage_coords(i, n, k, h, w);
    out(n, k, h, w) = bias(k);
  }
};
}  // namespace detail

namespace variant {
// A 1x1, stride-1, unpadded, ungrouped conv2d as KokkosBlas::gemm over the tensors' own
// storage: in, wt and out in the same layout; one GEMM in nhwc and chwn, one per image in nchw
// (there an image's channels are a matrix, the images interleave between them). Throws
// std::invalid_argument for any other shape (gemm_pointwise_unsupported<Layout>(p) says why).
struct gemm_pointwise {
  using op = ops::conv2d;
  template <class Exec, class In, class Wt, class Bias, class Out>
  void run(const Exec& exec, const In& in, const Wt& wt, const Bias& bias, const Out& out, const conv2d_params& p) const {
    using L = typename Out::layout_tag;
    static_assert(std::is_same_v<typename In::layout_tag, L> && std::is_same_v<typename Wt::layout_tag, L>,
                  "kcnn::conv2d: gemm_pointwise needs in, wt and out in the same layout");
    static_assert(!L::runtime_strided, "kcnn::conv2d: gemm_pointwise needs a compile-time layout");
    if (const std::string e = gemm_pointwise_unsupported<L>(p); !e.empty()) detail::fail("conv2d", "gemm_pointwise: " + e);
    using mem = typename Out::memory_space;
    using cmat = Kokkos::View<const float**, Kokkos::LayoutRight, mem, Kokkos::MemoryUnmanaged>;
    using mat = Kokkos::View<float**, Kokkos::LayoutRight, mem, Kokkos::MemoryUnmanaged>;
    launch_range("kcnn::conv2d_gemm_bias", exec, out.size(),
                         detail::broadcast_bias<Bias, Out>{bias, out});
    const int hw = p.h * p.w;
    if constexpr (std::is_same_v<L, layout::nhwc>) {
      cmat a(in.view().data(), std::size_t(p.n) * hw, p.c);
      cmat w(wt.view().data(), p.k, p.c);
      mat c(out.view().data(), std::size_t(p.n) * hw, p.k);
      compat::gemm(exec, "N", "T", 1.0f, a, w, 1.0f, c);
    } else if constexpr (std::is_same_v<L, layout::chwn>) {
      cmat a(in.view().data(), p.c, std::size_t(hw) * p.n);
      cmat w(wt.view().data(), p.c, p.k);
      mat c(out.view().data(), p.k, std::size_t(hw) * p.n);
      compat::gemm(exec, "T", "N", 1.0f, w, a, 1.0f, c);
    } else {
      static_assert(std::is_same_v<L, layout::nchw>, "gemm_pointwise: nchw, nhwc or chwn");
      cmat w(wt.view().data(), p.k, p.c);
      for (int n = 0; n < p.n; ++n) {  // out_n (k x hw) = w (k x c) x in_n (c x hw)
        cmat a(in.view().data() + std::size_t(n) * p.c * hw, p.c, hw);
        mat c(out.view().data() + std::size_t(n) * p.k * hw, p.k, hw);
        compat::gemm(exec, "N", "N", 1.0f, w, a, 1.0f, c);
      }
    }
  }
};
}  // namespace variant

}  // namespace kcnn
