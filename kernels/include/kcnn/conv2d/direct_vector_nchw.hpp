#pragma once
// conv2d direct_vector in nchw (kcnn/conv2d/direct_vector.hpp is the nhwc form): the lanes run
// along the output row (ow, nchw's contiguous axis) and a block of KB output channels of one
// group are the accumulators, each weight broadcast over the lanes:
//   * a thread is one output pixel (adjacent threads: adjacent pixels of the flattened
//     plane oh * q + ow, so input loads and output stores are coalesced runs) with KB channels in
//     registers; every thread of a warp reads the same weight (a broadcast). A launch too small
//     to fill the GPU splits the input channels (partial sums, then a second pass), as the nhwc
//     form does.
// The host tuning's tile (PV x 16 columns per work item) is kcnn/host/conv2d_direct_vector.hpp's.
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
#include <kcnn/tuning.hpp>

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

// Prepared state of the nchw form: packed weights and the launch. The host tuning's state derives
// from it (the same packing, its own launch, no channel split).
template <class Exec>
class conv2d_direct_vector_nchw_state {
 public:
  using pack_view = Kokkos::View<float*, typename Exec::memory_space>;
  // split_channels: plan the split reduction of a launch too small to fill the device.
  template <class Wt>
  void prepare(const Exec& exec, const conv2d_params& p, const Wt& wt, const bool split_channels = true) {
    p_ = p;
    shape_ = conv_vector_nchw_shape_for(p.k_per_group());
    kblocks_ = (p.k_per_group() + shape_.kb - 1) / shape_.kb;
    const std::size_t size = std::size_t(p.groups) * kblocks_ * p.c_per_group() * p.r * p.s * shape_.kb;
    pack_ = pack_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcnn::conv2d_direct_vector_nchw.weights"), size);
    launch_range("kcnn::conv2d_direct_vector_nchw_pack", exec, size,
                 conv_vector_nchw_pack_functor<Wt, pack_view>{wt, pack_, p, shape_.kb, kblocks_});
    if (split_channels) {
      // A launch of a thread per output pixel and channel block leaves most of a GPU idle on a
      // head of 1 to 24 channels at batch 1 (a tenth of a wave): the input channels are split as
      // in the nhwc form, the partial sums added by a second pass.
      const long threads = long(p.n) * p.groups * kblocks_ * p.p() * p.q();
      split_.plan(threads, p.c_per_group(), p.r * p.s, std::size_t(p.n) * p.k * p.p() * p.q(),
                  std::size_t(p.p()) * p.q(), 1L << 18, "kcnn::conv2d_direct_vector_nchw.partial");
    }
  }
  double workspace_bytes() const { return double(pack_.span()) * sizeof(float) + split_.workspace_bytes(); }
  // The unit that shares loads, for the traffic model: {output pixels, output channels}: a warp of
  // 32 pixels x KB.
  static std::array<int, 2> load_unit(const conv2d_params& p) { return {32, conv_vector_nchw_shape_for(p.k_per_group()).kb}; }

  template <class Bias>
  void operator()(const Exec& exec, const float* x, const Bias& bias, float* y) const {
    switch (shape_.kb) {
      case 2: return launch<2>(exec, x, bias, y);
      case 3: return launch<3>(exec, x, bias, y);
      case 4: return launch<4>(exec, x, bias, y);
      case 12: return launch<12>(exec, x, bias, y);
      case 24: return launch<24>(exec, x, bias, y);
      default: return launch<8>(exec, x, bias, y);
    }
  }

 protected:
  conv2d_params p_;
  conv_vector_nchw_shape shape_{8, 3};
  int kblocks_ = 0;
  pack_view pack_;

 private:
  template <int KB, class Bias>
  void launch(const Exec& exec, const float* x, const Bias& bias, float* y) const {
    const int kitems = kblocks_ * p_.groups;
    const std::size_t total = std::size_t(split_.splits) * p_.n * kitems * std::size_t(p_.p()) * p_.q();
    if (total > std::size_t(2147483647))
      throw std::invalid_argument("kcnn::conv2d (variant direct_vector, nchw): layer too large for one launch");
    launch_range("kcnn::conv2d_direct_vector_nchw", exec, total,
                 conv_vector_nchw_gpu_functor<KB, Bias>{x, pack_.data(), bias, split_.target(y), p_, kblocks_,
                                                        split_.splits, split_.csplit});
    split_.sum("kcnn::conv2d_direct_vector_nchw_sum", exec, bias, y, p_.k);
  }

  conv_vector_split_plan<pack_view> split_;
};

}  // namespace detail
}  // namespace kcnn
