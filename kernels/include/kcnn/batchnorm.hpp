#pragma once
// Batch normalisation, inference form, per channel c:
//   out = (in - mean[c]) / sqrt(var[c] + eps) * gamma[c] + beta[c], optionally followed by relu.
// `naive` normalises in one kernel and applies the relu in a second pass (two launches, as a
// framework running the layers one by one does); `fused` does both in one pass.
#include <kcnn/compat.hpp>
#include <kcnn/layout.hpp>

#include <Kokkos_Core.hpp>

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

}  // namespace kcnn
