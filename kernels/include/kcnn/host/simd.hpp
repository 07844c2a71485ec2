#pragma once
// kcnn's host tuning: the permutes of the host register tiles, over float_lanes vectors (one
// shuffle where the compiler has __builtin_shufflevector, element by element otherwise).
#include <kcnn/lanes.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace kcnn {

// out lane l = in lane (l - l mod G + C): lane C of each group of G lanes, spread over the group
// (a grouped convolution whose lanes span several groups: each lane's input channel C of its own
// group). One permute where the compiler has __builtin_shufflevector (GCC >= 12, Clang).
namespace detail {
#if defined(KCNN_VECTOR_EXTENSIONS) && (defined(__clang__) || __GNUC__ >= 12)
template <int G, int C, class V, std::size_t... L>
KOKKOS_FORCEINLINE_FUNCTION void spread_in_groups_impl(V& out, const V& in, std::index_sequence<L...>) {
  out = __builtin_shufflevector(in, in, int(L - L % G + C)...);
}
#define KCNN_HAVE_SHUFFLEVECTOR 1
#endif
}  // namespace detail
template <int W, int G, int C>
KOKKOS_FORCEINLINE_FUNCTION void spread_in_groups(float_lanes<W>& out, const float_lanes<W>& in) {
  static_assert(W % G == 0 && C < G, "spread_in_groups: G must divide W, C < G");
#ifdef KCNN_HAVE_SHUFFLEVECTOR
  if constexpr (W > 1 && !std::is_same_v<float_lanes<W>, detail::float_array<W>>) {
    detail::spread_in_groups_impl<G, C>(out, in, std::make_index_sequence<W>{});
    return;
  }
#endif
  if constexpr (W == 1) out = in;
  else if constexpr (std::is_same_v<float_lanes<W>, detail::float_array<W>>)
    for (int l = 0; l < W; ++l) out.v[l] = in.v[l - l % G + C];
  else
    for (int l = 0; l < W; ++l) out[l] = in[l - l % G + C];
}

// out = the even lanes of (lo, hi): lo's lanes 0, 2, .., W - 2 then hi's (a stride-2 row of 2 W
// floats, loaded as two vectors, gives the W elements a stride-2 window reads). One two-source
// permute where the compiler has __builtin_shufflevector.
namespace detail {
#ifdef KCNN_HAVE_SHUFFLEVECTOR
template <class V, std::size_t... L>
KOKKOS_FORCEINLINE_FUNCTION void even_lanes_impl(V& out, const V& lo, const V& hi, std::index_sequence<L...>) {
  out = __builtin_shufflevector(lo, hi, int(2 * L)...);
}
#endif
}  // namespace detail
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void even_lanes(float_lanes<W>& out, const float_lanes<W>& lo, const float_lanes<W>& hi) {
#ifdef KCNN_HAVE_SHUFFLEVECTOR
  if constexpr (W > 1 && !std::is_same_v<float_lanes<W>, detail::float_array<W>>) {
    detail::even_lanes_impl(out, lo, hi, std::make_index_sequence<W>{});
    return;
  }
#endif
  if constexpr (W == 1) out = lo;
  else if constexpr (std::is_same_v<float_lanes<W>, detail::float_array<W>>)
    for (int l = 0; l < W; ++l) out.v[l] = 2 * l < W ? lo.v[2 * l] : hi.v[2 * l - W];
  else
    for (int l = 0; l < W; ++l) out[l] = 2 * l < W ? lo[2 * l] : hi[2 * l - W];
}

template <int W>
KOKKOS_FORCEINLINE_FUNCTION float lane_get(const float_lanes<W>& v, int l) {
  if constexpr (W == 1) return (void)l, v;
  else if constexpr (std::is_same_v<float_lanes<W>, detail::float_array<W>>) return v.v[l];
  else return v[l];
}

// r[i] lane j becomes r[j] lane i: a W x W block transposed in registers, in log2(W) stages of
// W / 2 pairs, each pair (r[i], r[i + d]) exchanging its off-diagonal halves of width d (one
// two-source shuffle per vector per stage where the compiler has __builtin_shufflevector: 64 for
// W = 16); element by element otherwise.
namespace detail {
constexpr int transpose_lo(int j, int d, int W) { return (j & d) == 0 ? j : W + j - d; }
constexpr int transpose_hi(int j, int d, int W) { return (j & d) == 0 ? j + d : W + j; }
#ifdef KCNN_HAVE_SHUFFLEVECTOR
template <int D, class V, std::size_t... L>
KOKKOS_FORCEINLINE_FUNCTION void transpose_stage(V* r, std::index_sequence<L...>) {
  constexpr int W = sizeof...(L);
  KCNN_UNROLL_TILE
  for (int i = 0; i < W; ++i)
    if ((i & D) == 0) {
      const V lo = __builtin_shufflevector(r[i], r[i + D], transpose_lo(L, D, W)...);
      const V hi = __builtin_shufflevector(r[i], r[i + D], transpose_hi(L, D, W)...);
      r[i] = lo;
      r[i + D] = hi;
    }
}
template <int D, class V, class Seq>
KOKKOS_FORCEINLINE_FUNCTION void transpose_stages(V* r, Seq seq) {
  transpose_stage<D>(r, seq);
  if constexpr (D > 1) transpose_stages<D / 2>(r, seq);
}
#endif
}  // namespace detail
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void transpose_lanes(float_lanes<W> (&r)[W]) {
#ifdef KCNN_HAVE_SHUFFLEVECTOR
  if constexpr (W > 1 && !std::is_same_v<float_lanes<W>, detail::float_array<W>>) {
    detail::transpose_stages<W / 2>(r, std::make_index_sequence<W>{});
    return;
  }
#endif
  if constexpr (W > 1) {
    float t[W][W];
    for (int i = 0; i < W; ++i) store_lanes<W>(t[i], r[i]);
    for (int j = 0; j < W; ++j) {
      float c[W];
      for (int i = 0; i < W; ++i) c[i] = t[i][j];
      load_lanes<W>(r[j], c);
    }
  }
}

// Lanes of four input-channel phases (a grouped convolution's phase tile: lane l of a vector is
// output channel l / 4 of the vector's W / 4 and input phase l mod 4). broadcast_quad: the 4
// floats at p repeated over the W lanes, lane l = p[l mod 4] (one 16-byte broadcast load with
// AVX-512 at W = 16; element by element otherwise, unmeasured). sum_phases: out lane j W/4 + q =
// the sum of a_j's lanes 4 q .. 4 q + 3, the four phases of a_j's channel q (six two-source
// shuffles, three adds and one permute for W outputs, where the compiler has
// __builtin_shufflevector).
namespace detail {
constexpr int phase_pair(int p, int W) { return p % 4 < 2 ? p / 4 * 4 + p % 4 : W + p / 4 * 4 + p % 4 - 2; }
constexpr int phase_even(int p, int W) { return p % 4 < 2 ? p / 4 * 4 + 2 * (p % 4) : W + p / 4 * 4 + 2 * (p % 4 - 2); }
constexpr int phase_order(int o, int W) { return 4 * (o % (W / 4)) + o / (W / 4); }
#ifdef KCNN_HAVE_SHUFFLEVECTOR
template <class V, std::size_t... L>
KOKKOS_FORCEINLINE_FUNCTION void sum_phases_impl(V& out, const V& a0, const V& a1, const V& a2, const V& a3,
                                                 std::index_sequence<L...>) {
  constexpr int W = sizeof...(L);
  const V s01 = __builtin_shufflevector(a0, a1, phase_pair(L, W)...) +
                __builtin_shufflevector(a0, a1, (phase_pair(L, W) + 2)...);
  const V s23 = __builtin_shufflevector(a2, a3, phase_pair(L, W)...) +
                __builtin_shufflevector(a2, a3, (phase_pair(L, W) + 2)...);
  const V r = __builtin_shufflevector(s01, s23, phase_even(L, W)...) +
              __builtin_shufflevector(s01, s23, (phase_even(L, W) + 1)...);
  out = __builtin_shufflevector(r, r, phase_order(L, W)...);
}
#endif
}  // namespace detail
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void broadcast_quad(float_lanes<W>& out, const float* p) {
  static_assert(W % 4 == 0, "broadcast_quad: W must be a multiple of 4");
  // The instruction itself: GCC 12 widens a 4-lane __builtin_shufflevector through a stack slot
  // (a 16-byte store, then a 64-byte load that cannot be forwarded: a stall per broadcast).
#if defined(KCNN_VECTOR_EXTENSIONS) && defined(KCNN_X86_HOST) && defined(__AVX512F__)
  if constexpr (W == 16) {
    out = (float_lanes<16>)_mm512_broadcast_f32x4(_mm_loadu_ps(p));
    return;
  }
#endif
  if constexpr (std::is_same_v<float_lanes<W>, detail::float_array<W>>)
    for (int l = 0; l < W; ++l) out.v[l] = p[l % 4];
  else
    for (int l = 0; l < W; ++l) out[l] = p[l % 4];
}
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void sum_phases(float_lanes<W>& out, const float_lanes<W>& a0, const float_lanes<W>& a1,
                                            const float_lanes<W>& a2, const float_lanes<W>& a3) {
  static_assert(W % 4 == 0, "sum_phases: W must be a multiple of 4");
#ifdef KCNN_HAVE_SHUFFLEVECTOR
  if constexpr (!std::is_same_v<float_lanes<W>, detail::float_array<W>>) {
    detail::sum_phases_impl(out, a0, a1, a2, a3, std::make_index_sequence<W>{});
    return;
  }
#endif
  const float_lanes<W>* a[4] = {&a0, &a1, &a2, &a3};
  float r[W];
  for (int o = 0; o < W; ++o) {
    const int j = o / (W / 4), q = o % (W / 4);
    r[o] = 0;
    for (int ph = 0; ph < 4; ++ph) r[o] += lane_get<W>(*a[j], 4 * q + ph);
  }
  load_lanes<W>(out, r);
}


}  // namespace kcnn
