#pragma once
// The host tuning of softmax_vector (kcnn/softmax.hpp): the portable body with lane blocks on
// kcnn/host/rows.hpp's walk; where the channels are not contiguous (nchw, chwn) a row is a line of
// pixels along the run axis, one pixel per lane, each lane reducing over the channels in its own
// registers (a core has no team of threads to split them among).
// Part of kcnn/softmax.hpp, which includes it at its end (after the variants it specialises for),
// under KCNN_HOST_TUNING: not a header of its own.
#include <kcnn/host/rows.hpp>
#include <kcnn/tuning.hpp>

namespace kcnn {
namespace host_tuning {

template <class Exec>
struct tuned<variant::softmax_vector, Exec> {
  template <class In, class Out>
  static void run(const Exec& exec, const In& in, const Out& out, const softmax_params& p) {
    using L = typename Out::layout_tag;
    constexpr int skip_c = run_axis<L> == axis::c ? -1 : int(axis::c);
    if (kcnn::detail::softmax_channels_contiguous<L>(p.dims()))
      host_tuning::for_each_row<L, skip_c>("kcnn::softmax_vector", exec, p.dims(), p.c,
                                           kcnn::detail::softmax_vector_body<Exec, lane_width, In, Out, true>{in, out});
    else
      host_tuning::for_each_row<L, skip_c>("kcnn::softmax_vector", exec, p.dims(), extent<run_axis<L>>(p.dims()),
                                           kcnn::detail::softmax_vector_body<Exec, lane_width, In, Out, false>{in, out});
  }
};

}  // namespace host_tuning
}  // namespace kcnn
