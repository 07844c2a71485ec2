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
//     are whole blocks of 48, else 1 x 16 x 8), the input values are contiguous channels of a
//     pixel too, and the weights [r][s][c] are KV vectors per tap.
// On a host W = 16 (one AVX-512 register; float_lanes, a vector-extension type), KV = 2, PX = 8:
// 16 accumulator registers, 10 loads per 16 FMAs (KV = 1 left the FMA chains short of the FMA
// units: 147 against 183 GFLOP/s on VGG-16 conv3_1, Zen 5, one thread). On a GPU W = KV = 1:
// adjacent threads take adjacent output channels (the MDRange's fastest index), so the weight
// loads and the output stores are coalesced and the input loads are the same address across a
// warp (one broadcast transaction).
//
// Entry point: kcnn::conv2d(exec, in, wt, bias, out, p, variant::direct_vector{}) after
// kcnn::prepare(exec, v, p, in, wt, bias, out). Layout: nhwc input and output, weights in any layout.
#include <kcnn/api.hpp>
#include <kcnn/compat.hpp>
#include <kcnn/conv2d/entry.hpp>
#include <kcnn/conv2d_params.hpp>
#include <kcnn/lanes.hpp>
#include <kcnn/layout.hpp>

#include <Kokkos_Core.hpp>

#include <memory>
#include <type_traits>

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

// The packed weights: general layers [g][k block][r][s][c in group][k in block] (blocks of
// conv_vector_pad channels); depthwise [r][s][k padded]. Zero in the padding.
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

// The register tile over raw pointers: x an nhwc input (n, h, w, c), y an nhwc output; fc runs
// it too (images as the pixels of one row). A work item holds PX pixels x KV vectors of W lanes:
// B = KV * W consecutive output channels.
template <int W, int KV, int PX, class Bias>
struct conv_vector_nhwc_functor {
  static constexpr int B = W * KV;
  const float* x;
  const float* pack;
  const float* zero;  // C + B zeros: what a pixel outside the input (padding, past the row's end) reads
  Bias bias;
  float* y;
  conv2d_params p;
  int kpad, kblocks;  // kblocks: blocks of B channels per group (general) or in all (depthwise)
  bool depthwise;

  KOKKOS_INLINE_FUNCTION void operator()(const int n, const int oh, const int owb, const int kb) const {
    // A partial channel block (the last of a layer whose channels are not a multiple of B) has
    // its own copy of the tile: a branch on it inside the tap loop kept GCC from unrolling the
    // pixel loops, and the accumulators went to the stack.
    const int kspan = depthwise ? p.k : p.k_per_group();
    const int kg0 = (depthwise ? kb : kb % kblocks) * B;
    if (kspan - kg0 >= B) tile<true>(n, oh, owb, kb);
    else tile<false>(n, oh, owb, kb);
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
    const int stride = p.stride, pad = p.pad, H = p.h, Wd = p.w, C = p.c;

    // Fixed trip counts everywhere (PX pixels, KV vectors; a pixel outside the input reads
    // zeros) so that the accumulators stay in registers.
    vec acc[PX][KV];
    for (int v = 0; v < KV; ++v) {
      float b[W];
      for (int l = 0; l < W; ++l) b[l] = FullBlock || v * W + l < kn ? float(bias(k0 + v * W + l)) : 0.0f;
      const vec bv = load_lanes<W>(b);
      for (int i = 0; i < PX; ++i) acc[i][v] = bv;
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
          const float* const wp = pack + (std::size_t(r) * p.s + s) * kpad + kg0;
          for (int v = 0; v < KV; ++v) {
            const vec wv = load_lanes<W>(wp + v * W);
            if constexpr (FullBlock) {
              for (int i = 0; i < PX; ++i) acc[i][v] = madd_each_lane<W>(acc[i][v], load_lanes<W>(px[i] + v * W), wv);
            } else {  // the last block: no read past the channels (the packed weights are padded)
              for (int i = 0; i < PX; ++i) {
                float a[W];
                for (int l = 0; l < W; ++l) a[l] = v * W + l < kn ? px[i][v * W + l] : 0.0f;
                acc[i][v] = madd_each_lane<W>(acc[i][v], load_lanes<W>(a), wv);
              }
            }
          }
          continue;
        }
        constexpr int P = conv_vector_pad;
        const float* wp = pack + (((std::size_t(g) * (kpad / P) + kg0 / P) * p.r + r) * p.s + s) * std::size_t(cpg) * P +
                          kg0 % P;
        const int iw0 = ow0 * stride - pad + s;
        if (npx == PX && iw0 >= 0 && iw0 + (PX - 1) * stride < Wd) {
          // Every pixel inside the input: one pointer and fixed offsets (eight pointers
          // advanced together ran out of general registers and spilled).
          const float* b = row + std::size_t(iw0) * C;
          const std::ptrdiff_t sc = std::ptrdiff_t(stride) * C;
          for (int c = 0; c < cpg; ++c, wp += P, ++b) {
            vec wv[KV];
            for (int v = 0; v < KV; ++v) wv[v] = load_lanes<W>(wp + v * W);
            for (int i = 0; i < PX; ++i) {
              const float xi = b[i * sc];
              for (int v = 0; v < KV; ++v) acc[i][v] = madd_lanes<W>(acc[i][v], xi, wv[v]);
            }
          }
          continue;
        }
        for (int c = 0; c < cpg; ++c, wp += P) {
          vec wv[KV];
          for (int v = 0; v < KV; ++v) wv[v] = load_lanes<W>(wp + v * W);
          for (int i = 0; i < PX; ++i) {
            const float xi = px[i][c];
            for (int v = 0; v < KV; ++v) acc[i][v] = madd_lanes<W>(acc[i][v], xi, wv[v]);
          }
        }
      }
    }
    const int K = p.k;
    for (int i = 0; i < PX; ++i) {
      if (i >= npx) break;
      float* yv = y + ((std::size_t(n) * p.p() + oh) * q + (ow0 + i)) * K + k0;
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
    launch_range("kcnn::conv2d_direct_vector_pack", exec, size,
                         conv_vector_pack_functor<Wt, pack_view>{wt, pack_, p, kpad_, depthwise_});
  }
  double workspace_bytes() const { return double(pack_.span() + zeros_.span()) * sizeof(float); }

  template <class In, class Bias, class Out>
  void operator()(const Exec& exec, const In& in, const Bias& bias, const Out& out) const {
    // Depthwise on a host: 3 vectors x 4 pixels where the channels are whole blocks of 48 (every
    // MobileNet V2 depthwise layer but the first: 8.1 ms against 12.7 for 1 x 8 at 32 x 144 x
    // 56 x 56, one thread), otherwise 1 x 8 (a partial block of 2 or 3 vectors takes the slow
    // masked copy of the tile for a third of the channels).
    constexpr int dw_kv = conv_vector_depthwise_vectors<Exec>;
    if (depthwise_ && p_.k % (dw_kv * conv_vector_lanes<Exec>) == 0)
      launch<dw_kv, conv_vector_depthwise_pixels<Exec>>(exec, in.view().data(), bias, out.view().data());
    else if (depthwise_)
      launch<1, conv_vector_pixels<Exec>>(exec, in.view().data(), bias, out.view().data());
    else
      launch<conv_vector_vectors<Exec>, conv_vector_pixels<Exec>>(exec, in.view().data(), bias, out.view().data());
  }

 private:
  template <int KV, int PX, class Bias>
  void launch(const Exec& exec, const float* x, const Bias& bias, float* y) const {
    constexpr int W = conv_vector_lanes<Exec>;
    const int span = depthwise_ ? p_.k : p_.k_per_group();
    const int kblocks = (span + W * KV - 1) / (W * KV);
    const int kitems = depthwise_ ? kblocks : kblocks * p_.groups;
    const int owblocks = (p_.q() + PX - 1) / PX;
    // GPU: the channel blocks (one channel each) fastest, 32 to a tile row: adjacent threads,
    // adjacent channels. Host: a tile is a block of PX pixels with all its channel blocks (a
    // contiguous run of the output), since Kokkos' OpenMP backend deals MDRange tiles
    // round-robin (schedule(static, 1)): with one item per tile, two threads took alternate
    // channel blocks of the same pixels and wrote neighbouring lines (depthwise at 2 threads:
    // 15 ms, slower than 1 thread; 8.9 ms with these tiles). The channel blocks are split when
    // that leaves fewer than 4 tiles per thread.
    int ktile = kitems;
    if constexpr (host_backend<Exec>) {
      const long pixel_blocks = long(p_.n) * p_.p() * owblocks;
      const long want = 4L * compat::concurrency(exec);
      while (ktile > 1 && pixel_blocks * ((kitems + ktile - 1) / ktile) < want) ktile = (ktile + 1) / 2;
    }
    const std::array<long, 4> tile = host_backend<Exec> ? std::array<long, 4>{1, 1, 1, ktile}
                                                        : std::array<long, 4>{1, 1, 4, 32};
    launch_mdrange<4, Kokkos::Iterate::Right>("kcnn::conv2d_direct_vector", exec, {0, 0, 0, 0},
                                              {p_.n, p_.p(), owblocks, kitems}, tile,
                         conv_vector_nhwc_functor<W, KV, PX, Bias>{x, pack_.data(), zeros_.data(), bias, y, p_, kpad_,
                                                                   kblocks, depthwise_});
  }


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
// the weights once ([group][block of 32 k][r][s][c][32 k], workspace_bytes()); later changes to
// wt are not seen until the next prepare.
struct direct_vector : detail::stateful_variant<conv2d_params> {
  using op = ops::conv2d;

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
};
}  // namespace variant

}  // namespace kcnn
