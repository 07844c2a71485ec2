#pragma once
// Elementwise activations: relu, leaky_relu (slope), sigmoid, tanh, elu (alpha). One thread
// per element in storage order (the layout does not change the arithmetic, only which logical
// element a thread touches). In place when in and out are the same tensor.
#include <kcnn/compat.hpp>
#include <kcnn/layout.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <string>

namespace kcnn {

enum class activation_kind { relu, leaky_relu, sigmoid, tanh, elu, relu6 };

inline const char* activation_name(activation_kind k) {
  switch (k) {
    case activation_kind::relu: return "relu";
    case activation_kind::leaky_relu: return "leaky_relu";
    case activation_kind::sigmoid: return "sigmoid";
    case activation_kind::tanh: return "tanh";
    case activation_kind::elu: return "elu";
    case activation_kind::relu6: return "relu6";
  }
  return "?";
}

struct activation_params {
  activation_kind kind = activation_kind::relu;
  float alpha = 0.0f;  // leaky_relu: negative slope (default 0.01); elu: alpha (default 1)

  template <class T>
  KOKKOS_INLINE_FUNCTION T apply(T x) const {
    switch (kind) {
      case activation_kind::relu: return x > T(0) ? x : T(0);
      case activation_kind::leaky_relu: return x > T(0) ? x : T(alpha) * x;
      case activation_kind::sigmoid: return T(1) / (T(1) + compat::exp(-x));
      case activation_kind::tanh: return compat::tanh(x);
      case activation_kind::elu: return x > T(0) ? x : T(alpha) * (compat::exp(x) - T(1));
      case activation_kind::relu6: return x > T(0) ? (x < T(6) ? x : T(6)) : T(0);
    }
    return x;
  }
  // FLOPs per element, counting exp and tanh as one each.
  double flops_per_element() const {
    switch (kind) {
      case activation_kind::relu: return 1;
      case activation_kind::leaky_relu: return 2;
      case activation_kind::sigmoid: return 4;
      case activation_kind::tanh: return 1;
      case activation_kind::elu: return 4;
      case activation_kind::relu6: return 2;
    }
    return 1;
  }
};

namespace detail {
template <class In, class Out>
struct activation_functor {
  In in;
  Out out;
  activation_params a;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, c, h, w;
    out.storage_coords(i, n, c, h, w);
    out(n, c, h, w) = a.apply(float(in(n, c, h, w)));
  }
};
}  // namespace detail

// out = f(in); pass the same tensor twice for the in-place form.
template <class Exec, class In, class Out>
void activation(const Exec& exec, const In& in, const Out& out, const activation_params& a) {
  Kokkos::parallel_for("kcnn::activation", Kokkos::RangePolicy<Exec>(exec, 0, out.size()),
                       detail::activation_functor<In, Out>{in, out, a});
}

namespace detail {
// The flat form: element i of the storage, no coordinates, the function fixed at compile time.
template <activation_kind Kind>
struct activation_flat_functor {
  const float* in;
  float* out;
  float alpha;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    activation_params a;
    a.kind = Kind;
    a.alpha = alpha;
    out[i] = a.apply(in[i]);
  }
};
}  // namespace detail

// out = f(in) over the storage directly, for in and out of the same fixed layout (an elementwise
// function does not need coordinates). The one-thread-per-element coordinate mapping costs four
// integer divisions per element, which a GPU hides and a CPU core does not; the flat loop has no
// index arithmetic and vectorises.
template <activation_kind Kind, class Exec, class In, class Out>
void activation_flat(const Exec& exec, const In& in, const Out& out, const activation_params& a) {
  static_assert(std::is_same_v<typename In::layout_tag, typename Out::layout_tag> && !In::layout_tag::runtime_strided,
                "the flat form walks one fixed layout");
  Kokkos::parallel_for("kcnn::activation_flat", Kokkos::RangePolicy<Exec>(exec, 0, out.size()),
                       detail::activation_flat_functor<Kind>{in.view().data(), out.view().data(), a.alpha});
}

}  // namespace kcnn
