#pragma once
// Max and average pooling with Caffe's semantics (window r x s, stride, zero padding; per-axis
// stride and begin / end pads as in conv2d_params).
//
// Output size, per axis (h shown: stride_h, begin pad pad_h, end pad pad_h_end): floor mode
// (h + pad_h + pad_h_end - r) / stride_h + 1 (torchvision); ceil mode rounds up (Caffe), then
// drops the last window when it would start past the input and its begin padding, as PyTorch
// does, for every pad (pad 0 included):
//   if ceil_mode and (out - 1) * stride_h >= h + pad_h, out -= 1.
// With every pad < the window (checked) every window then holds at least one input element, so no output is
// ever -FLT_MAX (max) or NaN (average) for a shape check() accepts.
// Max: over the window's elements inside the input. Average: the sum over the inside
// elements divided by the window area clipped to the padded input (Caffe's pool_size), which
// counts padding (begin and end) but not the part of a ceil-mode window beyond it.
//
// Entry point: kcnn::pool(exec, in, out, params, variant = variant::pool_naive{}).
#include <kcnn/api.hpp>
#include <kcnn/lanes.hpp>
#include <kcnn/layout.hpp>
#include <kcnn/team.hpp>
#include <kcnn/tuning.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace kcnn {

enum class pool_kind { max, avg };

struct pool_params {
  static constexpr int inherit = -1;  // a per-axis geometry field that takes the symmetric value

  int n = 0, c = 0, h = 0, w = 0;
  int r = 0, s = 0, stride = 1, pad = 0;
  bool ceil_mode = false;
  pool_kind kind = pool_kind::max;
  // Per-axis refinements, as in conv2d_params: stride_h / stride_w take `stride`, pad_h / pad_w
  // (before the first row / column) take `pad`, pad_h_end / pad_w_end (after the last) take
  // pad_h / pad_w. TensorFlow's "SAME" 3 x 3 / 2 pooling of an even input is {pad = 0,
  // pad_h_end = 1, pad_w_end = 1}.
  int stride_h = inherit, stride_w = inherit;
  int pad_h = inherit, pad_w = inherit, pad_h_end = inherit, pad_w_end = inherit;

  KOKKOS_INLINE_FUNCTION int row_stride() const { return stride_h == inherit ? stride : stride_h; }
  KOKKOS_INLINE_FUNCTION int col_stride() const { return stride_w == inherit ? stride : stride_w; }
  KOKKOS_INLINE_FUNCTION int pad_top() const { return pad_h == inherit ? pad : pad_h; }
  KOKKOS_INLINE_FUNCTION int pad_left() const { return pad_w == inherit ? pad : pad_w; }
  KOKKOS_INLINE_FUNCTION int pad_bottom() const { return pad_h_end == inherit ? pad_top() : pad_h_end; }
  KOKKOS_INLINE_FUNCTION int pad_right() const { return pad_w_end == inherit ? pad_left() : pad_w_end; }

  // One axis: `in` elements, padded by `pad_begin` and `pad_end`.
  KOKKOS_INLINE_FUNCTION int out_size(int in, int window, int step, int pad_begin, int pad_end) const {
    const int span = in + pad_begin + pad_end - window;
    int o = (ceil_mode ? (span + step - 1) / step : span / step) + 1;
    if (ceil_mode && (o - 1) * step >= in + pad_begin) --o;
    return o;
  }

  // Named constructors: max or average pooling of an input of dims `in` with an r x s window.
  static pool_params max_pool(const dims4& in, int r, int s, int stride, int pad = 0, bool ceil_mode = false) {
    return make(pool_kind::max, in, r, s, stride, pad, ceil_mode);
  }
  static pool_params avg_pool(const dims4& in, int r, int s, int stride, int pad = 0, bool ceil_mode = false) {
    return make(pool_kind::avg, in, r, s, stride, pad, ceil_mode);
  }
  static pool_params make(pool_kind kind, const dims4& in, int r, int s, int stride, int pad = 0,
                          bool ceil_mode = false) {
    pool_params p;
    p.n = in.n; p.c = in.c; p.h = in.h; p.w = in.w;
    p.r = r; p.s = s; p.stride = stride; p.pad = pad; p.ceil_mode = ceil_mode; p.kind = kind;
    return p;
  }
  // The same layer with per-axis stride and begin and end pads given explicitly.
  pool_params with_geometry(int stride_h_, int stride_w_, int pad_h_, int pad_w_, int pad_h_end_, int pad_w_end_) const {
    pool_params p = *this;
    p.stride_h = stride_h_; p.stride_w = stride_w_;
    p.pad_h = pad_h_; p.pad_w = pad_w_; p.pad_h_end = pad_h_end_; p.pad_w_end = pad_w_end_;
    return p;
  }
  // Equal when the layers compute the same thing (the effective geometry is compared).
  bool operator==(const pool_params& o) const {
    return n == o.n && c == o.c && h == o.h && w == o.w && r == o.r && s == o.s && ceil_mode == o.ceil_mode &&
           kind == o.kind && row_stride() == o.row_stride() && col_stride() == o.col_stride() &&
           pad_top() == o.pad_top() && pad_left() == o.pad_left() && pad_bottom() == o.pad_bottom() &&
           pad_right() == o.pad_right();
  }
  bool operator!=(const pool_params& o) const { return !(*this == o); }
  // Square stride and symmetric pad.
  bool symmetric() const {
    return row_stride() == col_stride() && pad_top() == pad_left() && pad_bottom() == pad_top() &&
           pad_right() == pad_left();
  }
  KOKKOS_INLINE_FUNCTION int p() const { return out_size(h, r, row_stride(), pad_top(), pad_bottom()); }
  KOKKOS_INLINE_FUNCTION int q() const { return out_size(w, s, col_stride(), pad_left(), pad_right()); }
  dims4 input_dims() const { return {n, c, h, w}; }
  dims4 output_dims() const { return {n, c, p(), q()}; }

  // Empty when valid, otherwise the first problem found, naming the field. Every pad must be
  // smaller than the window along its axis (no window of padding only).
  std::string check() const {
    const struct { const char* name; int v; } positive[] = {
        {"n", n}, {"c", c}, {"h", h}, {"w", w}, {"r", r}, {"s", s}, {"stride", stride}};
    for (const auto& f : positive)
      if (f.v <= 0) return std::string(f.name) + ": must be > 0, got " + std::to_string(f.v);
    if (kind != pool_kind::max && kind != pool_kind::avg) return "kind: not max or avg: " + std::to_string(int(kind));
    if (pad < 0) return "pad: must be >= 0, got " + std::to_string(pad);
    if (pad_h == inherit && pad_w == inherit && pad_h_end == inherit && pad_w_end == inherit && (pad >= r || pad >= s))
      return "pad: must be smaller than the window, got " + std::to_string(pad);
    const struct { const char* name; int v; int window; } effective[] = {
        {"pad_h", pad_top(), r}, {"pad_w", pad_left(), s}, {"pad_h_end", pad_bottom(), r}, {"pad_w_end", pad_right(), s}};
    for (const auto& f : effective)
      if (f.v >= f.window)
        return std::string(f.name) + ": must be smaller than the window (" + std::to_string(f.window) + "), got " +
               std::to_string(f.v);
    if (const std::string e = window_geometry_error(
            {h, w, stride, pad, stride_h, stride_w, pad_h, pad_w, pad_h_end, pad_w_end}, "pool_params");
        !e.empty())
      return e;
    const int padded_h = h + pad_top() + pad_bottom(), padded_w = w + pad_left() + pad_right();
    if (r > padded_h) return "r: window height " + std::to_string(r) + " exceeds padded input height " + std::to_string(padded_h);
    if (s > padded_w) return "s: window width " + std::to_string(s) + " exceeds padded input width " + std::to_string(padded_w);
    if (p() <= 0 || q() <= 0) return "r: output size must be > 0";
    return {};
  }
  // Each input read once, each output written once.
  double min_bytes() const {
    return 4.0 * (double(input_dims().size()) + double(output_dims().size()));
  }
  // One compare or add per window element (plus the division for average).
  double flops() const {
    return double(output_dims().size()) * (double(r) * s + (kind == pool_kind::avg ? 1 : 0));
  }
};

namespace detail {

// One axis of an output's window: the input range it reads, [lo, hi), and the length of the
// window clipped to the padded input (Caffe's divisor along this axis). The one place the
// window arithmetic lives; every pooling kernel calls it.
struct pool_span {
  int lo, hi, padded;
  KOKKOS_INLINE_FUNCTION pool_span(int o, int extent, int window, int stride, int pad, int pad_end) {
    const int start = o * stride - pad;
    const int end_pad = (start + window < extent + pad_end) ? start + window : extent + pad_end;
    padded = end_pad - start;
    lo = start > 0 ? start : 0;
    hi = end_pad < extent ? end_pad : extent;
  }
};

// f(ih, iw) for ih in [h0, h1), iw in [w0, w1), written out (kcnn::unrolled: each position's
// loads their own instructions, all of a window's issued together) when the window is at most
// R x S, the common 2 x 2 and 3 x 3 and their clipped edges; loops otherwise. The portable
// bodies' window walk; the host tuning passes its own (plain loops, its vectoriser's shape).
struct window_written_out {
  template <int R, int S, class F>
  KOKKOS_FORCEINLINE_FUNCTION static void walk(const int h0, const int h1, const int w0, const int w1, const F& f) {
    if (h1 - h0 <= R && w1 - w0 <= S) {
      unrolled<R>([&](auto kh) {
        const int ih = h0 + int(decltype(kh)::value);
        if (ih < h1)
          unrolled<S>([&](auto kw) {
            const int iw = w0 + int(decltype(kw)::value);
            if (iw < w1) f(ih, iw);
          });
      });
    } else {
      for (int ih = h0; ih < h1; ++ih)
        for (int iw = w0; iw < w1; ++iw) f(ih, iw);
    }
  }
};

// The value of one output from its window; shared by the naive and tiled kernels and the vector
// kernel's edges. `at(ih, iw)` reads the input of this (n, c) plane.
template <class At>
KOKKOS_INLINE_FUNCTION float pool_window(const pool_params& p, int oh, int ow, const At& at) {
  const pool_span sh(oh, p.h, p.r, p.row_stride(), p.pad_top(), p.pad_bottom());
  const pool_span sw(ow, p.w, p.s, p.col_stride(), p.pad_left(), p.pad_right());
  const int area = sh.padded * sw.padded;
  const int h0 = sh.lo, h1 = sh.hi, w0 = sw.lo, w1 = sw.hi;
  if (p.kind == pool_kind::max) {
    float m = -3.402823466e38f;
    for (int ih = h0; ih < h1; ++ih)
      for (int iw = w0; iw < w1; ++iw) {
        const float v = at(ih, iw);
        m = v > m ? v : m;
      }
    return m;
  }
  float sum = 0.0f;
  for (int ih = h0; ih < h1; ++ih)
    for (int iw = w0; iw < w1; ++iw) sum += at(ih, iw);
  return sum / float(area);
}

template <class In, class Out>
struct pool_naive_functor {
  In in;
  Out out;
  pool_params p;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, c, oh, ow;
    out.storage_coords(i, n, c, oh, ow);
    out(n, c, oh, ow) = pool_window(p, oh, ow, [&](int ih, int iw) { return in(n, c, ih, iw); });
  }
};

// RH x RW outputs per thread: the input rows and columns the windows share are loaded once
// and reused from registers (for a 3x3/2 window, loads per output fall from 9 to (6m+3)/m
// along w, and to (2m+1)^2/m^2 for an m x m tile).
template <int RH, int RW, class In, class Out>
struct pool_regtile_functor {
  In in;
  Out out;
  pool_params p;
  dims4 grid;  // (n, c, ceil(P/RH), ceil(Q/RW))
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, c, bh, bw;
    Out::layout_tag::storage_coords(i, grid, n, c, bh, bw);
    const int P = p.p(), Q = p.q();
    const int oh0 = bh * RH, ow0 = bw * RW;
    float acc[RH][RW];
    int h0[RH], h1[RH], w0[RW], w1[RW], area_h[RH], area_w[RW];
    for (int a = 0; a < RH; ++a) {
      const pool_span sh(oh0 + a, p.h, p.r, p.row_stride(), p.pad_top(), p.pad_bottom());
      area_h[a] = sh.padded;
      h0[a] = sh.lo;
      h1[a] = sh.hi;
    }
    for (int b = 0; b < RW; ++b) {
      const pool_span sw(ow0 + b, p.w, p.s, p.col_stride(), p.pad_left(), p.pad_right());
      area_w[b] = sw.padded;
      w0[b] = sw.lo;
      w1[b] = sw.hi;
    }
    const bool is_max = p.kind == pool_kind::max;
    for (int a = 0; a < RH; ++a)
      for (int b = 0; b < RW; ++b) acc[a][b] = is_max ? -3.402823466e38f : 0.0f;
    // The union of the windows, each element loaded once.
    const int hu0 = h0[0], hu1 = h1[RH - 1] > h1[0] ? h1[RH - 1] : h1[0];
    const int wu0 = w0[0], wu1 = w1[RW - 1] > w1[0] ? w1[RW - 1] : w1[0];
    for (int ih = hu0; ih < hu1; ++ih)
      for (int iw = wu0; iw < wu1; ++iw) {
        const float v = in(n, c, ih, iw);
        for (int a = 0; a < RH; ++a) {
          if (ih < h0[a] || ih >= h1[a]) continue;
          for (int b = 0; b < RW; ++b) {
            if (iw < w0[b] || iw >= w1[b]) continue;
            if (is_max) acc[a][b] = v > acc[a][b] ? v : acc[a][b];
            else acc[a][b] += v;
          }
        }
      }
    for (int a = 0; a < RH; ++a)
      for (int b = 0; b < RW; ++b) {
        const int oh = oh0 + a, ow = ow0 + b;
        if (oh < P && ow < Q)
          out(n, c, oh, ow) = is_max ? acc[a][b] : acc[a][b] / float(area_h[a] * area_w[b]);
      }
  }
};

// A team owns nb images x cb channels x th x tw outputs and stages their input tile (with the
// windows' overlap) in team scratch, loaded along the layout's storage order.
template <class Exec, class In, class Out>
struct pool_tiled_functor {
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  using scratch = Kokkos::View<float*, typename Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  In in;
  Out out;
  pool_params p;
  dims4 tile, in_tile, tiles;  // output tile extents, input tile extents, tile counts
  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    using L = typename In::layout_tag;
    int tn, tc, th, tw;
    tiles.logical_coords(std::size_t(m.league_rank()), tn, tc, th, tw);
    const int n0 = tn * tile.n, c0 = tc * tile.c, oh0 = th * tile.h, ow0 = tw * tile.w;
    const int ih0 = oh0 * p.row_stride() - p.pad_top(), iw0 = ow0 * p.col_stride() - p.pad_left();
    const auto s_in = team_scratch<scratch>(m, in_tile.size());
    team_rows(m, int(in_tile.size()), [&](const int i) {
      int a, b, y, x;
      L::storage_coords(std::size_t(i), in_tile, a, b, y, x);
      const int n = n0 + a, c = c0 + b, ih = ih0 + y, iw = iw0 + x;
      s_in(i) = (n < p.n && c < p.c && ih >= 0 && ih < p.h && iw >= 0 && iw < p.w) ? float(in(n, c, ih, iw)) : 0.0f;
    });
    team_barrier(m);
    const int P = p.p(), Q = p.q();
    team_rows(m, int(tile.size()), [&](const int i) {
      int a, b, y, x;
      Out::layout_tag::storage_coords(std::size_t(i), tile, a, b, y, x);
      const int n = n0 + a, c = c0 + b, oh = oh0 + y, ow = ow0 + x;
      if (n >= p.n || c >= p.c || oh >= P || ow >= Q) return;
      out(n, c, oh, ow) = pool_window(p, oh, ow, [&](int ih, int iw) {
        return s_in(L::offset(in_tile, a, b, ih - ih0, iw - iw0));
      });
    });
  }
};

// The vector form (kcnn/lanes.hpp): rows and lanes follow the output layout.
//  * nchw (run axis w): a row is an output row (n, c, oh), its window rows computed once; the
//    lanes take consecutive outputs ow. Outputs whose window lies inside the input along w go
//    through a branch-free loop (each lane reads its window `stride` elements after its
//    neighbour); the few at the edges through pool_window.
//  * nhwc, chwn (run axis c, n): a row is pool_vector_out_rows output pixels along h at one
//    (n, ow) or (c, ow), the union of their windows loaded once (the rows they share not read
//    again from L2), or one output pixel where the stride along h exceeds the window (the union
//    would hold rows neither window reads); the lanes take consecutive channels (images): every
//    window element is one contiguous load across the lanes. The host tuning walks these layouts
//    its own way.
inline constexpr int pool_vector_out_rows = 2;
// The output rows a group of the nhwc and chwn form holds.
inline int pool_vector_rows_per_group(const pool_params& p) { return p.row_stride() > p.r ? 1 : pool_vector_out_rows; }
// W: lane width (kcnn::for_lanes); Window: the window walk (window_written_out, or the host
// tuning's).
template <class Exec, int W, pool_kind Kind, class In, class Out, class Window = window_written_out>
struct pool_vector_body {
  In in;
  Out out;
  pool_params p;
  int group = pool_vector_out_rows;  // nhwc, chwn: output rows per group (pool_vector_rows_per_group)
  static constexpr float init = Kind == pool_kind::max ? -3.402823466e38f : 0.0f;
  KOKKOS_FORCEINLINE_FUNCTION static float combine(float acc, float v) {
    if constexpr (Kind == pool_kind::max) return v > acc ? v : acc;
    else return acc + v;
  }
  KOKKOS_INLINE_FUNCTION void row(const typename Kokkos::TeamPolicy<Exec>::member_type& m, const coords4& x) const {
    constexpr axis run = run_axis<typename Out::layout_tag>;
    const int stride = p.col_stride(), pad = p.pad_left();  // along w
    if constexpr (run == axis::w) {
      const pool_span sh(x.h, p.h, p.r, p.row_stride(), p.pad_top(), p.pad_bottom());
      const int h0 = sh.lo, h1 = sh.hi;
      const int Q = p.q();
      // One past the last window inside: ow * stride - pad + s <= w. None when the window is wider
      // than the row and its begin pad (an end pad makes such a layer valid): C++ division would
      // round -1 / 2 up to 0 and let output 0 read past the row.
      const int inside_span = p.w + pad - p.s;
      int q_hi = inside_span < 0 ? 0 : inside_span / stride + 1;
      q_hi = q_hi < Q ? q_hi : Q;
      int q_lo = (pad + stride - 1) / stride;  // first window inside: ow * stride >= pad
      q_lo = q_lo < q_hi ? q_lo : q_hi;
      const auto edge = [&](const int ow) {
        out(x.n, x.c, x.h, ow) = pool_window(p, x.h, ow, [&](int ih, int iw) { return float(in(x.n, x.c, ih, iw)); });
      };
      vector_lanes(m, 0, q_lo, edge);
      vector_lanes(m, q_hi, Q, edge);
      const float inv_area = 1.0f / float(sh.padded * p.s);  // inside along w: s columns
      const int s = p.s;
      for_lanes<W, true>(m, q_lo, q_hi, [&](const int q0, auto width) {
        constexpr int B = decltype(width)::value;
        float acc[B];
        for_each_lane(width, [&](const int l) { acc[l] = init; });
        Window::template walk<3, 3>(h0, h1, 0, s, [&](const int ih, const int kw) {
          const auto src = lane_ptr<axis::w>(in, coords4{x.n, x.c, ih, q0 * stride - pad + kw});
          for_each_lane(width, [&](const int l) { acc[l] = combine(acc[l], float(src[lane_offset(width, l) * stride])); });
        });
        const auto dst = lane_ptr<axis::w>(out, x.with<axis::w>(q0));
        for_each_lane(width, [&](const int l) {
          if (!lane_repeats(width, l)) dst[lane_offset(width, l)] = Kind == pool_kind::max ? acc[l] : acc[l] * inv_area;
        });
      });
    } else {
      // `group` (at most R) outputs along h per lane (x.h counts groups): the window rows they
      // share are loaded once, a 3 x 3 / 2 window's 9 loads per output falling to 7.5 (L2 traffic).
      constexpr int R = pool_vector_out_rows;
      const int P = p.p(), oh0 = x.h * group, last = oh0 + group < P ? oh0 + group : P;
      const pool_span sw(x.w, p.w, p.s, stride, pad, p.pad_right());
      const int w0 = sw.lo, w1 = sw.hi;
      int lo[R], hi[R];
      float inv_area[R];
      const int h0 = pool_span(oh0, p.h, p.r, p.row_stride(), p.pad_top(), p.pad_bottom()).lo;
      int h_end = h0;
      unrolled<R>([&](auto a) {
        constexpr int A = decltype(a)::value;
        if (oh0 + A < last) {
          const pool_span sa(oh0 + A, p.h, p.r, p.row_stride(), p.pad_top(), p.pad_bottom());
          lo[A] = sa.lo;
          hi[A] = sa.hi;
          inv_area[A] = 1.0f / float(sa.padded * sw.padded);
        } else {  // past the group or the last output row: an empty window, never stored
          lo[A] = hi[A] = h0;
          inv_area[A] = 0.0f;
        }
        h_end = hi[A] > h_end ? hi[A] : h_end;
      });
      for_lanes<W, true>(m, 0, extent<run>(out.dims()), [&](const int i, auto width) {
        constexpr int B = decltype(width)::value;
        const coords4 y = x.with<run>(i);
        float acc[R][B];
        unrolled<R>([&](auto a) { for_each_lane(width, [&](const int l) { acc[decltype(a)::value][l] = init; }); });
        Window::template walk<(R - 1) * 2 + 3, 3>(h0, h_end, w0, w1, [&](const int ih, const int iw) {
          const auto src = lane_ptr<run>(in, coords4{y.n, y.c, ih, iw});
          float v[B];
          for_each_lane(width, [&](const int l) { v[l] = float(src[lane_offset(width, l)]); });
          unrolled<R>([&](auto a) {
            constexpr int A = decltype(a)::value;
            if (ih >= lo[A] && ih < hi[A]) for_each_lane(width, [&](const int l) { acc[A][l] = combine(acc[A][l], v[l]); });
          });
        });
        unrolled<R>([&](auto a) {
          constexpr int A = decltype(a)::value;
          if (oh0 + A < last) {
            const auto dst = lane_ptr<run>(out, y.with<axis::h>(oh0 + A));
            for_each_lane(width, [&](const int l) {
              if (!lane_repeats(width, l)) dst[lane_offset(width, l)] = Kind == pool_kind::max ? acc[A][l] : acc[A][l] * inv_area[A];
            });
          }
        });
      });
    }
  }
};

// nhwc and chwn with a compile-time KR x KS window and row stride ST (windows sharing KR - ST
// rows: 3 x 3 / 2): a lane walks `group` consecutive output rows down one column of windows at
// one (n, ow) or (c, ow), the shared rows kept in registers. Per output, ST new window rows of KS
// loads per batch element, all issued before its first combine; the input's rows are read from
// L2 (group * ST + KR - ST) / (group * ST) times (the rows two groups share), against KR / ST
// times for one output per lane (the columns adjacent lanes' windows share are L1's to catch). Positions in the padding load a clamped address and take the identity,
// so a window's loads are one block of straight-line code. The lanes take consecutive channels
// (images) as in pool_vector_body.
template <class Exec, pool_kind Kind, int KR, int KS, int ST, class In, class Out>
struct pool_vector_column_body {
  static_assert(KR >= ST && ST >= 1 && KS >= 1, "pool_vector_column_body: windows that meet or overlap along h");
  In in;
  Out out;
  pool_params p;
  int group = 1;  // output rows per lane (x.h counts groups)
  static constexpr float init = Kind == pool_kind::max ? -3.402823466e38f : 0.0f;
  KOKKOS_INLINE_FUNCTION void row(const typename Kokkos::TeamPolicy<Exec>::member_type& m, const coords4& x) const {
    constexpr axis run = run_axis<typename Out::layout_tag>;
    static_assert(run != axis::w, "pool_vector_column_body: lanes along c or n");
    const int P = p.p(), oh0 = x.h * group, last = oh0 + group < P ? oh0 + group : P;
    const int pad_top = p.pad_top(), h_max = p.h - 1, w_max = p.w - 1;
    const pool_span sw(x.w, p.w, KS, p.col_stride(), p.pad_left(), p.pad_right());
    const int iw0 = x.w * p.col_stride() - p.pad_left();
    for_lanes<1, true>(m, 0, extent<run>(out.dims()), [&](const int i, auto width) {
      constexpr int B = decltype(width)::value;
      float win[KR][KS][B];  // the current window's rows
      const auto load_row = [&](float (&dst)[KS][B], const int ih) {
        const bool row_inside = ih >= 0 && ih <= h_max;
        const int hc = ih < 0 ? 0 : ih > h_max ? h_max : ih;
        unrolled<KS>([&](auto kw) {
          constexpr int K = decltype(kw)::value;
          const int iw = iw0 + K;
          const bool inside = row_inside && iw >= 0 && iw <= w_max;
          const auto src = lane_ptr<run>(in, coords4{x.n, x.c, hc, iw < 0 ? 0 : iw > w_max ? w_max : iw}.with<run>(i));
          for_each_lane(width, [&](const int l) {
            const float v = float(src[lane_offset(width, l)]);
            dst[K][l] = inside ? v : init;
          });
        });
      };
      unrolled<KR - ST>([&](auto k) { load_row(win[decltype(k)::value], oh0 * ST - pad_top + int(decltype(k)::value)); });
      for (int oh = oh0; oh < last; ++oh) {
        const int ih0 = oh * ST - pad_top;
        unrolled<ST>([&](auto k) {
          constexpr int K = KR - ST + decltype(k)::value;
          load_row(win[K], ih0 + K);
        });
        float acc[B];
        for_each_lane(width, [&](const int l) { acc[l] = init; });
        unrolled<KR>([&](auto kh) {  // row-major, as pool_window
          unrolled<KS>([&](auto kw) {
            for_each_lane(width, [&](const int l) {
              const float v = win[decltype(kh)::value][decltype(kw)::value][l];
              if constexpr (Kind == pool_kind::max) acc[l] = v > acc[l] ? v : acc[l];
              else acc[l] += v;
            });
          });
        });
        const float inv_area =
            1.0f / float(pool_span(oh, p.h, KR, ST, pad_top, p.pad_bottom()).padded * sw.padded);
        const auto dst = lane_ptr<run>(out, coords4{x.n, x.c, oh, x.w}.with<run>(i));
        for_each_lane(width, [&](const int l) {
          if (!lane_repeats(width, l)) dst[lane_offset(width, l)] = Kind == pool_kind::max ? acc[l] : acc[l] * inv_area;
        });
        unrolled<KR - ST>([&](auto k) {  // the rows the next window shares
          constexpr int K = decltype(k)::value;
          unrolled<KS>([&](auto kw) {
            for_each_lane(width, [&](const int l) { win[K][decltype(kw)::value][l] = win[K + ST][decltype(kw)::value][l]; });
          });
        });
      }
    });
  }
};

// Output rows a lane of pool_vector_column_body walks: the most, up to 8 (the input's rows then
// read from L2 17/16 times for a 3 x 3 / 2 window), that still gives the launch two threads per
// thread the device holds at once (device_concurrency), so that small layers keep their
// parallelism.
template <class Exec>
int pool_vector_column_rows(const Exec& exec, const pool_params& p) {
  // Lane tasks (a batch of channels or images each) per output row, in nhwc and chwn alike.
  const double tasks_per_row = double(p.n) * double(p.c) * double(p.q()) / double(lane_batch_size);
  const double wanted = 2.0 * double(device_concurrency(exec));
  int g = 8;
  while (g > 1 && tasks_per_row * double((p.p() + g - 1) / g) < wanted) g /= 2;
  return g;
}

}  // namespace detail

namespace variant {
// One thread per output, along the output's storage order. Every layout. The default.
struct pool_naive {
  using op = ops::pool;
  template <class Exec, class In, class Out>
  void run(const Exec& exec, const In& in, const Out& out, const pool_params& p) const {
    launch_range("kcnn::pool_naive", exec, out.size(),
                         detail::pool_naive_functor<In, Out>{in, out, p});
  }
};
// RH x RW outputs per thread, the windows' shared inputs reused from registers. Compile-time
// output layouts.
template <int RH, int RW>
struct pool_regtile {
  static_assert(RH >= 1 && RW >= 1 && RH * RW <= 64, "pool_regtile: 1..64 outputs per thread");
  using op = ops::pool;
  template <class Exec, class In, class Out>
  void run(const Exec& exec, const In& in, const Out& out, const pool_params& p) const {
    static_assert(!Out::layout_tag::runtime_strided,
                  "kcnn::pool: pool_regtile needs a compile-time output layout (use pool_naive for strided)");
    const dims4 grid{p.n, p.c, (p.p() + RH - 1) / RH, (p.q() + RW - 1) / RW};
    launch_range("kcnn::pool_regtile", exec, grid.size(),
                         detail::pool_regtile_functor<RH, RW, In, Out>{in, out, p, grid});
  }
};
// The portable row mapping (kcnn/lanes.hpp), lanes along the output's contiguous axis: nchw
// lanes take consecutive outputs along w (window rows computed once per output row, no bounds
// tests inside the input); nhwc and chwn lanes take consecutive channels or images, a row is one
// output pixel, its window computed once, each window element a contiguous load. Coalesced on a
// GPU. Host tuning (kcnn/host/pool.hpp): lane blocks, the window columns ahead prefetched, and for
// nhwc and chwn whole output rows with a ring of column results, stores streamed past
// host_stores.streaming_store_bytes. in and out in the same compile-time layout.
struct pool_vector {
  using op = ops::pool;
  static constexpr bool host_tunable = true;
  host_store_options host_stores{};
  // nhwc and chwn 3 x 3 / 2 windows on the portable path: output rows a lane walks
  // (pool_vector_column_body), 1..64; 0 (the default): pool_vector_column_rows chooses.
  int rows_per_lane = 0;
  template <class Exec, class In, class Out>
  void run(const Exec& exec, const In& in, const Out& out, const pool_params& p) const {
    run_tuned<tunings::automatic>(exec, in, out, p);
  }
  template <class T, class Exec, class In, class Out>
  void run_tuned(const Exec& exec, const In& in, const Out& out, const pool_params& p) const {
    using L = typename Out::layout_tag;
    static_assert(!L::runtime_strided && std::is_same_v<typename In::layout_tag, L>,
                  "kcnn::pool: pool_vector needs in and out in the same compile-time layout");
    if (rows_per_lane < 0 || rows_per_lane > 64)
      detail::fail("pool", "pool_vector: rows_per_lane must be 0 (automatic) or 1..64, got " + std::to_string(rows_per_lane));
    if constexpr (takes_host_tuning<T, Exec>) {
      host_tuning::tuned<pool_vector, Exec>::run(exec, in, out, p, host_stores);
    } else {
      dims4 d = p.output_dims();
      const int run = extent<run_axis<L>>(d);
      if constexpr (run_axis<L> != axis::w) {
        if (p.r == 3 && p.s == 3 && p.row_stride() == 2) {
          const int g = rows_per_lane > 0 ? rows_per_lane : detail::pool_vector_column_rows(exec, p);
          d.h = (d.h + g - 1) / g;
          if (p.kind == pool_kind::max)
            for_each_row<L, -1, T>("kcnn::pool_vector", exec, d, run,
                                   detail::pool_vector_column_body<Exec, pool_kind::max, 3, 3, 2, In, Out>{in, out, p, g});
          else
            for_each_row<L, -1, T>("kcnn::pool_vector", exec, d, run,
                                   detail::pool_vector_column_body<Exec, pool_kind::avg, 3, 3, 2, In, Out>{in, out, p, g});
          return;
        }
      }
      const int group = detail::pool_vector_rows_per_group(p);
      if constexpr (run_axis<L> != axis::w) d.h = (d.h + group - 1) / group;  // the rows: groups of output rows
      if (p.kind == pool_kind::max)
        for_each_row<L, -1, T>("kcnn::pool_vector", exec, d, run,
                               detail::pool_vector_body<Exec, 1, pool_kind::max, In, Out>{in, out, p, group});
      else
        for_each_row<L, -1, T>("kcnn::pool_vector", exec, d, run,
                               detail::pool_vector_body<Exec, 1, pool_kind::avg, In, Out>{in, out, p, group});
    }
  }
};
// A team per tile, its input tile staged in team scratch. Compile-time layouts; throws
// std::invalid_argument when the window does not fit in the backend's team scratch.
struct pool_tiled {
  using op = ops::pool;
  template <class Exec, class In, class Out>
  void run(const Exec& exec, const In& in, const Out& out, const pool_params& p) const;
};
}  // namespace variant

// out = pool(in). in: p.input_dims(), out: p.output_dims(), any layouts and memory spaces the
// execution space can access. Throws std::invalid_argument on invalid params or operand dims.
template <class Exec, class In, class Out, class V = variant::pool_naive>
void pool(const Exec& exec, const In& in, const Out& out, const pool_params& p, const V& v = V{}) {
  static_assert(detail::is_variant_of<V, ops::pool>, "kcnn::pool: not a pool variant (kcnn::variant::pool_*)");
  const detail::checker<Exec> check{"pool"};
  check.params(p.check());
  check.tensor("in", in, p.input_dims());
  check.tensor("out", out, p.output_dims());
  v.run(exec, in, out, p);
}
// Output tile per layout, clipped to the layer; halved until its input tile fits in scratch.
template <class Layout>
dims4 pool_tile(const pool_params& p, std::size_t scratch_bytes) {
  dims4 t;
  if constexpr (std::is_same_v<Layout, layout::nchw>) t = {1, 1, 8, 32};
  else if constexpr (std::is_same_v<Layout, layout::nhwc>) t = {1, 32, 4, 4};
  else t = {32, 2, 2, 4};
  t = {std::min(t.n, p.n), std::min(t.c, p.c), std::min(t.h, p.p()), std::min(t.w, p.q())};
  auto in_tile = [&](const dims4& o) {
    return dims4{o.n, o.c, (o.h - 1) * p.row_stride() + p.r, (o.w - 1) * p.col_stride() + p.s};
  };
  while (in_tile(t).size() * sizeof(float) + 128 > scratch_bytes) {
    if (t.w > 1) t.w = (t.w + 1) / 2;
    else if (t.h > 1) t.h = (t.h + 1) / 2;
    else if (t.c > 1) t.c = (t.c + 1) / 2;
    else if (t.n > 1) t.n = (t.n + 1) / 2;
    else return dims4{0, 0, 0, 0};
  }
  return t;
}

template <class Exec, class In, class Out>
void variant::pool_tiled::run(const Exec& exec, const In& in, const Out& out, const pool_params& p) const {
  static_assert(!In::layout_tag::runtime_strided && !Out::layout_tag::runtime_strided,
                "kcnn::pool: pool_tiled needs compile-time layouts (use pool_naive or pool_regtile for strided)");
  using functor = detail::pool_tiled_functor<Exec, In, Out>;
  const dims4 t = pool_tile<typename In::layout_tag>(p, scratch_limit<Exec>(0));
  if (t.size() == 0) detail::fail("pool", "pool_tiled: the window does not fit in team scratch");
  const dims4 it{t.n, t.c, (t.h - 1) * p.row_stride() + p.r, (t.w - 1) * p.col_stride() + p.s};
  const dims4 tiles{(p.n + t.n - 1) / t.n, (p.c + t.c - 1) / t.c, (p.p() + t.h - 1) / t.h,
                    (p.q() + t.w - 1) / t.w};
  functor f{in, out, p, t, it, tiles};
  launch_teams_recommended("kcnn::pool_tiled", exec, int(tiles.size()), functor::scratch::shmem_size(it.size()), f, 256);
}

}  // namespace kcnn

#if KCNN_HOST_TUNING
#include <kcnn/host/pool.hpp>
#endif
