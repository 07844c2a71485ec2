#pragma once
// conv2d direct_vector in nchw (kcnn/conv2d/direct_vector.hpp is the nhwc form): the lanes run
// along the output row (ow, nchw's contiguous axis) and a block of KB output channels of one
// group are the accumulators, each weight broadcast over the lanes:
//   * a host work item is (image n, output row oh, block of KB channels, PV x 16 consecutive
//     output columns): KB x PV accumulators of 16 lanes in registers; per input channel and tap,
//     PV loads of 16 input values (stride 1: one contiguous load; stride 2: two loads and one
//     permute, from a zero-padded copy of the row segment at the padded edges and the row's end;
//     stride 3 and more: a gather) and KB broadcast weights for
//     KB x PV vector multiply-adds. A pointwise layer (1 x 1, stride 1, no pad) is one long row per
//     image (the plane h * w is contiguous in input and output);
//   * on a GPU a thread is one output pixel (adjacent threads: adjacent pixels of the flattened
//     plane oh * q + ow, so input loads and output stores are coalesced runs) with KB channels in
//     registers; every thread of a warp reads the same weight (a broadcast). A launch too small
//     to fill the GPU splits the input channels (partial sums, then a second pass), as the nhwc
//     form does.
// This is the form for layers with few output channels (a classifier or box head: 1 x 1 to 2,
// 3, 12 or 21 channels, where the nhwc tile's 32 lanes hold 2 or 3 live channels) and few input
// channels (the stem of a network on 1 or 3 channels). KB and PV come from the output channels
// per group (conv_vector_nchw_shape); the packed weights are [g][block of KB k][c][r][s][KB],
// zero past the group's channels.
#include <kcnn/compat.hpp>
#include <kcnn/conv2d_params.hpp>
#include <kcnn/map.hpp>
#include <kcnn/lanes.hpp>
#include <kcnn/layout.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

namespace kcnn {
namespace detail {

// GPU split reduction: how many segments to cut a reduction of `channels` input channels (per
// tap: r x s taps) into, for a launch of `threads` threads writing `outputs` floats. Enough for
// about `wave` threads (default 2^16: one full wave of 128-register threads on an H100, 132 SMs x
// 512; the nchw form's threads hold a few accumulators, 2^18 fill an H100's 132 x 2048), with at
// least 64 multiply-adds per segment and the partial sums under 16 MiB (they stay in a GPU's L2
// between the two passes).
inline int conv_vector_gpu_splits(long threads, int channels, int taps, long outputs, long wave = 65536) {
  long splits = (wave + threads - 1) / threads;
  splits = std::min(splits, long(channels) * taps / 64);
  splits = std::min(splits, (16L << 20) / (long(sizeof(float)) * std::max(outputs, 1L)));
  return int(std::max(splits, 1L));
}

// GPU split reduction, second pass: y(i) = bias(i / inner mod k) + the partial sums of every
// segment, along the output's storage order (coalesced); inner: 1 in nhwc, the plane p * q in
// nchw.
template <class Bias>
struct conv_vector_split_sum_functor {
  const float* partial;
  Bias bias;
  float* y;
  int k, splits;
  std::size_t outputs, inner;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    float sum = float(bias(int(i / inner % std::size_t(k))));
    for (int s = 0; s < splits; ++s) sum += partial[std::size_t(s) * outputs + i];
    y[i] = sum;
  }
};

// A GPU split reduction, planned once by prepare and run after each launch: the input channels of
// a group cut into `splits` segments of `csplit` channels (the last one shorter), the launch
// writing its partial sums to `partial` (splits x outputs floats), then the sum pass. One segment
// (splits == 1): no workspace and no second pass.
template <class View>
struct conv_vector_split_plan {
  int splits = 1, csplit = 0;
  View partial;
  std::size_t outputs = 0, inner = 1;  // the output's floats; the sum pass's bias index divisor

  // threads: the launch's threads without a split; cpg: input channels per group; taps: r x s.
  void plan(long threads, int cpg, int taps, std::size_t outputs_, std::size_t inner_, long wave,
            const std::string& label) {
    outputs = outputs_;
    inner = inner_;
    const int cut = conv_vector_gpu_splits(threads, cpg, taps, long(outputs), wave);
    csplit = (cpg + cut - 1) / cut;
    splits = (cpg + csplit - 1) / csplit;
    partial = splits > 1 ? View(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), std::size_t(splits) * outputs)
                         : View();
  }
  // Where the launch writes: the partial sums when split, else the output.
  float* target(float* y) const { return splits > 1 ? partial.data() : y; }
  template <class Exec, class Bias>
  void sum(const char* label, const Exec& exec, const Bias& bias, float* y, int k) const {
    if (splits > 1)
      launch_range(label, exec, outputs, conv_vector_split_sum_functor<Bias>{partial.data(), bias, y, k, splits, outputs, inner});
  }
  double workspace_bytes() const { return double(partial.span()) * sizeof(float); }
};

// Output channels per block (KB) and vectors of pixels per host item (PV) for kpg output channels
// per group: every channel of a head of up to 24 in one block (the input is read once), KB x PV
// at most 24 accumulators (of 32 vector registers, PV for the input values); more channels take
// blocks of 8 x 3 (the input re-read per block, from cache when it has few channels).
struct conv_vector_nchw_shape {
  int kb, pv;
};
inline conv_vector_nchw_shape conv_vector_nchw_shape_for(int kpg) {
  if (kpg <= 2) return {2, 6};
  if (kpg == 3) return {3, 6};
  if (kpg == 4) return {4, 4};
  if (kpg <= 8) return {8, 3};
  if (kpg <= 12) return {12, 2};
  if (kpg <= 24) return {24, 1};
  return {8, 3};
}

// [g][block of KB k][c][r][s][KB], zero past the group's kpg channels.
template <class Wt, class Pack>
struct conv_vector_nchw_pack_functor {
  Wt wt;
  Pack pack;
  conv2d_params p;
  int kb, kblocks;  // channels per block, blocks per group
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    std::size_t j = i;
    const int l = int(j % std::size_t(kb)); j /= std::size_t(kb);
    const int s = int(j % std::size_t(p.s)); j /= std::size_t(p.s);
    const int r = int(j % std::size_t(p.r)); j /= std::size_t(p.r);
    const int c = int(j % std::size_t(p.c_per_group())); j /= std::size_t(p.c_per_group());
    const int b = int(j % std::size_t(kblocks));
    const int g = int(j / std::size_t(kblocks));
    const int kk = b * kb + l, kpg = p.k_per_group();
    pack(i) = kk < kpg ? float(wt(g * kpg + kk, c, r, s)) : 0.0f;
  }
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
    // their read-for-ownership: U-Net's first layer 1.6x faster, DeepLab's classifier 1.5x, one
    // thread).
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

// The GPU form: f(i), i = ((n, block kb over all groups), pixel of the plane) with the pixel
// fastest: a warp is 32 adjacent output pixels of one channel block. 32-bit index arithmetic
// except the element offsets.
template <int KB, class Bias>
struct conv_vector_nchw_gpu_functor {
  const float* x;
  const float* pack;
  Bias bias;
  float* y;
  conv2d_params p;
  int kblocks;  // blocks per group
  // Split reduction: splits > 1 cuts the input channels of a group into segments of csplit, one
  // per item (the split slowest); item `split` writes its partial sums, without the bias, to
  // y + split * (n k p q).
  int splits = 1, csplit = 0;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    const int P = p.p(), Q = p.q(), PQ = P * Q, K = p.k, C = p.c, H = p.h, Wd = p.w, R = p.r, S = p.s;
    const int kitems = kblocks * p.groups;
    const int pix = int(i % std::size_t(PQ));
    const int t = int(i / std::size_t(PQ));
    const int kb_all = t % kitems, n = t / kitems % p.n, split = t / kitems / p.n;
    const int g = kb_all / kblocks, b = kb_all % kblocks;
    const int kpg = p.k_per_group(), cpg = p.c_per_group();
    const int kn = kpg - b * KB < KB ? kpg - b * KB : KB;
    const int k0 = g * kpg + b * KB;
    const int ih0 = (pix / Q) * p.row_stride() - p.pad_top(), iw0 = (pix % Q) * p.col_stride() - p.pad_left();
    float acc[KB];
    for (int j = 0; j < KB; ++j) acc[j] = j < kn && splits == 1 ? float(bias(k0 + j)) : 0.0f;
    const int c0 = splits == 1 ? 0 : split * csplit, c1 = splits == 1 || c0 + csplit > cpg ? cpg : c0 + csplit;
    const float* wp = pack + (std::size_t(kb_all) * cpg + c0) * R * S * KB;
    for (int c = c0; c < c1; ++c) {
      const float* const plane = x + (std::size_t(n) * C + std::size_t(g) * cpg + c) * std::size_t(H) * Wd;
      for (int r = 0; r < R; ++r) {
        const int ih = ih0 + r * p.dilation_h;
        for (int s = 0; s < S; ++s, wp += KB) {
          const int iw = iw0 + s * p.dilation_w;
          const float xv = (ih >= 0 && ih < H && iw >= 0 && iw < Wd) ? plane[std::size_t(ih) * Wd + iw] : 0.0f;
          for (int j = 0; j < KB; ++j) acc[j] += xv * wp[j];
        }
      }
    }
    float* const yo = y + std::size_t(split) * p.n * K * std::size_t(PQ);
    for (int j = 0; j < KB; ++j)
      if (j < kn) yo[(std::size_t(n) * K + k0 + j) * std::size_t(PQ) + pix] = acc[j];
  }
};

// Prepared state of the nchw form: packed weights and the launch.
template <class Exec>
class conv2d_direct_vector_nchw_state {
 public:
  using pack_view = Kokkos::View<float*, typename Exec::memory_space>;
  template <class Wt>
  void prepare(const Exec& exec, const conv2d_params& p, const Wt& wt) {
    p_ = p;
    shape_ = conv_vector_nchw_shape_for(p.k_per_group());
    kblocks_ = (p.k_per_group() + shape_.kb - 1) / shape_.kb;
    const std::size_t size = std::size_t(p.groups) * kblocks_ * p.c_per_group() * p.r * p.s * shape_.kb;
    pack_ = pack_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcnn::conv2d_direct_vector_nchw.weights"), size);
    launch_range("kcnn::conv2d_direct_vector_nchw_pack", exec, size,
                 conv_vector_nchw_pack_functor<Wt, pack_view>{wt, pack_, p, shape_.kb, kblocks_});
    if constexpr (!host_backend<Exec>) {
      // A launch of a thread per output pixel and channel block leaves most of a GPU idle on a
      // head of 1 to 24 channels at batch 1 (a tenth of a wave): the input channels are split as
      // in the nhwc form, the partial sums added by a second pass.
      const long threads = long(p.n) * p.groups * kblocks_ * p.p() * p.q();
      split_.plan(threads, p.c_per_group(), p.r * p.s, std::size_t(p.n) * p.k * p.p() * p.q(),
                  std::size_t(p.p()) * p.q(), 1L << 18, "kcnn::conv2d_direct_vector_nchw.partial");
    }
  }
  double workspace_bytes() const { return double(pack_.span()) * sizeof(float) + split_.workspace_bytes(); }
  // The unit that shares loads, for the traffic model: {output pixels, output channels}.
  static std::array<int, 2> load_unit(const conv2d_params& p) {
    const auto sh = conv_vector_nchw_shape_for(p.k_per_group());
    return {host_backend<Exec> ? 16 * sh.pv : 32, sh.kb};
  }

  template <class Bias>
  void operator()(const Exec& exec, const float* x, const Bias& bias, float* y) const {
    switch (shape_.kb) {
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
    const int kitems = kblocks_ * p_.groups;
    if constexpr (!host_backend<Exec>) {
      const std::size_t total = std::size_t(split_.splits) * p_.n * kitems * std::size_t(p_.p()) * p_.q();
      if (total > std::size_t(2147483647))
        throw std::invalid_argument("kcnn::conv2d (variant direct_vector, nchw): layer too large for one launch");
      launch_range("kcnn::conv2d_direct_vector_nchw", exec, total,
                   conv_vector_nchw_gpu_functor<KB, Bias>{x, pack_.data(), bias, split_.target(y), p_, kblocks_,
                                                          split_.splits, split_.csplit});
      split_.sum("kcnn::conv2d_direct_vector_nchw_sum", exec, bias, y, p_.k);
    } else {
      constexpr int W = lane_width<Exec>;
      conv2d_params q = p_;
      // Pointwise: the plane is one contiguous row of h * w pixels, in the input and the output.
      if (p_.r == 1 && p_.s == 1 && p_.row_stride() == 1 && p_.col_stride() == 1 && p_.pad_top() == 0 &&
          p_.pad_left() == 0 && p_.pad_bottom() == 0 && p_.pad_right() == 0) {
        q = conv2d_params{p_.n, p_.c, 1, p_.h * p_.w, p_.k, 1, 1, 1, 0, p_.groups};
      }
      const int owblocks = (q.q() + W * PV - 1) / (W * PV);
      const conv_vector_nchw_functor<W, KB, PV, Bias> f{x, pack_.data(), bias, y, q, kblocks_};
      // Channel blocks inside an output row: the row's input stays in cache for every block. A
      // host tile is a run of one block's columns (a whole row unless that leaves fewer than 8
      // tiles per thread: a pointwise layer is one row per image).
      long owtile = owblocks;
      const long rows = long(q.n) * q.p() * kitems, want = 8L * compat::concurrency(exec);
      while (owtile > 1 && rows * ((owblocks + owtile - 1) / owtile) < want) owtile = (owtile + 1) / 2;
      launch_mdrange<4, Kokkos::Iterate::Right>("kcnn::conv2d_direct_vector_nchw", exec, {0, 0, 0, 0},
                                                {q.n, q.p(), kitems, owblocks}, std::array<long, 4>{1, 1, 1, owtile}, f);
    }
  }

  conv2d_params p_;
  conv_vector_nchw_shape shape_{8, 3};
  int kblocks_ = 0;
  pack_view pack_;
  conv_vector_split_plan<pack_view> split_;  // GPU builds
};

}  // namespace detail
}  // namespace kcnn
