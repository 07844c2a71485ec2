#pragma once
// Seeded, layout-independent fills. Values come from a counter-based hash of (seed, logical
// index), so the same seed gives the same logical tensor in every layout and memory space, and
// the fill runs in parallel where the data lives. Values are never zero: |x| in [0.125, 1].
#include <kcnn/compat.hpp>
#include <kcnn/tensor.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kcnn {

KOKKOS_INLINE_FUNCTION std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The value at logical index i of a tensor filled with `seed`, scaled by `scale`.
KOKKOS_INLINE_FUNCTION float fill_value(std::uint64_t seed, std::uint64_t i, float scale = 1.0f) {
  const std::uint64_t r = splitmix64(seed * 0xD1B54A32D192ED03ull + i);
  const float u = float(r >> 40) * (1.0f / 16777216.0f);  // [0, 1), 24 bits
  const float mag = 0.125f + 0.875f * u;                   // never zero
  return ((r & 1u) ? -mag : mag) * scale;
}

namespace detail {
template <class Tensor>
struct fill_functor {
  Tensor t;
  std::uint64_t seed;
  float scale;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, c, h, w;
    t.dims().logical_coords(i, n, c, h, w);
    t(n, c, h, w) = typename Tensor::value_type(fill_value(seed, i, scale));
  }
};
template <class View>
struct fill_vector_functor {
  View v;
  std::uint64_t seed;
  float scale;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    v(i) = typename View::value_type(fill_value(seed, i, scale));
  }
};
}  // namespace detail

template <class T, class L, class... P>
void fill_random(const tensor4<T, L, P...>& t, std::uint64_t seed, float scale = 1.0f) {
  using exec = typename tensor4<T, L, P...>::execution_space;
  Kokkos::parallel_for("kcnn::fill_random", Kokkos::RangePolicy<exec>(0, t.size()),
                       detail::fill_functor<tensor4<T, L, P...>>{t, seed, scale});
}

template <class T, class... P>
void fill_random(const Kokkos::View<T*, P...>& v, std::uint64_t seed, float scale = 1.0f) {
  using exec = typename Kokkos::View<T*, P...>::execution_space;
  Kokkos::parallel_for("kcnn::fill_random", Kokkos::RangePolicy<exec>(0, v.extent(0)),
                       detail::fill_vector_functor<Kokkos::View<T*, P...>>{v, seed, scale});
}

// Poisons a tensor with quiet NaN so that any element a kernel fails to write is caught.
template <class T, class L, class... P>
void poison(const tensor4<T, L, P...>& t) {
  Kokkos::deep_copy(t.view(), compat::quiet_nan<T>());
}

}  // namespace kcnn
