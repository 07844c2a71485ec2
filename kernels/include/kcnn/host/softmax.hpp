#pragma once
// The host tuning of softmax_vector (kcnn/softmax.hpp): rows with lane blocks on
// kcnn/host/rows.hpp's walk, each output stored with exp(in - max) in the sum's sweep and scaled in
// place after it (a core's caches keep the row: no second exp); where the channels are not contiguous (nchw, chwn) a row is a line of
// pixels along the run axis, one pixel per lane, each lane reducing over the channels in its own
// registers (a core has no team of threads to split them among).
// Part of kcnn/softmax.hpp, which includes it at its end (after the variants it specialises for),
// under KCNN_HOST_TUNING: not a header of its own.
#include <kcnn/host/rows.hpp>
#include <kcnn/tuning.hpp>

namespace kcnn {
namespace host_tuning {

namespace detail {
// Three sweeps of a row with lane blocks of W: the max, then out = exp(in - max) with its sum,
// then out *= 1 / sum; the second and third re-read what the first two touched, from cache, so
// memory sees one read and one write.
//  * AcrossLanes (channels contiguous): a row is a pixel, the lanes take consecutive channels
//    and reduce across the lanes;
//  * otherwise (nchw, chwn): a row is a line of pixels along the run axis, one pixel per lane,
//    each lane reducing over the channels in its own registers.
template <class Exec, int W, class In, class Out, bool AcrossLanes>
struct softmax_rows_body {
  In in;
  Out out;
  KOKKOS_INLINE_FUNCTION void row(const typename Kokkos::TeamPolicy<Exec>::member_type& m, const coords4& x) const {
    constexpr axis run = run_axis<typename Out::layout_tag>;
    const int C = out.dims().c;
    if constexpr (AcrossLanes) {
      const auto src = lane_ptr<axis::c>(in, x.with<axis::c>(0));
      const auto dst = lane_ptr<axis::c>(out, x.with<axis::c>(0));
      const float mx = lanes_reduce<W, max_op>(m, C, [&](const int c) { return float(src[c]); });
      const float sum = lanes_reduce<W, sum_op>(m, C, [&](const int c) {
        const float e = vmath::exp(float(src[c]) - mx);
        dst[c] = e;
        return e;
      });
      const float inv = 1.0f / sum;
      for_lanes<W>(m, 0, C, [&](const int c0, auto width) {
        float v[decltype(width)::value];
        for_each_lane(width, [&](const int l) { v[l] = dst[c0 + lane_offset(width, l)]; });
        for_each_lane(width, [&](const int l) { dst[c0 + lane_offset(width, l)] = v[l] * inv; });
      });
    } else {
      for_lanes<W, true>(m, 0, extent<run>(out.dims()), [&](const int i, auto width) {
        constexpr int B = decltype(width)::value;
        float mx[B], sum[B];
        for_each_lane(width, [&](const int l) {
          mx[l] = max_op::identity;
          sum[l] = 0.0f;
        });
        const coords4 y = x.with<run>(i);
        for (int c = 0; c < C; ++c) {
          const auto src = lane_ptr<run>(in, y.with<axis::c>(c));
          for_each_lane(width, [&](const int l) {
            const float v = src[lane_offset(width, l)];
            mx[l] = v > mx[l] ? v : mx[l];
          });
        }
        for (int c = 0; c < C; ++c) {
          const auto src = lane_ptr<run>(in, y.with<axis::c>(c));
          const auto dst = lane_ptr<run>(out, y.with<axis::c>(c));
          float e[B];
          for_each_lane(width, [&](const int l) { e[l] = vmath::exp(float(src[lane_offset(width, l)]) - mx[l]); });
          for_each_lane(width, [&](const int l) {
            dst[lane_offset(width, l)] = e[l];
            sum[l] += e[l];
          });
        }
        for_each_lane(width, [&](const int l) { sum[l] = 1.0f / sum[l]; });
        for (int c = 0; c < C; ++c) {
          const auto dst = lane_ptr<run>(out, y.with<axis::c>(c));
          float v[B];
          for_each_lane(width, [&](const int l) { v[l] = dst[lane_offset(width, l)]; });
          for_each_lane(width, [&](const int l) { dst[lane_offset(width, l)] = v[l] * sum[l]; });
        }
      });
    }
  }
};
}  // namespace detail

template <class Exec>
struct tuned<variant::softmax_vector, Exec> {
  template <class In, class Out>
  static void run(const Exec& exec, const In& in, const Out& out, const softmax_params& p) {
    using L = typename Out::layout_tag;
    constexpr int skip_c = run_axis<L> == axis::c ? -1 : int(axis::c);
    if (kcnn::detail::softmax_channels_contiguous<L>(p.dims()))
      host_tuning::for_each_row<L, skip_c>("kcnn::softmax_vector", exec, p.dims(), p.c,
                                           detail::softmax_rows_body<Exec, lane_width, In, Out, true>{in, out});
    else
      host_tuning::for_each_row<L, skip_c>("kcnn::softmax_vector", exec, p.dims(), extent<run_axis<L>>(p.dims()),
                                           detail::softmax_rows_body<Exec, lane_width, In, Out, false>{in, out});
  }
};

}  // namespace host_tuning
}  // namespace kcnn
