#pragma once
// conv2d, direct algorithm, vectorised along the output channels (nhwc: k is the output's
// contiguous axis), with a row of output pixels in registers:
//   * a work item is (image n, output row oh, a block of PX output columns, a block of W output
//     channels of one group); its PX x W accumulators stay in registers;
//   * for every tap (r, s) and input channel c of the group, the item loads the W weights of
//     (c, r, s) for its channels (contiguous: the weights are repacked once, by prepare, as
//     [group][r][s][c][k], k padded to a multiple of 16) and, for each of its PX pixels, one
//     input value, broadcast over the W lanes: PX x W multiply-adds per W + PX loads;
//   * depthwise layers (one input and one output channel per group) have no channel reduction:
//     there the lanes are W channels, the input values are W contiguous channels of a pixel too,
//     and the weights [r][s][c] are one vector per tap.
// On a host W = 16 (one AVX-512 register, two AVX2), PX = 8: the lane loops are fixed-length
// inner loops that the compiler vectorises. On a GPU W = 1: adjacent threads take adjacent
// output channels (the MDRange's fastest index), so the weight loads and the output stores are
// coalesced and the input loads are the same address across a warp (one broadcast transaction).
//
// Entry point: kcnn::conv2d(exec, in, wt, bias, out, p, variant::direct_vector{}) after
// kcnn::prepare(exec, v, p, in, wt, bias, out). Layout: nhwc input and output, weights in any layout.
#include <kcnn/api.hpp>
#include <kcnn/conv2d/entry.hpp>
#include <kcnn/conv2d_params.hpp>
#include <kcnn/lanes.hpp>
#include <kcnn/layout.hpp>

#include <Kokkos_Core.hpp>

#include <memory>
#include <type_traits>

namespace kcnn {

namespace detail {

// Output channels per work item (vector lanes) and output pixels per work item (registers).
template <class Exec>
inline constexpr int conv_vector_lanes = host_backend<Exec> ? 16 : 1;
template <class Exec>
inline constexpr int conv_vector_pixels = host_backend<Exec> ? 8 : 4;
inline constexpr int conv_vector_pad = 16;  // packed channel runs padded to this multiple

// The packed weights: general layers [g][r][s][c in group][k in group, padded]; depthwise
// [r][s][k padded]. Zero in the padding.
template <class Wt, class Pack>
struct conv_vector_pack_functor {
  Wt wt;
  Pack pack;
  conv2d_params p;
  int kpad;  // general: k per group padded; depthwise: k padded
  bool depthwise;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    if (depthwise) {
      const int k = int(i % std::size_t(kpad));
      const std::size_t rs = i / std::size_t(kpad);
      const int s = int(rs % std::size_t(p.s)), r = int(rs / std::size_t(p.s));
      pack(i) = k < p.k ? float(wt(k, 0, r, s)) : 0.0f;
      return;
    }
    const int cpg = p.c_per_group(), kpg = p.k_per_group();
    std::size_t j = i;
    const int kk = int(j % std::size_t(kpad)); j /= std::size_t(kpad);
    const int c = int(j % std::size_t(cpg)); j /= std::size_t(cpg);
    const int s = int(j % std::size_t(p.s)); j /= std::size_t(p.s);
    const int r = int(j % std::size_t(p.r)); j /= std::size_t(p.r);
    const int g = int(j);
    pack(i) = kk < kpg ? float(wt(g * kpg + kk, c, r, s)) : 0.0f;
  }
};

template <int W, int PX, class In, class Bias, class Out, class Pack>
struct conv_vector_nhwc_functor {
  In in;
  Pack pack;
  Pack zeros;  // C + 16 zeros: what a pixel outside the input (padding, past the row's end) reads
  Bias bias;
  Out out;
  conv2d_params p;
  int kpad, kblocks;  // kblocks: blocks of W channels per group (general) or in all (depthwise)
  bool depthwise;

  KOKKOS_INLINE_FUNCTION void operator()(const int n, const int oh, const int owb, const int kb) const {
    const int cpg = p.c_per_group(), kpg = p.k_per_group();
    const int g = depthwise ? 0 : kb / kblocks;
    const int kg0 = (depthwise ? kb : kb % kblocks) * W;  // first channel of the block within its group
    const int kspan = depthwise ? p.k : kpg;
    const int kn = kspan - kg0 < W ? kspan - kg0 : W;
    const int k0 = g * kpg + kg0;  // first output channel
    const int ow0 = owb * PX;
    const int q = p.q();
    const int npx = q - ow0 < PX ? q - ow0 : PX;
    const int stride = p.stride, pad = p.pad, H = p.h, Wd = p.w, C = p.c;
    const float* const x = in.view().data();
    const float* const wp = pack.data();
    const float* const zero = zeros.data();

    // Fixed trip counts everywhere (PX pixels, W lanes; a pixel outside the input reads zeros)
    // so that the compiler keeps the PX x W accumulators in registers.
    float acc[PX][W];
    for (int i = 0; i < PX; ++i) {
      KCNN_LANE_LOOP
      for (int l = 0; l < W; ++l) acc[i][l] = l < kn ? float(bias(k0 + l)) : 0.0f;
    }
    const std::size_t image = std::size_t(n) * H * Wd * C;
    const int cbase = depthwise ? kg0 : g * cpg;  // the block's first input channel
    for (int r = 0; r < p.r; ++r) {
      const int ih = oh * stride - pad + r;
      if (ih < 0 || ih >= H) continue;
      const float* const row = x + image + std::size_t(ih) * Wd * C + cbase;
      for (int s = 0; s < p.s; ++s) {
        const float* px[PX];
        for (int i = 0; i < PX; ++i) {
          const int iw = (ow0 + i) * stride - pad + s;
          px[i] = (i < npx && iw >= 0 && iw < Wd) ? row + std::size_t(iw) * C : zero;
        }
        if (depthwise) {
          const float* wv = wp + (std::size_t(r) * p.s + s) * kpad + kg0;
          if (kn == W) {
            for (int i = 0; i < PX; ++i) {
              KCNN_LANE_LOOP
              for (int l = 0; l < W; ++l) acc[i][l] += px[i][l] * wv[l];
            }
          } else {  // the last block: no read past the channels (the packed weights are padded)
            for (int i = 0; i < PX; ++i) {
              KCNN_LANE_LOOP
              for (int l = 0; l < W; ++l) acc[i][l] += (l < kn ? px[i][l] : 0.0f) * wv[l];
            }
          }
          continue;
        }
        const float* wv = wp + ((std::size_t(g) * p.r + r) * p.s + s) * std::size_t(cpg) * kpad + kg0;
        for (int c = 0; c < cpg; ++c, wv += kpad) {
          for (int i = 0; i < PX; ++i) {
            const float xi = px[i][c];
            KCNN_LANE_LOOP
            for (int l = 0; l < W; ++l) acc[i][l] += xi * wv[l];
          }
        }
      }
    }
    float* const y = out.view().data();
    const int K = p.k;
    for (int i = 0; i < PX; ++i) {
      if (i >= npx) break;
      float* yv = y + ((std::size_t(n) * p.p() + oh) * q + (ow0 + i)) * K + k0;
      if (kn == W) {
        KCNN_LANE_LOOP
        for (int l = 0; l < W; ++l) yv[l] = acc[i][l];
      } else {
        KCNN_LANE_LOOP
        for (int l = 0; l < W; ++l)
          if (l < kn) yv[l] = acc[i][l];
      }
    }
  }
};

template <class Exec>
class conv2d_direct_vector_state {
 public:
  using pack_view = Kokkos::View<float*, typename Exec::memory_space>;
  template <class Wt>
  void prepare(const Exec& exec, const conv2d_params& p, const Wt& wt) {
    p_ = p;
    depthwise_ = p.c_per_group() == 1 && p.k_per_group() == 1;
    const int span = depthwise_ ? p.k : p.k_per_group();
    kpad_ = (span + conv_vector_pad - 1) / conv_vector_pad * conv_vector_pad;
    const std::size_t size = depthwise_ ? std::size_t(p.r) * p.s * kpad_
                                        : std::size_t(p.groups) * p.r * p.s * p.c_per_group() * kpad_;
    pack_ = pack_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcnn::conv2d_direct_vector.weights"), size);
    zeros_ = pack_view("kcnn::conv2d_direct_vector.zeros", std::size_t(p.c) + conv_vector_pad);
    Kokkos::parallel_for("kcnn::conv2d_direct_vector_pack", Kokkos::RangePolicy<Exec>(exec, 0, size),
                         conv_vector_pack_functor<Wt, pack_view>{wt, pack_, p, kpad_, depthwise_});
  }
  double workspace_bytes() const { return double(pack_.span() + zeros_.span()) * sizeof(float); }

  template <class In, class Bias, class Out>
  void operator()(const Exec& exec, const In& in, const Bias& bias, const Out& out) const {
    constexpr int W = conv_vector_lanes<Exec>, PX = conv_vector_pixels<Exec>;
    const int span = depthwise_ ? p_.k : p_.k_per_group();
    const int kblocks = (span + W - 1) / W;
    const int kitems = depthwise_ ? kblocks : kblocks * p_.groups;
    const int owblocks = (p_.q() + PX - 1) / PX;
    using policy = Kokkos::MDRangePolicy<Exec, Kokkos::Rank<4, Kokkos::Iterate::Right, Kokkos::Iterate::Right>>;
    // GPU: the channel blocks (one channel each) fastest, 32 to a tile row: adjacent threads,
    // adjacent channels. Host: one item per tile step (the items are large).
    const policy range = host_backend<Exec>
                             ? policy(exec, {0, 0, 0, 0}, {p_.n, p_.p(), owblocks, kitems}, {1, 1, 1, 1})
                             : policy(exec, {0, 0, 0, 0}, {p_.n, p_.p(), owblocks, kitems}, {1, 1, 4, 32});
    Kokkos::parallel_for("kcnn::conv2d_direct_vector", range,
                         conv_vector_nhwc_functor<W, PX, In, Bias, Out, pack_view>{in, pack_, zeros_, bias, out, p_,
                                                                                  kpad_, kblocks, depthwise_});
  }

 private:
  conv2d_params p_;
  bool depthwise_ = false;
  int kpad_ = 0;
  pack_view pack_, zeros_;
};

}  // namespace detail

namespace variant {
// Direct convolution vectorised along the output channels, PX output pixels of a row in
// registers (kcnn/conv2d/direct_vector.hpp). nhwc input and output (dense), any weight layout;
// groups and depthwise included. Stateful: kcnn::prepare(exec, v, p, in, wt, bias, out) repacks
// the weights once ([group][r][s][c][k], workspace_bytes()); later changes to wt are not seen
// until the next prepare.
struct direct_vector {
  using op = ops::conv2d;
  static constexpr bool stateful = true;

  template <class Exec, class In, class Wt, class Bias, class Out>
  void prepare(const Exec& exec, const conv2d_params& p, const In& in, const Wt& wt, const Bias& bias, const Out& out) {
    static_assert(std::is_same_v<typename In::layout_tag, layout::nhwc> && std::is_same_v<typename Out::layout_tag, layout::nhwc>,
                  "kcnn::conv2d: direct_vector needs nhwc input and output");
    detail::conv2d_check<Exec>(in, wt, bias, out, p);
    detail::require_dense("conv2d", "direct_vector", in, out);
    auto s = std::make_shared<detail::conv2d_direct_vector_state<Exec>>();
    s->prepare(exec, p, wt);
    state_.set(typeid(Exec), p, s, s->workspace_bytes());
  }
  template <class Exec, class In, class Wt, class Bias, class Out>
  void run(const Exec& exec, const In& in, const Wt&, const Bias& bias, const Out& out, const conv2d_params& p) const {
    static_assert(std::is_same_v<typename In::layout_tag, layout::nhwc> && std::is_same_v<typename Out::layout_tag, layout::nhwc>,
                  "kcnn::conv2d: direct_vector needs nhwc input and output");
    detail::require_dense("conv2d", "direct_vector", in, out);
    const auto& s = state_.get<detail::conv2d_direct_vector_state<Exec>, Exec>("conv2d", "direct_vector", p);
    s(exec, in, bias, out);
  }
  bool prepared() const { return state_.prepared(); }
  double workspace_bytes() const { return state_.workspace_bytes(); }

 private:
  detail::state_handle<conv2d_params> state_;
};
}  // namespace variant

}  // namespace kcnn
