#pragma once
// The host tuning of conv2d direct_vector (kcnn/conv2d/direct_vector.hpp, nhwc, and
// kcnn/conv2d/direct_vector_nchw.hpp, nchw) and of fc direct_vector's tile: register tiles of
// vector-extension lanes (kcnn/host/simd_types.hpp) with layer-specific forms.
//
// nhwc:
// W = 16 (one AVX-512 register; float_lanes, a vector-extension type), KV = 2, PX = 8:
// 16 accumulator registers, 10 loads per 16 FMAs (KV = 1 left the FMA chains short of the FMA
// units). Special cases:
//   * a dense layer's filter row whose taps all lie inside the input is one loop over its S x C
//     contiguous (s, c) pairs (layers with 1 or 3 input channels); layers with at most 4 input
//     channels per group and whole blocks of 64 output channels take 4 vectors x 6 pixels, and
//     other layers with at most 16 output channels per group 1 vector x 16 pixels
//     (conv_vector_host_tile); a pointwise row fetches the next tile's input into the cache while
//     a tile computes;
//   * depthwise tiles whose taps lie inside the input use one base pointer; stride-1 and 2, 3- and
//     5-wide rows load each input column once for all the taps that read it (sliding_row); when
//     every channel block is whole, a work item is a whole output row (depthwise_row);
//   * the output lines of a tile (not of the grouped lanes') are prefetched for writing before
//     its stores;
//   * groups of 8 or 16 channels in and out (ResNeXt's conv3 and conv4) take the phase tile
//     (conv_vector_phase_functor): a lane is an output channel and one of 4 consecutive input
//     channels, the 4 inputs a 16-byte broadcast load, the phases summed once at the end; groups
//     of 2 and 4 put several groups in one block of lanes (grouped_tile), each lane's input
//     channel taken from its pixel's block by a permute.
//
// nchw: a work item is (image n, output row oh, block of KB channels, PV x 16 consecutive output
// columns): KB x PV accumulators of 16 lanes in registers; per input channel and tap, PV loads of
// 16 input values (stride 1: one contiguous load; stride 2: two loads and one permute, from a
// zero-padded copy of the row segment at the padded edges and the row's end; stride 3 and more: a
// gather) and KB broadcast weights for KB x PV vector multiply-adds. A pointwise layer (1 x 1,
// stride 1, no pad) is one long row per image (the plane h * w is contiguous in input and output).
// Part of kcnn/conv2d/direct_vector.hpp, which includes it at its end (after the variants it specialises for),
// under KCNN_HOST_TUNING: not a header of its own.
#include <kcnn/compat.hpp>
#include <kcnn/conv2d_params.hpp>
#include <kcnn/host/rows.hpp>
#include <kcnn/host/simd.hpp>
#include <kcnn/host/simd_types.hpp>
#include <kcnn/lanes.hpp>
#include <kcnn/map.hpp>
#include <kcnn/tuning.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <type_traits>

namespace kcnn {
namespace host_tuning {
namespace detail {
// The portable source's packing, split plans and shapes.
using namespace kcnn::detail;

// A work item's output channels: KV vectors of W lanes; its output pixels (registers).
inline constexpr int conv_vector_lanes = lane_width;
inline constexpr int conv_vector_vectors = 2;
inline constexpr int conv_vector_pixels = 8;
inline constexpr int conv_vector_depthwise_vectors = 3;
inline constexpr int conv_vector_depthwise_pixels = 4;

// Host: groups of G = c/g = k/g channels (2, 4, 8 or 16) that take grouped_tile (2, 4) or the
// phase tile (8, 16), else 0.
inline int conv_vector_group_lanes(const conv2d_params& p) {
  const int g = p.k_per_group();
  const bool depthwise = p.c_per_group() == 1 && g == 1;
  return !depthwise && p.groups > 1 && p.c_per_group() == g && (g == 2 || g == 4 || g == 8 || g == 16) &&
                 p.k % conv_vector_pad == 0
             ? g
             : 0;
}
// Host tile {KV vectors, PX pixels} of a layer that is neither depthwise nor in grouped lanes:
// 1 x 16 for at most W output channels per group (a box or class head: 2 x 8 spent half its
// multiply-adds on padding), 4 x 6 for at most 4 input channels per group and whole blocks of
// 4 W output channels (an RGB stem, U-Net's single channel: each input value broadcast to 4 FMAs
// instead of 2), else 2 x 8.
inline std::array<int, 2> conv_vector_host_tile(const conv2d_params& p) {
  constexpr int W = conv_vector_lanes;
  if (p.k_per_group() <= W) return {1, 16};
  if (p.c_per_group() <= 4 && p.k_per_group() % (4 * W) == 0) return {4, 6};
  return {conv_vector_vectors, conv_vector_pixels};
}

// The input pixels a grouped tile's PX outputs read at one tap of input row `row` (nhwc, C floats
// per pixel): output i reads column iw0 + i sw; a column outside [0, Wd), or an output past the
// tile's npx, reads `zero`.
template <int PX>
KOKKOS_FORCEINLINE_FUNCTION void tap_pixels(const float* (&px)[PX], const float* row, const float* zero, const int iw0,
                                            const int sw, const int npx, const int Wd, const int C) {
  KCNN_UNROLL_TILE
  for (int i = 0; i < PX; ++i) {
    const int iw = iw0 + i * sw;
    px[i] = (i < npx && iw >= 0 && iw < Wd) ? row + std::size_t(iw) * C : zero;
  }
}

// The register tile over raw pointers: x an nhwc input (n, h, w, c), y an nhwc output; fc runs
// it too (images as the pixels of one row). A work item holds PX pixels x KV vectors of W lanes:
// B = KV * W consecutive output channels.
template <int W, int KV, int PX, class Bias>
struct conv_vector_nhwc_functor {
  static constexpr int B = W * KV;
  const float* x;
  const float* pack;
  const float* zero;  // C + 32 zeros: what a pixel outside the input (padding, past the row's end) reads
  Bias bias;
  float* y;
  conv2d_params p;
  int kpad, kblocks;  // kblocks: blocks of B channels per group (general) or in all (depthwise)
  bool depthwise;
  int group_lanes = 0;  // G > 0: grouped lanes, G = c/g = k/g channels per group, blocks over all k
  int out_h = 0, out_w = 0;  // p.p() and p.q(), for depthwise_row (no division per item)
  // The depthwise launches' tiles have 4 or 8 pixels; the 1 x 16 and 4 x 6 tiles never serve a
  // depthwise layer, so their sliding rows and row walk are not instantiated (compile time).
  static constexpr bool serves_depthwise = PX == 4 || PX == 8;
  // Dense and general groups: floats between consecutive blocks of P = 32 channels in the packed
  // weights (r s c/g P); vector v of a tile is at (v W / P) blocks + (v W) mod P from the tile's
  // first channel (kg0, a multiple of B: on a block boundary whenever B > P). fc leaves it 0 (its
  // tiles are one block: fc.hpp asserts KV W <= P).
  std::size_t wblock = 0;
  KOKKOS_FORCEINLINE_FUNCTION std::size_t wofs(int v) const {
    return std::size_t(v * W / conv_vector_pad) * wblock + std::size_t(v * W % conv_vector_pad);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const int n, const int oh, const int owb, const int kb) const {
    if constexpr (KV * W <= conv_vector_pad) {  // the grouped lanes' launches (one block of weights)
      if (group_lanes == 2) return grouped_tile<2>(n, oh, owb, kb);
      if (group_lanes == 4) return grouped_tile<4>(n, oh, owb, kb);  // 8, 16: conv_vector_phase_functor
    }
    // A partial channel block (the last of a layer whose channels are not a multiple of B) has
    // its own copy of the tile: a branch on it inside the tap loop kept GCC from unrolling the
    // pixel loops, and the accumulators went to the stack.
    const int kspan = depthwise ? p.k : p.k_per_group();
    const int kg0 = (depthwise ? kb : kb % kblocks) * B;
    if (kspan - kg0 >= B) tile<true>(n, oh, owb, kb);
    else tile<false>(n, oh, owb, kb);
  }

  // Grouped convolution with G = c/g = k/g = 2 or 4 channels per group (ResNeXt: 4), host only: the B
  // lanes are B consecutive output channels of B / G groups, which read the same B consecutive
  // input channels; for input channel c of a group, lane l takes input lane (l - l mod G + c)
  // of its pixel's B channels (one permute, spread_in_groups), so no lane idles on another
  // group's padding (the general tile gave each group a block of 32 lanes, G of them live).
  // Weights [k block][r][s][c][B]. Blocks are whole (k is a multiple of B: checked at prepare).
  template <int G>
  KOKKOS_INLINE_FUNCTION void grouped_tile(const int n, const int oh, const int owb, const int kb) const {
    using vec = float_lanes<W>;
    const int k0 = kb * B;  // first output channel, and first input channel (c/g = k/g)
    const int ow0 = owb * PX;
    const int q = p.q();
    const int npx = q - ow0 < PX ? q - ow0 : PX;
    const int sh = p.row_stride(), sw = p.col_stride(), pt = p.pad_top(), pl = p.pad_left(), H = p.h, Wd = p.w, C = p.c;
    vec acc[PX][KV];
    KCNN_UNROLL_TILE
    for (int v = 0; v < KV; ++v) {
      float b[W];
      for (int l = 0; l < W; ++l) b[l] = float(bias(k0 + v * W + l));
      vec bv;
      load_lanes<W>(bv, b);
      KCNN_UNROLL_TILE
      for (int i = 0; i < PX; ++i) acc[i][v] = bv;
    }
    const std::size_t image = std::size_t(n) * H * Wd * C;
    constexpr int P = conv_vector_pad;
    for (int r = 0; r < p.r; ++r) {
      const int ih = oh * sh - pt + r * p.dilation_h;
      if (ih < 0 || ih >= H) continue;
      const float* const row = x + image + std::size_t(ih) * Wd * C + k0;
      for (int s = 0; s < p.s; ++s) {
        const float* px[PX];
        tap_pixels(px, row, zero, ow0 * sw - pl + s * p.dilation_w, sw, npx, Wd, C);
        const float* const wp = pack + ((std::size_t(k0 / P) * p.r + r) * p.s + s) * G * P + (k0 % P);
        vec wv[G][KV];
        KCNN_UNROLL_TILE
        for (int c = 0; c < G; ++c)
          KCNN_UNROLL_TILE
          for (int v = 0; v < KV; ++v) load_lanes<W>(wv[c][v], wp + c * P + v * W);
        KCNN_UNROLL_TILE
        for (int i = 0; i < PX; ++i)
          KCNN_UNROLL_TILE
          for (int v = 0; v < KV; ++v) {
            vec xv;
            load_lanes<W>(xv, px[i] + v * W);
            spread_taps<G>(acc[i][v], xv, wv, v, std::make_integer_sequence<int, G>{});
          }
      }
    }
    const int K = p.k;
    for (int i = 0; i < npx; ++i) {
      float* yv = y + ((std::size_t(n) * p.p() + oh) * q + (ow0 + i)) * K + k0;
      KCNN_UNROLL_TILE
      for (int v = 0; v < KV; ++v) store_lanes<W>(yv + v * W, acc[i][v]);
    }
  }
  template <int G, class Vec, int... Cs>
  KOKKOS_FORCEINLINE_FUNCTION static void spread_taps(Vec& acc, const Vec& xv, const Vec (&wv)[G][KV], int v,
                                                      std::integer_sequence<int, Cs...>) {
    (
        [&] {
          Vec a;
          spread_in_groups<W, G, Cs>(a, xv);
          madd_each_lane<W>(acc, a, wv[Cs][v]);
        }(),
        ...);
  }

  // `steps` reduction steps whose inputs are consecutive floats: at step t pixel i reads b[i sc +
  // t], broadcast over the lanes, and the item's weights are wp + t P (P = conv_vector_pad).
  // pf (if any): a run of steps x PX floats to fetch into the cache meanwhile, the floats at pf +
  // t PX at step t (the next tile's input, for a pointwise row: steps = C).
  template <class Vec>
  KOKKOS_FORCEINLINE_FUNCTION void broadcast_run(Vec (&acc)[PX][KV], const float* b, std::ptrdiff_t sc,
                                                 const float* wp, int steps, const float* pf = nullptr) const {
    for (int t = 0; t < steps; ++t, wp += conv_vector_pad, ++b) {
      if (pf) prefetch_host(pf + std::size_t(t) * PX, 1);
      Vec wv[KV];
      KCNN_UNROLL_TILE
      for (int v = 0; v < KV; ++v) load_lanes<W>(wv[v], wp + wofs(v));
      KCNN_UNROLL_TILE
      for (int i = 0; i < PX; ++i) {
        const float xi = b[i * sc];
        KCNN_UNROLL_TILE
        for (int v = 0; v < KV; ++v) madd_lanes<W>(acc[i][v], xi, wv[v]);
      }
    }
  }

  // One filter row of a depthwise tile's first NP pixels, stride SW: the row reads input columns
  // col0 + j, j < (NP - 1) SW + S, of `row` (pixel i's tap s is column col0 + i SW + s); only j in
  // [lo, hi) is inside the input and read, the others are zeros. wp: the row's packed weights
  // ([s][k padded]).
  template <int S, int SW, int NP, class Vec>
  KOKKOS_FORCEINLINE_FUNCTION void sliding_row(Vec (&acc)[PX][KV], const float* row, int col0, const float* wp, int C,
                                               int lo, int hi) const {
    constexpr int J = (NP - 1) * SW + S;
    const bool inside = lo <= 0 && hi >= J;
    KCNN_UNROLL_TILE
    for (int v = 0; v < KV; ++v) {
      Vec wv[S];
      KCNN_UNROLL_TILE
      for (int s = 0; s < S; ++s) load_lanes<W>(wv[s], wp + std::size_t(s) * kpad + v * W);
      Vec xs[J];
      if (inside) {
        KCNN_UNROLL_TILE
        for (int j = 0; j < J; ++j) load_lanes<W>(xs[j], row + std::ptrdiff_t(col0 + j) * C + v * W);
      } else {
        KCNN_UNROLL_TILE
        for (int j = 0; j < J; ++j)
          load_lanes<W>(xs[j], j >= lo && j < hi ? row + std::ptrdiff_t(col0 + j) * C + v * W : zero);
      }
      KCNN_UNROLL_TILE
      for (int i = 0; i < NP; ++i)
        KCNN_UNROLL_TILE
        for (int s = 0; s < S; ++s) madd_each_lane<W>(acc[i][v], xs[i * SW + s], wv[s]);
    }
  }
  // sliding_row for the layer's filter width (3 or 5) and stride along w (1 or 2).
  template <int NP, class Vec>
  KOKKOS_FORCEINLINE_FUNCTION void sliding_row_for(Vec (&acc)[PX][KV], const float* row, int col0, const float* wp,
                                                   int C, int lo, int hi) const {
    if (p.col_stride() == 2) {
      if (p.s == 3) sliding_row<3, 2, NP>(acc, row, col0, wp, C, lo, hi);
      else sliding_row<5, 2, NP>(acc, row, col0, wp, C, lo, hi);
    } else {
      if (p.s == 3) sliding_row<3, 1, NP>(acc, row, col0, wp, C, lo, hi);
      else sliding_row<5, 1, NP>(acc, row, col0, wp, C, lo, hi);
    }
  }

  // Host depthwise, a whole output row of one block of B channels per work item (every block
  // full; undilated 3- or 5-wide filter rows at stride 1 or 2 along w): the row's PX-pixel tiles
  // one after another through sliding_row, with the bias, the row pointers and the geometry set
  // up once per row instead of once per tile (per-tile set-up, integer divisions and one MDRange
  // call included, was as long as the multiply-adds of a 7 x 7 to 19 x 19 plane), and the next
  // tile's output lines fetched for writing while this one computes (the stores no longer wait on
  // their read-for-ownership). A row's last out_w mod PX pixels are a tile of their own size, not a
  // whole tile with its extra pixels computed and dropped (7-, 10- and 14-wide rows).
  KOKKOS_INLINE_FUNCTION void depthwise_row(const int n, const int oh, const int kb) const {
    using vec = float_lanes<W>;
    const int k0 = kb * B;
    vec bv[KV];
    KCNN_UNROLL_TILE
    for (int v = 0; v < KV; ++v) {
      float b[W];
      for (int l = 0; l < W; ++l) b[l] = float(bias(k0 + v * W + l));
      load_lanes<W>(bv[v], b);
    }
    const float* const image = x + std::size_t(n) * p.h * p.w * p.c + k0;
    float* const yrow = y + (std::size_t(n) * out_h + oh) * std::size_t(out_w) * p.k + k0;
    const int ih0 = oh * p.row_stride() - p.pad_top();
    for (int i = 0; i < PX && i < out_w; ++i) prefetch_host<true>(yrow + std::size_t(i) * p.k, B * sizeof(float));
    int ow0 = 0;
    for (; ow0 + PX <= out_w; ow0 += PX) depthwise_row_tile<PX>(bv, image, yrow, k0, ih0, ow0);
    if (ow0 < out_w) depthwise_row_tail(bv, image, yrow, k0, ih0, ow0, std::make_integer_sequence<int, PX - 1>{});
  }
  template <int... Ns>
  KOKKOS_FORCEINLINE_FUNCTION void depthwise_row_tail(const float_lanes<W> (&bv)[KV], const float* image, float* yrow,
                                                      int k0, int ih0, int ow0, std::integer_sequence<int, Ns...>) const {
    const int np = out_w - ow0;
    ((np == Ns + 1 ? depthwise_row_tile<Ns + 1>(bv, image, yrow, k0, ih0, ow0) : void()), ...);
  }
  // NP output pixels of a row from column ow0 (depthwise_row).
  template <int NP>
  KOKKOS_FORCEINLINE_FUNCTION void depthwise_row_tile(const float_lanes<W> (&bv)[KV], const float* image, float* yrow,
                                                      int k0, int ih0, int ow0) const {
    using vec = float_lanes<W>;
    const int H = p.h, Wd = p.w, C = p.c, S = p.s;
    for (int i = ow0 + PX; i < ow0 + 2 * PX && i < out_w; ++i)
      prefetch_host<true>(yrow + std::size_t(i) * p.k, B * sizeof(float));
    vec acc[PX][KV];
    KCNN_UNROLL_TILE
    for (int i = 0; i < NP; ++i)
      KCNN_UNROLL_TILE
      for (int v = 0; v < KV; ++v) acc[i][v] = bv[v];
    const int col0 = ow0 * p.col_stride() - p.pad_left();  // input column of pixel 0's first tap
    const int lo = col0 < 0 ? -col0 : 0, hi = Wd - col0;  // columns j in [lo, hi) are inside
    for (int r = 0; r < p.r; ++r) {
      const int ih = ih0 + r * p.dilation_h;
      if (ih < 0 || ih >= H) continue;
      sliding_row_for<NP>(acc, image + std::size_t(ih) * Wd * C, col0, pack + std::size_t(r) * S * kpad + k0, C, lo, hi);
    }
    KCNN_UNROLL_TILE
    for (int i = 0; i < NP; ++i)
      KCNN_UNROLL_TILE
      for (int v = 0; v < KV; ++v) store_lanes<W>(yrow + std::size_t(ow0 + i) * p.k + v * W, acc[i][v]);
  }

  template <bool FullBlock>
  KOKKOS_INLINE_FUNCTION void tile(const int n, const int oh, const int owb, const int kb) const {
    using vec = float_lanes<W>;
    const int cpg = p.c_per_group(), kpg = p.k_per_group();
    const int g = depthwise ? 0 : kb / kblocks;
    const int kg0 = (depthwise ? kb : kb % kblocks) * B;  // first channel of the block within its group
    const int kspan = depthwise ? p.k : kpg;
    const int kn = FullBlock ? B : kspan - kg0;
    const int k0 = g * kpg + kg0;  // first output channel
    const int ow0 = owb * PX;
    const int q = p.q();
    const int npx = q - ow0 < PX ? q - ow0 : PX;
    const int sh = p.row_stride(), sw = p.col_stride(), pt = p.pad_top(), pl = p.pad_left(), H = p.h, Wd = p.w, C = p.c;

    // The tile's output lines, fetched for writing while it computes: a few-channel layer's
    // short tiles otherwise wait on each store's read-for-ownership.
    for (int i = 0; i < npx; ++i)
      prefetch_host<true>(y + ((std::size_t(n) * p.p() + oh) * q + (ow0 + i)) * p.k + k0, kn * sizeof(float));
    // Fixed trip counts everywhere (PX pixels, KV vectors; a pixel outside the input reads
    // zeros) so that the accumulators stay in registers.
    vec acc[PX][KV];
    KCNN_UNROLL_TILE
    for (int v = 0; v < KV; ++v) {
      float b[W];
      for (int l = 0; l < W; ++l) b[l] = FullBlock || v * W + l < kn ? float(bias(k0 + v * W + l)) : 0.0f;
      vec bv;
      load_lanes<W>(bv, b);
      KCNN_UNROLL_TILE
      for (int i = 0; i < PX; ++i) acc[i][v] = bv;
    }
    const std::size_t image = std::size_t(n) * H * Wd * C;
    const int cbase = depthwise ? kg0 : g * cpg;  // the block's first input channel
    for (int r = 0; r < p.r; ++r) {
      const int ih = oh * sh - pt + r * p.dilation_h;
      if (ih < 0 || ih >= H) continue;
      const float* const row = x + image + std::size_t(ih) * Wd * C + cbase;
      // Depthwise, stride 1 or 2 along w, undilated 3- or 5-wide rows: each of the (PX - 1) SW +
      // S input columns the row reads is loaded once and used by every tap that reads it
      // (PX + S - 1 loads per S x PX multiply-adds at stride 1, instead of S x PX); columns
      // outside the input (padding) are zeros, tested once per column rather than per tap (a
      // partial tile's extra pixels read real columns or zeros and are not stored). Stride 2
      // this way was slower while the tile's loops were left rolled (its registers spilled), not
      // with them unrolled.
      if constexpr (FullBlock && serves_depthwise) {
        if (depthwise && (sw == 1 || sw == 2) && p.dilation_w == 1 && (p.s == 3 || p.s == 5)) {
          const int col0 = ow0 * sw - pl;  // input column of pixel 0's first tap
          const int lo = col0 < 0 ? -col0 : 0, hi = Wd - col0;  // columns j in [lo, hi) are inside
          const float* const wp = pack + std::size_t(r) * p.s * kpad + kg0;
          sliding_row_for<PX>(acc, row, col0, wp, C, lo, hi);
          continue;
        }
      }
      // Dense (one group), undilated, every pixel's whole filter row inside the input: a pixel's
      // taps (s, c) of this row are one contiguous run of S x C floats, and so are their packed
      // weights ([r][s][c][P]): one loop of S x C steps instead of S loops of C (a layer with 1
      // or 3 input channels spent its time on the S loops' setup, not on its multiply-adds).
      if (!depthwise && p.groups == 1 && p.dilation_w == 1) {
        const int iw_first = ow0 * sw - pl;
        if (npx == PX && iw_first >= 0 && iw_first + (PX - 1) * sw + p.s - 1 < Wd) {
          constexpr int P = conv_vector_pad;
          const float* wp = pack + ((kg0 / P) * std::size_t(p.r) + r) * p.s * std::size_t(C) * P + kg0 % P;
          // A pointwise row (1-wide filter rows, stride 1; fc's images): the next tile's input, PX
          // x C contiguous floats, fetched while this one computes. The hardware prefetcher
          // follows badly the PX runs a C apart that a tile walks together.
          const bool next_tile = p.s == 1 && sw == 1 && iw_first + 2 * PX <= Wd;
          broadcast_run(acc, row + std::size_t(iw_first) * C, std::ptrdiff_t(sw) * C, wp, p.s * C,
                        next_tile ? row + std::size_t(iw_first + PX) * C : nullptr);
          continue;
        }
      }
      for (int s = 0; s < p.s; ++s) {
        const float* px[PX];
        KCNN_UNROLL_TILE
        for (int i = 0; i < PX; ++i) {
          const int iw = (ow0 + i) * sw - pl + s * p.dilation_w;
          px[i] = (i < npx && iw >= 0 && iw < Wd) ? row + std::size_t(iw) * C : zero;
        }
        if (depthwise) {
          const float* const wp = pack + (std::size_t(r) * p.s + s) * kpad + kg0;
          const int iw_first = ow0 * sw - pl + s * p.dilation_w;
          if (FullBlock && npx == PX && iw_first >= 0 && iw_first + (PX - 1) * sw < Wd) {
            // Every pixel inside the input: one base pointer and fixed offsets, no per-pixel
            // select (the selects cost more than the PX x KV multiply-adds they feed).
            const float* const b = row + std::size_t(iw_first) * C;
            const std::ptrdiff_t sc = std::ptrdiff_t(sw) * C;
            KCNN_UNROLL_TILE
            for (int v = 0; v < KV; ++v) {
              vec wv;
              load_lanes<W>(wv, wp + v * W);
              KCNN_UNROLL_TILE
              for (int i = 0; i < PX; ++i) {
                vec a;
                load_lanes<W>(a, b + i * sc + v * W);
                madd_each_lane<W>(acc[i][v], a, wv);
              }
            }
            continue;
          }
          KCNN_UNROLL_TILE
          for (int v = 0; v < KV; ++v) {
            vec wv;
            load_lanes<W>(wv, wp + v * W);
            if constexpr (FullBlock) {
              KCNN_UNROLL_TILE
              for (int i = 0; i < PX; ++i) {
                vec a;
                load_lanes<W>(a, px[i] + v * W);
                madd_each_lane<W>(acc[i][v], a, wv);
              }
            } else {  // the last block: no read past the channels (the packed weights are padded)
              KCNN_UNROLL_TILE
              for (int i = 0; i < PX; ++i) {
                float a[W];
                for (int l = 0; l < W; ++l) a[l] = v * W + l < kn ? px[i][v * W + l] : 0.0f;
                vec av;
                load_lanes<W>(av, a);
                madd_each_lane<W>(acc[i][v], av, wv);
              }
            }
          }
          continue;
        }
        constexpr int P = conv_vector_pad;
        const float* wp = pack + (((std::size_t(g) * (kpad / P) + kg0 / P) * p.r + r) * p.s + s) * std::size_t(cpg) * P +
                          kg0 % P;
        const int iw0 = ow0 * sw - pl + s * p.dilation_w;
        if (npx == PX && iw0 >= 0 && iw0 + (PX - 1) * sw < Wd) {
          // Every pixel inside the input: one pointer and fixed offsets (eight pointers
          // advanced together ran out of general registers and spilled).
          broadcast_run(acc, row + std::size_t(iw0) * C, std::ptrdiff_t(sw) * C, wp, cpg);
          continue;
        }
        for (int c = 0; c < cpg; ++c, wp += P) {
          vec wv[KV];
          KCNN_UNROLL_TILE
          for (int v = 0; v < KV; ++v) load_lanes<W>(wv[v], wp + wofs(v));
          KCNN_UNROLL_TILE
          for (int i = 0; i < PX; ++i) {
            const float xi = px[i][c];
            KCNN_UNROLL_TILE
            for (int v = 0; v < KV; ++v) madd_lanes<W>(acc[i][v], xi, wv[v]);
          }
        }
      }
    }
    const int K = p.k;
    KCNN_UNROLL_TILE
    for (int i = 0; i < PX; ++i) {
      if (i >= npx) break;
      float* yv = y + ((std::size_t(n) * p.p() + oh) * q + (ow0 + i)) * K + k0;
      KCNN_UNROLL_TILE
      for (int v = 0; v < KV; ++v) {
        if (FullBlock || kn >= (v + 1) * W) {
          store_lanes<W>(yv + v * W, acc[i][v]);
        } else {
          for (int l = 0; v * W + l < kn; ++l) yv[v * W + l] = lane_get<W>(acc[i][v], l);
        }
      }
    }
  }
};

// Grouped convolution with G = c/g = k/g in {8, 16} channels per group on a host (ResNeXt's 32
// groups of 8 and 16; the functor takes G = 4, 8, 16 at W = 16), the phase tile: a work item is
// PX pixels x W output channels, held as 4 accumulator vectors per pixel whose lane l is output channel l / 4 of the vector's W / 4
// (vector v: channels k0 + v W/4 ..) and input phase l mod 4. A step reads input channels 4 t ..
// 4 t + 3 of the vector's group: one 16-byte broadcast load per pixel and group (broadcast_quad),
// shared by the vectors of that group, and one multiply-add per vector, with no permute (the
// grouped lanes' spread_in_groups spent a permute per multiply-add, and permutes share a port
// with the FMAs). The phases are summed once per output vector (sum_phases), then the bias
// added. Per step and tap: 4 weight loads and PX W/G broadcasts for 4 PX FMAs (docs/performance.md
// compares it with grouped_tile). Weights [k / W][r][s][c / 4][4 vectors][W].
template <int W, int G, int PX, class Bias>
struct conv_vector_phase_functor {
  static_assert(W % 4 == 0 && (W % G == 0 || G % W == 0) && G % 4 == 0, "phase tile: W and G multiples of 4");
  static constexpr int KPV = W / 4;                // output channels per accumulator vector
  static constexpr int NG = W >= G ? W / G : 1;    // groups among an item's W channels
  static constexpr int VG = 4 / NG;                // accumulator vectors per group
  const float* x;
  const float* pack;
  const float* zero;  // C + 32 zeros: what a pixel outside the input reads
  Bias bias;
  float* y;
  conv2d_params p;

  KOKKOS_INLINE_FUNCTION void operator()(const int n, const int oh, const int owb, const int kb) const {
    using vec = float_lanes<W>;
    const int k0 = kb * W, ow0 = owb * PX, q = p.q();
    const int npx = q - ow0 < PX ? q - ow0 : PX;
    const int sh = p.row_stride(), sw = p.col_stride(), pt = p.pad_top(), pl = p.pad_left(), H = p.h, Wd = p.w, C = p.c;
    vec acc[PX][4];
    KCNN_UNROLL_TILE
    for (int i = 0; i < PX; ++i)
      KCNN_UNROLL_TILE
      for (int v = 0; v < 4; ++v) acc[i][v] = vec{};
    int gc[NG];  // first input channel of each group among the item's channels
    KCNN_UNROLL_TILE
    for (int j = 0; j < NG; ++j) gc[j] = (k0 + j * VG * KPV) / G * G;
    const std::size_t image = std::size_t(n) * H * Wd * C;
    for (int r = 0; r < p.r; ++r) {
      const int ih = oh * sh - pt + r * p.dilation_h;
      if (ih < 0 || ih >= H) continue;
      const float* const row = x + image + std::size_t(ih) * Wd * C;
      for (int s = 0; s < p.s; ++s) {
        const float* px[PX];
        tap_pixels(px, row, zero, ow0 * sw - pl + s * p.dilation_w, sw, npx, Wd, C);
        const float* const wp = pack + ((std::size_t(kb) * p.r + r) * p.s + s) * G * W;
        KCNN_UNROLL_TILE
        for (int t = 0; t < G; t += 4) {
          vec wv[4];
          KCNN_UNROLL_TILE
          for (int v = 0; v < 4; ++v) load_lanes<W>(wv[v], wp + (t + v) * W);
          KCNN_UNROLL_TILE
          for (int i = 0; i < PX; ++i)
            KCNN_UNROLL_TILE
            for (int j = 0; j < NG; ++j) {
              vec xq;
              broadcast_quad<W>(xq, px[i] + gc[j] + t);
              KCNN_UNROLL_TILE
              for (int u = 0; u < VG; ++u) madd_each_lane<W>(acc[i][j * VG + u], xq, wv[j * VG + u]);
            }
        }
      }
    }
    float b[W];
    for (int l = 0; l < W; ++l) b[l] = float(bias(k0 + l));
    vec bv;
    load_lanes<W>(bv, b);
    const int K = p.k;
    for (int i = 0; i < npx; ++i) {
      vec out;
      sum_phases<W>(out, acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
      add_each_lane<W>(out, bv);
      store_lanes<W>(y + ((std::size_t(n) * p.p() + oh) * q + (ow0 + i)) * K + k0, out);
    }
  }
};

// The unit that shares loads, for the traffic model: an item of PX pixels x KV vectors of 16
// channels (conv_vector_host_tile; 4 x 16 for the phase tile, 8 x 32 for depthwise layers and
// groups of 2 and 4).
inline std::array<int, 2> conv_vector_load_unit(const conv2d_params& p) {
  const bool dw = p.c_per_group() == 1 && p.k_per_group() == 1;
  const int g = conv_vector_group_lanes(p);
  if (g == 8 || g == 16) return {4, conv_vector_lanes};  // the phase tile
  if (dw || g) return {conv_vector_pixels, conv_vector_lanes * conv_vector_vectors};
  const auto t = conv_vector_host_tile(p);
  return {t[1], conv_vector_lanes * t[0]};
}

// MDRange functor over (image, output row, channel block) running a tile functor's depthwise_row.
template <class F>
struct conv_vector_depthwise_rows {
  F f;
  KOKKOS_INLINE_FUNCTION void operator()(const int n, const int oh, const int kb) const { f.depthwise_row(n, oh, kb); }
};


// The host tuning's prepared state of the nhwc form: its packing (grouped lanes and the phase
// tile have their own) and its launches.
template <class Exec>
class conv2d_direct_vector_state {
 public:
  using pack_view = Kokkos::View<float*, typename Exec::memory_space>;
  template <class Wt>
  void prepare(const Exec& exec, const conv2d_params& p, const Wt& wt) {
    p_ = p;
    depthwise_ = p.c_per_group() == 1 && p.k_per_group() == 1;
    // Host: groups of 2 to 16 channels in and out (ResNeXt's 32 groups of 4 to 16) take the
    // grouped lanes (2, 4: a block of lanes spans several groups) or the phase tile (8, 16) when
    // the blocks are whole.
    group_lanes_ = conv_vector_group_lanes(p);
    const int span = depthwise_ ? p.k : p.k_per_group();
    kpad_ = (span + conv_vector_pad - 1) / conv_vector_pad * conv_vector_pad;
    const std::size_t size = group_lanes_ ? std::size_t(p.k) * p.r * p.s * p.c_per_group()
                             : depthwise_ ? std::size_t(p.r) * p.s * kpad_
                                          : std::size_t(p.groups) * p.r * p.s * p.c_per_group() * kpad_;
    pack_ = pack_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcnn::conv2d_direct_vector.weights"), size);
    zeros_ = pack_view("kcnn::conv2d_direct_vector.zeros", std::size_t(p.c) + conv_vector_pad);
    conv_vector_pack_functor<Wt, pack_view> pf{wt, pack_, p, kpad_, depthwise_, group_lanes_ > 0};
    if (phase_tile()) pf.phase_lanes = conv_vector_lanes;
    launch_range("kcnn::conv2d_direct_vector_pack", exec, size, pf);
  }
  double workspace_bytes() const { return double(pack_.span() + zeros_.span()) * sizeof(float); }

  template <class In, class Bias, class Out>
  void operator()(const Exec& exec, const In& in, const Bias& bias, const Out& out) const {
    // Depthwise: 3 vectors x 4 pixels where the channels are whole blocks of 48 (every MobileNet
    // V2 depthwise layer but the first), else 4 x 4 for blocks of 64, 2 x 8 for blocks of 32,
    // otherwise 1 x 8 (a partial block of 2 or 3 vectors takes the slow masked copy of the tile
    // for a third of the channels).
    {
      constexpr int dw_kv = conv_vector_depthwise_vectors;
      if (group_lanes_ == 8) launch_phase<8>(exec, in.view().data(), bias, out.view().data());
      else if (group_lanes_ == 16) launch_phase<16>(exec, in.view().data(), bias, out.view().data());
      else if (group_lanes_)
        launch<2, conv_vector_pixels>(exec, in.view().data(), bias, out.view().data());
      else if (depthwise_ && p_.k % (dw_kv * conv_vector_lanes) == 0)
        launch<dw_kv, conv_vector_depthwise_pixels>(exec, in.view().data(), bias, out.view().data());
      else if (depthwise_ && p_.k % (4 * conv_vector_lanes) == 0)
        launch<4, conv_vector_depthwise_pixels>(exec, in.view().data(), bias, out.view().data());
      else if (depthwise_ && p_.k % (2 * conv_vector_lanes) == 0)
        launch<2, conv_vector_pixels>(exec, in.view().data(), bias, out.view().data());
      else if (depthwise_)
        launch<1, conv_vector_pixels>(exec, in.view().data(), bias, out.view().data());
      else if (conv_vector_host_tile(p_)[1] == 16)
        launch<1, 16>(exec, in.view().data(), bias, out.view().data());
      else if (conv_vector_host_tile(p_)[1] == 6)
        launch<4, 6>(exec, in.view().data(), bias, out.view().data());
      else
        launch<conv_vector_vectors, conv_vector_pixels>(exec, in.view().data(), bias, out.view().data());
    }
  }

 private:
  // Groups of 8 or 16 channels take the phase tile (conv_vector_phase_functor), groups of 2 and 4
  // grouped_tile (the phase tile's 4 broadcasts per 4 FMAs at G = 4 made it load-bound).
  bool phase_tile() const { return group_lanes_ == 8 || group_lanes_ == 16; }
  // The phase tile: 4 pixels x W channels (16 accumulators: at 6 pixels GCC 12 spilled them),
  // items over (image, row, pixel block, channel block),
  // a tile of Kokkos' MDRange being a pixel block's channel blocks.
  template <int G, class Bias>
  void launch_phase(const Exec& exec, const float* x, const Bias& bias, float* y) const {
    constexpr int W = conv_vector_lanes, PX = 4;
    static_assert(W % 4 == 0 && (W % G == 0 || G % W == 0), "the phase tile needs host lanes (W = 16)");
    const int kitems = p_.k / W;
    const int owblocks = (p_.q() + PX - 1) / PX;
    int ktile = kitems;
    const long pixel_blocks = long(p_.n) * p_.p() * owblocks;
    const long want = 4L * compat::concurrency(exec);
    while (ktile > 1 && pixel_blocks * ((kitems + ktile - 1) / ktile) < want) ktile = (ktile + 1) / 2;
    launch_mdrange<4, Kokkos::Iterate::Right>(
        "kcnn::conv2d_direct_vector", exec, {0, 0, 0, 0}, {p_.n, p_.p(), owblocks, kitems}, {1, 1, 1, ktile},
        conv_vector_phase_functor<W, G, PX, Bias>{x, pack_.data(), zeros_.data(), bias, y, p_});
  }
  template <int KV, int PX, class Bias>
  void launch(const Exec& exec, const float* x, const Bias& bias, float* y) const {
    constexpr int W = conv_vector_lanes;
    const int span = depthwise_ || group_lanes_ ? p_.k : p_.k_per_group();
    const int kblocks = (span + W * KV - 1) / (W * KV);
    const int kitems = depthwise_ || group_lanes_ ? kblocks : kblocks * p_.groups;
    const int owblocks = (p_.q() + PX - 1) / PX;
    // Host: a tile is a block of PX pixels with all its channel blocks (a contiguous run of the
    // output), since Kokkos' OpenMP backend deals MDRange tiles round-robin (schedule(static,
    // 1)): with one item per tile, two threads took alternate channel blocks of the same pixels
    // and wrote neighbouring lines (slower at 2 threads than at 1). The channel blocks are split when that leaves fewer than 4 tiles per
    // thread.
    int ktile = kitems;
    const long pixel_blocks = long(p_.n) * p_.p() * owblocks;
    const long want = 4L * compat::concurrency(exec);
    while (ktile > 1 && pixel_blocks * ((kitems + ktile - 1) / ktile) < want) ktile = (ktile + 1) / 2;
    conv_vector_nhwc_functor<W, KV, PX, Bias> f{x, pack_.data(), zeros_.data(), bias, y, p_, kpad_,
                                                kblocks, depthwise_, group_lanes_};
    f.wblock = std::size_t(p_.r) * p_.s * p_.c_per_group() * conv_vector_pad;
    // Depthwise layers the row walk covers: an MDRange over (image, row, channel block), a tile
    // being a row's channel blocks (a contiguous run of the output), split as above when that
    // leaves too few tiles.
    if constexpr (decltype(f)::serves_depthwise) {
      if (depthwise_ && span % (W * KV) == 0 && p_.dilation_w == 1 && (p_.s == 3 || p_.s == 5) &&
          (p_.col_stride() == 1 || p_.col_stride() == 2)) {
        f.out_h = p_.p();
        f.out_w = p_.q();
        int rtile = kitems;
        const long rows = long(p_.n) * p_.p();
        while (rtile > 1 && rows * ((kitems + rtile - 1) / rtile) < want) rtile = (rtile + 1) / 2;
        launch_mdrange<3, Kokkos::Iterate::Right>("kcnn::conv2d_direct_vector", exec, {0, 0, 0},
                                                  {p_.n, p_.p(), kitems}, {1, 1, rtile},
                                                  conv_vector_depthwise_rows<decltype(f)>{f});
        return;
      }
    }
    const std::array<long, 4> tile{1, 1, 1, ktile};
    launch_mdrange<4, Kokkos::Iterate::Right>("kcnn::conv2d_direct_vector", exec, {0, 0, 0, 0},
                                              {p_.n, p_.p(), owblocks, kitems}, tile, f);
  }


  conv2d_params p_;
  bool depthwise_ = false;
  int group_lanes_ = 0;  // G channels per group (2, 4: grouped lanes; 8, 16: the phase tile), else 0
  int kpad_ = 0;
  pack_view pack_, zeros_;
};


// The host tile: (n, oh, block kb over all groups, block of W x PV output columns). When
// `pointwise`, p is the layer seen as one row per image (h = 1, w = the plane).
template <int W, int KB, int PV, class Bias>
struct conv_vector_nchw_functor {
  static constexpr int PXB = W * PV;  // output columns per item
  // An edge item's input row segment, zero-padded (floats): stride 1 or 2, up to 96 columns of
  // output and a dilated filter row spanning up to 65 columns ((S - 1) dilation <= 64).
  static constexpr int segment_floats = 2 * PXB + 64;
  const float* x;
  const float* pack;
  Bias bias;
  float* y;
  conv2d_params p;
  int kblocks;  // blocks per group

  // acc[j][v] += w[j] x[v] for the block's KB weights w of one tap.
  KOKKOS_FORCEINLINE_FUNCTION static void madd_tap(float_lanes<W> (&acc)[KB][PV], const float_lanes<W> (&xv)[PV],
                                                   const float* w) {
    KCNN_UNROLL_TILE
    for (int j = 0; j < KB; ++j) {
      const float wj = w[j];
      KCNN_UNROLL_TILE
      for (int v = 0; v < PV; ++v) madd_lanes<W>(acc[j][v], wj, xv[v]);
    }
  }
  // The PV vectors of input a tap reads from b (its lane 0's column): stride 1, one load each;
  // stride 2, two loads and the even lanes (the second load ends one column past the last lane's).
  KOKKOS_FORCEINLINE_FUNCTION static void load_tap(float_lanes<W> (&xv)[PV], const float* b, int sw) {
    if (sw == 1) {
      KCNN_UNROLL_TILE
      for (int v = 0; v < PV; ++v) load_lanes<W>(xv[v], b + v * W);
    } else {
      KCNN_UNROLL_TILE
      for (int v = 0; v < PV; ++v) {
        float_lanes<W> lo, hi;
        load_lanes<W>(lo, b + 2 * v * W);
        load_lanes<W>(hi, b + 2 * v * W + W);
        even_lanes<W>(xv[v], lo, hi);
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const int n, const int oh, const int kb_all, const int owb) const {
    using vec = float_lanes<W>;
    const int g = kb_all / kblocks, b = kb_all % kblocks;
    const int kpg = p.k_per_group(), cpg = p.c_per_group();
    const int kn = kpg - b * KB < KB ? kpg - b * KB : KB;  // live channels of the block
    const int k0 = g * kpg + b * KB;
    const int Q = p.q(), C = p.c, H = p.h, Wd = p.w, R = p.r, S = p.s;
    const int sh = p.row_stride(), sw = p.col_stride(), dh = p.dilation_h, dw = p.dilation_w;
    const int ow0 = owb * PXB;
    const int npx = Q - ow0 < PXB ? Q - ow0 : PXB;
    // The item's output rows, fetched for writing while it computes (the stores would wait on
    // their read-for-ownership).
    for (int j = 0; j < kn; ++j)
      prefetch_host<true>(y + ((std::size_t(n) * p.k + k0 + j) * p.p() + oh) * std::size_t(Q) + ow0, npx * sizeof(float));
    // Fixed trip counts everywhere (j < KB, v < PV): an accumulator indexed by a runtime bound
    // lives on the stack, and then so do all of them.
    vec acc[KB][PV];
    KCNN_UNROLL_TILE
    for (int j = 0; j < KB; ++j) {
      const float bj = j < kn ? float(bias(k0 + j)) : 0.0f;
      KCNN_UNROLL_TILE
      for (int v = 0; v < PV; ++v) fill_lanes<W>(acc[j][v], bj);
    }
    // The input columns the item's taps read in a row: [seg0, seg0 + seg_len) (stride 2 loads
    // one column past the last lane's). Inside the row: loads straight from it; otherwise
    // (padding, the row's end, a partial item) from a zero-padded copy of the segment; stride 3
    // and more, or a segment too long for the copy: gathers.
    const int seg0 = ow0 * sw - p.pad_left();
    const int seg_len = (PXB - 1) * sw + (S - 1) * dw + 1 + (sw == 2 ? 1 : 0);
    const bool inside = npx == PXB && seg0 >= 0 && seg0 + seg_len <= Wd && sw <= 2;
    const bool padded_copy = !inside && sw <= 2 && seg_len <= segment_floats;
    const int copy_lo = seg0 < 0 ? 0 : seg0, copy_hi = seg0 + seg_len < Wd ? seg0 + seg_len : Wd;
    // Host prefetch: the columns the item 4 items further along the row reads, per input row.
    const int ahead = seg0 + 4 * PXB * sw;
    const bool prefetch = ahead + PXB * sw <= Wd;
    const float* wp = pack + std::size_t(kb_all) * cpg * R * S * KB;
    const int ih1 = oh * sh - p.pad_top();
    if (R == 1 && S == 1 && inside && ih1 >= 0 && ih1 < H) {
      // 1 x 1 inside the input (a pointwise layer, one row per image): one loop over the input
      // channels, a plane apart (the loop setup of the general taps cost as much as 24 FMAs).
      const std::size_t plane_size = std::size_t(H) * Wd;
      const float* xc = x + (std::size_t(n) * C + std::size_t(g) * cpg) * plane_size + std::size_t(ih1) * Wd + seg0;
      for (int c = 0; c < cpg; ++c, xc += plane_size, wp += KB) {
        if (prefetch) prefetch_host(xc + 4 * PXB * sw, std::size_t(PXB) * sw * sizeof(float));
        vec xv[PV];
        load_tap(xv, xc, sw);
        madd_tap(acc, xv, wp);
      }
      store(acc, n, oh, k0, kn, ow0, npx);
      return;
    }
    float segment[segment_floats];
    for (int c = 0; c < cpg; ++c) {
      const float* const plane = x + (std::size_t(n) * C + std::size_t(g) * cpg + c) * std::size_t(H) * Wd;
      for (int r = 0; r < R; ++r) {
        const int ih = ih1 + r * dh;
        if (ih < 0 || ih >= H) {
          wp += S * KB;
          continue;
        }
        const float* const row = plane + std::size_t(ih) * Wd;
        if (prefetch) prefetch_host(row + ahead, std::size_t(PXB) * sw * sizeof(float));
        const float* base = row + seg0;
        if (padded_copy) {
          for (int t = 0; t < seg_len; ++t) segment[t] = 0.0f;
          for (int iw = copy_lo; iw < copy_hi; ++iw) segment[iw - seg0] = row[iw];
          base = segment;
        }
        if (inside || padded_copy) {
          for (int s = 0; s < S; ++s, wp += KB) {
            vec xv[PV];
            load_tap(xv, base + s * dw, sw);
            madd_tap(acc, xv, wp);
          }
          continue;
        }
        for (int s = 0; s < S; ++s, wp += KB) {
          vec xv[PV];
          KCNN_UNROLL_TILE
          for (int v = 0; v < PV; ++v) {
            float a[W];
            for (int l = 0; l < W; ++l) {
              const int iw = seg0 + s * dw + (v * W + l) * sw;
              a[l] = (v * W + l < npx && iw >= 0 && iw < Wd) ? row[iw] : 0.0f;
            }
            load_lanes<W>(xv[v], a);
          }
          madd_tap(acc, xv, wp);
        }
      }
    }
    store(acc, n, oh, k0, kn, ow0, npx);
  }

  KOKKOS_FORCEINLINE_FUNCTION void store(const float_lanes<W> (&acc)[KB][PV], int n, int oh, int k0, int kn, int ow0,
                                         int npx) const {
    const int P = p.p(), Q = p.q(), K = p.k;
    KCNN_UNROLL_TILE
    for (int j = 0; j < KB; ++j) {
      if (j >= kn) break;
      float* const yo = y + ((std::size_t(n) * K + k0 + j) * P + oh) * std::size_t(Q) + ow0;
      KCNN_UNROLL_TILE
      for (int v = 0; v < PV; ++v) {
        if (npx == PXB) {
          store_lanes<W>(yo + v * W, acc[j][v]);
        } else {
          for (int l = 0; l < W && v * W + l < npx; ++l) yo[v * W + l] = lane_get<W>(acc[j][v], l);
        }
      }
    }
  }
};

// The host tuning's prepared state of the nchw form: the portable state's packing, without the
// channel split, and the host tile's launch.
template <class Exec>
class conv2d_direct_vector_nchw_state : public kcnn::detail::conv2d_direct_vector_nchw_state<Exec> {
  using base = kcnn::detail::conv2d_direct_vector_nchw_state<Exec>;

 public:
  template <class Wt>
  void prepare(const Exec& exec, const conv2d_params& p, const Wt& wt) {
    base::prepare(exec, p, wt, false);
  }
  // The unit that shares loads, for the traffic model: an item of PV x 16 columns x KB channels.
  static std::array<int, 2> load_unit(const conv2d_params& p) {
    const auto sh = conv_vector_nchw_shape_for(p.k_per_group());
    return {lane_width * sh.pv, sh.kb};
  }
  template <class Bias>
  void operator()(const Exec& exec, const float* x, const Bias& bias, float* y) const {
    switch (this->shape_.kb) {
      case 2: return launch<2, 6>(exec, x, bias, y);
      case 3: return launch<3, 6>(exec, x, bias, y);
      case 4: return launch<4, 4>(exec, x, bias, y);
      case 12: return launch<12, 2>(exec, x, bias, y);
      case 24: return launch<24, 1>(exec, x, bias, y);
      default: return launch<8, 3>(exec, x, bias, y);
    }
  }

 private:
  template <int KB, int PV, class Bias>
  void launch(const Exec& exec, const float* x, const Bias& bias, float* y) const {
    constexpr int W = lane_width;
    const conv2d_params& p_ = this->p_;
    const int kitems = this->kblocks_ * p_.groups;
    conv2d_params q = p_;
    // Pointwise: the plane is one contiguous row of h * w pixels, in the input and the output.
    if (p_.r == 1 && p_.s == 1 && p_.row_stride() == 1 && p_.col_stride() == 1 && p_.pad_top() == 0 &&
        p_.pad_left() == 0 && p_.pad_bottom() == 0 && p_.pad_right() == 0) {
      q = conv2d_params{p_.n, p_.c, 1, p_.h * p_.w, p_.k, 1, 1, 1, 0, p_.groups};
    }
    const int owblocks = (q.q() + W * PV - 1) / (W * PV);
    const conv_vector_nchw_functor<W, KB, PV, Bias> f{x, this->pack_.data(), bias, y, q, this->kblocks_};
    // Channel blocks inside an output row: the row's input stays in cache for every block. A tile
    // is a run of one block's columns (a whole row unless that leaves fewer than 8 tiles per
    // thread: a pointwise layer is one row per image).
    long owtile = owblocks;
    const long rows = long(q.n) * q.p() * kitems, want = 8L * compat::concurrency(exec);
    while (owtile > 1 && rows * ((owblocks + owtile - 1) / owtile) < want) owtile = (owtile + 1) / 2;
    launch_mdrange<4, Kokkos::Iterate::Right>("kcnn::conv2d_direct_vector_nchw", exec, {0, 0, 0, 0},
                                              {q.n, q.p(), kitems, owblocks}, std::array<long, 4>{1, 1, 1, owtile}, f);
  }
};
}  // namespace detail

template <class Exec>
struct tuned<variant::direct_vector, Exec> {
  // Packs the weights for layout L's host form; the state, type-erased, and its bytes.
  template <class L, class Wt>
  static std::shared_ptr<void> prepare(const Exec& exec, const conv2d_params& p, const Wt& wt, double& bytes) {
    if constexpr (std::is_same_v<L, layout::nchw>) {
      auto s = std::make_shared<detail::conv2d_direct_vector_nchw_state<Exec>>();
      s->prepare(exec, p, wt);
      bytes = s->workspace_bytes();
      return s;
    } else {
      auto s = std::make_shared<detail::conv2d_direct_vector_state<Exec>>();
      s->prepare(exec, p, wt);
      bytes = s->workspace_bytes();
      return s;
    }
  }
  template <class L, class In, class Bias, class Out>
  static void run(const Exec& exec, const std::shared_ptr<void>& state, const In& in, const Bias& bias, const Out& out) {
    if constexpr (std::is_same_v<L, layout::nchw>)
      (*static_cast<const detail::conv2d_direct_vector_nchw_state<Exec>*>(state.get()))(exec, in.view().data(), bias,
                                                                                        out.view().data());
    else
      (*static_cast<const detail::conv2d_direct_vector_state<Exec>*>(state.get()))(exec, in, bias, out);
  }
};

}  // namespace host_tuning
}  // namespace kcnn
