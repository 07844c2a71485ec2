#pragma once
// The host tuning of lrn_vector (kcnn/lrn.hpp): nhwc rows with lane blocks on kcnn/host/rows.hpp's
// walk; nchw and chwn a block of span_width elements of a plane per call (2 KB runs the hardware
// prefetcher follows; the running sums in L1), the next planes prefetched, no channel segments.
// Part of kcnn/lrn.hpp, which includes it at its end (after the variants it specialises for),
// under KCNN_HOST_TUNING: not a header of its own.
#include <kcnn/host/rows.hpp>
#include <kcnn/host/simd_types.hpp>
#include <kcnn/tuning.hpp>

namespace kcnn {
namespace host_tuning {

namespace detail {
// nhwc rows with lane blocks of W: the channels whose window lies inside [0, C) in blocks, plain
// loops (GCC 12 vectorises these, not the lambdas' form: an array captured by reference is
// reloaded per lane); the size / 2 channels at each end one by one, their windows clipped.
template <class Exec, int W, bool ThreeQuarters, class In, class Out>
struct lrn_rows_body {
  In in;
  Out out;
  lrn_params p;
  KOKKOS_INLINE_FUNCTION void row(const typename Kokkos::TeamPolicy<Exec>::member_type& m, const coords4& x) const {
    using kcnn::detail::lrn_power;
    const int half = p.size / 2, C = p.c;
    const float scale = p.alpha / float(p.size), k = p.k, neg_beta = -p.beta;
    const auto sq = [&](int c) {
      const float v = in(x.n, c, x.h, x.w);
      return v * v;
    };
    const auto edge = [&](const int c) {
      const int lo = c - half > 0 ? c - half : 0, hi = c + half < C - 1 ? c + half : C - 1;
      float sum = 0.0f;
      for (int cc = lo; cc <= hi; ++cc) sum += sq(cc);
      out(x.n, c, x.h, x.w) = in(x.n, c, x.h, x.w) * lrn_power<ThreeQuarters>(k + scale * sum, neg_beta);
    };
    const int c_lo = half < C ? half : C;
    const int c_hi = C - half > c_lo ? C - half : c_lo;
    vector_lanes(m, 0, c_lo, edge);
    vector_lanes(m, c_hi, C, edge);
    for_lanes<W, true>(m, c_lo, c_hi, [&](const int c0, auto width) {
      constexpr int B = decltype(width)::value;
      float sum[B];
      const auto src = lane_ptr<axis::c>(in, x.with<axis::c>(c0));
      const auto dst = lane_ptr<axis::c>(out, x.with<axis::c>(c0));
      for (int l = 0; l < B; ++l) sum[l] = 0.0f;
      for (int j = -half; j <= half; ++j) {
        const auto sj = lane_ptr<axis::c>(in, x.with<axis::c>(c0 + j));
        for (int l = 0; l < B; ++l) sum[l] += float(sj[l]) * float(sj[l]);
      }
      for (int l = 0; l < B; ++l) dst[l] = float(src[l]) * lrn_power<ThreeQuarters>(k + scale * sum[l], neg_beta);
    });
  }
};
}  // namespace detail

template <class Exec>
struct tuned<variant::lrn_vector, Exec> {
  template <bool ThreeQuarters, class In, class Out>
  static void launch(const Exec& exec, const In& in, const Out& out, const lrn_params& p) {
    using L = typename Out::layout_tag;
    if constexpr (run_axis<L> == axis::c) {
      host_tuning::for_each_row<L>("kcnn::lrn_vector", exec, p.dims(), p.c,
                                   detail::lrn_rows_body<Exec, lane_width, ThreeQuarters, In, Out>{in, out, p});
    } else {
      using body = kcnn::detail::lrn_planes_body<Exec, span_width, prefetch_hints, ThreeQuarters, typename In::value_type,
                                                 typename Out::value_type>;
      const plane_geometry g = planes_along<L, axis::c>(p.dims());
      host_tuning::for_each_span("kcnn::lrn_vector", exec, g, body{in.view().data(), out.view().data(), g, p});
    }
  }
};

}  // namespace host_tuning
}  // namespace kcnn
