#pragma once
// What every kcnn entry point shares (docs/library.md describes it for users):
//
//  * the call shape  kcnn::<op>(exec, inputs..., out, params, variant)  with a documented
//    default variant; a variant is an object whose run(exec, inputs..., out, params) launches
//    the kernels (ops without params pass kcnn::no_params internally);
//  * stateful variants (prepared weights, workspaces) and kcnn::prepare(exec, variant, params,
//    operands...), a no-op for stateless variants, and kcnn::workspace_bytes(variant);
//  * variant::read_only<V>: any variant of any op with its inputs loaded through const
//    RandomAccess handles (kcnn::read_only), implemented once here;
//  * the host-side argument checks every entry point runs before it launches anything: they
//    throw std::invalid_argument naming the op, the operand and the mismatch.
#include <kcnn/layout.hpp>
#include <kcnn/tensor.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeindex>
#include <typeinfo>
#include <utility>
#include <vector>

namespace kcnn {

// One tag type per op: a variant says which op it belongs to with `using op = ops::<op>;`.
namespace ops {
struct conv2d { static constexpr const char* name = "conv2d"; };
struct fc { static constexpr const char* name = "fc"; };
struct pool { static constexpr const char* name = "pool"; };
struct activation { static constexpr const char* name = "activation"; };
struct lrn { static constexpr const char* name = "lrn"; };
struct batchnorm { static constexpr const char* name = "batchnorm"; };
struct softmax { static constexpr const char* name = "softmax"; };
struct add { static constexpr const char* name = "add"; };
struct concat { static constexpr const char* name = "concat"; };
struct transform { static constexpr const char* name = "transform"; };
}  // namespace ops

// The params of the ops that have none (add, concat, transform).
struct no_params {
  std::string check() const { return {}; }
  bool operator==(const no_params&) const { return true; }
};

inline std::string to_string(const dims4& d) {
  return "(n=" + std::to_string(d.n) + ", c=" + std::to_string(d.c) + ", h=" + std::to_string(d.h) +
         ", w=" + std::to_string(d.w) + ")";
}

namespace detail {

template <class V, class = void>
struct variant_op { using type = void; };
template <class V>
struct variant_op<V, std::void_t<typename V::op>> { using type = typename V::op; };

template <class V, class = void>
struct is_stateful : std::false_type {};
template <class V>
struct is_stateful<V, std::enable_if_t<V::stateful>> : std::true_type {};

template <class V, class Op>
constexpr bool is_variant_of = std::is_same_v<typename variant_op<V>::type, Op>;

template <class T>
struct is_tensor4 : std::false_type {};
template <class T, class L, class... P>
struct is_tensor4<tensor4<T, L, P...>> : std::true_type {};

template <class T>
struct is_view : std::false_type {};
template <class T, class... P>
struct is_view<Kokkos::View<T, P...>> : std::true_type {};

[[noreturn]] inline void fail(const char* op, const std::string& what) {
  throw std::invalid_argument(std::string("kcnn::") + op + ": " + what);
}

// Variants that compute an output block more than once (an overlapping last lane block) and
// read their input meanwhile refuse to run in place.
template <class In, class Out>
void require_distinct(const char* op, const char* variant, const In& in, const Out& out) {
  if (static_cast<const void*>(in.view().data()) == static_cast<const void*>(out.view().data()))
    fail(op, std::string(variant) + ": out must not alias in (a lane block may be computed twice)");
}

// Variants that address a tensor as one dense block (kcnn::planes_along) refuse a View with
// gaps (padding, a strided subview).
template <class... T>
void require_dense(const char* op, const char* variant, const T&... t) {
  if (!(... && t.view().span_is_contiguous()))
    fail(op, std::string(variant) + ": needs contiguous tensors (this View has padding or gaps)");
}

// The host-side checks of one call: params, every operand's extents, and that every operand
// lives where the execution space can read it (a compile-time check).
template <class Exec>
struct checker {
  const char* op;

  void params(const std::string& error) const {
    if (!error.empty()) fail(op, "invalid params: " + error);
  }
  template <class T>
  static constexpr void accessible() {
    static_assert(Kokkos::SpaceAccessibility<Exec, typename T::memory_space>::accessible,
                  "kcnn: an operand lives in a memory space the execution space cannot access");
  }
  // A tensor operand: its dims must be `want`, and its View's extents must agree with its dims
  // (a tensor4 wrapped around a user's View of other extents would read out of bounds).
  template <class T>
  void tensor(const char* name, const T& t, const dims4& want) const {
    static_assert(is_tensor4<T>::value, "kcnn: tensor operands are kcnn::tensor4");
    accessible<T>();
    if (!(t.dims() == want))
      fail(op, std::string("operand '") + name + "' has dims " + to_string(t.dims()) +
                   ", the params require " + to_string(want));
    view_extents(name, t);
  }
  template <class T>
  void view_extents(const char* name, const T& t) const {
    using L = typename T::layout_tag;
    const dims4 d = t.dims();
    const int ext[4] = {d.n, d.c, d.h, d.w};
    for (int k = 0; k < 4; ++k) {
      const int want = L::runtime_strided ? ext[k] : ext[int(physical_axis<L>(k))];
      if (t.view().extent(k) != std::size_t(want))
        fail(op, std::string("operand '") + name + "': its View's extent " + std::to_string(k) + " is " +
                     std::to_string(t.view().extent(k)) + ", its dims " + to_string(d) + " say " +
                     std::to_string(want));
    }
  }
  template <class L>
  static axis physical_axis(int k) {
    if constexpr (L::runtime_strided) return axis(k);
    else return L::order[k];
  }
  // A rank-1 operand (bias, per-channel vector): its length must be `want`.
  template <class V>
  void vector(const char* name, const V& v, std::size_t want) const {
    static_assert(is_view<V>::value && V::rank == 1, "kcnn: vector operands are rank-1 Kokkos::Views");
    accessible<V>();
    if (v.extent(0) != want)
      fail(op, std::string("operand '") + name + "' has length " + std::to_string(v.extent(0)) +
                   ", the params require " + std::to_string(want));
  }
};

// Prepared state shared by the copies of a stateful variant (copies are shallow, like Views).
template <class Params>
struct prepared_state {
  std::type_index exec = typeid(void);  // typeid(void): usable from any execution space
  Params params{};
  std::shared_ptr<void> object;
  double bytes = 0;
};

template <class Params>
class state_handle {
 public:
  bool prepared() const { return bool(s_); }
  double workspace_bytes() const { return s_ ? s_->bytes : 0.0; }
  // exec: typeid of the execution space the state belongs to, typeid(void) for any.
  template <class T>
  void set(std::type_index exec, const Params& p, std::shared_ptr<T> object, double bytes) {
    auto s = std::make_shared<prepared_state<Params>>();
    s->exec = exec;
    s->params = p;
    s->object = std::move(object);
    s->bytes = bytes;
    s_ = std::move(s);
  }
  // The state for a run with params p on Exec: throws std::logic_error when kcnn::prepare was
  // never called, std::invalid_argument when it was called for other params or another space.
  template <class T, class Exec>
  T& get(const char* op, const char* variant, const Params& p) const {
    // The message is built only on failure: this runs on every (timed) call.
    const auto who = [&] { return std::string("kcnn::") + op + " (variant " + variant + "): "; };
    if (!s_)
      throw std::logic_error(who() + "the variant is not prepared: call kcnn::prepare(exec, variant, params, "
                                   "operands...) once, untimed, before running it");
    if (s_->exec != std::type_index(typeid(void)) && s_->exec != std::type_index(typeid(Exec)))
      throw std::invalid_argument(who() + "prepared for another execution space: call kcnn::prepare again");
    if (!(s_->params == p))
      throw std::invalid_argument(who() + "prepared for other params: call kcnn::prepare again with these");
    return *static_cast<T*>(s_->object.get());
  }

 private:
  std::shared_ptr<prepared_state<Params>> s_;
};

// What every stateful variant shares: the `stateful` mark, prepared(), workspace_bytes() and the
// state handle its prepare() sets and its run() reads. Copies share the state (like Views).
template <class Params>
class stateful_variant {
 public:
  static constexpr bool stateful = true;
  bool prepared() const { return state_.prepared(); }
  double workspace_bytes() const { return state_.workspace_bytes(); }

 protected:
  state_handle<Params> state_;
};

// Input operands as read-only handles; everything else unchanged.
template <class T, class L, class... P>
auto as_read_only(const tensor4<T, L, P...>& t) { return ::kcnn::read_only(t); }
template <class T, class... P>
auto as_read_only(const Kokkos::View<T*, P...>& v) { return ::kcnn::read_only(v); }
template <class X>
auto as_read_only(const std::vector<X>& xs) {
  std::vector<decltype(as_read_only(xs.front()))> r;
  r.reserve(xs.size());
  for (const auto& x : xs) r.push_back(as_read_only(x));
  return r;
}

template <class X>
const void* data_of(const X& x) {
  if constexpr (is_tensor4<X>::value) return static_cast<const void*>(x.view().data());
  else if constexpr (is_view<X>::value) return static_cast<const void*>(x.data());
  else return nullptr;
}
// Read-only loads of memory the same kernel writes are undefined on CUDA (ld.global.nc).
template <class In, class Out>
void check_not_aliased(const char* op, const In& in, const Out& out) {
  if constexpr (!std::is_same_v<std::decay_t<decltype(data_of(in))>, std::nullptr_t>) {
    if constexpr (is_tensor4<In>::value || is_view<In>::value) {
      const void* a = data_of(in);
      if (a != nullptr && a == data_of(out))
        fail(op, "variant::read_only: an input aliases the output (in place); read-only loads need "
                 "an input distinct from the output");
    }
  }
}
template <class X, class Out>
void check_not_aliased(const char* op, const std::vector<X>& ins, const Out& out) {
  for (const auto& x : ins) check_not_aliased(op, x, out);
}

}  // namespace detail

namespace variant {

// Any variant V of any op with its input operands (tensors and per-channel vectors, weights and
// bias included) passed as const RandomAccess handles: on CUDA, loads through the read-only data
// cache (ld.global.nc); no effect on host backends. Prepared state is V's. The inputs must not
// alias the output (checked).
template <class V>
struct read_only {
  using op = typename detail::variant_op<V>::type;
  static constexpr bool stateful = detail::is_stateful<V>::value;
  V inner{};

  read_only() = default;
  explicit read_only(const V& v) : inner(v) {}

  template <class Exec, class P, class... Operands>
  void prepare(const Exec& exec, const P& p, const Operands&... operands) {
    inner.prepare(exec, p, operands...);
  }
  double workspace_bytes() const {
    if constexpr (stateful) return inner.workspace_bytes();
    else return 0.0;
  }
  bool prepared() const {
    if constexpr (stateful) return inner.prepared();
    else return true;
  }

  // run(exec, inputs..., out, params): every argument but the last two is an input.
  template <class Exec, class... A>
  void run(const Exec& exec, const A&... a) const {
    static_assert(sizeof...(A) >= 2, "run(exec, inputs..., out, params)");
    run_(exec, std::forward_as_tuple(a...), std::make_index_sequence<sizeof...(A) - 2>{});
  }

 private:
  template <class Exec, class Tup, std::size_t... I>
  void run_(const Exec& exec, const Tup& t, std::index_sequence<I...>) const {
    constexpr std::size_t N = std::tuple_size_v<Tup>;
    const auto& out = std::get<N - 2>(t);
    (detail::check_not_aliased(op::name, std::get<I>(t), out), ...);
    inner.run(exec, detail::as_read_only(std::get<I>(t))..., out, std::get<N - 1>(t));
  }
};
template <class V>
read_only(const V&) -> read_only<V>;

}  // namespace variant

namespace detail {
template <class V>
struct is_read_only : std::false_type {};
template <class V>
struct is_read_only<variant::read_only<V>> : std::true_type {};
}  // namespace detail

// Prepares a variant once, untimed, for these params and operands (the same operands, in the
// same order, as the op's call): packs weights, folds constants, allocates workspaces. A no-op
// for stateless variants, so generic code can always call it.
template <class Exec, class V, class P, class... Operands>
void prepare(const Exec& exec, V& v, const P& p, const Operands&... operands) {
  if constexpr (detail::is_stateful<V>::value) {
    v.prepare(exec, p, operands...);
  } else {
    (void)exec;
    (void)v;
    (void)p;
    ((void)operands, ...);
  }
}

// Bytes of prepared state a variant holds (device workspace, or constant-memory payload); 0 for
// stateless variants and before kcnn::prepare.
template <class V>
double workspace_bytes(const V& v) {
  if constexpr (detail::is_stateful<V>::value) return v.workspace_bytes();
  else return ((void)v, 0.0);
}

}  // namespace kcnn
