#pragma once
// A convolution whose every output is known in closed form, exact in fp32: input x(n, c, h, w) =
// c + 1, weights w(k, c, r, s) = k + 1, bias(k) = k. Output (n, k, oh, ow) is
//   k + (k + 1) * taps_h(oh) * taps_w(ow) * sum of (c + 1) over the channels of k's group,
// taps_h(oh) the window rows that fall inside the input (padding reads zeros): no dependence on
// n or on the order of the sum. Used by the implicit GEMM's tile tests on the host and the GPU
// paths (its tiles' ragged edges, K padding and K split all change nothing here).
#include <kcnn/kcnn.hpp>

#include <string>

namespace kcnn_test {

inline int taps_along(int o, int stride, int pad, int dilation, int window, int extent) {
  int n = 0;
  for (int r = 0; r < window; ++r) {
    const int i = o * stride - pad + r * dilation;
    n += i >= 0 && i < extent;
  }
  return n;
}

inline double closed_form_output(const kcnn::conv2d_params& p, int k, int oh, int ow) {
  const int cpg = p.c_per_group(), g = k / p.k_per_group();
  const double channel_sum = double(cpg) * (g * cpg) + double(cpg) * (cpg + 1) / 2;
  return k + double(k + 1) * taps_along(oh, p.row_stride(), p.pad_top(), p.dilation_h, p.r, p.h) *
                 taps_along(ow, p.col_stride(), p.pad_left(), p.dilation_w, p.s, p.w) * channel_sum;
}

// Fills the operands (host-accessible) as above.
template <class In, class Wt, class Bias>
void fill_closed_form(const In& in, const Wt& wt, const Bias& bias) {
  const auto di = in.dims(), dw = wt.dims();
  for (int n = 0; n < di.n; ++n)
    for (int c = 0; c < di.c; ++c)
      for (int h = 0; h < di.h; ++h)
        for (int w = 0; w < di.w; ++w) in(n, c, h, w) = float(c + 1);
  for (int k = 0; k < dw.n; ++k)
    for (int c = 0; c < dw.c; ++c)
      for (int r = 0; r < dw.h; ++r)
        for (int s = 0; s < dw.w; ++s) wt(k, c, r, s) = float(k + 1);
  for (int k = 0; k < int(bias.extent(0)); ++k) bias(k) = float(k);
}

// The first output that differs from the closed form, or "" when all match exactly.
template <class Out>
std::string closed_form_mismatch(const kcnn::conv2d_params& p, const Out& out) {
  const auto d = out.dims();
  for (int n = 0; n < d.n; ++n)
    for (int k = 0; k < d.c; ++k)
      for (int oh = 0; oh < d.h; ++oh)
        for (int ow = 0; ow < d.w; ++ow) {
          const double want = closed_form_output(p, k, oh, ow), got = out(n, k, oh, ow);
          if (got != want)
            return "(" + std::to_string(n) + ", " + std::to_string(k) + ", " + std::to_string(oh) + ", " +
                   std::to_string(ow) + "): " + std::to_string(got) + ", want " + std::to_string(want);
        }
  return "";
}

}  // namespace kcnn_test
