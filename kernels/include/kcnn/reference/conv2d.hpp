#pragma once
// Host reference for conv2d forward with double accumulation. Accessors are callables:
// in(n, c, h, w), wt(k, c_in_group, r, s), bias(k); the result is in logical nchw order.
#include <kcnn/conv2d_params.hpp>

#include <vector>

namespace kcnn::reference {

template <class In, class Wt, class Bias>
std::vector<double> conv2d(const conv2d_params& p, const In& in, const Wt& wt, const Bias& bias) {
  const int P = p.p(), Q = p.q(), cpg = p.c_per_group(), kpg = p.k_per_group();
  std::vector<double> out(std::size_t(p.n) * p.k * P * Q);
  std::size_t i = 0;
  for (int n = 0; n < p.n; ++n)
    for (int k = 0; k < p.k; ++k) {
      const int g = k / kpg;
      for (int oh = 0; oh < P; ++oh)
        for (int ow = 0; ow < Q; ++ow) {
          double acc = double(bias(k));
          for (int c = 0; c < cpg; ++c)
            for (int r = 0; r < p.r; ++r) {
              const int ih = oh * p.stride - p.pad + r;
              if (ih < 0 || ih >= p.h) continue;
              for (int s = 0; s < p.s; ++s) {
                const int iw = ow * p.stride - p.pad + s;
                if (iw < 0 || iw >= p.w) continue;
                acc += double(in(n, g * cpg + c, ih, iw)) * double(wt(k, c, r, s));
              }
            }
          out[i++] = acc;
        }
    }
  return out;
}

}  // namespace kcnn::reference
