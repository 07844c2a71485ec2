#pragma once
// conv2d, direct algorithm, vectorised along the output channels (nhwc: k is the output's
// contiguous axis), with a row of output pixels in registers:
//   * a work item is (image n, output row oh, a block of PX output columns, a block of
//     B = KV x W output channels of one group); its PX x KV accumulators of W lanes stay in
//     registers;
//   * for every tap (r, s) and input channel c of the group, the item loads the B weights of
//     (c, r, s) for its channels (contiguous: the weights are repacked once, by prepare, as
//     [group][block of 32 k][r][s][c][32 k], so an item's weights are one stream) and, for
//     each of its PX pixels, one input value, broadcast over the lanes: PX x KV vector
//     multiply-adds per KV + PX loads;
//   * depthwise layers (one input and one output channel per group) have no channel reduction:
//     there the lanes are channels (KV x W of them; host: 3 x 16 x 4 pixels when the channels
//     are whole blocks of 48, 4 x 16 x 4 of 64, 2 x 16 x 8 of 32, else 1 x 16 x 8), the input
//     values are contiguous channels of a
//     pixel too, and the weights [r][s][c] are KV vectors per tap.
// On a host W = 16 (one AVX-512 register; float_lanes, a vector-extension type), KV = 2, PX = 8:
// 16 accumulator registers, 10 loads per 16 FMAs (KV = 1 left the FMA chains short of the FMA
// units: 147 against 183 GFLOP/s on VGG-16 conv3_1, Zen 5, one thread). Host special cases:
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
// On a GPU (conv_vector_gpu_functor) a thread is one lane of a warp: the warp's 32 lanes take 32
// adjacent output channels (lane l holds channels l + 32 v, v < KV, so each of its KV weight
// loads and output stores is one coalesced 128-byte request), and every lane holds the same PX = 8
// output pixels, consecutive in the flattened (n, oh, ow) order (a 7-wide row wastes no lanes and
// no FMAs: pixel blocks run across rows), whose input values are one address per warp (a
// broadcast). Per input channel and tap: KV + PX load requests for KV x PX FMAs per lane, 4 FMAs
// per request at KV = 8 (the largest of 8, 4, 2, 1 that divides the group's channel blocks of 32).
// Depthwise on a GPU: the lanes are channels again, KV = 1, PX = 4 (no reduction to amortise).
//
// Entry point: kcnn::conv2d(exec, in, wt, bias, out, p, variant::direct_vector{}) after
// kcnn::prepare(exec, v, p, in, wt, bias, out). Layout: nhwc input and output (this file) or nchw
// (kcnn/conv2d/direct_vector_nchw.hpp), weights in any layout.
#include <kcnn/api.hpp>
#include <kcnn/compat.hpp>
#include <kcnn/conv2d/direct_vector_nchw.hpp>
#include <kcnn/conv2d/entry.hpp>
#include <kcnn/conv2d_params.hpp>
#include <kcnn/lanes.hpp>
#include <kcnn/layout.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace kcnn {

namespace detail {

// A work item's output channels: KV vectors of W lanes; its output pixels (registers).
template <class Exec>
inline constexpr int conv_vector_lanes = host_backend<Exec> ? 16 : 1;
template <class Exec>
inline constexpr int conv_vector_vectors = host_backend<Exec> ? 2 : 1;
template <class Exec>
inline constexpr int conv_vector_pixels = host_backend<Exec> ? 8 : 4;
template <class Exec>
inline constexpr int conv_vector_depthwise_vectors = host_backend<Exec> ? 3 : 1;
template <class Exec>
inline constexpr int conv_vector_depthwise_pixels = host_backend<Exec> ? 4 : 4;
// Packed channel blocks: a multiple of KV * W (a host item's channels) and of a GPU warp (32
// adjacent threads read one 128-byte run).
inline constexpr int conv_vector_pad = 32;

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
// multiply-adds on padding; RPN's box head 1.13-1.2x faster), 4 x 6 for at most 4 input channels
// per group and whole blocks of 4 W output channels (an RGB stem, U-Net's single channel: each
// input value broadcast to 4 FMAs instead of 2; ResNet-50's stem 1.07-1.23x, U-Net's first layer
// 1.17-1.29x faster, interleaved runs, one thread), else 2 x 8.
template <class Exec>
inline std::array<int, 2> conv_vector_host_tile(const conv2d_params& p) {
  constexpr int W = conv_vector_lanes<Exec>;
  if (p.k_per_group() <= W) return {1, 16};
  if (p.c_per_group() <= 4 && p.k_per_group() % (4 * W) == 0) return {4, 6};
  return {conv_vector_vectors<Exec>, conv_vector_pixels<Exec>};
}

// The packed weights: general layers [g][k block][r][s][c in group][k in block] (blocks of
// conv_vector_pad channels); depthwise [r][s][k padded]; grouped lanes (host: groups of G = 2 or
// 4 channels, blocks spanning several groups) [k block][r][s][c in group][k in block]; the
// phase tile (host, G = 8, 16) [k / W][r][s][c / 4][4 vectors][W lanes: channel, phase]. Zero
// in the padding.
template <class Wt, class Pack>
struct conv_vector_pack_functor {
  Wt wt;
  Pack pack;
  conv2d_params p;
  int kpad;  // general: k per group padded; depthwise: k padded
  bool depthwise;
  bool grouped_lanes = false;
  int phase_lanes = 0;  // W > 0: the phase tile's weights (conv_vector_phase_functor), W lanes
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    if (phase_lanes) {
      const int W = phase_lanes, cpg = p.c_per_group();
      std::size_t j = i;
      const int l = int(j % std::size_t(W)); j /= std::size_t(W);
      const int v = int(j % 4); j /= 4;
      const int t = int(j % std::size_t(cpg / 4)); j /= std::size_t(cpg / 4);
      const int s = int(j % std::size_t(p.s)); j /= std::size_t(p.s);
      const int r = int(j % std::size_t(p.r)); j /= std::size_t(p.r);
      pack(i) = float(wt(int(j) * W + v * (W / 4) + l / 4, 4 * t + l % 4, r, s));
      return;
    }
    if (grouped_lanes) {
      constexpr int P = conv_vector_pad;
      const int cpg = p.c_per_group();
      std::size_t j = i;
      const int l = int(j % P); j /= P;
      const int c = int(j % std::size_t(cpg)); j /= std::size_t(cpg);
      const int s = int(j % std::size_t(p.s)); j /= std::size_t(p.s);
      const int r = int(j % std::size_t(p.r)); j /= std::size_t(p.r);
      pack(i) = float(wt(int(j) * P + l, c, r, s));
      return;
    }
    if (depthwise) {
      const int k = int(i % std::size_t(kpad));
      const std::size_t rs = i / std::size_t(kpad);
      const int s = int(rs % std::size_t(p.s)), r = int(rs / std::size_t(p.s));
      pack(i) = k < p.k ? float(wt(k, 0, r, s)) : 0.0f;
      return;
    }
    // [g][k block of P][r][s][c][P], P = conv_vector_pad: a work item's weights are one
    // contiguous stream, P floats per input channel.
    constexpr int P = conv_vector_pad;
    const int cpg = p.c_per_group(), kpg = p.k_per_group();
    std::size_t j = i;
    const int l = int(j % P); j /= P;
    const int c = int(j % std::size_t(cpg)); j /= std::size_t(cpg);
    const int s = int(j % std::size_t(p.s)); j /= std::size_t(p.s);
    const int r = int(j % std::size_t(p.r)); j /= std::size_t(p.r);
    const int kk = int(j % std::size_t(kpad / P)) * P + l; j /= std::size_t(kpad / P);
    const int g = int(j);
    pack(i) = kk < kpg ? float(wt(g * kpg + kk, c, r, s)) : 0.0f;
  }
};

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
  // call included, was as long as the multiply-adds of a 7 x 7 to 19 x 19 plane: those layers
  // 1.14-1.20x faster this way), and the next tile's output lines fetched for writing while this
  // one computes (the stores no longer wait on their read-for-ownership: 1.2-1.4x on the 56 x 56
  // to 150 x 150 planes; MobileNet's 13 depthwise layers from 1.31x to 1.09x oneDNN in geometric
  // mean, interleaved runs, one thread). A row's last out_w mod PX pixels are a tile of their own
  // size, not a whole tile with its extra pixels computed and dropped (7-, 10- and 14-wide rows:
  // 3-8 % faster, interleaved runs).
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
    // short tiles otherwise wait on each store's read-for-ownership (U-Net's first layer, 1
    // input channel: 81 -> 61 ms, one thread).
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
      // this way was slower while the tile's loops were left rolled (its registers spilled); with
      // them unrolled it took MobileNet's stride-2 layers from about 1.5x to 1.3x oneDNN.
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
          // follows badly the PX runs a C apart that a tile walks together (RPN's box head, 256
          // to 12 channels: 1.8x faster; DeepLab's classifier 1.25-1.4x, one thread).
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
// added. Per step and tap: 4 weight loads and PX W/G broadcasts for 4 PX FMAs. ResNeXt-50's conv3
// (batch 4, 28 x 28, 256 channels in groups of 8): 1.36-2.00 ms against grouped_tile's 2.34-2.80
// (a program calling both builds' tiles in turn, fastest of 40 calls, three processes, one
// thread; docs/performance.md). Weights [k / W][r][s][c / 4][4 vectors][W].
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

// The GPU tile's KV: the largest of 8, 4, 2, 1 that divides a conv group's blocks of 32
// channels (no channel group padded beyond what the 32-channel packing pads); depthwise 1.
inline int conv_vector_gpu_vectors(const conv2d_params& p) {
  if (p.c_per_group() == 1 && p.k_per_group() == 1) return 1;
  const int blocks = (p.k_per_group() + conv_vector_pad - 1) / conv_vector_pad;
  return blocks % 8 == 0 ? 8 : blocks % 4 == 0 ? 4 : blocks % 2 == 0 ? 2 : 1;
}

// The unit that shares loads, for the traffic model: host, an item of PX pixels x KV vectors of
// 16 channels (conv_vector_host_tile; 4 x 16 for the phase tile, 8 x 32 for depthwise layers and
// groups of 2 and 4); GPU, a warp of 8 pixels (4 depthwise) x 32 KV channels.
template <class Exec>
inline std::array<int, 2> conv_vector_load_unit(const conv2d_params& p) {
  const bool dw = p.c_per_group() == 1 && p.k_per_group() == 1;
  if constexpr (host_backend<Exec>) {
    const int g = conv_vector_group_lanes(p);
    if (g == 8 || g == 16) return {4, conv_vector_lanes<Exec>};  // the phase tile
    if (dw || g) return {conv_vector_pixels<Exec>, conv_vector_lanes<Exec> * conv_vector_vectors<Exec>};
    const auto t = conv_vector_host_tile<Exec>(p);
    return {t[1], conv_vector_lanes<Exec> * t[0]};
  }
  return {dw ? 4 : 8, conv_vector_pad * conv_vector_gpu_vectors(p)};
}

// The GPU form of the tile (see the file comment): f(i), i = (pixel block, channel group, lane)
// with the lane fastest, so a warp is 32 adjacent channels of one pixel block and the warps of a
// block are neighbouring channel groups of the same pixels (their input reads share L1).
// Index arithmetic in 32 bits except the final element offsets.
template <int KV, int PX, class Bias>
struct conv_vector_gpu_functor {
  static constexpr int L = conv_vector_pad;  // lanes per warp: one 128-byte run of channels
  const float* x;
  const float* pack;
  const float* zero;  // C + L zeros: what a pixel outside the input (padding, past the last pixel) reads
  Bias bias;
  float* y;
  conv2d_params p;
  int kpad;     // general: k per group padded to L; depthwise: k padded
  int kgroups;  // channel groups of L * KV per launch (over all conv groups)
  bool depthwise;
  // Split reduction (conv2d and fc): splits > 1 cuts the input channels into segments of
  // csplit, one per item; item `split` writes its partial sums, without the bias, to y + split * npix * K.
  int splits = 1, csplit = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    const int lane = int(i % L);
    // Channel group fastest, then pixel block, split slowest: the blocks that run together read
    // the same segment of the weights (fc: each weight is fetched from DRAM once).
    const int item = int(i / L);
    const int kg = item % kgroups;
    const int pixel_blocks = (p.n * p.p() * p.q() + PX - 1) / PX;
    const int pb = item / kgroups % pixel_blocks, split = item / kgroups / pixel_blocks;
    const int groups_per_conv_group = kpad / (L * KV);  // general: channel groups per conv group
    const int g = depthwise ? 0 : kg / groups_per_conv_group;
    const int kl0 = (depthwise ? kg : kg % groups_per_conv_group) * L * KV;  // within the conv group
    const int kspan = depthwise ? p.k : p.k_per_group();
    const int cpg = p.c_per_group(), kpg = p.k_per_group();
    const int P = p.p(), Q = p.q(), H = p.h, Wd = p.w, C = p.c, K = p.k, R = p.r, S = p.s;
    const int npix = p.n * P * Q;

    // The block's pixels: image, first input row and column of the window (-1 image: none).
    int img[PX], ih0[PX], iw0[PX];
    for (int j = 0; j < PX; ++j) {
      const int o = pb * PX + j;
      const int pq = o % (P * Q);
      img[j] = o < npix ? o / (P * Q) : -1;
      ih0[j] = (pq / Q) * p.row_stride() - p.pad_top();
      iw0[j] = (pq % Q) * p.col_stride() - p.pad_left();
    }
    float acc[PX][KV];
    for (int v = 0; v < KV; ++v) {
      const int kl = kl0 + v * L + lane;
      const float b = kl < kspan && splits == 1 ? float(bias(depthwise ? kl : g * kpg + kl)) : 0.0f;
      for (int j = 0; j < PX; ++j) acc[j][v] = b;
    }
    const int cbase = depthwise ? kl0 + lane : g * cpg;  // depthwise: the lane's channel (v = 0)
    for (int r = 0; r < R; ++r) {
      for (int s = 0; s < S; ++s) {
        const float* px[PX];
        for (int j = 0; j < PX; ++j) {
          const int ih = ih0[j] + r * p.dilation_h, iw = iw0[j] + s * p.dilation_w;
          px[j] = (img[j] >= 0 && ih >= 0 && ih < H && iw >= 0 && iw < Wd)
                      ? x + (std::size_t(img[j] * H + ih) * Wd + iw) * C + cbase
                      : zero;
        }
        if (depthwise) {  // one channel per lane and vector: coalesced input and weight loads
          const float* const wp = pack + (r * S + s) * kpad + kl0 + lane;
          for (int v = 0; v < KV; ++v) {
            const float wv = wp[v * L];
            const bool live = kl0 + v * L + lane < kspan;
            for (int j = 0; j < PX; ++j) acc[j][v] += (live ? px[j][v * L] : 0.0f) * wv;
          }
          continue;
        }
        // [g][block of L k][r][s][c][L k]: vector v's block is (kl0 / L + v), one stride apart.
        const int vstride = R * S * cpg * L;
        const int c0 = splits == 1 ? 0 : split * csplit, c1 = splits == 1 || c0 + csplit > cpg ? cpg : c0 + csplit;
        const float* wp =
            pack + (std::size_t(g) * (kpad / L) + kl0 / L) * vstride + ((r * S + s) * cpg + c0) * L + lane;
        for (int c = c0; c < c1; ++c, wp += L) {
          float wv[KV];
          for (int v = 0; v < KV; ++v) wv[v] = wp[v * vstride];
          for (int j = 0; j < PX; ++j) {
            const float xj = px[j][c];
            for (int v = 0; v < KV; ++v) acc[j][v] += xj * wv[v];
          }
        }
      }
    }
    const int k0 = depthwise ? kl0 : g * kpg + kl0;
    for (int j = 0; j < PX; ++j) {
      if (img[j] < 0) break;
      float* const yp = y + (std::size_t(split) * npix + std::size_t(pb * PX + j)) * K + k0 + lane;
      for (int v = 0; v < KV; ++v)
        if (kl0 + v * L + lane < kspan) yp[v * L] = acc[j][v];
    }
  }
};

// The GPU tile's launch for layer p (weights packed by conv_vector_pack_functor's layout, kpad
// channels per group): KV, PX, the input-channel split of a launch too small to fill the GPU
// (depthwise layers have no channel reduction) and its partial sums. conv2d direct_vector runs it,
// and fc direct_vector as a 1 x 1 convolution over a row of images.
template <class Exec>
class conv_vector_gpu_plan {
 public:
  using view = Kokkos::View<float*, typename Exec::memory_space>;
  void prepare(const conv2d_params& p, int kpad, const std::string& label) {
    p_ = p;
    kpad_ = kpad;
    label_ = label;
    sum_label_ = label + "_sum";
    const bool depthwise = p.c_per_group() == 1 && p.k_per_group() == 1;
    const auto unit = conv_vector_load_unit<Exec>(p);
    const long threads = (long(p.n) * p.p() * p.q() + unit[0] - 1) / unit[0] * (kpad / unit[1]) *
                         (depthwise ? 1 : p.groups) * conv_vector_pad;
    // Depthwise: one input channel per group, nothing to split.
    split_ = {};
    if (!depthwise)
      split_.plan(threads, p.c_per_group(), p.r * p.s, std::size_t(p.n) * p.p() * p.q() * p.k, 1, 65536,
                  label + ".partial");
  }
  double workspace_bytes() const { return split_.workspace_bytes(); }

  template <class Bias>
  void operator()(const Exec& exec, const float* x, const float* pack, const float* zeros, const Bias& bias,
                  float* y) const {
    switch (conv_vector_gpu_vectors(p_)) {
      case 8: return run<8, 8>(exec, x, pack, zeros, bias, y);
      case 4: return run<4, 8>(exec, x, pack, zeros, bias, y);
      case 2: return run<2, 8>(exec, x, pack, zeros, bias, y);
      default:
        return p_.c_per_group() == 1 && p_.k_per_group() == 1 ? run<1, 4>(exec, x, pack, zeros, bias, y)
                                                              : run<1, 8>(exec, x, pack, zeros, bias, y);
    }
  }

 private:
  template <int KV, int PX, class Bias>
  void run(const Exec& exec, const float* x, const float* pack, const float* zeros, const Bias& bias, float* y) const {
    const bool depthwise = p_.c_per_group() == 1 && p_.k_per_group() == 1;
    const int kgroups = kpad_ / (conv_vector_pad * KV) * (depthwise ? 1 : p_.groups);
    const long pixel_blocks = (long(p_.n) * p_.p() * p_.q() + PX - 1) / PX;
    launch_range(label_.c_str(), exec, std::size_t(pixel_blocks) * split_.splits * kgroups * conv_vector_pad,
                 conv_vector_gpu_functor<KV, PX, Bias>{x, pack, zeros, bias, split_.target(y), p_, kpad_, kgroups,
                                                       depthwise, split_.splits, split_.csplit});
    split_.sum(sum_label_.c_str(), exec, bias, y, p_.k);
  }

  conv2d_params p_;
  int kpad_ = 0;
  std::string label_, sum_label_;
  conv_vector_split_plan<view> split_;
};

// MDRange functor over (image, output row, channel block) running a tile functor's depthwise_row.
template <class F>
struct conv_vector_depthwise_rows {
  F f;
  KOKKOS_INLINE_FUNCTION void operator()(const int n, const int oh, const int kb) const { f.depthwise_row(n, oh, kb); }
};

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
    group_lanes_ = host_backend<Exec> ? conv_vector_group_lanes(p) : 0;
    const int span = depthwise_ ? p.k : p.k_per_group();
    kpad_ = (span + conv_vector_pad - 1) / conv_vector_pad * conv_vector_pad;
    const std::size_t size = group_lanes_ ? std::size_t(p.k) * p.r * p.s * p.c_per_group()
                             : depthwise_ ? std::size_t(p.r) * p.s * kpad_
                                          : std::size_t(p.groups) * p.r * p.s * p.c_per_group() * kpad_;
    pack_ = pack_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcnn::conv2d_direct_vector.weights"), size);
    zeros_ = pack_view("kcnn::conv2d_direct_vector.zeros", std::size_t(p.c) + conv_vector_pad);
    conv_vector_pack_functor<Wt, pack_view> pf{wt, pack_, p, kpad_, depthwise_, group_lanes_ > 0};
    if (phase_tile()) pf.phase_lanes = conv_vector_lanes<Exec>;
    launch_range("kcnn::conv2d_direct_vector_pack", exec, size, pf);
    if constexpr (!host_backend<Exec>) gpu_.prepare(p, kpad_, "kcnn::conv2d_direct_vector");
  }
  double workspace_bytes() const {
    return double(pack_.span() + zeros_.span()) * sizeof(float) + gpu_.workspace_bytes();
  }

  template <class In, class Bias, class Out>
  void operator()(const Exec& exec, const In& in, const Bias& bias, const Out& out) const {
    // Depthwise on a host: 3 vectors x 4 pixels where the channels are whole blocks of 48 (every
    // MobileNet V2 depthwise layer but the first: 8.1 ms against 12.7 for 1 x 8 at 32 x 144 x
    // 56 x 56, one thread), else 4 x 4 for blocks of 64, 2 x 8 for blocks of 32, otherwise 1 x 8
    // (a partial block of 2 or 3 vectors takes the slow masked copy of the tile for a third of
    // the channels).
    if constexpr (!host_backend<Exec>) {
      gpu_(exec, in.view().data(), pack_.data(), zeros_.data(), bias, out.view().data());
    } else {
      constexpr int dw_kv = conv_vector_depthwise_vectors<Exec>;
      if (group_lanes_ == 8) launch_phase<8>(exec, in.view().data(), bias, out.view().data());
      else if (group_lanes_ == 16) launch_phase<16>(exec, in.view().data(), bias, out.view().data());
      else if (group_lanes_)
        launch<2, conv_vector_pixels<Exec>>(exec, in.view().data(), bias, out.view().data());
      else if (depthwise_ && p_.k % (dw_kv * conv_vector_lanes<Exec>) == 0)
        launch<dw_kv, conv_vector_depthwise_pixels<Exec>>(exec, in.view().data(), bias, out.view().data());
      else if (depthwise_ && p_.k % (4 * conv_vector_lanes<Exec>) == 0)
        launch<4, conv_vector_depthwise_pixels<Exec>>(exec, in.view().data(), bias, out.view().data());
      else if (depthwise_ && p_.k % (2 * conv_vector_lanes<Exec>) == 0)
        launch<2, conv_vector_pixels<Exec>>(exec, in.view().data(), bias, out.view().data());
      else if (depthwise_)
        launch<1, conv_vector_pixels<Exec>>(exec, in.view().data(), bias, out.view().data());
      else if (conv_vector_host_tile<Exec>(p_)[1] == 16)
        launch<1, 16>(exec, in.view().data(), bias, out.view().data());
      else if (conv_vector_host_tile<Exec>(p_)[1] == 6)
        launch<4, 6>(exec, in.view().data(), bias, out.view().data());
      else
        launch<conv_vector_vectors<Exec>, conv_vector_pixels<Exec>>(exec, in.view().data(), bias, out.view().data());
    }
  }

 private:
  // Host groups of 8 or 16 channels take the phase tile (conv_vector_phase_functor), groups of 2
  // and 4 grouped_tile (the phase tile's 4 broadcasts per 4 FMAs at G = 4 made it load-bound:
  // ResNeXt's conv2 2.0 against 1.75 ms, fastest of 6 processes, one thread).
  bool phase_tile() const { return host_backend<Exec> && (group_lanes_ == 8 || group_lanes_ == 16); }
  // The phase tile: 4 pixels x W channels (16 accumulators: at 6 pixels GCC 12 spilled them,
  // 1.7 against 1.2 ms on ResNeXt's conv3, fastest of 6 processes), items over (image, row, pixel block, channel block),
  // a tile of Kokkos' MDRange being a pixel block's channel blocks.
  template <int G, class Bias>
  void launch_phase(const Exec& exec, const float* x, const Bias& bias, float* y) const {
    constexpr int W = conv_vector_lanes<Exec>, PX = 4;
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
    constexpr int W = conv_vector_lanes<Exec>;
    const int span = depthwise_ || group_lanes_ ? p_.k : p_.k_per_group();
    const int kblocks = (span + W * KV - 1) / (W * KV);
    const int kitems = depthwise_ || group_lanes_ ? kblocks : kblocks * p_.groups;
    const int owblocks = (p_.q() + PX - 1) / PX;
    // Host: a tile is a block of PX pixels with all its channel blocks (a contiguous run of the
    // output), since Kokkos' OpenMP backend deals MDRange tiles round-robin (schedule(static,
    // 1)): with one item per tile, two threads took alternate channel blocks of the same pixels
    // and wrote neighbouring lines (depthwise at 2 threads: 15 ms, slower than 1 thread; 8.9 ms
    // with these tiles). The channel blocks are split when that leaves fewer than 4 tiles per
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
  int group_lanes_ = 0;  // host: G channels per group (2, 4: grouped lanes; 8, 16: the phase tile), else 0
  int kpad_ = 0;
  pack_view pack_, zeros_;
  conv_vector_gpu_plan<Exec> gpu_;  // GPU builds
};

// The prepared state of either layout's form; run checks that it was prepared for its layout.
template <class Exec>
struct conv2d_direct_vector_prepared {
  std::shared_ptr<conv2d_direct_vector_state<Exec>> nhwc;
  std::shared_ptr<conv2d_direct_vector_nchw_state<Exec>> nchw;
  double workspace_bytes() const { return nhwc ? nhwc->workspace_bytes() : nchw ? nchw->workspace_bytes() : 0.0; }
};

}  // namespace detail

namespace variant {
// Direct convolution vectorised along the output's contiguous axis, a register tile of output
// pixels x output channels per work item: nhwc (kcnn/conv2d/direct_vector.hpp), lanes along the
// output channels, PX output pixels of a row in registers; nchw
// (kcnn/conv2d/direct_vector_nchw.hpp), lanes along the output row, a block of output channels
// in registers (the form for layers with few output or input channels). Input and output in the
// same layout, nhwc or nchw (dense); any weight layout; groups and depthwise included.
// Stateful: kcnn::prepare(exec, v, p, in, wt, bias, out) repacks the weights once (nhwc:
// [group][block of 32 k][r][s][c][32 k]; nchw: [group][block of KB k][c][r][s][KB];
// workspace_bytes()); later changes to wt are not seen until the next prepare.
struct direct_vector : detail::stateful_variant<conv2d_params> {
  using op = ops::conv2d;

  template <class Exec, class In, class Wt, class Bias, class Out>
  void prepare(const Exec& exec, const conv2d_params& p, const In& in, const Wt& wt, const Bias& bias, const Out& out) {
    check_layouts<In, Out>();
    detail::conv2d_check<Exec>(in, wt, bias, out, p);
    detail::require_dense("conv2d", "direct_vector", in, out);
    auto s = std::make_shared<detail::conv2d_direct_vector_prepared<Exec>>();
    if constexpr (std::is_same_v<typename Out::layout_tag, layout::nchw>) {
      s->nchw = std::make_shared<detail::conv2d_direct_vector_nchw_state<Exec>>();
      s->nchw->prepare(exec, p, wt);
    } else {
      s->nhwc = std::make_shared<detail::conv2d_direct_vector_state<Exec>>();
      s->nhwc->prepare(exec, p, wt);
    }
    state_.set(typeid(Exec), p, s, s->workspace_bytes());
  }
  template <class Exec, class In, class Wt, class Bias, class Out>
  void run(const Exec& exec, const In& in, const Wt&, const Bias& bias, const Out& out, const conv2d_params& p) const {
    check_layouts<In, Out>();
    detail::require_dense("conv2d", "direct_vector", in, out);
    const auto& s = state_.get<detail::conv2d_direct_vector_prepared<Exec>, Exec>("conv2d", "direct_vector", p);
    constexpr bool nchw = std::is_same_v<typename Out::layout_tag, layout::nchw>;
    if ((nchw && !s.nchw) || (!nchw && !s.nhwc))
      detail::fail("conv2d", std::string("direct_vector: prepared for another layout; call kcnn::prepare again with ") +
                                 (nchw ? "nchw" : "nhwc") + " operands");
    if constexpr (nchw) (*s.nchw)(exec, in.view().data(), bias, out.view().data());
    else (*s.nhwc)(exec, in, bias, out);
  }

 private:
  template <class In, class Out>
  static constexpr void check_layouts() {
    using L = typename Out::layout_tag;
    static_assert((std::is_same_v<L, layout::nhwc> || std::is_same_v<L, layout::nchw>) &&
                      std::is_same_v<typename In::layout_tag, L>,
                  "kcnn::conv2d: direct_vector needs input and output both nhwc or both nchw");
  }
};
}  // namespace variant

}  // namespace kcnn
