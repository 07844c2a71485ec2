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
//     there the lanes are channels, the input values are contiguous channels of a pixel too, and
//     the weights [r][s][c] are KV vectors per tap.
// The host tuning's tiles (W = 16 lanes per vector, several layer-specific forms) are
// kcnn/host/conv2d_direct_vector.hpp's.
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
#include <kcnn/tuning.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace kcnn {

namespace detail {

// Packed channel blocks: a multiple of KV * W (a host item's channels) and of a GPU warp (32
// adjacent threads read one 128-byte run).
inline constexpr int conv_vector_pad = 32;

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

// The GPU tile's KV: the largest of 8, 4, 2, 1 that divides a conv group's blocks of 32
// channels (no channel group padded beyond what the 32-channel packing pads); depthwise 1.
inline int conv_vector_gpu_vectors(const conv2d_params& p) {
  if (p.c_per_group() == 1 && p.k_per_group() == 1) return 1;
  const int blocks = (p.k_per_group() + conv_vector_pad - 1) / conv_vector_pad;
  return blocks % 8 == 0 ? 8 : blocks % 4 == 0 ? 4 : blocks % 2 == 0 ? 2 : 1;
}

// The unit that shares loads, for the traffic model: a warp of 8 pixels (4 depthwise) x 32 KV
// channels.
inline std::array<int, 2> conv_vector_load_unit(const conv2d_params& p) {
  const bool dw = p.c_per_group() == 1 && p.k_per_group() == 1;
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
    const auto unit = conv_vector_load_unit(p);
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

// The portable source's prepared state: the weights packed as [group][block of 32 k][r][s][c][32 k]
// (depthwise [r][s][k padded]) and the tile's launch (conv_vector_gpu_plan).
template <class Exec>
class conv2d_direct_vector_state {
 public:
  using pack_view = Kokkos::View<float*, typename Exec::memory_space>;
  template <class Wt>
  void prepare(const Exec& exec, const conv2d_params& p, const Wt& wt) {
    const bool depthwise = p.c_per_group() == 1 && p.k_per_group() == 1;
    const int span = depthwise ? p.k : p.k_per_group();
    const int kpad = (span + conv_vector_pad - 1) / conv_vector_pad * conv_vector_pad;
    const std::size_t size = depthwise ? std::size_t(p.r) * p.s * kpad : std::size_t(p.groups) * p.r * p.s * p.c_per_group() * kpad;
    pack_ = pack_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcnn::conv2d_direct_vector.weights"), size);
    zeros_ = pack_view("kcnn::conv2d_direct_vector.zeros", std::size_t(p.c) + conv_vector_pad);
    launch_range("kcnn::conv2d_direct_vector_pack", exec, size,
                 conv_vector_pack_functor<Wt, pack_view>{wt, pack_, p, kpad, depthwise});
    gpu_.prepare(p, kpad, "kcnn::conv2d_direct_vector");
  }
  double workspace_bytes() const { return double(pack_.span() + zeros_.span()) * sizeof(float) + gpu_.workspace_bytes(); }
  template <class In, class Bias, class Out>
  void operator()(const Exec& exec, const In& in, const Bias& bias, const Out& out) const {
    gpu_(exec, in.view().data(), pack_.data(), zeros_.data(), bias, out.view().data());
  }

 private:
  pack_view pack_, zeros_;
  conv_vector_gpu_plan<Exec> gpu_;
};

// The prepared state of either layout's form and either tuning; run checks that it was prepared
// for its layout and its tuning.
template <class Exec>
struct conv2d_direct_vector_prepared {
  bool nchw = false;        // the layout it was prepared for
  bool host_tuned = false;  // by the host tuning (host_state) or the portable source
  std::shared_ptr<conv2d_direct_vector_state<Exec>> nhwc_state;
  std::shared_ptr<conv2d_direct_vector_nchw_state<Exec>> nchw_state;
  std::shared_ptr<void> host_state;  // kcnn/host/conv2d_direct_vector.hpp's, of the layout's form
  double bytes = 0;
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
  // Host tuning: kcnn/host/conv2d_direct_vector.hpp (its own packing and tiles).
  static constexpr bool host_tunable = true;
  static constexpr bool tuned_prepare = true;

  template <class Exec, class In, class Wt, class Bias, class Out>
  void prepare(const Exec& exec, const conv2d_params& p, const In& in, const Wt& wt, const Bias& bias, const Out& out) {
    prepare_tuned<tunings::automatic>(exec, p, in, wt, bias, out);
  }
  template <class T, class Exec, class In, class Wt, class Bias, class Out>
  void prepare_tuned(const Exec& exec, const conv2d_params& p, const In& in, const Wt& wt, const Bias& bias,
                     const Out& out) {
    check_layouts<In, Out>();
    detail::conv2d_check<Exec>(in, wt, bias, out, p);
    detail::require_dense("conv2d", "direct_vector", in, out);
    using L = typename Out::layout_tag;
    auto s = std::make_shared<detail::conv2d_direct_vector_prepared<Exec>>();
    s->nchw = std::is_same_v<L, layout::nchw>;
    if constexpr (takes_host_tuning<T, Exec>) {
      s->host_tuned = true;
      s->host_state = host_tuning::tuned<direct_vector, Exec>::template prepare<L>(exec, p, wt, s->bytes);
    } else if constexpr (std::is_same_v<L, layout::nchw>) {
      s->nchw_state = std::make_shared<detail::conv2d_direct_vector_nchw_state<Exec>>();
      s->nchw_state->prepare(exec, p, wt);
      s->bytes = s->nchw_state->workspace_bytes();
    } else {
      s->nhwc_state = std::make_shared<detail::conv2d_direct_vector_state<Exec>>();
      s->nhwc_state->prepare(exec, p, wt);
      s->bytes = s->nhwc_state->workspace_bytes();
    }
    state_.set(typeid(Exec), p, s, s->bytes);
  }
  template <class Exec, class In, class Wt, class Bias, class Out>
  void run(const Exec& exec, const In& in, const Wt& wt, const Bias& bias, const Out& out, const conv2d_params& p) const {
    run_tuned<tunings::automatic>(exec, in, wt, bias, out, p);
  }
  template <class T, class Exec, class In, class Wt, class Bias, class Out>
  void run_tuned(const Exec& exec, const In& in, const Wt&, const Bias& bias, const Out& out, const conv2d_params& p) const {
    check_layouts<In, Out>();
    detail::require_dense("conv2d", "direct_vector", in, out);
    using L = typename Out::layout_tag;
    const auto& s = state_.get<detail::conv2d_direct_vector_prepared<Exec>, Exec>("conv2d", "direct_vector", p);
    constexpr bool nchw = std::is_same_v<L, layout::nchw>;
    if (s.nchw != nchw)
      detail::fail("conv2d", std::string("direct_vector: prepared for another layout; call kcnn::prepare again with ") +
                                 (nchw ? "nchw" : "nhwc") + " operands");
    if (s.host_tuned != takes_host_tuning<T, Exec>)
      detail::fail("conv2d", "direct_vector: prepared for the other tuning (kcnn::variant::portable or not); call "
                             "kcnn::prepare again with this variant");
    if constexpr (takes_host_tuning<T, Exec>)
      host_tuning::tuned<direct_vector, Exec>::template run<L>(exec, s.host_state, in, bias, out);
    else if constexpr (nchw)
      (*s.nchw_state)(exec, in.view().data(), bias, out.view().data());
    else
      (*s.nhwc_state)(exec, in, bias, out);
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

#if KCNN_HOST_TUNING
#include <kcnn/host/conv2d_direct_vector.hpp>
#endif
