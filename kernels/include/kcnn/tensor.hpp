#pragma once
// tensor4: a 4-D tensor over a Kokkos View in any memory space and any layout tag,
// indexed logically as (n, c, h, w). Copying a tensor4 is shallow (like a View).
#include <kcnn/layout.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>
#include <utility>

namespace kcnn {

namespace detail {
// A const RandomAccess View whose element access is a plain reference: Kokkos' mdspan-based View
// (the default from Kokkos 4.7) ignores RandomAccess, while the legacy View turns it into a
// read-only-cache load (__ldg) on CUDA. tensor4 then makes the load itself, so that the
// read-only memory space means the same on both Views.
template <class View>
inline constexpr bool needs_explicit_read_only_load =
#if defined(KOKKOS_ENABLE_CUDA)
    View::memory_traits::is_random_access && std::is_const_v<typename View::value_type> &&
    std::is_reference_v<typename View::reference_type> &&
    Kokkos::SpaceAccessibility<Kokkos::Cuda, typename View::memory_space>::accessible;
#else
    false;
#endif

template <class T>
KOKKOS_FORCEINLINE_FUNCTION std::remove_const_t<T> read_only_load(const T* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);  // ld.global.nc: the read-only data path
#else
  return *p;
#endif
}
}  // namespace detail

// What loads through the read-only path on this build: "__ldg (legacy View, RandomAccess)",
// "__ldg (kcnn::tensor4, explicit: mdspan View)" or "none (host backend)". Recorded in results.
inline const char* read_only_load_path() {
#if !defined(KOKKOS_ENABLE_CUDA)
  return "none (host backend: RandomAccess has no effect)";
#else
  using probe = Kokkos::View<const float****, Kokkos::LayoutRight, Kokkos::CudaSpace,
                             Kokkos::MemoryTraits<Kokkos::RandomAccess>>;
  return detail::needs_explicit_read_only_load<probe> ? "__ldg by kcnn::tensor4 (the View ignores RandomAccess)"
                                                      : "__ldg by the View (RandomAccess)";
#endif
}

template <class T, class Layout, class... ViewProps>
class tensor4 {
 public:
  using value_type = T;
  using layout_tag = Layout;
  using view_type = Kokkos::View<T****, typename Layout::kokkos_layout, ViewProps...>;
  static constexpr bool explicit_read_only = detail::needs_explicit_read_only_load<view_type>;
  // What operator() returns: the View's reference, or a value for explicit read-only loads.
  using reference_type =
      std::conditional_t<explicit_read_only, std::remove_const_t<T>, typename view_type::reference_type>;
  using memory_space = typename view_type::memory_space;
  using execution_space = typename view_type::execution_space;

  tensor4() = default;

  // Allocates without initialising: kcnn always fills or poisons a tensor before use.
  template <class L = Layout, std::enable_if_t<!L::runtime_strided, int> = 0>
  tensor4(const std::string& label, const dims4& d)
      : view_(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), Layout::make(d)), dims_(d) {
    set_order(Layout::order);
  }

  // Runtime-strided tensors take their physical order (slowest first).
  template <class L = Layout, std::enable_if_t<L::runtime_strided, int> = 0>
  tensor4(const std::string& label, const dims4& d, const std::array<axis, 4>& order)
      : view_(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), Layout::make(d, order)),
        dims_(d) {
    set_order(order);
  }

  // Wraps an existing View (e.g. a user's own data, or a view with other memory traits).
  // For the strided layout, `order` must be the physical order the View's strides encode.
  tensor4(const view_type& v, const dims4& d,
          const std::array<axis, 4>& order = {axis::n, axis::c, axis::h, axis::w})
      : view_(v), dims_(d) {
    if constexpr (Layout::runtime_strided) set_order(order);
    else set_order(Layout::order);
  }

  // Converting copy: adds const or memory traits (e.g. RandomAccess) to the same data.
  template <class U, class... P>
  tensor4(const tensor4<U, Layout, P...>& o) : view_(o.view()), dims_(o.dims()) {
    for (int k = 0; k < 4; ++k) order_[k] = o.order()[k];
  }

  // Storage-order decomposition of a linear index (the coalesced thread mapping).
  KOKKOS_FORCEINLINE_FUNCTION void storage_coords(std::size_t i, int& n, int& c, int& h,
                                                  int& w) const {
    if constexpr (Layout::runtime_strided) Layout::storage_coords(i, dims_, order_, n, c, h, w);
    else Layout::storage_coords(i, dims_, n, c, h, w);
  }
  // Physical order, slowest first, as axis ids (0 = n, 1 = c, 2 = h, 3 = w).
  KOKKOS_INLINE_FUNCTION const int* order() const { return order_; }

  KOKKOS_FORCEINLINE_FUNCTION reference_type operator()(int n, int c, int h, int w) const {
    if constexpr (explicit_read_only) return detail::read_only_load(&Layout::at(view_, n, c, h, w));
    else return Layout::at(view_, n, c, h, w);
  }

  KOKKOS_INLINE_FUNCTION const dims4& dims() const { return dims_; }
  KOKKOS_INLINE_FUNCTION std::size_t size() const { return dims_.size(); }
  KOKKOS_INLINE_FUNCTION const view_type& view() const { return view_; }
  KOKKOS_INLINE_FUNCTION std::size_t bytes() const { return dims_.size() * sizeof(T); }
  std::string label() const { return view_.label(); }

 private:
  void set_order(const std::array<axis, 4>& o) {
    for (int k = 0; k < 4; ++k) order_[k] = int(o[k]);
  }
  view_type view_;
  dims4 dims_;
  int order_[4] = {0, 1, 2, 3};
};

// Host mirror with the same layout (no copy if the tensor is already host-accessible).
template <class T, class Layout, class... P>
auto create_mirror_view(const tensor4<T, Layout, P...>& t) {
  auto hv = Kokkos::create_mirror_view(t.view());
  std::array<axis, 4> order;
  for (int k = 0; k < 4; ++k) order[k] = axis(t.order()[k]);
  return tensor4<typename decltype(hv)::non_const_value_type, Layout,
                 typename decltype(hv)::device_type>(hv, t.dims(), order);
}

template <class T1, class L, class... P1, class T2, class... P2>
void deep_copy(const tensor4<T1, L, P1...>& dst, const tensor4<T2, L, P2...>& src) {
  Kokkos::deep_copy(dst.view(), src.view());
}

// The same data as const MemoryTraits<RandomAccess> handles (CUDA: loads through the read-only
// data cache, ld.global.nc; no effect on host backends).
using read_only_traits = Kokkos::MemoryTraits<Kokkos::RandomAccess>;
template <class T, class Layout, class... P>
auto read_only(const tensor4<T, Layout, P...>& t) {
  using mem = typename tensor4<T, Layout, P...>::memory_space;
  return tensor4<const std::remove_const_t<T>, Layout, mem, read_only_traits>(t);
}
template <class T, class... P>
auto read_only(const Kokkos::View<T*, P...>& v) {
  using mem = typename Kokkos::View<T*, P...>::memory_space;
  return Kokkos::View<const std::remove_const_t<T>*, mem, read_only_traits>(v);
}

// A rank-1 parameter vector (bias, per-channel statistics).
template <class T, class MemSpace = Kokkos::DefaultExecutionSpace::memory_space>
using vector_view = Kokkos::View<T*, MemSpace>;

}  // namespace kcnn
