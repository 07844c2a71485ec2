#pragma once
// Elementwise activations: relu, leaky_relu (slope), sigmoid, tanh, elu (alpha), relu6, swish
// (x sigmoid(x), EfficientNet's; also called SiLU). One thread
// per element in storage order (the layout does not change the arithmetic, only which logical
// element a thread touches). In place when in and out are the same tensor.
//
// Entry point: kcnn::activation(exec, in, out, params, variant = variant::activation_naive{}).
// The kind and its alpha are given once, in the params (activation_params::elu() etc.); an alpha
// left unset (NaN) means the kind's default: 0.01 for leaky_relu, 1 for elu.
#include <kcnn/api.hpp>
#include <kcnn/compat.hpp>
#include <kcnn/lanes.hpp>
#include <kcnn/layout.hpp>
#include <kcnn/tuning.hpp>
#include <kcnn/vmath.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <limits>
#include <string>

namespace kcnn {

enum class activation_kind { relu, leaky_relu, sigmoid, tanh, elu, relu6, swish };

inline const char* activation_name(activation_kind k) {
  switch (k) {
    case activation_kind::relu: return "relu";
    case activation_kind::leaky_relu: return "leaky_relu";
    case activation_kind::sigmoid: return "sigmoid";
    case activation_kind::tanh: return "tanh";
    case activation_kind::elu: return "elu";
    case activation_kind::relu6: return "relu6";
    case activation_kind::swish: return "swish";
  }
  return "?";
}

struct activation_params {
  activation_kind kind = activation_kind::relu;
  // leaky_relu: the negative slope; elu: alpha; ignored by the other kinds. NaN (the default)
  // means the kind's default, applied by the library: 0.01 for leaky_relu, 1 for elu.
  float alpha = std::numeric_limits<float>::quiet_NaN();

  // The default alpha of a kind (0 for the kinds that take none).
  KOKKOS_INLINE_FUNCTION static constexpr float default_alpha(activation_kind k) {
    return k == activation_kind::leaky_relu ? 0.01f : k == activation_kind::elu ? 1.0f : 0.0f;
  }
  // alpha, or the kind's default when alpha is unset (NaN).
  KOKKOS_INLINE_FUNCTION float effective_alpha() const { return alpha == alpha ? alpha : default_alpha(kind); }
  // The same params with the default applied (what the kernels receive).
  activation_params resolved() const {
    activation_params r = *this;
    r.alpha = effective_alpha();
    return r;
  }

  // Named constructors.
  static activation_params relu() { return make(activation_kind::relu); }
  static activation_params leaky_relu(float slope = 0.01f) { return make(activation_kind::leaky_relu, slope); }
  static activation_params sigmoid() { return make(activation_kind::sigmoid); }
  static activation_params tanh() { return make(activation_kind::tanh); }
  static activation_params elu(float alpha = 1.0f) { return make(activation_kind::elu, alpha); }
  static activation_params relu6() { return make(activation_kind::relu6); }
  static activation_params swish() { return make(activation_kind::swish); }
  static activation_params make(activation_kind k, float alpha = std::numeric_limits<float>::quiet_NaN()) {
    activation_params a;
    a.kind = k;
    a.alpha = alpha;
    return a;
  }

  // Empty when valid, otherwise the problem, naming the field.
  std::string check() const {
    switch (kind) {
      case activation_kind::relu: case activation_kind::leaky_relu: case activation_kind::sigmoid:
      case activation_kind::tanh: case activation_kind::elu: case activation_kind::relu6:
      case activation_kind::swish: break;
      default: return "kind: unknown activation kind " + std::to_string(int(kind));
    }
    if (alpha == alpha && !std::isfinite(alpha)) return "alpha: must be finite (or NaN for the kind's default)";
    return {};
  }
  bool operator==(const activation_params& o) const {
    return kind == o.kind && (effective_alpha() == o.effective_alpha());
  }

  template <class T>
  KOKKOS_INLINE_FUNCTION T apply(T x) const {
    switch (kind) {
      case activation_kind::relu: return x > T(0) ? x : T(0);
      case activation_kind::leaky_relu: return x > T(0) ? x : T(effective_alpha()) * x;
      case activation_kind::sigmoid: return T(1) / (T(1) + compat::exp(-x));
      case activation_kind::tanh: return compat::tanh(x);
      case activation_kind::elu: return x > T(0) ? x : T(effective_alpha()) * (compat::exp(x) - T(1));
      case activation_kind::relu6: return x > T(0) ? (x < T(6) ? x : T(6)) : T(0);
      case activation_kind::swish: return x / (T(1) + compat::exp(-x));
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
      case activation_kind::swish: return 4;
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

namespace detail {
// The flat form: the storage as one run, no coordinates, the function fixed at compile time,
// the transcendentals from kcnn/vmath.hpp (fast intrinsics on a GPU). Items as kcnn/lanes.hpp's
// flat_items_of says; the host tuning's chunks are kcnn/host/activation.hpp's.
template <activation_kind Kind>
KOKKOS_FORCEINLINE_FUNCTION float activation_flat_apply(const float v, const float alpha) {
  if constexpr (Kind == activation_kind::relu) return v > 0.0f ? v : 0.0f;
  else if constexpr (Kind == activation_kind::leaky_relu) return v > 0.0f ? v : alpha * v;
  else if constexpr (Kind == activation_kind::sigmoid) return vmath::sigmoid(v);
  else if constexpr (Kind == activation_kind::tanh) return vmath::tanh(v);
  else if constexpr (Kind == activation_kind::elu) return v > 0.0f ? v : alpha * (vmath::exp(v) - 1.0f);
  else if constexpr (Kind == activation_kind::swish) return v * vmath::sigmoid(v);
  else return v > 0.0f ? (v < 6.0f ? v : 6.0f) : 0.0f;
}

template <activation_kind Kind, std::size_t Interleave>
struct activation_flat_functor {
  const float* in;  // may equal out (in place): no restrict
  float* out;
  std::size_t n;
  std::size_t q;        // the distance between an item's elements (Interleave > 1)
  activation_params a;  // resolved: alpha is never NaN here
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t item) const {
    const float alpha = a.alpha;
    float v[Interleave];
    for (std::size_t k = 0; k < Interleave; ++k) {
      const std::size_t e = item + k * q;
      v[k] = e < n ? in[e] : 0.0f;
    }
    for (std::size_t k = 0; k < Interleave; ++k) {
      const std::size_t e = item + k * q;
      if (e < n) out[e] = activation_flat_apply<Kind>(v[k], alpha);
    }
  }
};
template <activation_kind Kind, class Exec>
void activation_flat_launch(const Exec& exec, const float* in, float* out, std::size_t n, const activation_params& a) {
  const flat_items f = flat_items_of(exec, n);
  if (f.interleaved)
    launch_range("kcnn::activation_flat", exec, f.items, activation_flat_functor<Kind, flat_interleave>{in, out, n, f.q, a});
  else
    launch_range("kcnn::activation_flat", exec, f.items, activation_flat_functor<Kind, 1>{in, out, n, f.q, a});
}
}  // namespace detail

namespace variant {
// One thread per element along the output's storage order, coordinates computed per element.
// Every layout, in and out in different layouts included. The default.
struct activation_naive {
  using op = ops::activation;
  template <class Exec, class In, class Out>
  void run(const Exec& exec, const In& in, const Out& out, const activation_params& a) const {
    launch_range("kcnn::activation", exec, out.size(),
                         detail::activation_functor<In, Out>{in, out, a.resolved()});
  }
};
// Over the storage directly, for in and out of the same compile-time layout (an elementwise
// function does not need coordinates): thread i takes storage element i, or, past what the device
// holds at once, elements i, i + q, i + 2q, i + 3q (q = ceil(n / 4)): adjacent threads on
// adjacent addresses in each load (coalesced in every layout), four in flight per thread. No
// index arithmetic; the kind is dispatched once per call to a kernel specialised for it, and exp,
// tanh and sigmoid come from kcnn/vmath.hpp. Host tuning (kcnn/host/activation.hpp): chunks of
// consecutive elements, an output of at least host_stores.streaming_store_bytes stored
// non-temporally.
struct activation_flat {
  using op = ops::activation;
  static constexpr bool host_tunable = true;
  host_store_options host_stores{};
  template <class Exec, class In, class Out>
  void run(const Exec& exec, const In& in, const Out& out, const activation_params& a) const {
    run_tuned<tunings::automatic>(exec, in, out, a);
  }
  template <class T, class Exec, class In, class Out>
  void run_tuned(const Exec& exec, const In& in, const Out& out, const activation_params& a) const {
    static_assert(std::is_same_v<typename In::layout_tag, typename Out::layout_tag> && !In::layout_tag::runtime_strided,
                  "kcnn::activation: activation_flat needs in and out in the same compile-time layout");
    switch (a.kind) {
      case activation_kind::relu: launch<activation_kind::relu, T>(exec, in, out, a); break;
      case activation_kind::leaky_relu: launch<activation_kind::leaky_relu, T>(exec, in, out, a); break;
      case activation_kind::sigmoid: launch<activation_kind::sigmoid, T>(exec, in, out, a); break;
      case activation_kind::tanh: launch<activation_kind::tanh, T>(exec, in, out, a); break;
      case activation_kind::elu: launch<activation_kind::elu, T>(exec, in, out, a); break;
      case activation_kind::relu6: launch<activation_kind::relu6, T>(exec, in, out, a); break;
      case activation_kind::swish: launch<activation_kind::swish, T>(exec, in, out, a); break;
    }
  }

 private:
  template <activation_kind Kind, class T, class Exec, class In, class Out>
  void launch(const Exec& exec, const In& in, const Out& out, const activation_params& a) const {
    const float* x = in.view().data();
    float* y = out.view().data();
    if constexpr (takes_host_tuning<T, Exec>)
      host_tuning::tuned<activation_flat, Exec>::template run<Kind>(exec, x, y, out.size(), a.resolved(), host_stores);
    else
      detail::activation_flat_launch<Kind>(exec, x, y, out.size(), a.resolved());
  }
};
}  // namespace variant

// out = f(in), f = a.kind with a.alpha (or the kind's default). in and out: equal dims, any
// layouts; pass the same tensor twice for the in-place form. Throws std::invalid_argument on
// invalid params or operand dims.
template <class Exec, class In, class Out, class V = variant::activation_naive>
void activation(const Exec& exec, const In& in, const Out& out, const activation_params& a, const V& v = V{}) {
  static_assert(detail::is_variant_of<V, ops::activation>,
                "kcnn::activation: not an activation variant (kcnn::variant::activation_*)");
  const detail::checker<Exec> check{"activation"};
  check.params(a.check());
  check.tensor("in", in, out.dims());
  check.tensor("out", out, in.dims());
  v.run(exec, in, out, a);
}


}  // namespace kcnn

#if KCNN_HOST_TUNING
#include <kcnn/host/activation.hpp>
#endif
