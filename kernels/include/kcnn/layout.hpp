#pragma once
// Layout tags for 4-D activation and filter tensors.
//
// Every tensor is indexed logically as (n, c, h, w) whatever its storage order. A tag maps the
// logical coordinates onto a Kokkos View whose extents are stored in the tag's physical order,
// slowest first, so Kokkos' LayoutRight makes the last of them the fastest in memory:
//   nchw -> View(n, c, h, w)   w fastest (Caffe, cuDNN default)
//   nhwc -> View(n, h, w, c)   c fastest (channels-last, TensorFlow)
//   chwn -> View(c, h, w, n)   n fastest (cuda-convnet)
//   strided -> View(n, c, h, w) with LayoutStride: any permutation chosen at run time.
// Filters reuse the same tags with (k, c, r, s) in place of (n, c, h, w), which gives the
// matching filter layouts KCRS, KRSC and CRSK.
#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace kcnn {

// Window arithmetic (output sizes, window starts) is done in int: a padded extent plus one
// stride must fit in it. Empty when it does, else the message naming the field (pad).
inline std::string padded_extent_error(int h, int w, int pad, int stride) {
  const long long limit = 2147483647LL;
  for (const long long extent : {(long long)h, (long long)w})
    if (extent + 2LL * pad + stride > limit)
      return "pad: the padded input (" + std::to_string(extent) + " + 2 x " + std::to_string(pad) +
             ") plus a stride exceeds 2^31 - 1";
  return {};
}
// The per-axis window geometry shared by conv2d_params and pool_params: the symmetric stride and
// pad and their per-axis refinements (-1: inherit). Empty when the fields are valid and the padded
// extents fit in int, else the first problem, naming the field (`owner` names the params type in
// the message); the extents' field is "pad" when only the symmetric fields are set.
struct window_geometry {
  int h, w, stride, pad, stride_h, stride_w, pad_h, pad_w, pad_h_end, pad_w_end;
};
// One axis with its own begin and end pads; `axis` ("h" or "w") names the field (pad_h, pad_w).
inline std::string padded_extent_error(int extent, int pad_begin, int pad_end, int stride, const char* axis) {
  if (double(extent) + double(pad_begin) + double(pad_end) + double(stride) > 2147483647.0)
    return std::string("pad_") + axis + ": the padded input (" + std::to_string(extent) + " + " +
           std::to_string(pad_begin) + " + " + std::to_string(pad_end) + ") plus a stride exceeds 2^31 - 1";
  return {};
}
inline std::string window_geometry_error(const window_geometry& g, const char* owner) {
  const std::string inherit = std::string(" (or kcnn::") + owner + "::inherit), got ";
  const struct { const char* name; int v; } strides[] = {{"stride_h", g.stride_h}, {"stride_w", g.stride_w}};
  for (const auto& f : strides)
    if (f.v != -1 && f.v <= 0) return std::string(f.name) + ": must be > 0" + inherit + std::to_string(f.v);
  if (g.pad < 0) return "pad: must be >= 0, got " + std::to_string(g.pad);
  const struct { const char* name; int v; } pads[] = {
      {"pad_h", g.pad_h}, {"pad_w", g.pad_w}, {"pad_h_end", g.pad_h_end}, {"pad_w_end", g.pad_w_end}};
  for (const auto& f : pads)
    if (f.v != -1 && f.v < 0) return std::string(f.name) + ": must be >= 0" + inherit + std::to_string(f.v);
  const bool per_axis = g.stride_h != -1 || g.stride_w != -1 || g.pad_h != -1 || g.pad_w != -1 || g.pad_h_end != -1 ||
                        g.pad_w_end != -1;
  if (!per_axis) return padded_extent_error(g.h, g.w, g.pad, g.stride);
  const auto pick = [](int v, int fallback) { return v == -1 ? fallback : v; };
  const int top = pick(g.pad_h, g.pad), left = pick(g.pad_w, g.pad);
  if (std::string e = padded_extent_error(g.h, top, pick(g.pad_h_end, top), pick(g.stride_h, g.stride), "h"); !e.empty())
    return e;
  return padded_extent_error(g.w, left, pick(g.pad_w_end, left), pick(g.stride_w, g.stride), "w");
}

// Logical extents of a 4-D tensor.
struct dims4 {
  int n = 0, c = 0, h = 0, w = 0;
  KOKKOS_INLINE_FUNCTION std::size_t size() const {
    return std::size_t(n) * std::size_t(c) * std::size_t(h) * std::size_t(w);
  }
  // Logical linear index, nchw order: the same for every storage layout.
  KOKKOS_INLINE_FUNCTION std::size_t logical_index(int in, int ic, int ih, int iw) const {
    return ((std::size_t(in) * c + ic) * h + ih) * w + iw;
  }
  KOKKOS_INLINE_FUNCTION void logical_coords(std::size_t i, int& in, int& ic, int& ih,
                                             int& iw) const {
    iw = int(i % w);
    i /= w;
    ih = int(i % h);
    i /= h;
    ic = int(i % c);
    in = int(i / c);
  }
  bool operator==(const dims4& o) const { return n == o.n && c == o.c && h == o.h && w == o.w; }
};

// Logical axis ids, used to describe physical orders.
enum class axis : int { n = 0, c = 1, h = 2, w = 3 };

namespace layout {

namespace detail {
// Splits a storage-order linear index into the four physical coordinates (slowest first).
KOKKOS_INLINE_FUNCTION void unflatten(std::size_t i, int e0, int e1, int e2, int e3, int& p0,
                                      int& p1, int& p2, int& p3) {
  (void)e0;
  p3 = int(i % e3);
  i /= e3;
  p2 = int(i % e2);
  i /= e2;
  p1 = int(i % e1);
  p0 = int(i / e1);
}
}  // namespace detail

// A compile-time physical order A0 A1 A2 A3 (slowest first) of the logical axes.
template <axis A0, axis A1, axis A2, axis A3>
struct fixed_order {
  static constexpr bool runtime_strided = false;
  using kokkos_layout = Kokkos::LayoutRight;
  static constexpr std::array<axis, 4> order = {A0, A1, A2, A3};
  // The same tensor walked deliberately against its memory order: the fastest physical axis
  // becomes the slowest, so consecutive threads land a whole row (or more) apart.
  using against = fixed_order<A3, A0, A1, A2>;

  // The coordinate of logical axis A among (n, c, h, w).
  template <axis A, class T>
  KOKKOS_FORCEINLINE_FUNCTION static T pick(T n, T c, T h, T w) {
    if constexpr (A == axis::n) return n;
    else if constexpr (A == axis::c) return c;
    else if constexpr (A == axis::h) return h;
    else return w;
  }
  template <axis A>
  KOKKOS_FORCEINLINE_FUNCTION static int& pick_ref(int& n, int& c, int& h, int& w) {
    if constexpr (A == axis::n) return n;
    else if constexpr (A == axis::c) return c;
    else if constexpr (A == axis::h) return h;
    else return w;
  }

  static kokkos_layout make(const dims4& d) {
    return kokkos_layout(pick<A0>(d.n, d.c, d.h, d.w), pick<A1>(d.n, d.c, d.h, d.w),
                         pick<A2>(d.n, d.c, d.h, d.w), pick<A3>(d.n, d.c, d.h, d.w));
  }
  template <class V>
  KOKKOS_FORCEINLINE_FUNCTION static typename V::reference_type at(const V& v, int n, int c,
                                                                   int h, int w) {
    return v(pick<A0>(n, c, h, w), pick<A1>(n, c, h, w), pick<A2>(n, c, h, w),
             pick<A3>(n, c, h, w));
  }
  // Storage offset of logical (n, c, h, w) in a dense tensor of extents d (e.g. a scratch tile).
  KOKKOS_FORCEINLINE_FUNCTION static std::size_t offset(const dims4& d, int n, int c, int h,
                                                        int w) {
    return ((std::size_t(pick<A0>(n, c, h, w)) * std::size_t(pick<A1>(d.n, d.c, d.h, d.w)) +
             std::size_t(pick<A1>(n, c, h, w))) *
                std::size_t(pick<A2>(d.n, d.c, d.h, d.w)) +
            std::size_t(pick<A2>(n, c, h, w))) *
               std::size_t(pick<A3>(d.n, d.c, d.h, d.w)) +
           std::size_t(pick<A3>(n, c, h, w));
  }
  // Coalesced mapping: storage-order linear index i -> logical coordinates, so that
  // consecutive i are consecutive addresses.
  KOKKOS_INLINE_FUNCTION static void storage_coords(std::size_t i, const dims4& d, int& n,
                                                    int& c, int& h, int& w) {
    detail::unflatten(i, pick<A0>(d.n, d.c, d.h, d.w), pick<A1>(d.n, d.c, d.h, d.w),
                      pick<A2>(d.n, d.c, d.h, d.w), pick<A3>(d.n, d.c, d.h, d.w),
                      pick_ref<A0>(n, c, h, w), pick_ref<A1>(n, c, h, w),
                      pick_ref<A2>(n, c, h, w), pick_ref<A3>(n, c, h, w));
  }
};

// w fastest (Caffe, cuDNN default).
struct nchw : fixed_order<axis::n, axis::c, axis::h, axis::w> {
  static constexpr const char* name = "nchw";
};
// c fastest (channels-last, TensorFlow).
struct nhwc : fixed_order<axis::n, axis::h, axis::w, axis::c> {
  static constexpr const char* name = "nhwc";
};
// n fastest (cuda-convnet).
struct chwn : fixed_order<axis::c, axis::h, axis::w, axis::n> {
  static constexpr const char* name = "chwn";
};

// Runtime-strided: the View is indexed in logical order and its strides encode any of the 24
// physical orders. Kernels written against it pay for strides unknown at compile time.
struct strided {
  static constexpr const char* name = "strided";
  static constexpr bool runtime_strided = true;
  using kokkos_layout = Kokkos::LayoutStride;
  // order: physical order, slowest first, as axis ids.
  static kokkos_layout make(const dims4& d, const std::array<axis, 4>& order) {
    const int ext[4] = {d.n, d.c, d.h, d.w};
    std::size_t stride[4] = {0, 0, 0, 0};
    std::size_t s = 1;
    bool seen[4] = {false, false, false, false};
    for (int k = 3; k >= 0; --k) {
      const int a = int(order[k]);
      if (a < 0 || a > 3 || seen[a]) throw std::invalid_argument("strided layout: bad axis order");
      seen[a] = true;
      stride[a] = s;
      s *= std::size_t(ext[a]);
    }
    return kokkos_layout(d.n, stride[0], d.c, stride[1], d.h, stride[2], d.w, stride[3]);
  }
  template <class V>
  KOKKOS_FORCEINLINE_FUNCTION static typename V::reference_type at(const V& v, int n, int c,
                                                                   int h, int w) {
    return v(n, c, h, w);
  }
  // Storage-order decomposition with the order known only at run time (axis ids, slowest
  // first).
  KOKKOS_INLINE_FUNCTION static void storage_coords(std::size_t i, const dims4& d,
                                                    const int* order, int& n, int& c, int& h,
                                                    int& w) {
    const int ext[4] = {d.n, d.c, d.h, d.w};
    int x[4] = {0, 0, 0, 0};
    for (int k = 3; k > 0; --k) {
      const int a = order[k];
      x[a] = int(i % std::size_t(ext[a]));
      i /= std::size_t(ext[a]);
    }
    x[order[0]] = int(i);
    n = x[0];
    c = x[1];
    h = x[2];
    w = x[3];
  }
};

// Parses "nhwc"-style strings into an axis order (for the strided layout and the CLI).
inline std::array<axis, 4> parse_order(const std::string& s) {
  if (s.size() != 4) throw std::invalid_argument("layout order must have 4 letters: '" + s + "'");
  std::array<axis, 4> o{};
  bool seen[4] = {false, false, false, false};
  for (int i = 0; i < 4; ++i) {
    int a = -1;
    switch (s[i]) {
      case 'n': a = 0; break;
      case 'c': a = 1; break;
      case 'h': a = 2; break;
      case 'w': a = 3; break;
      default: break;
    }
    if (a < 0 || seen[a]) throw std::invalid_argument("layout order must be a permutation of nchw: '" + s + "'");
    seen[a] = true;
    o[i] = axis(a);
  }
  return o;
}

}  // namespace layout
// Calls f(n, c, h, w) for every element of d in logical nchw order, on the host: the order of
// host arrays (copy_in, copy_out), of references and of to_logical / from_logical. The i-th call
// is element i of such an array.
template <class F>
void for_each_logical(const dims4& d, const F& f) {
  for (int n = 0; n < d.n; ++n)
    for (int c = 0; c < d.c; ++c)
      for (int h = 0; h < d.h; ++h)
        for (int w = 0; w < d.w; ++w) f(n, c, h, w);
}

}  // namespace kcnn
