#pragma once
// The host tuning of transform_vector (kcnn/transform.hpp): a copy by rows with lane blocks on
// kcnn/host/rows.hpp's walk where both layouts have the same contiguous axis; where both store h
// right before w, W x W blocks transposed in registers (host_transpose); otherwise the portable
// tiles with lane blocks, one thread per team.
// Part of kcnn/transform.hpp, which includes it at its end (after the variants it specialises for),
// under KCNN_HOST_TUNING: not a header of its own.
#include <kcnn/host/rows.hpp>
#include <kcnn/host/simd.hpp>
#include <kcnn/host/simd_types.hpp>
#include <kcnn/map.hpp>
#include <kcnn/tuning.hpp>

#include <cstddef>
#include <type_traits>

namespace kcnn {
namespace host_tuning {
namespace detail {

// The host transpose (both layouts storing h right before w: nchw, nhwc, chwn): the axes are n, c and the merged pixel axis p = h * w. For each value of the axis
// that neither layout runs along (a rep), the input holds a matrix whose rows run along the
// output's run axis (row stride in_row) and whose columns are the input's contiguous run; the
// output holds its transpose. A work item is one rep's block of W rows over a span of up to
// `span` columns (spans keep a few-row tensor, an RGB image, parallel): it reads the rows along
// the run (W sequential streams), transposes W x W blocks in registers (transpose_lanes) and
// writes W contiguous floats into each of W output rows; the last block of rows or columns goes
// element by element. The team path reads and writes every element through team scratch one by
// one (docs/performance.md compares the two).
template <int W>
struct host_transpose_functor {
  static constexpr long span = 64 * W;
  const float* in;
  float* out;
  long rows, cols, row_blocks, spans;
  long in_row, in_rep, out_row, out_rep;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t item) const {
    const long sp = long(item) % spans, block = long(item) / spans;
    const long rep = block / row_blocks, a0 = block % row_blocks * W;
    const float* const src = in + rep * in_rep + a0 * in_row;
    float* const dst = out + rep * out_rep + a0;
    const long na = rows - a0 < W ? rows - a0 : W;
    long i0 = sp * span;
    const long i1 = cols - i0 < span ? cols : i0 + span;
    if (na == W) {
      for (; i0 + W <= i1; i0 += W) {
        float_lanes<W> r[W];
        KCNN_UNROLL_TILE
        for (int a = 0; a < W; ++a) load_lanes<W>(r[a], src + a * in_row + i0);
        transpose_lanes<W>(r);
        KCNN_UNROLL_TILE
        for (int i = 0; i < W; ++i) store_lanes<W>(dst + (i0 + i) * out_row, r[i]);
      }
    }
    for (long i = i0; i < i1; ++i)
      for (long a = 0; a < na; ++a) dst[i * out_row + a] = src[a * in_row + i];
  }
};
// Runs the host transpose when both tensors are dense along p (h's stride is w times w's) and
// contiguous along their run axes; false (nothing done) otherwise.
template <class Exec, class In, class Out>
bool host_transpose(const Exec& exec, const In& in, const Out& out) {
  using LI = typename In::layout_tag;
  using LO = typename Out::layout_tag;
  const dims4& d = in.dims();
  if (d.size() == 0) return true;
  // Merged axes: 0 = n, 1 = c, 2 = p. Strides (in floats) from element addresses.
  const auto strides = [&](const auto& t, long (&st)[3]) {
    using L = typename std::decay_t<decltype(t)>::layout_tag;
    const float* o = &L::at(t.view(), 0, 0, 0, 0);
    st[0] = d.n > 1 ? long(&L::at(t.view(), 1, 0, 0, 0) - o) : 0;
    st[1] = d.c > 1 ? long(&L::at(t.view(), 0, 1, 0, 0) - o) : 0;
    st[2] = d.w > 1 ? long(&L::at(t.view(), 0, 0, 0, 1) - o) : d.h > 1 ? long(&L::at(t.view(), 0, 0, 1, 0) - o) : 0;
    const long sh = d.h > 1 ? long(&L::at(t.view(), 0, 0, 1, 0) - o) : 0;
    return d.h <= 1 || d.w <= 1 || sh == long(d.w) * st[2];
  };
  long si[3], so[3];
  if (!strides(in, si) || !strides(out, so)) return false;
  const auto merged = [](axis a) { return a == axis::n ? 0 : a == axis::c ? 1 : 2; };
  const int ai = merged(run_axis<LI>), ao = merged(run_axis<LO>), r = 3 - ai - ao;
  const long ext[3] = {d.n, d.c, long(d.h) * d.w};
  if ((ext[ai] > 1 && si[ai] != 1) || (ext[ao] > 1 && so[ao] != 1)) return false;
  constexpr int W = lane_width;
  using F = host_transpose_functor<W>;
  const long row_blocks = (ext[ao] + W - 1) / W, spans = (ext[ai] + F::span - 1) / F::span;
  launch_range("kcnn::transform_vector", exec, std::size_t(ext[r] * row_blocks * spans),
               F{in.view().data(), out.view().data(), ext[ao], ext[ai], row_blocks, spans, si[ao], si[r], so[ai], so[r]});
  return true;
}

}  // namespace detail

template <class Exec>
struct tuned<variant::transform_vector, Exec> {
  template <class In, class Out>
  static void run(const Exec& exec, const In& in, const Out& out) {
    using LI = typename In::layout_tag;
    using LO = typename Out::layout_tag;
    if constexpr (run_axis<LI> == run_axis<LO>) {
      host_tuning::for_each_element_by_rows<LO>("kcnn::transform_vector_copy", exec, out.dims(),
                                                kcnn::detail::copy_element<In, Out>{in, out});
    } else {
      // float tensors only: the register transpose is written for float lanes.
      if constexpr (kcnn::detail::hw_adjacent<LI> && kcnn::detail::hw_adjacent<LO> &&
                    std::is_same_v<std::remove_const_t<typename In::value_type>, float> &&
                    std::is_same_v<typename Out::value_type, float>)
        if (detail::host_transpose(exec, in, out)) return;
      variant::transform_vector::launch_tiles<lane_width>(exec, in, out, 1, 1);
    }
  }
};

}  // namespace host_tuning
}  // namespace kcnn
