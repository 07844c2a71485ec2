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

template <class Exec>
struct tuned<variant::lrn_vector, Exec> {
  template <bool ThreeQuarters, class In, class Out>
  static void launch(const Exec& exec, const In& in, const Out& out, const lrn_params& p) {
    using L = typename Out::layout_tag;
    if constexpr (run_axis<L> == axis::c) {
      host_tuning::for_each_row<L>("kcnn::lrn_vector", exec, p.dims(), p.c,
                                   kcnn::detail::lrn_rows_body<Exec, lane_width, ThreeQuarters, In, Out>{in, out, p});
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
