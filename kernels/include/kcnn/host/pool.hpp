#pragma once
// The host tuning of pool_vector (kcnn/pool.hpp): the portable body run with lane blocks of
// lane_width elements on kcnn/host/rows.hpp's walk, and for nhwc and chwn
//  * a whole vector of lanes held in vector registers, with one partial result per window row;
//  * the window columns of the output `ahead` pixels along w prefetched;
//  * windows up to ring_columns wide: whole output rows walked along w, each input column
//    reduced over the window's rows once into a ring of column results where the windows overlap
//    enough, else each window read straight from the input rows (pool_vector_slide_body), the
//    output streamed past the variant's threshold (kcnn/host/streaming.hpp).
// Part of kcnn/pool.hpp, which includes it at its end (after the variants it specialises for),
// under KCNN_HOST_TUNING: not a header of its own.
#include <kcnn/host/rows.hpp>
#include <kcnn/host/simd_types.hpp>
#include <kcnn/host/streaming.hpp>
#include <kcnn/lanes.hpp>
#include <kcnn/tuning.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>

namespace kcnn {
namespace host_tuning {
namespace detail {
using kcnn::detail::pool_span;

// The portable body's window walk as plain loops, the vectoriser's shape.
struct window_loops {
  template <int R, int S, class F>
  static void walk(const int h0, const int h1, const int w0, const int w1, const F& f) {
    for (int ih = h0; ih < h1; ++ih)
      for (int iw = w0; iw < w1; ++iw) f(ih, iw);
  }
};

// pool_vector_body with lane blocks; nhwc and chwn windows as described above.
template <class Exec, pool_kind Kind, class In, class Out>
struct pool_vector_body : kcnn::detail::pool_vector_body<Exec, lane_width, Kind, In, Out, window_loops> {
  using base = kcnn::detail::pool_vector_body<Exec, lane_width, Kind, In, Out, window_loops>;
  using base::combine;
  using base::p;
  KOKKOS_INLINE_FUNCTION void row(const typename Kokkos::TeamPolicy<Exec>::member_type& m, const coords4& x) const {
    constexpr axis run = run_axis<typename Out::layout_tag>;
    if constexpr (run == axis::w) {
      base::row(m, x);
    } else {
      constexpr int W = lane_width;
      constexpr float init = base::init;
      const In& in = this->in;
      const Out& out = this->out;
      const pool_span sh(x.h, p.h, p.r, p.row_stride(), p.pad_top(), p.pad_bottom());
      const int h0 = sh.lo, h1 = sh.hi;
      const int stride = p.col_stride(), pad = p.pad_left();  // along w
      const pool_span sw(x.w, p.w, p.s, stride, pad, p.pad_right());
      const int w0 = sw.lo, w1 = sw.hi;
      const float inv_area = 1.0f / float(sh.padded * sw.padded);
      if constexpr (std::is_reference_v<typename In::reference_type>) {
        // The window's rows are separate streams that advance a few pixels per output; the
        // hardware prefetcher follows them badly. So
        // the columns the output `ahead` pixels along w will add are asked for now.
        constexpr int ahead = 4;
        // Only for an output that exists: its window then lies in the padded input (no overflow).
        const int a_lo = x.w + ahead < p.q() ? (x.w + ahead) * stride - pad + p.s - stride : p.w;
        const int a_hi = a_lo < p.w ? a_lo + stride : p.w;
        const int lo = a_lo > 0 ? a_lo : 0, hi = a_hi < p.w ? a_hi : p.w;
        if (lo < hi)
          for (int ih = h0; ih < h1; ++ih)
            prefetch_host(&in(x.n, x.c, ih, lo), std::size_t(hi - lo) * std::size_t(extent<run>(in.dims())) * sizeof(typename In::value_type));
      }
      for_lanes<W, true>(m, 0, extent<run>(out.dims()), [&](const int i, auto width) {
        constexpr int B = decltype(width)::value;
        const coords4 y = x.with<run>(i);
        if constexpr (B == W && std::is_reference_v<typename In::reference_type> &&
                      std::is_reference_v<typename Out::reference_type>) {
          // A whole vector of lanes: registers (kcnn/lanes.hpp), one partial result per window row
          // (independent chains: a single accumulator serialised the 9 adds of a 3 x 3 window on
          // the add latency). The array form below left the average's accumulators on the stack
          // and rebuilt each vector from 16 scalars.
          constexpr int parts = 4;
          float_lanes<W> acc[parts];
          for (int j = 0; j < parts; ++j) fill_lanes<W>(acc[j], init);
          for (int ih = h0; ih < h1; ++ih) {
            float_lanes<W>& a = acc[(ih - h0) % parts];
            for (int iw = w0; iw < w1; ++iw) {
              float_lanes<W> v;
              load_lanes<W>(v, &in(y.n, y.c, ih, iw));
              if constexpr (Kind == pool_kind::max) max_each_lane<W>(a, v);
              else add_each_lane<W>(a, v);
            }
          }
          for (int j = 1; j < parts; ++j) {
            if constexpr (Kind == pool_kind::max) max_each_lane<W>(acc[0], acc[j]);
            else add_each_lane<W>(acc[0], acc[j]);
          }
          if constexpr (Kind == pool_kind::avg) scale_lanes<W>(acc[0], inv_area);
          store_lanes<W>(&out(y.n, y.c, y.h, y.w), acc[0]);
          return;
        }
        float acc[B];
        for (int l = 0; l < B; ++l) acc[l] = init;
        for (int ih = h0; ih < h1; ++ih)
          for (int iw = w0; iw < w1; ++iw) {
            const auto src = lane_ptr<run>(in, coords4{y.n, y.c, ih, iw});
            KCNN_LANE_LOOP
            for (int l = 0; l < B; ++l) acc[l] = combine(acc[l], float(src[l]));
          }
        const auto dst = lane_ptr<run>(out, y);
        for (int l = 0; l < B; ++l) dst[l] = Kind == pool_kind::max ? acc[l] : acc[l] * inv_area;
      });
    }
  }
};

// The host path for nhwc and chwn (run axis c or n): a row is a whole output row (n, oh) (chwn:
// (c, oh)), walked along ow; the lanes run along the run axis, as in pool_vector_body. Each input column the row's windows read is reduced over the window's rows
// once (R loads per element) into a ring of column results (the next power of two >= s columns
// of the run, in a 32 KB buffer on the thread's stack: in L1); an output combines its s columns
// from the ring. A 3 x 3 / 1 window loads 3 inputs per output instead of 9. Inside a column the
// run is walked in order, so the input rows are read as three sequential streams. Windows up to
// ring_columns wide; a run longer than the buffer holds is taken in chunks. Where the windows
// overlap too little for the ring to save loads (use_ring: 2 x 2 / 2, 3 x 3 / 2), each output
// reads its window straight from the input rows instead.
template <class Exec, pool_kind Kind, class In, class Out>
struct pool_vector_slide_body {
  static constexpr int ring_columns = 16;
  static constexpr int ring_floats = 8192;
  In in;
  Out out;
  pool_params p;
  bool stream = false;  // non-temporal stores of the output (streams_output; the launch then stream_fence_threads)
  static constexpr float init = Kind == pool_kind::max ? -3.402823466e38f : 0.0f;
  template <int B>
  KOKKOS_FORCEINLINE_FUNCTION static void combine(float_lanes<B>& acc, const float_lanes<B>& v) {
    if constexpr (Kind == pool_kind::max) max_each_lane<B>(acc, v);
    else add_each_lane<B>(acc, v);
  }
  // The ring pays where windows overlap enough: per output it costs stride column reductions of
  // r loads and a store each, then s loads, against r * s loads straight from the input (3 x 3 /
  // 1: 7 against 9; 3 x 3 / 2: 11 against 9; 2 x 2 / 2: 8 against 4).
  KOKKOS_INLINE_FUNCTION static bool use_ring(const pool_params& p) {
    const int stride = p.col_stride();
    return stride * (p.r + 1) + p.s < p.r * p.s;
  }
  KOKKOS_INLINE_FUNCTION void row(const typename Kokkos::TeamPolicy<Exec>::member_type& m, const coords4& x) const {
    constexpr axis run = run_axis<typename Out::layout_tag>;
    static_assert(run != axis::w, "pool_vector_slide_body walks w");
    constexpr int W = lane_width;
    const pool_span sh(x.h, p.h, p.r, p.row_stride(), p.pad_top(), p.pad_bottom());
    const int h0 = sh.lo, h1 = sh.hi, Q = p.q(), len = extent<run>(out.dims());
    const int stride = p.col_stride(), pad = p.pad_left(), pad_end = p.pad_right(), s = p.s, Wd = p.w;
    if (!use_ring(p)) {
      // Each output reads its window straight from the input rows: lanes along the run axis, a
      // window element one load at a fixed distance from the window's first (row and column
      // steps taken once per row), two accumulators (independent chains), the row's columns
      // walked in order. Indexing the View per element cost more than the loads in L2.
      const auto* const base = &in(x.n, x.c, 0, 0);
      const std::ptrdiff_t row_step = p.h > 1 ? &in(x.n, x.c, 1, 0) - base : 0;
      const std::ptrdiff_t col_step = Wd > 1 ? &in(x.n, x.c, 0, 1) - base : 0;
      for (int ow = 0; ow < Q; ++ow) {
        const pool_span sw(ow, Wd, s, stride, pad, pad_end);
        const float inv_area = 1.0f / float(sh.padded * sw.padded);
        const int rows = h1 - h0, cols = sw.hi - sw.lo;
        const auto* const window = base + h0 * row_step + sw.lo * col_step;
        float* const dst = &out(x.n, x.c, x.h, ow);
        for_lanes<W, true>(m, 0, len, [&](const int i, auto width) {
          constexpr int B = decltype(width)::value;
          float_lanes<B> even, odd;  // the window's even and odd columns
          fill_lanes<B>(even, init);
          fill_lanes<B>(odd, init);
          for (int kh = 0; kh < rows; ++kh) {
            const auto* src = window + kh * row_step + i;
            int kw = 0;
            for (; kw + 1 < cols; kw += 2, src += 2 * col_step) {
              float_lanes<B> a, b;
              load_lanes<B>(a, src);
              load_lanes<B>(b, src + col_step);
              combine<B>(even, a);
              combine<B>(odd, b);
            }
            if (kw < cols) {
              float_lanes<B> a;
              load_lanes<B>(a, src);
              combine<B>(even, a);
            }
          }
          combine<B>(even, odd);
          if constexpr (Kind == pool_kind::avg) scale_lanes<B>(even, inv_area);
          if (stream) stream_lanes<B>(dst + i, even);
          else store_lanes<B>(dst + i, even);
        });
      }
      return;
    }
    int slots = 1;
    while (slots < s) slots *= 2;
    int chunk = ring_floats / slots;
    chunk = chunk >= len ? len : chunk / W * W;
    float ring[ring_floats];
    for (int c0 = 0; c0 < len; c0 += chunk) {
      const int cn = len - c0 < chunk ? len - c0 : chunk;
      int next = 0;  // the next input column to reduce
      for (int ow = 0; ow < Q; ++ow) {
        const pool_span sw(ow, Wd, s, stride, pad, pad_end);
        if (next < sw.lo) next = sw.lo;
        for (; next < sw.hi; ++next) {
          float* const col = ring + (next & (slots - 1)) * chunk;
          for_lanes<W, true>(m, 0, cn, [&](const int i, auto width) {
            constexpr int B = decltype(width)::value;
            const coords4 y = x.with<run>(c0 + i);
            // From the identity, as pool_window: a window of -inf gives -FLT_MAX, a NaN is dropped.
            float_lanes<B> acc;
            fill_lanes<B>(acc, init);
            for (int ih = h0; ih < h1; ++ih) {
              float_lanes<B> v;
              load_lanes<B>(v, &in(y.n, y.c, ih, next));
              combine<B>(acc, v);
            }
            store_lanes<B>(col + i, acc);
          });
        }
        const float inv_area = 1.0f / float(sh.padded * sw.padded);
        const int lo = sw.lo, hi = sw.hi;
        for_lanes<W, true>(m, 0, cn, [&](const int i, auto width) {
          constexpr int B = decltype(width)::value;
          float_lanes<B> acc;
          load_lanes<B>(acc, ring + (lo & (slots - 1)) * chunk + i);
          for (int iw = lo + 1; iw < hi; ++iw) {
            float_lanes<B> v;
            load_lanes<B>(v, ring + (iw & (slots - 1)) * chunk + i);
            combine<B>(acc, v);
          }
          if constexpr (Kind == pool_kind::avg) scale_lanes<B>(acc, inv_area);
          const coords4 y = x.with<run>(c0 + i);
          if (stream) stream_lanes<B>(&out(y.n, y.c, y.h, ow), acc);
          else store_lanes<B>(&out(y.n, y.c, y.h, ow), acc);
        });
      }
    }
  }
};

}  // namespace detail

template <class Exec>
struct tuned<variant::pool_vector, Exec> {
  template <class In, class Out>
  static void run(const Exec& exec, const In& in, const Out& out, const pool_params& p, const host_store_options& o) {
    using L = typename Out::layout_tag;
    const dims4 d = p.output_dims();
    const int run = extent<run_axis<L>>(d);
    if constexpr (run_axis<L> != axis::w && std::is_reference_v<typename In::reference_type> &&
                  std::is_reference_v<typename Out::reference_type>) {
      if (p.s <= detail::pool_vector_slide_body<Exec, pool_kind::max, In, Out>::ring_columns) {
        constexpr int skip_w = int(axis::w);
        const bool stream = streams_output(o, d.size() * sizeof(float));
        if (p.kind == pool_kind::max)
          host_tuning::for_each_row<L, skip_w>("kcnn::pool_vector", exec, d, run * d.w,
                                               detail::pool_vector_slide_body<Exec, pool_kind::max, In, Out>{in, out, p, stream});
        else
          host_tuning::for_each_row<L, skip_w>("kcnn::pool_vector", exec, d, run * d.w,
                                               detail::pool_vector_slide_body<Exec, pool_kind::avg, In, Out>{in, out, p, stream});
        if (stream) stream_fence_threads(exec);
        return;
      }
    }
    if (p.kind == pool_kind::max)
      host_tuning::for_each_row<L>("kcnn::pool_vector", exec, d, run, detail::pool_vector_body<Exec, pool_kind::max, In, Out>{in, out, p});
    else
      host_tuning::for_each_row<L>("kcnn::pool_vector", exec, d, run, detail::pool_vector_body<Exec, pool_kind::avg, In, Out>{in, out, p});
  }
};

}  // namespace host_tuning
}  // namespace kcnn
