#pragma once
// Batch normalisation, inference form, per channel c:
//   out = (in - mean[c]) / sqrt(var[c] + eps) * gamma[c] + beta[c], optionally followed by relu.
// `naive` normalises in one kernel and applies the relu in a second pass (two launches, as a
// framework running the layers one by one does); `fused` does both in one pass; `folded` folds
// the four vectors into a per-channel scale and shift on the host and carries them by value in
// the functor (constant memory on CUDA), relu fused.
//
// Entry point, every variant: kcnn::batchnorm(exec, in, mean, var, gamma, beta, out, params,
// variant = variant::batchnorm_naive{}). batchnorm_vector (the folded scale and shift in a 2c
// workspace) and batchnorm_folded_constant (the folded scale and shift by value) are stateful:
// kcnn::prepare folds the vectors, so a run sees them as they were at the last prepare.
#include <kcnn/api.hpp>
#include <kcnn/compat.hpp>
#include <kcnn/constant.hpp>
#include <kcnn/lanes.hpp>
#include <kcnn/layout.hpp>
#include <kcnn/tuning.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace kcnn {

struct batchnorm_params {
  int n = 0, c = 0, h = 0, w = 0;
  float eps = 1e-5f;
  bool relu = false;  // the layer is followed by a relu
  dims4 dims() const { return {n, c, h, w}; }

  // Named constructor: inference batch norm of a tensor of dims d.
  static batchnorm_params make(const dims4& d, float eps = 1e-5f, bool relu = false) {
    batchnorm_params p;
    p.n = d.n; p.c = d.c; p.h = d.h; p.w = d.w;
    p.eps = eps;
    p.relu = relu;
    return p;
  }
  // Empty when valid, otherwise the first problem found, naming the field.
  std::string check() const {
    const struct { const char* name; int v; } positive[] = {{"n", n}, {"c", c}, {"h", h}, {"w", w}};
    for (const auto& f : positive)
      if (f.v <= 0) return std::string(f.name) + ": must be > 0, got " + std::to_string(f.v);
    if (!std::isfinite(eps) || !(eps > 0)) return "eps: must be finite and > 0, got " + std::to_string(eps);
    return {};
  }
  bool operator==(const batchnorm_params& o) const {
    return n == o.n && c == o.c && h == o.h && w == o.w && eps == o.eps && relu == o.relu;
  }
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

namespace detail {
template <class Vec, class Ws>
struct batchnorm_fold_functor {
  Vec mean, var, gamma, beta;
  Ws ws;  // scale in [0, c), shift in [c, 2c)
  float eps;
  int c;
  KOKKOS_INLINE_FUNCTION void operator()(const int k) const {
    const float s = gamma(k) / compat::sqrt(var(k) + eps);
    ws(k) = s;
    ws(c + k) = beta(k) - mean(k) * s;
  }
};
// One element of the vector form: the channel's folded scale and shift from the workspace, through
// the read-only data path on a GPU (detail::read_only_load: the mdspan View ignores RandomAccess);
// a load coalesced along nhwc's channel run, a broadcast along nchw's and chwn's runs.
template <class In, class Ws, class Out>
struct batchnorm_vector_element {
  In in;
  Ws ws;  // scale in [0, c), shift in [c, 2c)
  Out out;
  int c;
  bool relu;
  static constexpr axis run = run_axis<typename Out::layout_tag>;
  static_assert(std::is_same_v<typename In::layout_tag, typename Out::layout_tag>,
                "kcnn::batchnorm: batchnorm_vector needs in and out in one layout");
  KOKKOS_FORCEINLINE_FUNCTION float load(const coords4& x, int l) const {
    const int k = run == axis::c ? x.c + l : x.c;
    const float* s = ws.data();
    const float y = float(lane_ptr<run>(in, x)[l]) * read_only_load(s + k) + read_only_load(s + c + k);
    return relu ? (y > 0.0f ? y : 0.0f) : y;
  }
  KOKKOS_FORCEINLINE_FUNCTION void store(const coords4& x, int l, float v) const { lane_ptr<run>(out, x)[l] = v; }
};
}  // namespace detail

namespace detail {
template <class T, class Exec, class In, class Ws, class Out>
void batchnorm_vector_launch(const Exec& exec, const In& in, const Ws& ws, const Out& out, const batchnorm_params& p) {
  using L = typename Out::layout_tag;
  static_assert(!L::runtime_strided, "kcnn::batchnorm: batchnorm_vector needs a compile-time output layout");
  for_each_element_by_rows<L, T>("kcnn::batchnorm_vector", exec, p.dims(),
                                 batchnorm_vector_element<In, Ws, Out>{in, ws, out, p.c, p.relu});
}
template <class Exec, class In, class Out, int Capacity>
void batchnorm_folded_launch(const Exec& exec, const In& in, const batchnorm_folded<Capacity>& f, const Out& out,
                             const batchnorm_params& p) {
  parallel_for_constant("kcnn::batchnorm_folded", exec, out.size(),
                        detail::batchnorm_folded_functor<Capacity, In, Out>{in, out, f, p.relu});
}
template <class Exec, class In, class Vec, class Out>
void batchnorm_check(const char* op, const In& in, const Vec& mean, const Vec& var, const Vec& gamma,
                     const Vec& beta, const Out& out, const batchnorm_params& p) {
  const checker<Exec> check{op};
  check.params(p.check());
  check.tensor("in", in, p.dims());
  check.vector("mean", mean, std::size_t(p.c));
  check.vector("var", var, std::size_t(p.c));
  check.vector("gamma", gamma, std::size_t(p.c));
  check.vector("beta", beta, std::size_t(p.c));
  check.tensor("out", out, p.dims());
}
}  // namespace detail

namespace variant {
// Normalise in one kernel, then the relu (when p.relu) in a second pass. Every layout. The default.
struct batchnorm_naive {
  using op = ops::batchnorm;
  template <class Exec, class In, class Vec, class Out>
  void run(const Exec& exec, const In& in, const Vec& mean, const Vec& var, const Vec& gamma, const Vec& beta,
           const Out& out, const batchnorm_params& p) const {
    launch_range("kcnn::batchnorm", exec, out.size(),
                         detail::batchnorm_functor<In, Vec, Out>{in, mean, var, gamma, beta, out, p, false});
    if (p.relu)
      launch_range("kcnn::batchnorm_relu", exec, out.size(),
                           detail::relu_inplace_functor<Out>{out});
  }
};
// Normalisation and relu in one pass. Every layout.
struct batchnorm_fused {
  using op = ops::batchnorm;
  template <class Exec, class In, class Vec, class Out>
  void run(const Exec& exec, const In& in, const Vec& mean, const Vec& var, const Vec& gamma, const Vec& beta,
           const Out& out, const batchnorm_params& p) const {
    launch_range("kcnn::batchnorm_fused", exec, out.size(),
                         detail::batchnorm_functor<In, Vec, Out>{in, mean, var, gamma, beta, out, p, p.relu});
  }
};
// Per-channel scale and shift folded on the device into a 2c workspace by kcnn::prepare (a
// C-element kernel, once: later changes to the vectors are seen at the next prepare), then each
// run one pass in the output's storage order with the portable row mapping
// (kcnn/lanes.hpp): lanes along the layout's contiguous axis (nchw: w, nhwc: c, chwn: n), so
// adjacent GPU threads touch adjacent addresses and a host vectorises; the coordinates of a row
// are computed once per row. Compile-time output layouts. Stateful: kcnn::prepare allocates the
// workspace (8 c bytes) in the execution space's memory space and folds the vectors into it.
struct batchnorm_vector : detail::stateful_variant<batchnorm_params> {
  using op = ops::batchnorm;
  // Host tuning: kcnn/host/rows.hpp's walk with lane blocks (the same workspace).
  static constexpr bool host_tunable = true;

  template <class Exec, class In, class Vec, class Out>
  void prepare(const Exec& exec, const batchnorm_params& p, const In& in, const Vec& mean, const Vec& var,
               const Vec& gamma, const Vec& beta, const Out& out) {
    detail::batchnorm_check<Exec>("batchnorm", in, mean, var, gamma, beta, out, p);
    using ws_t = Kokkos::View<float*, typename Exec::memory_space>;
    auto ws = std::make_shared<ws_t>("kcnn::batchnorm_vector.scale_shift", 2 * std::size_t(p.c));
    launch_range("kcnn::batchnorm_fold", exec, p.c,
                 detail::batchnorm_fold_functor<Vec, ws_t>{mean, var, gamma, beta, *ws, p.eps, p.c});
    exec.fence();
    state_.set(typeid(Exec), p, ws, 8.0 * p.c);
  }
  template <class Exec, class In, class Vec, class Out>
  void run(const Exec& exec, const In& in, const Vec& mean, const Vec& var, const Vec& gamma, const Vec& beta,
           const Out& out, const batchnorm_params& p) const {
    run_tuned<tunings::automatic>(exec, in, mean, var, gamma, beta, out, p);
  }
  template <class T, class Exec, class In, class Vec, class Out>
  void run_tuned(const Exec& exec, const In& in, const Vec& mean, const Vec& var, const Vec& gamma, const Vec& beta,
                 const Out& out, const batchnorm_params& p) const {
    using ws_t = Kokkos::View<float*, typename Exec::memory_space>;
    (void)mean, (void)var, (void)gamma, (void)beta;  // folded by prepare
    const ws_t& ws = state_.get<ws_t, Exec>("batchnorm", "batchnorm_vector", p);
    detail::batchnorm_vector_launch<T>(exec, in, ws, out, p);
  }
};
// The four vectors folded on the host, once, into a per-channel scale and shift carried by value
// in the functor (constant memory on CUDA), relu fused. Every layout. Stateful: kcnn::prepare
// reads the vectors (later changes to them are not seen until the next prepare); refuses more
// than batchnorm_constant_capacity (3840) channels.
struct batchnorm_folded_constant : detail::stateful_variant<batchnorm_params> {
  using op = ops::batchnorm;
  using folded = batchnorm_folded<batchnorm_constant_capacity>;

  template <class Exec, class In, class Vec, class Out>
  void prepare(const Exec& exec, const batchnorm_params& p, const In& in, const Vec& mean, const Vec& var,
               const Vec& gamma, const Vec& beta, const Out& out) {
    (void)exec;
    detail::batchnorm_check<Exec>("batchnorm", in, mean, var, gamma, beta, out, p);
    if (!folded::fits(p))
      detail::fail("batchnorm", "batchnorm_folded_constant: c = " + std::to_string(p.c) +
                                    " channels exceed the constant capacity of " + std::to_string(folded::capacity));
    const auto h = [](const Vec& v) { return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v); };
    auto f = std::make_shared<folded>(folded::from_host(p, h(mean), h(var), h(gamma), h(beta)));
    state_.set(typeid(void), p, f, 8.0 * p.c);
  }
  template <class Exec, class In, class Vec, class Out>
  void run(const Exec& exec, const In& in, const Vec&, const Vec&, const Vec&, const Vec&, const Out& out,
           const batchnorm_params& p) const {
    const folded& f = state_.get<folded, Exec>("batchnorm", "batchnorm_folded_constant", p);
    detail::batchnorm_folded_launch(exec, in, f, out, p);
  }
};
}  // namespace variant

// out = batchnorm(in; mean, var, gamma, beta), then relu when p.relu. in and out: p.dims(); the
// four vectors: length p.c. Throws std::invalid_argument on invalid params or operand dims, and
// std::logic_error when a stateful variant was not prepared.
template <class Exec, class In, class Vec, class Out, class V = variant::batchnorm_naive>
void batchnorm(const Exec& exec, const In& in, const Vec& mean, const Vec& var, const Vec& gamma, const Vec& beta,
               const Out& out, const batchnorm_params& p, const V& v = V{}) {
  static_assert(detail::is_variant_of<V, ops::batchnorm>,
                "kcnn::batchnorm: not a batchnorm variant (kcnn::variant::batchnorm_*)");
  detail::batchnorm_check<Exec>("batchnorm", in, mean, var, gamma, beta, out, p);
  v.run(exec, in, mean, var, gamma, beta, out, p);
}



}  // namespace kcnn
