#pragma once
// Local response normalisation across channels (Caffe ACROSS_CHANNELS, AlexNet: size 5,
// alpha 1e-4, beta 0.75, k 1):
//   out(n,c,h,w) = in(n,c,h,w) / (k + alpha/size * sum_{c' = c-size/2 .. c+size/2} in(n,c',h,w)^2)^beta
// with the channel window clipped to [0, C).
#include <kcnn/compat.hpp>
#include <kcnn/layout.hpp>

#include <Kokkos_Core.hpp>

namespace kcnn {

struct lrn_params {
  int n = 0, c = 0, h = 0, w = 0;
  int size = 5;
  float alpha = 1e-4f, beta = 0.75f, k = 1.0f;
  dims4 dims() const { return {n, c, h, w}; }
  double min_bytes() const { return 8.0 * double(dims().size()); }
  // Per output: a square and an add per window element, then scale, pow and divide.
  double flops() const { return double(dims().size()) * (2.0 * size + 3.0); }
};

namespace detail {
template <class In, class Out>
struct lrn_naive_functor {
  In in;
  Out out;
  lrn_params p;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, c, h, w;
    out.storage_coords(i, n, c, h, w);
    const int lo = c - p.size / 2 > 0 ? c - p.size / 2 : 0;
    const int hi = c + p.size / 2 < p.c - 1 ? c + p.size / 2 : p.c - 1;
    float sum = 0.0f;
    for (int cc = lo; cc <= hi; ++cc) {
      const float v = in(n, cc, h, w);
      sum += v * v;
    }
    out(n, c, h, w) = in(n, c, h, w) * compat::pow(p.k + p.alpha / float(p.size) * sum, -p.beta);
  }
};

// One thread per pixel (n, h, w), walking the channels with a running sum of squares: each
// input is read twice (entering and leaving the window) instead of `size` times.
template <class In, class Out>
struct lrn_sliding_functor {
  In in;
  Out out;
  lrn_params p;
  dims4 pixels;  // (n, 1, h, w)
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, z, h, w;
    Out::layout_tag::storage_coords(i, pixels, n, z, h, w);
    const int half = p.size / 2;
    const float scale = p.alpha / float(p.size);
    float sum = 0.0f;
    for (int cc = 0; cc < half && cc < p.c; ++cc) {
      const float v = in(n, cc, h, w);
      sum += v * v;
    }
    for (int c = 0; c < p.c; ++c) {
      if (c + half < p.c) {
        const float v = in(n, c + half, h, w);
        sum += v * v;
      }
      if (c - half - 1 >= 0) {
        const float v = in(n, c - half - 1, h, w);
        sum -= v * v;
      }
      out(n, c, h, w) = in(n, c, h, w) * compat::pow(p.k + scale * sum, -p.beta);
    }
  }
};
}  // namespace detail

namespace variant {
struct lrn_naive {};
struct lrn_sliding {};
}  // namespace variant

template <class Exec, class In, class Out>
void lrn(const Exec& exec, const In& in, const Out& out, const lrn_params& p, variant::lrn_naive) {
  Kokkos::parallel_for("kcnn::lrn_naive", Kokkos::RangePolicy<Exec>(exec, 0, out.size()),
                       detail::lrn_naive_functor<In, Out>{in, out, p});
}

template <class Exec, class In, class Out>
void lrn(const Exec& exec, const In& in, const Out& out, const lrn_params& p, variant::lrn_sliding) {
  const dims4 pixels{p.n, 1, p.h, p.w};
  Kokkos::parallel_for("kcnn::lrn_sliding", Kokkos::RangePolicy<Exec>(exec, 0, pixels.size()),
                       detail::lrn_sliding_functor<In, Out>{in, out, p, pixels});
}

}  // namespace kcnn
