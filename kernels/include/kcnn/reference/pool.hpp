#pragma once
// Host reference pooling, written independently of the kernels from Caffe's definition
// (pooling_layer.cpp), with per-axis strides and begin / end pads: windows clipped to the padded
// input for the average's divisor, then to the input for the elements visited.
#include <kcnn/pool.hpp>

#include <algorithm>
#include <limits>
#include <vector>

namespace kcnn::reference {

template <class In>
std::vector<double> pool(const pool_params& p, const In& in) {
  const int P = p.p(), Q = p.q();
  std::vector<double> out;
  out.reserve(std::size_t(p.n) * p.c * P * Q);
  for (int n = 0; n < p.n; ++n)
    for (int c = 0; c < p.c; ++c)
      for (int ph = 0; ph < P; ++ph)
        for (int pw = 0; pw < Q; ++pw) {
          int hstart = ph * p.row_stride() - p.pad_top(), wstart = pw * p.col_stride() - p.pad_left();
          int hend = std::min(hstart + p.r, p.h + p.pad_bottom()), wend = std::min(wstart + p.s, p.w + p.pad_right());
          const int pool_size = (hend - hstart) * (wend - wstart);
          hstart = std::max(hstart, 0);
          wstart = std::max(wstart, 0);
          hend = std::min(hend, p.h);
          wend = std::min(wend, p.w);
          double acc = p.kind == pool_kind::max ? -std::numeric_limits<double>::infinity() : 0.0;
          for (int h = hstart; h < hend; ++h)
            for (int w = wstart; w < wend; ++w) {
              const double v = in(n, c, h, w);
              acc = p.kind == pool_kind::max ? std::max(acc, v) : acc + v;
            }
          out.push_back(p.kind == pool_kind::max ? acc : acc / pool_size);
        }
  return out;
}

}  // namespace kcnn::reference
