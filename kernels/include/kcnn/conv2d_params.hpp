#pragma once
// Shape of a 2-D convolution: input (n, c, h, w), filters (k, c/groups, r, s), output (n, k, p, q).
//
// Geometry: `stride` and `pad` are the square stride and symmetric zero padding most layers use.
// The per-axis fields refine them and default to `inherit` (-1): stride_h / stride_w take
// `stride`, pad_h / pad_w (the padding before the first row / column) take `pad`, pad_h_end /
// pad_w_end (after the last) take pad_h / pad_w. So a TensorFlow "SAME" stride-2 layer on an even
// input is {pad = 0, pad_h_end = 1, pad_w_end = 1}, Inception v3's 1 x 7 layer {pad_h = 0,
// pad_w = 3}. dilation_h / dilation_w (default 1) space the filter taps: tap (r, s) reads input
// row oh * stride_h - pad_h + r * dilation_h. The effective values are row_stride(), col_stride(),
// pad_top(), pad_bottom(), pad_left(), pad_right(); kernels read only those.
//   p = floor((h + pad_top + pad_bottom - dilation_h (r - 1) - 1) / stride_h) + 1, q alike.
// Defaults: stride 1, pad 0, dilation 1, groups 1. check() refuses non-positive extents, strides
// and dilations, a negative pad (a per-axis field other than `inherit`), groups that do not divide
// c and k, and a dilated window larger than the padded input.
#include <kcnn/layout.hpp>

#include <Kokkos_Core.hpp>

#include <string>

namespace kcnn {

struct conv2d_params {
  static constexpr int inherit = -1;  // a per-axis geometry field that takes the symmetric value

  int n = 0, c = 0, h = 0, w = 0;  // input
  int k = 0, r = 0, s = 0;         // filters: k outputs, r x s window
  int stride = 1, pad = 0, groups = 1;
  int stride_h = inherit, stride_w = inherit;
  int pad_h = inherit, pad_w = inherit, pad_h_end = inherit, pad_w_end = inherit;
  int dilation_h = 1, dilation_w = 1;

  KOKKOS_INLINE_FUNCTION int row_stride() const { return stride_h == inherit ? stride : stride_h; }
  KOKKOS_INLINE_FUNCTION int col_stride() const { return stride_w == inherit ? stride : stride_w; }
  KOKKOS_INLINE_FUNCTION int pad_top() const { return pad_h == inherit ? pad : pad_h; }
  KOKKOS_INLINE_FUNCTION int pad_left() const { return pad_w == inherit ? pad : pad_w; }
  KOKKOS_INLINE_FUNCTION int pad_bottom() const { return pad_h_end == inherit ? pad_top() : pad_h_end; }
  KOKKOS_INLINE_FUNCTION int pad_right() const { return pad_w_end == inherit ? pad_left() : pad_w_end; }
  // The window's extent on the input: (r - 1) dilation_h + 1 rows, (s - 1) dilation_w + 1 columns.
  KOKKOS_INLINE_FUNCTION int window_h() const { return (r - 1) * dilation_h + 1; }
  KOKKOS_INLINE_FUNCTION int window_w() const { return (s - 1) * dilation_w + 1; }

  KOKKOS_INLINE_FUNCTION int p() const { return (h + pad_top() + pad_bottom() - window_h()) / row_stride() + 1; }
  KOKKOS_INLINE_FUNCTION int q() const { return (w + pad_left() + pad_right() - window_w()) / col_stride() + 1; }
  KOKKOS_INLINE_FUNCTION int c_per_group() const { return c / groups; }
  KOKKOS_INLINE_FUNCTION int k_per_group() const { return k / groups; }

  // Named constructor: an input of dims `in`, k filters of r x s, square stride, symmetric pad.
  static conv2d_params make(const dims4& in, int k, int r, int s, int stride = 1, int pad = 0, int groups = 1) {
    conv2d_params p;
    p.n = in.n; p.c = in.c; p.h = in.h; p.w = in.w;
    p.k = k; p.r = r; p.s = s; p.stride = stride; p.pad = pad; p.groups = groups;
    return p;
  }
  // The same layer with per-axis stride, begin and end pads and dilation given explicitly.
  conv2d_params with_geometry(int stride_h_, int stride_w_, int pad_h_, int pad_w_, int pad_h_end_, int pad_w_end_,
                              int dilation_h_ = 1, int dilation_w_ = 1) const {
    conv2d_params p = *this;
    p.stride_h = stride_h_; p.stride_w = stride_w_;
    p.pad_h = pad_h_; p.pad_w = pad_w_; p.pad_h_end = pad_h_end_; p.pad_w_end = pad_w_end_;
    p.dilation_h = dilation_h_; p.dilation_w = dilation_w_;
    return p;
  }
  // Equal when the layers compute the same thing: the effective geometry is compared, so
  // {stride = 2} equals {stride_h = 2, stride_w = 2}.
  bool operator==(const conv2d_params& o) const {
    return n == o.n && c == o.c && h == o.h && w == o.w && k == o.k && r == o.r && s == o.s && groups == o.groups &&
           row_stride() == o.row_stride() && col_stride() == o.col_stride() && pad_top() == o.pad_top() &&
           pad_left() == o.pad_left() && pad_bottom() == o.pad_bottom() && pad_right() == o.pad_right() &&
           dilation_h == o.dilation_h && dilation_w == o.dilation_w;
  }
  bool operator!=(const conv2d_params& o) const { return !(*this == o); }

  // Square stride, symmetric pad and no dilation: what every variant supports.
  bool symmetric() const {
    return row_stride() == col_stride() && pad_top() == pad_left() && pad_bottom() == pad_top() &&
           pad_right() == pad_left() && dilation_h == 1 && dilation_w == 1;
  }
  bool dilated() const { return dilation_h != 1 || dilation_w != 1; }

  dims4 input_dims() const { return {n, c, h, w}; }
  dims4 filter_dims() const { return {k, c / groups, r, s}; }
  dims4 output_dims() const { return {n, k, p(), q()}; }

  // Empty when the shape is valid, otherwise the first problem found, naming the field.
  std::string check() const {
    const struct { const char* name; int v; } positive[] = {
        {"n", n}, {"c", c}, {"h", h}, {"w", w}, {"k", k}, {"r", r}, {"s", s},
        {"stride", stride}, {"groups", groups}, {"dilation_h", dilation_h}, {"dilation_w", dilation_w}};
    for (const auto& f : positive)
      if (f.v <= 0) return std::string(f.name) + ": must be > 0, got " + std::to_string(f.v);
    if (const std::string e = window_geometry_error(
            {h, w, stride, pad, stride_h, stride_w, pad_h, pad_w, pad_h_end, pad_w_end}, "conv2d_params");
        !e.empty())
      return e;
    if (double(r - 1) * dilation_h + 1 > 2147483647.0) return "dilation_h: the dilated window exceeds 2^31 - 1";
    if (double(s - 1) * dilation_w + 1 > 2147483647.0) return "dilation_w: the dilated window exceeds 2^31 - 1";
    if (c % groups != 0) return "groups: " + std::to_string(groups) + " does not divide c = " + std::to_string(c);
    if (k % groups != 0) return "groups: " + std::to_string(groups) + " does not divide k = " + std::to_string(k);
    const int padded_h = h + pad_top() + pad_bottom(), padded_w = w + pad_left() + pad_right();
    if (window_h() > padded_h)
      return std::string(dilation_h > 1 ? "dilation_h" : "r") + ": filter height " + std::to_string(r) +
             (dilation_h > 1 ? " dilated by " + std::to_string(dilation_h) : std::string()) +
             " exceeds padded input height " + std::to_string(padded_h);
    if (window_w() > padded_w)
      return std::string(dilation_w > 1 ? "dilation_w" : "s") + ": filter width " + std::to_string(s) +
             (dilation_w > 1 ? " dilated by " + std::to_string(dilation_w) : std::string()) +
             " exceeds padded input width " + std::to_string(padded_w);
    if (p() <= 0 || q() <= 0) return "output size must be > 0";
    return {};
  }

  // Minimal traffic: every input, weight and bias read once, every output written once.
  double min_bytes(std::size_t elem_bytes) const {
    return double(elem_bytes) *
           (double(input_dims().size()) + double(filter_dims().size()) + double(k) +
            double(output_dims().size()));
  }
  // 2 N K P Q (C/groups) R S: two FLOPs per multiply-add (the bias add is not counted).
  double flops() const { return 2.0 * double(output_dims().size()) * c_per_group() * r * s; }
  double weight_count() const { return double(filter_dims().size()) + double(k); }
  // True when a 1x1 convolution is a plain matrix product (no spatial window, no groups).
  bool is_pointwise() const {
    return r == 1 && s == 1 && row_stride() == 1 && col_stride() == 1 && pad_top() == 0 && pad_left() == 0 &&
           pad_bottom() == 0 && pad_right() == 0 && groups == 1;
  }
};

}  // namespace kcnn
