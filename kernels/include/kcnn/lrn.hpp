#pragma once
// Local response normalisation across channels (Caffe ACROSS_CHANNELS, AlexNet: size 5,
// alpha 1e-4, beta 0.75, k 1):
//   out(n,c,h,w) = in(n,c,h,w) / (k + alpha/size * sum_{c' = c-size/2 .. c+size/2} in(n,c',h,w)^2)^beta
// with the channel window clipped to [0, C). The window is centred: size must be odd (an even
// size is refused by check(); Caffe refuses it too). alpha >= 0, k > 0 (so the base of the power
// is positive), beta finite.
//
// Entry point: kcnn::lrn(exec, in, out, params, variant = variant::lrn_naive{}).
#include <kcnn/api.hpp>
#include <kcnn/compat.hpp>
#include <kcnn/lanes.hpp>
#include <kcnn/layout.hpp>
#include <kcnn/vmath.hpp>
#include <kcnn/tuning.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

namespace kcnn {

struct lrn_params {
  int n = 0, c = 0, h = 0, w = 0;
  int size = 5;
  float alpha = 1e-4f, beta = 0.75f, k = 1.0f;
  dims4 dims() const { return {n, c, h, w}; }

  // Named constructor: across-channel LRN of a tensor of dims d (defaults: AlexNet's).
  static lrn_params make(const dims4& d, int size = 5, float alpha = 1e-4f, float beta = 0.75f, float k = 1.0f) {
    lrn_params p;
    p.n = d.n; p.c = d.c; p.h = d.h; p.w = d.w;
    p.size = size; p.alpha = alpha; p.beta = beta; p.k = k;
    return p;
  }
  // Empty when valid, otherwise the first problem found, naming the field.
  std::string check() const {
    const struct { const char* name; int v; } positive[] = {{"n", n}, {"c", c}, {"h", h}, {"w", w}, {"size", size}};
    for (const auto& f : positive)
      if (f.v <= 0) return std::string(f.name) + ": must be > 0, got " + std::to_string(f.v);
    if (size % 2 == 0) return "size: must be odd (a centred window), got " + std::to_string(size);
    if (!std::isfinite(alpha) || alpha < 0) return "alpha: must be finite and >= 0, got " + std::to_string(alpha);
    if (!std::isfinite(beta)) return "beta: must be finite";
    if (!std::isfinite(k) || !(k > 0)) return "k: must be finite and > 0, got " + std::to_string(k);
    return {};
  }
  bool operator==(const lrn_params& o) const {
    return n == o.n && c == o.c && h == o.h && w == o.w && size == o.size && alpha == o.alpha && beta == o.beta && k == o.k;
  }
  double min_bytes() const { return 8.0 * double(dims().size()); }
  // Per output: a square and an add per window element, then scale, pow and divide.
  double flops() const { return double(dims().size()) * (2.0 * size + 3.0); }
};

namespace detail {
template <class In, class Out>
struct lrn_naive_functor {
  In in;
  Out out;
  lrn_params p;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, c, h, w;
    out.storage_coords(i, n, c, h, w);
    const int lo = c - p.size / 2 > 0 ? c - p.size / 2 : 0;
    const int hi = c + p.size / 2 < p.c - 1 ? c + p.size / 2 : p.c - 1;
    float sum = 0.0f;
    for (int cc = lo; cc <= hi; ++cc) {
      const float v = in(n, cc, h, w);
      sum += v * v;
    }
    out(n, c, h, w) = in(n, c, h, w) * compat::pow(p.k + p.alpha / float(p.size) * sum, -p.beta);
  }
};

// The largest window lrn_sliding computes in place (cuDNN's LRN takes windows up to 16).
inline constexpr int lrn_sliding_in_place_max_size = 15;

// One thread per pixel (n, h, w), walking the channels with a running sum of squares: each
// input is read twice (entering and leaving the window) instead of `size` times. In place (out
// is in: a network's forward pass may ask), the channel leaving the window already holds its
// output, so its square comes from a ring of the window's squares instead (per thread, local
// memory on a GPU): the same sums in the same order (the bits may differ only where the
// compiler fuses a square into its sum in one form and not in the other).
template <class In, class Out, bool InPlace>
struct lrn_sliding_functor {
  In in;
  Out out;
  lrn_params p;
  dims4 pixels;  // (n, 1, h, w)
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, z, h, w;
    Out::layout_tag::storage_coords(i, pixels, n, z, h, w);
    const int half = p.size / 2;
    const float scale = p.alpha / float(p.size);
    float sum = 0.0f;
    [[maybe_unused]] float ring[InPlace ? lrn_sliding_in_place_max_size : 1];  // square of channel cc at cc % size
    if constexpr (InPlace)
      for (int j = 0; j < p.size; ++j) ring[j] = 0.0f;
    for (int cc = 0; cc < half && cc < p.c; ++cc) {
      const float v = in(n, cc, h, w);
      sum += v * v;
      if constexpr (InPlace) ring[cc] = v * v;
    }
    for (int c = 0; c < p.c; ++c) {
      float entering = 0.0f;
      if (c + half < p.c) {
        const float v = in(n, c + half, h, w);
        entering = v * v;
        sum += entering;
      }
      if constexpr (InPlace) {
        const int slot = (c + half) % p.size;  // the channel leaving, c - half - 1, had this slot
        if (c - half - 1 >= 0) sum -= ring[slot];
        ring[slot] = entering;
      } else if (c - half - 1 >= 0) {
        const float v = in(n, c - half - 1, h, w);
        sum -= v * v;
      }
      out(n, c, h, w) = in(n, c, h, w) * compat::pow(p.k + scale * sum, -p.beta);
    }
  }
};

// The vector form (kcnn/lanes.hpp); the power from kcnn/vmath.hpp. nhwc (channels are the
// run): a row is a pixel, the lanes take consecutive channels and each sums its window from
// neighbouring addresses (the window lies along the lanes), every channel in the lanes' batches,
// each window clipped to the channels (the host tuning's body, kcnn/host/lrn.hpp, takes the
// `size / 2` channels at each end one by one). nchw and chwn: lrn_planes_body below.
// LRN's power (k + alpha / size * sum)^-beta: the three-quarter power for beta = 0.75 (the
// networks that use LRN), pow otherwise.
template <bool ThreeQuarters>
KOKKOS_FORCEINLINE_FUNCTION float lrn_power(const float base, const float neg_beta) {
  if constexpr (ThreeQuarters) return vmath::pow_minus_three_quarters(base);
  else return vmath::pow(base, neg_beta);
}

template <class Exec, bool ThreeQuarters, class In, class Out>
struct lrn_rows_body {
  // Batches of two lane batches (reduce_batch_size): up to 32 distinct bytes a lane, the window's
  // other loads being L1 re-reads of the same lines. AlexNet's 96 channels take 16 lanes (6
  // elements each, whole sectors per store), two rows a warp; its 256, one warp.
  static constexpr int row_batch = reduce_batch_size;
  In in;
  Out out;
  lrn_params p;
  KOKKOS_INLINE_FUNCTION void row(const typename Kokkos::TeamPolicy<Exec>::member_type& m, const coords4& x) const {
    const int half = p.size / 2, C = p.c;
    const float scale = p.alpha / float(p.size), k = p.k, neg_beta = -p.beta;
    // Every channel in the lanes' batches, each element's window clipped to [0, C): a batch's
    // loads all issue together, the edges' too.
    for_lanes<1, true, row_batch>(m, 0, C, [&](const int c0, auto width) {
      constexpr int B = decltype(width)::value;
      float sum[B];
      const auto src = lane_ptr<axis::c>(in, x.with<axis::c>(c0));
      const auto dst = lane_ptr<axis::c>(out, x.with<axis::c>(c0));
      for_each_lane(width, [&](const int l) { sum[l] = 0.0f; });
      const auto add_squares = [&](const int j) {
        for_each_lane(width, [&](const int l) {
          const int e = lane_offset(width, l) + j;
          if (c0 + e >= 0 && c0 + e < C) {
            const float v = src[e];
            sum[l] += v * v;
          }
        });
      };
      // Windows of up to 5 channels (the networks' LRN) written out: their loads issue together.
      if (half <= 2)
        unrolled<5>([&](auto t) {
          const int j = int(decltype(t)::value) - 2;
          if (j >= -half && j <= half) add_squares(j);
        });
      else
        for (int j = -half; j <= half; ++j) add_squares(j);
      for_each_lane(width, [&](const int l) {
        const int e = lane_offset(width, l);
        if (!lane_repeats(width, l)) dst[e] = float(src[e]) * lrn_power<ThreeQuarters>(k + scale * sum[l], neg_beta);
      });
    });
  }
};

// nchw, chwn (channels are a row axis): the planes along c (kcnn::planes_along: h * w elements
// per plane in nchw, h * w * n in chwn), each element with a running sum of squares as it walks
// the channels: each input is read when it enters the window, when it leaves it and for its own
// output (the last two from cache). Up to MaxCount elements per call (the portable path: a
// lane's batch, kcnn::lane_batch, adjacent lanes on adjacent addresses in each load; the host
// tuning's blocks, kcnn/host/lrn.hpp). The
// channels are also cut into `segments` (one per outer block of the launch's geometry, o = outer
// * segments + segment): n h w lanes alone leave most of a GPU idle (AlexNet norm2 at n = 64:
// 46,656), and each segment re-reads only the window's half on either side. Hints: where the
// next planes are (kcnn::no_hints; the host tuning prefetches).
template <class Exec, int MaxCount, class Hints, bool ThreeQuarters, class TI, class TO>
struct lrn_planes_body {
  const TI* in;
  TO* out;
  plane_geometry g;
  lrn_params p;
  int segments = 1;
  template <class Count>
  KOKKOS_INLINE_FUNCTION void span(int o, const std::size_t i, const Count count) const {
    const int n = count_value(count), half = p.size / 2, C = p.c;
    const float scale = p.alpha / float(p.size), k = p.k, neg_beta = -p.beta;
    const int seg = (C + segments - 1) / segments, s = o % segments;
    o /= segments;
    const int c_begin = s * seg, c_end = c_begin + seg < C ? c_begin + seg : C;
    float sum[MaxCount];
    const auto sq = [&](const TI* src, const int l) {
      const float v = src[lane_offset(count, l)];
      return v * v;
    };
    for_each_lane(count, [&](const int l) { sum[l] = 0.0f; });
    // The window of c_begin - 1 (the first step below adds c_begin + half and removes
    // c_begin - half - 1).
    for (int c = c_begin - half - 1 > 0 ? c_begin - half - 1 : 0; c < c_begin + half && c < C; ++c) {
      const TI* src = in + g.offset(o, c, i);
      for_each_lane(count, [&](const int l) { sum[l] += sq(src, l); });
    }
    for (int c = c_begin; c < c_end; ++c) {
      if (c + half < C) {  // entering the window
        const TI* src = in + g.offset(o, c + half, i);
        for_each_lane(count, [&](const int l) { sum[l] += sq(src, l); });
      }
      if (c - half - 1 >= 0) {  // leaving it
        const TI* src = in + g.offset(o, c - half - 1, i);
        for_each_lane(count, [&](const int l) { sum[l] -= sq(src, l); });
      }
      const TI* src = in + g.offset(o, c, i);
      TO* dst = out + g.offset(o, c, i);
      if (c + 1 < C) Hints::will_write(dst + g.length, std::size_t(n) * sizeof(TO));
      if (c + half + 1 < C) Hints::will_read(in + g.offset(o, c + half + 1, i), std::size_t(n) * sizeof(TI));
      for_each_lane(count, [&](const int l) {
        const int e = lane_offset(count, l);
        dst[e] = float(src[e]) * lrn_power<ThreeQuarters>(k + scale * sum[l], neg_beta);
      });
    }
  }
};
}  // namespace detail

namespace variant {
// One thread per output, summing its window. Every layout. The default.
struct lrn_naive {
  using op = ops::lrn;
  template <class Exec, class In, class Out>
  void run(const Exec& exec, const In& in, const Out& out, const lrn_params& p) const {
    launch_range("kcnn::lrn_naive", exec, out.size(),
                         detail::lrn_naive_functor<In, Out>{in, out, p});
  }
};
// One thread per pixel with a running sum over the channels. Compile-time output layouts. Runs
// in place too (out the same tensor as in, same layout) for size <= 15.
struct lrn_sliding {
  using op = ops::lrn;
  template <class Exec, class In, class Out>
  void run(const Exec& exec, const In& in, const Out& out, const lrn_params& p) const {
    static_assert(!Out::layout_tag::runtime_strided,
                  "kcnn::lrn: lrn_sliding needs a compile-time output layout (use lrn_naive for strided)");
    const dims4 pixels{p.n, 1, p.h, p.w};
    if (static_cast<const void*>(in.view().data()) == static_cast<const void*>(out.view().data())) {
      if (!std::is_same_v<typename In::layout_tag, typename Out::layout_tag> || in.view().span() != out.view().span())
        detail::fail("lrn", "lrn_sliding: in place, in and out must be the same tensor in the same layout");
      if (p.size > detail::lrn_sliding_in_place_max_size)
        detail::fail("lrn", "lrn_sliding: in place, size must be <= " +
                                std::to_string(detail::lrn_sliding_in_place_max_size) + ", got " + std::to_string(p.size));
      launch_range("kcnn::lrn_sliding", exec, pixels.size(),
                   detail::lrn_sliding_functor<In, Out, true>{in, out, p, pixels});
    } else {
      launch_range("kcnn::lrn_sliding", exec, pixels.size(),
                   detail::lrn_sliding_functor<In, Out, false>{in, out, p, pixels});
    }
  }
};
// The portable mapping (kcnn/lanes.hpp), per layout: nhwc lanes take consecutive channels, each
// summing its window along the lanes; nchw and chwn walk the channel planes per element
// (for_each_span), each element with a running sum across the channels, the channels cut into
// segments while the elements alone would leave a GPU idle. Coalesced on a GPU; the power from
// kcnn/vmath.hpp (by square roots for beta = 0.75). Host tuning (kcnn/host/lrn.hpp): lane blocks,
// blocks of a plane per call with the next planes prefetched. in and out in the same
// compile-time layout, distinct; nchw and chwn need contiguous Views (throws
// std::invalid_argument otherwise).
struct lrn_vector {
  using op = ops::lrn;
  static constexpr bool host_tunable = true;
  template <class Exec, class In, class Out>
  void run(const Exec& exec, const In& in, const Out& out, const lrn_params& p) const {
    run_tuned<tunings::automatic>(exec, in, out, p);
  }
  template <class T, class Exec, class In, class Out>
  void run_tuned(const Exec& exec, const In& in, const Out& out, const lrn_params& p) const {
    using L = typename Out::layout_tag;
    static_assert(!L::runtime_strided && std::is_same_v<typename In::layout_tag, L>,
                  "kcnn::lrn: lrn_vector needs in and out in the same compile-time layout");
    detail::require_distinct("lrn", "lrn_vector", in, out);
    if constexpr (run_axis<L> != axis::c) detail::require_dense("lrn", "lrn_vector", in, out);
    if constexpr (takes_host_tuning<T, Exec>) {
      if (p.beta == 0.75f) host_tuning::tuned<lrn_vector, Exec>::template launch<true>(exec, in, out, p);
      else host_tuning::tuned<lrn_vector, Exec>::template launch<false>(exec, in, out, p);
    } else {
      if (p.beta == 0.75f) launch<true>(exec, in, out, p);
      else launch<false>(exec, in, out, p);
    }
  }

 private:
  template <bool ThreeQuarters, class Exec, class In, class Out>
  static void launch(const Exec& exec, const In& in, const Out& out, const lrn_params& p) {
    using L = typename Out::layout_tag;
    if constexpr (run_axis<L> == axis::c) {
      for_each_row<L, -1, tunings::portable>("kcnn::lrn_vector", exec, p.dims(), p.c,
                                             detail::lrn_rows_body<Exec, ThreeQuarters, In, Out>{in, out, p});
    } else {
      using body = detail::lrn_planes_body<Exec, lane_batch_size, no_hints, ThreeQuarters, typename In::value_type,
                                           typename Out::value_type>;
      const plane_geometry g = planes_along<L, axis::c>(p.dims());
      // Segments of at least 16 channels, until about 2^18 lanes run (an H100's 132 SMs x 2048),
      // each lane a batch of lane_batch_size elements.
      const long lanes = (long(g.outer) * long(g.length) + lane_batch_size - 1) / lane_batch_size;
      const int segments = int(std::max(1L, std::min((262144L + lanes - 1) / lanes, long(p.c / 16))));
      plane_geometry launch = g;
      launch.outer = g.outer * segments;
      for_each_span<tunings::portable>("kcnn::lrn_vector", exec, launch, body{in.view().data(), out.view().data(), g, p, segments});
    }
  }
};
}  // namespace variant

// out = lrn(in) across channels. in and out: p.dims(), any layouts. Throws
// std::invalid_argument on invalid params (even size included) or operand dims.
template <class Exec, class In, class Out, class V = variant::lrn_naive>
void lrn(const Exec& exec, const In& in, const Out& out, const lrn_params& p, const V& v = V{}) {
  static_assert(detail::is_variant_of<V, ops::lrn>, "kcnn::lrn: not an lrn variant (kcnn::variant::lrn_*)");
  const detail::checker<Exec> check{"lrn"};
  check.params(p.check());
  check.tensor("in", in, p.dims());
  check.tensor("out", out, p.dims());
  v.run(exec, in, out, p);
}

}  // namespace kcnn

#if KCNN_HOST_TUNING
#include <kcnn/host/lrn.hpp>
#endif
