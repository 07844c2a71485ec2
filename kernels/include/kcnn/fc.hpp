#pragma once
// Fully connected layer: out(n, k) = sum over features f = (c, h, w) of in(n, c, h, w) *
// wt(k, c, h, w) + bias(k). It is a convolution whose window covers the whole input, so its
// shape is a conv2d_params with r = h, s = w, stride 1, no padding, one group, and output
// (n, k, 1, 1); the conv2d reference validates it. Weights share the input's layout tag, i.e.
// they are stored in the same feature order as the input (KCHW, KHWC or CHWK).
//
// Entry point: kcnn::fc(exec, in, wt, bias, out, params, variant = variant::fc_direct_coalesced{})
// with in (n, c, h, w), wt (k, c, h, w), bias length k, out (n, k, 1, 1).
#include <kcnn/api.hpp>
#include <kcnn/conv2d/direct_constant.hpp>
#include <kcnn/conv2d/direct_vector.hpp>
#include <kcnn/conv2d/gemm_pointwise.hpp>
#include <kcnn/conv2d/implicit_gemm.hpp>
#include <kcnn/conv2d_params.hpp>
#include <kcnn/layout.hpp>
#include <kcnn/team.hpp>
#include <kcnn/tuning.hpp>

#include <kcnn/compat_blas.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <typeindex>

namespace kcnn {

// The shape of a fully connected layer: a conv2d_params whose window is the whole input
// (r = h, s = w, stride 1, pad 0, groups 1). Construct it with fc_params(n, c, h, w, k); a
// conv2d_params converts implicitly (check() then refuses any other window).
struct fc_params : conv2d_params {
  fc_params() = default;
  fc_params(int n_, int c_, int h_, int w_, int k_) {
    n = n_; c = c_; h = h_; w = w_; k = k_; r = h_; s = w_;
    stride = 1; pad = 0; groups = 1;
  }
  fc_params(const conv2d_params& p) : conv2d_params(p) {}  // NOLINT: implicit on purpose

  dims4 weight_dims() const { return {k, c, h, w}; }
  dims4 output_dims() const { return {n, k, 1, 1}; }
  int features() const { return c * h * w; }

  // Empty when valid, otherwise the first problem found, naming the field.
  std::string check() const {
    if (r != h) return "r: must equal h (the window covers the whole input; use fc_params(n, c, h, w, k)), got r = " + std::to_string(r) + ", h = " + std::to_string(h);
    if (s != w) return "s: must equal w (the window covers the whole input; use fc_params(n, c, h, w, k)), got s = " + std::to_string(s) + ", w = " + std::to_string(w);
    if (stride != 1) return "stride: must be 1, got " + std::to_string(stride);
    if (pad != 0) return "pad: must be 0, got " + std::to_string(pad);
    if (groups != 1) return "groups: must be 1, got " + std::to_string(groups);
    if (row_stride() != 1) return "stride_h: must be 1, got " + std::to_string(row_stride());
    if (col_stride() != 1) return "stride_w: must be 1, got " + std::to_string(col_stride());
    if (pad_top() != 0 || pad_bottom() != 0) return "pad_h: must be 0 at both ends, got " + std::to_string(pad_top()) + " and " + std::to_string(pad_bottom());
    if (pad_left() != 0 || pad_right() != 0) return "pad_w: must be 0 at both ends, got " + std::to_string(pad_left()) + " and " + std::to_string(pad_right());
    if (dilated()) return "dilation_h: must be 1 (and dilation_w), got " + std::to_string(dilation_h) + " x " + std::to_string(dilation_w);
    return conv2d_params::check();
  }
};

namespace detail {

// Walks the features of one image in the input layout's storage order (contiguous in nchw and
// nhwc, n-strided in chwn).
template <class Layout>
KOKKOS_FORCEINLINE_FUNCTION void feature_coords(int f, const conv2d_params& p, int& c, int& h,
                                                int& w) {
  int n0;
  Layout::storage_coords(std::size_t(f), dims4{1, p.c, p.h, p.w}, n0, c, h, w);
}

// Weights and bias held in views, with constant_filter's interface.
template <class Wt, class Bias>
struct view_weights {
  Wt wt;
  Bias b;
  KOKKOS_FORCEINLINE_FUNCTION float weight(const conv2d_params&, int k, int c, int h, int w) const {
    return wt(k, c, h, w);
  }
  KOKKOS_FORCEINLINE_FUNCTION float bias(int k) const { return b(k); }
};

// One thread per output (n, k) along the output's storage order; W is view_weights (global
// or read-only memory) or a constant_filter (weights by value in the functor).
template <class In, class W, class Out>
struct fc_direct_functor {
  In in;
  W wts;
  Out out;
  conv2d_params p;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, k, z0, z1;
    out.storage_coords(i, n, k, z0, z1);
    const int features = p.c * p.h * p.w;
    float acc = wts.bias(k);
    for (int f = 0; f < features; ++f) {
      int c, h, w;
      if constexpr (In::layout_tag::runtime_strided) {
        int n0;
        layout::strided::storage_coords(std::size_t(f), dims4{1, p.c, p.h, p.w}, in.order(), n0, c, h, w);
      } else {
        feature_coords<typename In::layout_tag>(f, p, c, h, w);
      }
      acc += in(n, c, h, w) * wts.weight(p, k, c, h, w);
    }
    out(n, k, 0, 0) = acc;
  }
};

// A team owns nb images x kb outputs; it streams the features in chunks of fb through scratch
// (inputs nb x fb and weights kb x fb, both loaded along the feature storage order), and each
// thread accumulates its outputs in scratch.
template <class Exec, class In, class Wt, class Bias, class Out>
struct fc_tiled_scratch_functor {
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  using scratch = Kokkos::View<float*, typename Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  In in;
  Wt wt;
  Bias bias;
  Out out;
  conv2d_params p;
  int nb, kb, fb, kblocks;

  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const int n0 = (m.league_rank() / kblocks) * nb, k0 = (m.league_rank() % kblocks) * kb;
    const int features = p.c * p.h * p.w;
    const auto s_in = team_scratch<scratch>(m, std::size_t(nb) * fb);
    const auto s_wt = team_scratch<scratch>(m, std::size_t(kb) * fb);
    const auto s_acc = team_scratch<scratch>(m, std::size_t(nb) * kb);
    using in_layout = typename In::layout_tag;
    team_rows(m, nb * kb, [&](const int i) { s_acc(i) = 0.0f; });
    for (int f0 = 0; f0 < features; f0 += fb) {
      const int fn = (features - f0 < fb) ? features - f0 : fb;
      team_barrier(m);
      // chwn keeps images contiguous: walk the input tile image-fastest there.
      team_rows(m, nb * fb, [&](const int i) {
        int j, f;
        if constexpr (std::is_same_v<in_layout, layout::chwn>) { j = i % nb; f = i / nb; }
        else { f = i % fb; j = i / fb; }
        const int n = n0 + j;
        int c, h, w;
        feature_coords<in_layout>(f0 + f, p, c, h, w);
        s_in(j * fb + f) = (n < p.n && f < fn) ? float(in(n, c, h, w)) : 0.0f;
      });
      team_rows(m, kb * fb, [&](const int i) {
        int kk, f;
        if constexpr (std::is_same_v<in_layout, layout::chwn>) { kk = i % kb; f = i / kb; }
        else { f = i % fb; kk = i / fb; }
        const int k = k0 + kk;
        int c, h, w;
        feature_coords<in_layout>(f0 + f, p, c, h, w);
        s_wt(kk * fb + f) = (k < p.k && f < fn) ? float(wt(k, c, h, w)) : 0.0f;
      });
      team_barrier(m);
      team_rows(m, nb * kb, [&](const int i) {
        const int j = i % nb, kk = i / nb;
        float acc = 0.0f;
        for (int f = 0; f < fn; ++f) acc += s_in(j * fb + f) * s_wt(kk * fb + f);
        s_acc(i) += acc;
      });
    }
    team_barrier(m);
    team_rows(m, nb * kb, [&](const int i) {
      const int j = i % nb, kk = i / nb, n = n0 + j, k = k0 + kk;
      if (n < p.n && k < p.k) out(n, k, 0, 0) = s_acc(i) + bias(k);
    });
  }
};

}  // namespace detail

namespace detail {
template <class Exec, class In, class Wt, class Bias, class Out>
void fc_check(const In& in, const Wt& wt, const Bias& bias, const Out& out, const fc_params& p) {
  const checker<Exec> check{"fc"};
  check.params(p.check());
  check.tensor("in", in, p.input_dims());
  check.tensor("wt", wt, p.weight_dims());
  check.vector("bias", bias, std::size_t(p.k));
  check.tensor("out", out, p.output_dims());
}
template <class Exec, class In, class Out, int Capacity>
void fc_constant_launch(const Exec& exec, const In& in, const constant_filter<Capacity>& f, const Out& out,
                        const conv2d_params& p) {
  using functor = fc_direct_functor<In, constant_filter<Capacity>, Out>;
  parallel_for_constant("kcnn::fc_direct_constant", exec, out.size(), functor{in, f, out, p});
}
// fc_direct_vector's packed weights [block of 32 k][feature in the input's storage order][32 k]:
// direct_vector's layout for one group and a 1 x 1 window.
template <class InLayout, class Wt, class Pack>
struct fc_vector_pack_functor {
  Wt wt;
  Pack pack;
  conv2d_params p;
  int kpad;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    constexpr int P = conv_vector_pad;
    const std::size_t features = std::size_t(p.c) * p.h * p.w;
    const int k = int(i / (features * P)) * P + int(i % P);
    const int f = int(i / P % features);
    int c, h, w;
    feature_coords<InLayout>(f, p, c, h, w);
    pack(i) = k < p.k ? float(wt(k, c, h, w)) : 0.0f;
  }
};

// The fc as direct_vector's register tile: the images are the pixels of one output row (n = 1,
// h = 1, w = images, c = features, 1 x 1 window), so an item holds PX images x B outputs and
// streams the features: conv2d direct_vector's warp tile (8 images x 32 KV outputs, lanes along
// the outputs: coalesced weight loads), and, since n / 8 x k / 256 warps is far from filling a
// GPU (AlexNet fc6 at n = 64: 128 warps), the features are split into segments
// (conv_vector_gpu_splits), one per item; a second pass adds the segments and the bias. The host
// tuning (kcnn/host/fc.hpp) runs its own tile on the same packing.
template <class Exec>
class fc_direct_vector_state {
 public:
  using pack_view = Kokkos::View<float*, typename Exec::memory_space>;
  // host_tuned: packed for the host tuning's tile (no split plan).
  template <class InLayout, class Wt>
  void prepare(const Exec& exec, const conv2d_params& p, const Wt& wt, const bool host_tuned) {
    p_ = p;
    layout_ = typeid(InLayout);
    host_tuned_ = host_tuned;
    kpad_ = (p.k + conv_vector_pad - 1) / conv_vector_pad * conv_vector_pad;
    const std::size_t features = std::size_t(p.c) * p.h * p.w, size = features * kpad_;
    pack_ = pack_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcnn::fc_direct_vector.weights"), size);
    zeros_ = pack_view("kcnn::fc_direct_vector.zeros", features + conv_vector_pad);
    launch_range("kcnn::fc_direct_vector_pack", exec, size,
                         fc_vector_pack_functor<InLayout, Wt, pack_view>{wt, pack_, p, kpad_});
    if (!host_tuned) gpu_.prepare(row(), kpad_, "kcnn::fc_direct_vector");
  }
  double workspace_bytes() const {
    return double(pack_.span() + zeros_.span()) * sizeof(float) + gpu_.workspace_bytes();
  }
  std::type_index input_layout() const { return layout_; }
  bool host_tuned() const { return host_tuned_; }

  template <class Bias>
  void operator()(const Exec& exec, const float* x, const Bias& bias, float* y) const {
    gpu_(exec, x, pack_.data(), zeros_.data(), bias, y);
  }

  // What the host tuning's tile reads.
  const float* packed() const { return pack_.data(); }
  const float* zeros() const { return zeros_.data(); }
  int kpad() const { return kpad_; }
  // The layer as a 1 x 1 convolution over one row of p.n pixels.
  conv2d_params row() const {
    conv2d_params r;
    r.n = 1; r.h = 1; r.w = p_.n; r.c = p_.c * p_.h * p_.w; r.k = p_.k;
    r.r = 1; r.s = 1; r.stride = 1; r.pad = 0; r.groups = 1;
    return r;
  }

 private:
  conv2d_params p_;
  std::type_index layout_ = typeid(void);
  bool host_tuned_ = false;
  int kpad_ = 0;
  pack_view pack_, zeros_;
  conv_vector_gpu_plan<Exec> gpu_;
};

}  // namespace detail

namespace variant {
// One thread per output (n, k) along the output's storage order, the features walked in the
// input's storage order. Every layout. The default.
struct fc_direct_coalesced {
  using op = ops::fc;
  template <class Exec, class In, class Wt, class Bias, class Out>
  void run(const Exec& exec, const In& in, const Wt& wt, const Bias& bias, const Out& out, const fc_params& p) const {
    using W = detail::view_weights<Wt, Bias>;
    launch_range("kcnn::fc_direct_coalesced", exec, out.size(),
                         detail::fc_direct_functor<In, W, Out>{in, W{wt, bias}, out, p});
  }
};
// Images x outputs tiles, features streamed through team scratch. Compile-time input layouts.
struct fc_direct_tiled_scratch {
  using op = ops::fc;
  template <class Exec, class In, class Wt, class Bias, class Out>
  void run(const Exec& exec, const In& in, const Wt& wt, const Bias& bias, const Out& out, const fc_params& p) const {
    static_assert(!In::layout_tag::runtime_strided, "kcnn::fc: fc_direct_tiled_scratch needs a compile-time input layout");
    using functor = detail::fc_tiled_scratch_functor<Exec, In, Wt, Bias, Out>;
    const int nb = std::min(p.n, 16), kb = std::min(p.k, 16);
    const int features = p.c * p.h * p.w;
    const std::size_t budget = (scratch_limit<Exec>(0) - 3 * 128) / sizeof(float);
    const std::size_t per_f = std::size_t(nb) + std::size_t(kb);
    const int fb = int(std::min<std::size_t>(std::size_t(features),
                                             std::min<std::size_t>(1024, (budget - nb * kb) / per_f)));
    const int kblocks = (p.k + kb - 1) / kb, nblocks = (p.n + nb - 1) / nb;
    const std::size_t bytes = functor::scratch::shmem_size(std::size_t(nb) * fb) +
                              functor::scratch::shmem_size(std::size_t(kb) * fb) +
                              functor::scratch::shmem_size(std::size_t(nb) * kb);
    functor f{in, wt, bias, out, p, nb, kb, fb, kblocks};
    launch_teams_recommended("kcnn::fc_direct_tiled_scratch", exec, nblocks * kblocks, bytes, f, 256);
  }
};
// The library path: one KokkosBlas::gemm over the tensors' own storage (in, wt and out in the
// same compile-time layout).
//   nchw: out(N x K) = in(N x CHW) * W(K x CHW)^T;  nhwc: the same with HWC features;
//   chwn: out(K x N) = Wt(CHW x K)^T * in(CHW x N).
struct fc_gemm {
  using op = ops::fc;
  template <class Exec, class In, class Wt, class Bias, class Out>
  void run(const Exec& exec, const In& in, const Wt& wt, const Bias& bias, const Out& out, const fc_params& p) const {
    using L = typename Out::layout_tag;
    static_assert(!L::runtime_strided, "kcnn::fc: fc_gemm needs a compile-time layout");
    static_assert(std::is_same_v<typename In::layout_tag, L> && std::is_same_v<typename Wt::layout_tag, L>,
                  "kcnn::fc: fc_gemm needs in, wt and out in the same layout");
    using mem = typename Out::memory_space;
    using cmat = Kokkos::View<const float**, Kokkos::LayoutRight, mem, Kokkos::MemoryUnmanaged>;
    using mat = Kokkos::View<float**, Kokkos::LayoutRight, mem, Kokkos::MemoryUnmanaged>;
    launch_range("kcnn::fc_gemm_bias", exec, out.size(),
                         detail::broadcast_bias<Bias, Out>{bias, out});
    const int features = p.c * p.h * p.w;
    if constexpr (std::is_same_v<L, layout::chwn>) {
      cmat a(in.view().data(), features, p.n);
      cmat w(wt.view().data(), features, p.k);
      mat c(out.view().data(), p.k, p.n);
      compat::gemm(exec, "T", "N", 1.0f, w, a, 1.0f, c);
    } else {
      cmat a(in.view().data(), p.n, features);
      cmat w(wt.view().data(), p.k, features);
      mat c(out.view().data(), p.n, p.k);
      compat::gemm(exec, "N", "T", 1.0f, a, w, 1.0f, c);
    }
  }
};
// Weights and bias by value in the functor (constant memory on CUDA). Every layout. Stateful:
// kcnn::prepare(exec, v, p, in, wt, bias, out) embeds wt and bias (later changes are not seen
// until the next prepare); refuses more than constant_filter_capacity (7680) weights and biases.
struct fc_direct_constant : detail::stateful_variant<fc_params> {
  using op = ops::fc;
  using filter = constant_filter<constant_filter_capacity>;

  template <class Exec, class In, class Wt, class Bias, class Out>
  void prepare(const Exec&, const fc_params& p, const In& in, const Wt& wt, const Bias& bias, const Out& out) {
    detail::fc_check<Exec>(in, wt, bias, out, p);
    auto f = std::make_shared<filter>(
        detail::constant_filter_from_device<constant_filter_capacity>("fc", "fc_direct_constant", p, wt, bias));
    state_.set(typeid(void), p, f, 4.0 * p.weight_count());
  }
  template <class Exec, class In, class Wt, class Bias, class Out>
  void run(const Exec& exec, const In& in, const Wt&, const Bias&, const Out& out, const fc_params& p) const {
    const filter& f = state_.get<filter, Exec>("fc", "fc_direct_constant", p);
    detail::fc_constant_launch(exec, in, f, out, p);
  }
};
// conv2d implicit_gemm (kcnn/conv2d/implicit_gemm.hpp) over the 1 x 1 output image: the GEMM
// out[k][n] = W[k][feature] X[feature][n], a team a tile of 128 outputs x 128 images on a GPU
// (the feature axis split across teams where the tiles are fewer than the GPU holds, partial sums
// added by a second pass). Compile-time dense layouts. Stateful: kcnn::prepare packs the weights
// once in the input's feature order (workspace_bytes()); later changes to wt are not seen until
// the next prepare.
struct fc_implicit_gemm : detail::implicit_gemm_variant<ops::fc, fc_params> {
  using op = ops::fc;
  static constexpr bool stateful = true;
};
// direct_vector's register tile (kcnn/conv2d/direct_vector.hpp) with the images as pixels: an
// item holds 8 images x 32 KV outputs and streams the features; lanes along the outputs, so no
// horizontal reduction. Host tuning (kcnn/host/fc.hpp): the host tile of 8 images x 32 outputs.
// nchw and nhwc (the features of an image contiguous; dense in and out). Stateful:
// kcnn::prepare(exec, v, p, in, wt, bias, out) packs the weights once as [block of 32
// k][feature][32 k] (workspace_bytes()); later changes to wt are not seen until the next prepare.
struct fc_direct_vector : detail::stateful_variant<fc_params> {
  using op = ops::fc;
  static constexpr bool host_tunable = true;
  static constexpr bool tuned_prepare = true;

  template <class Exec, class In, class Wt, class Bias, class Out>
  void prepare(const Exec& exec, const fc_params& p, const In& in, const Wt& wt, const Bias& bias, const Out& out) {
    prepare_tuned<tunings::automatic>(exec, p, in, wt, bias, out);
  }
  template <class T, class Exec, class In, class Wt, class Bias, class Out>
  void prepare_tuned(const Exec& exec, const fc_params& p, const In& in, const Wt& wt, const Bias& bias, const Out& out) {
    check_layouts<In, Out>();
    detail::fc_check<Exec>(in, wt, bias, out, p);
    detail::require_dense("fc", "fc_direct_vector", in, out);
    auto s = std::make_shared<detail::fc_direct_vector_state<Exec>>();
    s->template prepare<typename In::layout_tag>(exec, p, wt, takes_host_tuning<T, Exec>);
    state_.set(typeid(Exec), p, s, s->workspace_bytes());
  }
  template <class Exec, class In, class Wt, class Bias, class Out>
  void run(const Exec& exec, const In& in, const Wt& wt, const Bias& bias, const Out& out, const fc_params& p) const {
    run_tuned<tunings::automatic>(exec, in, wt, bias, out, p);
  }
  template <class T, class Exec, class In, class Wt, class Bias, class Out>
  void run_tuned(const Exec& exec, const In& in, const Wt&, const Bias& bias, const Out& out, const fc_params& p) const {
    check_layouts<In, Out>();
    detail::require_dense("fc", "fc_direct_vector", in, out);
    const auto& s = state_.get<detail::fc_direct_vector_state<Exec>, Exec>("fc", "fc_direct_vector", p);
    if (s.input_layout() != std::type_index(typeid(typename In::layout_tag)))
      throw std::invalid_argument(std::string("kcnn::fc (variant fc_direct_vector): prepared for an input in another layout "
                                              "(the weights are packed in the input's feature order): call kcnn::prepare "
                                              "again with this input, layout ") + In::layout_tag::name);
    if (s.host_tuned() != takes_host_tuning<T, Exec>)
      detail::fail("fc", "fc_direct_vector: prepared for the other tuning (kcnn::variant::portable or not); call "
                         "kcnn::prepare again with this variant");
    if constexpr (takes_host_tuning<T, Exec>)
      host_tuning::tuned<fc_direct_vector, Exec>::run(exec, s, in.view().data(), bias, out.view().data());
    else
      s(exec, in.view().data(), bias, out.view().data());
  }

 private:
  template <class In, class Out>
  static constexpr void check_layouts() {
    using L = typename In::layout_tag;
    static_assert(std::is_same_v<L, layout::nchw> || std::is_same_v<L, layout::nhwc>,
                  "kcnn::fc: fc_direct_vector needs an nchw or nhwc input (an image's features contiguous)");
    static_assert(std::is_same_v<typename Out::layout_tag, layout::nchw> || std::is_same_v<typename Out::layout_tag, layout::nhwc>,
                  "kcnn::fc: fc_direct_vector needs an nchw or nhwc output");
  }
};
}  // namespace variant

// out(n, k) = sum over features of in(n, .) wt(k, .) + bias(k). Throws std::invalid_argument on
// invalid params or operand dims, std::logic_error when a stateful variant was not prepared.
template <class Exec, class In, class Wt, class Bias, class Out, class V = variant::fc_direct_coalesced>
void fc(const Exec& exec, const In& in, const Wt& wt, const Bias& bias, const Out& out, const fc_params& p,
        const V& v = V{}) {
  static_assert(detail::is_variant_of<V, ops::fc>, "kcnn::fc: not an fc variant (kcnn::variant::fc_*)");
  detail::fc_check<Exec>(in, wt, bias, out, p);
  v.run(exec, in, wt, bias, out, p);
}


}  // namespace kcnn

#if KCNN_HOST_TUNING
#include <kcnn/host/fc.hpp>
#endif
