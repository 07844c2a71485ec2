#pragma once
// Local response normalisation across channels (Caffe ACROSS_CHANNELS, AlexNet: size 5,
// alpha 1e-4, beta 0.75, k 1):
//   out(n,c,h,w) = in(n,c,h,w) / (k + alpha/size * sum_{c' = c-size/2 .. c+size/2} in(n,c',h,w)^2)^beta
// with the channel window clipped to [0, C). The window is centred: size must be odd (an even
// size is refused by check(); Caffe refuses it too). alpha >= 0, k > 0 (so the base of the power
// is positive), beta finite.
//
// Entry point: kcnn::lrn(exec, in, out, params, variant = variant::lrn_naive{}).
#include <kcnn/api.hpp>
#include <kcnn/compat.hpp>
#include <kcnn/layout.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <string>

namespace kcnn {

struct lrn_params {
  int n = 0, c = 0, h = 0, w = 0;
  int size = 5;
  float alpha = 1e-4f, beta = 0.75f, k = 1.0f;
  dims4 dims() const { return {n, c, h, w}; }

  // Named constructor: across-channel LRN of a tensor of dims d (defaults: AlexNet's).
  static lrn_params make(const dims4& d, int size = 5, float alpha = 1e-4f, float beta = 0.75f, float k = 1.0f) {
    lrn_params p;
    p.n = d.n; p.c = d.c; p.h = d.h; p.w = d.w;
    p.size = size; p.alpha = alpha; p.beta = beta; p.k = k;
    return p;
  }
  // Empty when valid, otherwise the first problem found, naming the field.
  std::string check() const {
    const struct { const char* name; int v; } positive[] = {{"n", n}, {"c", c}, {"h", h}, {"w", w}, {"size", size}};
    for (const auto& f : positive)
      if (f.v <= 0) return std::string(f.name) + ": must be > 0, got " + std::to_string(f.v);
    if (size % 2 == 0) return "size: must be odd (a centred window), got " + std::to_string(size);
    if (!std::isfinite(alpha) || alpha < 0) return "alpha: must be finite and >= 0, got " + std::to_string(alpha);
    if (!std::isfinite(beta)) return "beta: must be finite";
    if (!std::isfinite(k) || !(k > 0)) return "k: must be finite and > 0, got " + std::to_string(k);
    return {};
  }
  bool operator==(const lrn_params& o) const {
    return n == o.n && c == o.c && h == o.h && w == o.w && size == o.size && alpha == o.alpha && beta == o.beta && k == o.k;
  }
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
// One thread per output, summing its window. Every layout. The default.
struct lrn_naive {
  using op = ops::lrn;
  template <class Exec, class In, class Out>
  void run(const Exec& exec, const In& in, const Out& out, const lrn_params& p) const {
    Kokkos::parallel_for("kcnn::lrn_naive", Kokkos::RangePolicy<Exec>(exec, 0, out.size()),
                         detail::lrn_naive_functor<In, Out>{in, out, p});
  }
};
// One thread per pixel with a running sum over the channels. Compile-time output layouts.
struct lrn_sliding {
  using op = ops::lrn;
  template <class Exec, class In, class Out>
  void run(const Exec& exec, const In& in, const Out& out, const lrn_params& p) const {
    static_assert(!Out::layout_tag::runtime_strided,
                  "kcnn::lrn: lrn_sliding needs a compile-time output layout (use lrn_naive for strided)");
    const dims4 pixels{p.n, 1, p.h, p.w};
    Kokkos::parallel_for("kcnn::lrn_sliding", Kokkos::RangePolicy<Exec>(exec, 0, pixels.size()),
                         detail::lrn_sliding_functor<In, Out>{in, out, p, pixels});
  }
};
}  // namespace variant

// out = lrn(in) across channels. in and out: p.dims(), any layouts. Throws
// std::invalid_argument on invalid params (even size included) or operand dims.
template <class Exec, class In, class Out, class V = variant::lrn_naive>
void lrn(const Exec& exec, const In& in, const Out& out, const lrn_params& p, const V& v = V{}) {
  static_assert(detail::is_variant_of<V, ops::lrn>, "kcnn::lrn: not an lrn variant (kcnn::variant::lrn_*)");
  const detail::checker<Exec> check{"lrn"};
  check.params(p.check());
  check.tensor("in", in, p.dims());
  check.tensor("out", out, p.dims());
  v.run(exec, in, out, p);
}

}  // namespace kcnn
