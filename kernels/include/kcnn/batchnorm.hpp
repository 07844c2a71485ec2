#pragma once
// Batch normalisation, inference form, per channel c:
//   out = (in - mean[c]) / sqrt(var[c] + eps) * gamma[c] + beta[c], optionally followed by relu.
// `naive` normalises in one kernel and applies the relu in a second pass (two launches, as a
// framework running the layers one by one does); `fused` does both in one pass; `folded` folds
// the four vectors into a per-channel scale and shift on the host and carries them by value in
// the functor (constant memory on CUDA), relu fused.
#include <kcnn/compat.hpp>
#include <kcnn/constant.hpp>
#include <kcnn/layout.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <stdexcept>

namespace kcnn {

struct batchnorm_params {
  int n = 0, c = 0, h = 0, w = 0;
  float eps = 1e-5f;
  bool relu = false;  // the layer is followed by a relu
  dims4 dims() const { return {n, c, h, w}; }
  double min_bytes() const { return 4.0 * (2.0 * double(dims().size()) + 4.0 * c); }
  double flops() const { return double(dims().size()) * (relu ? 5.0 : 4.0); }
};

namespace detail {
template <class In, class Vec, class Out>
struct batchnorm_functor {
  In in;
  Vec mean, var, gamma, beta;
  Out out;
  batchnorm_params p;
  bool relu;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, c, h, w;
    out.storage_coords(i, n, c, h, w);
    float y = (float(in(n, c, h, w)) - mean(c)) / compat::sqrt(var(c) + p.eps) * gamma(c) + beta(c);
    if (relu) y = y > 0.0f ? y : 0.0f;
    out(n, c, h, w) = y;
  }
};
template <class Out>
struct relu_inplace_functor {
  Out out;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, c, h, w;
    out.storage_coords(i, n, c, h, w);
    const float v = out(n, c, h, w);
    out(n, c, h, w) = v > 0.0f ? v : 0.0f;
  }
};
}  // namespace detail

// Per-channel scale = gamma / sqrt(var + eps) and shift = beta - mean * scale, by value.
// 3840 channels (30 KiB) keeps the functor under CUDA's 32 KiB constant-memory launch limit and
// covers every network kcnn ships (ResNet-50's widest batch norm has 2048 channels).
template <int Capacity>
struct batchnorm_folded {
  static constexpr int capacity = Capacity;
  Kokkos::Array<float, 2 * Capacity> v;  // scale[0..c), shift[0..c)

  static bool fits(const batchnorm_params& p) { return p.c <= Capacity; }
  template <class HostVec>
  static batchnorm_folded from_host(const batchnorm_params& p, const HostVec& mean, const HostVec& var,
                                    const HostVec& gamma, const HostVec& beta) {
    if (!fits(p)) throw std::invalid_argument("batchnorm_folded: channels exceed capacity");
    batchnorm_folded f{};
    for (int c = 0; c < p.c; ++c) {
      const double scale = double(gamma(c)) / std::sqrt(double(var(c)) + double(p.eps));
      f.v[c] = float(scale);
      f.v[Capacity + c] = float(double(beta(c)) - double(mean(c)) * scale);
    }
    return f;
  }
  KOKKOS_FORCEINLINE_FUNCTION float scale(int c) const { return v[c]; }
  KOKKOS_FORCEINLINE_FUNCTION float shift(int c) const { return v[Capacity + c]; }
};
inline constexpr int batchnorm_constant_capacity = 3840;

namespace detail {
template <int Capacity, class In, class Out>
struct batchnorm_folded_functor {
  In in;
  Out out;
  batchnorm_folded<Capacity> f;
  bool relu;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, c, h, w;
    out.storage_coords(i, n, c, h, w);
    float y = float(in(n, c, h, w)) * f.scale(c) + f.shift(c);
    if (relu) y = y > 0.0f ? y : 0.0f;
    out(n, c, h, w) = y;
  }
};
}  // namespace detail

namespace variant {
struct batchnorm_naive {};
struct batchnorm_fused {};
}  // namespace variant

template <class Exec, class In, class Vec, class Out>
void batchnorm(const Exec& exec, const In& in, const Vec& mean, const Vec& var, const Vec& gamma,
               const Vec& beta, const Out& out, const batchnorm_params& p, variant::batchnorm_naive) {
  Kokkos::parallel_for("kcnn::batchnorm", Kokkos::RangePolicy<Exec>(exec, 0, out.size()),
                       detail::batchnorm_functor<In, Vec, Out>{in, mean, var, gamma, beta, out, p, false});
  if (p.relu)
    Kokkos::parallel_for("kcnn::batchnorm_relu", Kokkos::RangePolicy<Exec>(exec, 0, out.size()),
                         detail::relu_inplace_functor<Out>{out});
}

template <class Exec, class In, class Vec, class Out>
void batchnorm(const Exec& exec, const In& in, const Vec& mean, const Vec& var, const Vec& gamma,
               const Vec& beta, const Out& out, const batchnorm_params& p, variant::batchnorm_fused) {
  Kokkos::parallel_for("kcnn::batchnorm_fused", Kokkos::RangePolicy<Exec>(exec, 0, out.size()),
                       detail::batchnorm_functor<In, Vec, Out>{in, mean, var, gamma, beta, out, p, p.relu});
}


// One pass with the folded scale and shift carried by value (constant memory on CUDA): in nchw
// and chwn the lanes of a warp mostly share a channel (a broadcast), in nhwc they do not.
template <class Exec, class In, class Out, int Capacity>
void batchnorm(const Exec& exec, const In& in, const batchnorm_folded<Capacity>& f, const Out& out,
               const batchnorm_params& p) {
  parallel_for_constant("kcnn::batchnorm_folded", exec, out.size(),
                        detail::batchnorm_folded_functor<Capacity, In, Out>{in, out, f, p.relu});
}
}  // namespace kcnn
