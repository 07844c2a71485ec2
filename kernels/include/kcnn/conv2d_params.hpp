#pragma once
// Shape of a 2-D convolution: input (n, c, h, w), filters (k, c/groups, r, s), square stride
// and symmetric zero padding, output (n, k, p, q) with p = floor((h + 2 pad - r) / stride) + 1.
// Defaults: stride 1, pad 0, groups 1; check() refuses non-positive extents, a negative pad,
// groups that do not divide c and k, and a window larger than the padded input.
#include <kcnn/layout.hpp>

#include <Kokkos_Core.hpp>

#include <string>

namespace kcnn {

struct conv2d_params {
  int n = 0, c = 0, h = 0, w = 0;  // input
  int k = 0, r = 0, s = 0;         // filters: k outputs, r x s window
  int stride = 1, pad = 0, groups = 1;

  KOKKOS_INLINE_FUNCTION int p() const { return (h + 2 * pad - r) / stride + 1; }
  KOKKOS_INLINE_FUNCTION int q() const { return (w + 2 * pad - s) / stride + 1; }
  KOKKOS_INLINE_FUNCTION int c_per_group() const { return c / groups; }
  KOKKOS_INLINE_FUNCTION int k_per_group() const { return k / groups; }

  // Named constructor: an input of dims `in`, k filters of r x s.
  static conv2d_params make(const dims4& in, int k, int r, int s, int stride = 1, int pad = 0, int groups = 1) {
    conv2d_params p;
    p.n = in.n; p.c = in.c; p.h = in.h; p.w = in.w;
    p.k = k; p.r = r; p.s = s; p.stride = stride; p.pad = pad; p.groups = groups;
    return p;
  }
  bool operator==(const conv2d_params& o) const {
    return n == o.n && c == o.c && h == o.h && w == o.w && k == o.k && r == o.r && s == o.s &&
           stride == o.stride && pad == o.pad && groups == o.groups;
  }

  dims4 input_dims() const { return {n, c, h, w}; }
  dims4 filter_dims() const { return {k, c / groups, r, s}; }
  dims4 output_dims() const { return {n, k, p(), q()}; }

  // Empty when the shape is valid, otherwise the first problem found, naming the field.
  std::string check() const {
    const struct { const char* name; int v; } positive[] = {
        {"n", n}, {"c", c}, {"h", h}, {"w", w}, {"k", k}, {"r", r}, {"s", s},
        {"stride", stride}, {"groups", groups}};
    for (const auto& f : positive)
      if (f.v <= 0) return std::string(f.name) + ": must be > 0, got " + std::to_string(f.v);
    if (pad < 0) return "pad: must be >= 0, got " + std::to_string(pad);
    if (const std::string e = padded_extent_error(h, w, pad, stride); !e.empty()) return e;
    if (c % groups != 0) return "groups: " + std::to_string(groups) + " does not divide c = " + std::to_string(c);
    if (k % groups != 0) return "groups: " + std::to_string(groups) + " does not divide k = " + std::to_string(k);
    if (r > h + 2 * pad) return "r: filter height " + std::to_string(r) + " exceeds padded input height " + std::to_string(h + 2 * pad);
    if (s > w + 2 * pad) return "s: filter width " + std::to_string(s) + " exceeds padded input width " + std::to_string(w + 2 * pad);
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
  bool is_pointwise() const { return r == 1 && s == 1 && stride == 1 && pad == 0 && groups == 1; }
};

}  // namespace kcnn
