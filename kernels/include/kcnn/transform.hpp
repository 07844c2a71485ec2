#pragma once
// Layout transforms: out (layout B) holds the same logical tensor as in (layout A).
// naive: one thread per element in the output's storage order (coalesced writes, strided reads).
// tiled: 32 x 32 tiles over the input's fastest axis and the output's fastest axis, transposed
// through team scratch padded to 33 columns so that the column-wise accesses fall in distinct
// banks; both the global reads and the global writes run along the fastest dimension. When both
// layouts have the same fastest axis (the same layout, in particular) there is nothing to
// transpose and tiled copies along the storage order (coalesced on both sides).
// Both variants take every layout pair, the runtime-strided layout and same-layout pairs included.
//
// Entry point: kcnn::transform(exec, in, out, variant = variant::transform_naive{}).
#include <kcnn/api.hpp>
#include <kcnn/lanes.hpp>
#include <kcnn/layout.hpp>
#include <kcnn/team.hpp>
#include <kcnn/tuning.hpp>

#include <Kokkos_Core.hpp>

namespace kcnn {

namespace detail {
template <class In, class Out>
struct transform_naive_functor {
  In in;
  Out out;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, c, h, w;
    out.storage_coords(i, n, c, h, w);
    out(n, c, h, w) = in(n, c, h, w);
  }
};

template <class Exec, class In, class Out>
struct transform_tiled_functor {
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  using scratch = Kokkos::View<float*, typename Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  static constexpr int T = 32, pitch = T + 1;
  In in;
  Out out;
  int a_in, a_out, o1, o2;  // axis ids: input fastest, output fastest, the other two
  int tiles_in, tiles_out;
  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const dims4& d = in.dims();
    const int ext[4] = {d.n, d.c, d.h, d.w};
    int lid = m.league_rank();
    const int ti = lid % tiles_in; lid /= tiles_in;
    const int to = lid % tiles_out; lid /= tiles_out;
    int x[4];
    x[o2] = lid % ext[o2];
    x[o1] = lid / ext[o2];
    const auto tile = team_scratch<scratch>(m, std::size_t(T) * pitch);
    team_rows(m, T * T, [&](const int i) {
      const int li = i % T, lo = i / T;  // threads along the input's fastest axis
      int y[4] = {x[0], x[1], x[2], x[3]};
      y[a_in] = ti * T + li;
      y[a_out] = to * T + lo;
      if (y[a_in] < ext[a_in] && y[a_out] < ext[a_out]) tile(lo * pitch + li) = in(y[0], y[1], y[2], y[3]);
    });
    team_barrier(m);
    team_rows(m, T * T, [&](const int i) {
      const int lo = i % T, li = i / T;  // threads along the output's fastest axis
      int y[4] = {x[0], x[1], x[2], x[3]};
      y[a_in] = ti * T + li;
      y[a_out] = to * T + lo;
      if (y[a_in] < ext[a_in] && y[a_out] < ext[a_out]) out(y[0], y[1], y[2], y[3]) = tile(lo * pitch + li);
    });
  }
};

template <class In, class Out>
struct copy_element {
  In in;
  Out out;
  static constexpr axis run = run_axis<typename Out::layout_tag>;
  KOKKOS_FORCEINLINE_FUNCTION float load(const coords4& x, int l) const { return lane_ptr<run>(in, x)[l]; }
  KOKKOS_FORCEINLINE_FUNCTION void store(const coords4& x, int l, float v) const { lane_ptr<run>(out, x)[l] = v; }
};

// The vector transpose: a team per 32 x 32 tile spanned by the input's run axis (AI) and the
// output's (AO), for one value of the other two axes. The tile is read with the lanes along AI
// (contiguous in the input) into team scratch, then written with the lanes along AO (contiguous
// in the output); the scratch rows are padded to 33 floats so that reading a column touches 32
// distinct banks on a GPU.
template <class Exec, int W, class In, class Out>
struct transform_vector_functor {
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  using scratch = Kokkos::View<float**, Kokkos::LayoutRight, typename Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  static constexpr int T = 32, pitch = T + 1;
  static constexpr axis AI = run_axis<typename In::layout_tag>, AO = run_axis<typename Out::layout_tag>;
  // The two remaining axes, in logical order.
  static constexpr axis O1 = (AI != axis::n && AO != axis::n) ? axis::n : (AI != axis::c && AO != axis::c) ? axis::c : axis::h;
  static constexpr axis O2 = (AI != axis::w && AO != axis::w) ? axis::w : (AI != axis::h && AO != axis::h) ? axis::h : axis::c;
  In in;
  Out out;
  int tiles_i, tiles_o;
  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const dims4& d = in.dims();
    int t = m.league_rank();
    const int ti = t % tiles_i;
    t /= tiles_i;
    const int to = t % tiles_o;
    t /= tiles_o;
    const coords4 x = coords4{}.with<O2>(t % extent<O2>(d)).template with<O1>(t / extent<O2>(d));
    const int i0 = ti * T, o0 = to * T;
    const int ni = extent<AI>(d) - i0 < T ? extent<AI>(d) - i0 : T;
    const int no = extent<AO>(d) - o0 < T ? extent<AO>(d) - o0 : T;
    const auto tile = team_scratch<scratch>(m, T, pitch);
    if constexpr (W == 1) {
      // The portable path: a lane per element, each thread's rows of the tile read in a batch.
      team_rows_in_batches(
          m, no, ni, [&](const int o, const int i) { return float(lane_ptr<AI>(in, x.with<AO>(o0 + o))[i0 + i]); },
          [&](const int o, const int i, const float v) { tile(o, i) = v; });
      team_barrier(m);
      team_rows(m, ni, [&](const int i) {
        const auto dst = lane_ptr<AO>(out, x.with<AI>(i0 + i));
        vector_lanes(m, no, [&](const int o) { dst[o0 + o] = tile(o, i); });
      });
    } else {
      team_rows(m, no, [&](const int o) {
        const coords4 y = x.with<AO>(o0 + o);
        for_lanes<W>(m, 0, ni, [&](const int i, auto width) {
          const auto src = lane_ptr<AI>(in, y.with<AI>(i0 + i));
          for (int l = 0; l < decltype(width)::value; ++l) tile(o, i + l) = src[l];
        });
      });
      team_barrier(m);
      team_rows(m, ni, [&](const int i) {
        const coords4 y = x.with<AI>(i0 + i);
        for_lanes<W>(m, 0, no, [&](const int o, auto width) {
          const auto dst = lane_ptr<AO>(out, y.with<AO>(o0 + o));
          for (int l = 0; l < decltype(width)::value; ++l) dst[l] = tile(o + l, i);
        });
      });
    }
  }
};
// True when h is stored immediately before w in layout L (nchw, nhwc, chwn): then (h, w) is one
// axis of h * w elements with w's stride.
template <class L>
inline constexpr bool hw_adjacent = [] {
  for (int k = 0; k + 1 < 4; ++k)
    if (L::order[k] == axis::h && L::order[k + 1] == axis::w) return true;
  return false;
}();


// The GPU transpose where one of the two run axes is w and both layouts store h right before
// w (nchw <-> nhwc, nchw <-> chwn): the tile spans the merged h * w axis, so a 7 x 7 image fills
// 32 lanes where a tile over w alone read 7 (the coordinates of a merged index are one 32-bit
// division per element). A team per 32 x 32 tile of (h * w, X), X the other run axis, for one
// value of the remaining axis R; 8 threads of 32 lanes, rows padded to 33 floats.
template <class Exec, class In, class Out>
struct transform_hw_functor {
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  using scratch = Kokkos::View<float**, Kokkos::LayoutRight, typename Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  static constexpr int T = 32, pitch = T + 1;
  static constexpr axis AI = run_axis<typename In::layout_tag>, AO = run_axis<typename Out::layout_tag>;
  static constexpr bool in_hw = AI == axis::w;       // the input's run is the merged axis
  static constexpr axis X = in_hw ? AO : AI;          // the other run axis: c or n
  static constexpr axis R = X == axis::n ? axis::c : axis::n;
  In in;
  Out out;
  int tiles_hw, tiles_x;
  KOKKOS_INLINE_FUNCTION coords4 at(const int hw, const int x, const int r, const int W) const {
    return coords4{}.with<axis::h>(hw / W).template with<axis::w>(hw % W).template with<X>(x).template with<R>(r);
  }
  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const dims4& d = in.dims();
    const int HW = d.h * d.w, W = d.w;
    int t = m.league_rank();
    const int thw = t % tiles_hw;
    t /= tiles_hw;
    const int tx = t % tiles_x, r = t / tiles_x;
    const int hw0 = thw * T, x0 = tx * T;
    const int nhw = HW - hw0 < T ? HW - hw0 : T, nx = extent<X>(d) - x0 < T ? extent<X>(d) - x0 : T;
    // The tile as (output run index, input run index).
    const int ni = in_hw ? nhw : nx, no = in_hw ? nx : nhw;
    const auto tile = team_scratch<scratch>(m, T, pitch);
    team_rows_in_batches(
        m, no, ni,
        [&](const int o, const int i) {
          const coords4 y = in_hw ? at(hw0 + i, x0 + o, r, W) : at(hw0 + o, x0 + i, r, W);
          return float(in(y.n, y.c, y.h, y.w));
        },
        [&](const int o, const int i, const float v) { tile(o, i) = v; });
    team_barrier(m);
    team_rows(m, ni, [&](const int i) {
      vector_lanes(m, no, [&](const int o) {
        const coords4 y = in_hw ? at(hw0 + i, x0 + o, r, W) : at(hw0 + o, x0 + i, r, W);
        out(y.n, y.c, y.h, y.w) = tile(o, i);
      });
    });
  }
};
}  // namespace detail

namespace variant {
// One thread per output element in the output's storage order. The default.
struct transform_naive {
  using op = ops::transform;
  template <class Exec, class In, class Out>
  void run(const Exec& exec, const In& in, const Out& out, const no_params&) const {
    launch_range("kcnn::transform_naive", exec, out.size(),
                         detail::transform_naive_functor<In, Out>{in, out});
  }
};
// 32 x 32 tiles transposed through team scratch.
struct transform_tiled {
  using op = ops::transform;
  template <class Exec, class In, class Out>
  void run(const Exec& exec, const In& in, const Out& out, const no_params&) const {
    using functor = detail::transform_tiled_functor<Exec, In, Out>;
    const int a_in = in.order()[3], a_out = out.order()[3];  // the fastest axes
    if (a_in == a_out) {  // nothing to transpose: a copy along the storage order
      launch_range("kcnn::transform_tiled_copy", exec, out.size(),
                           detail::transform_naive_functor<In, Out>{in, out});
      return;
    }
    int others[2] = {0, 0}, k = 0;
    for (int a = 0; a < 4 && k < 2; ++a)
      if (a != a_in && a != a_out) others[k++] = a;
    const dims4& d = in.dims();
    const int ext[4] = {d.n, d.c, d.h, d.w};
    functor f{in, out, a_in, a_out, others[0], others[1], (ext[a_in] + 31) / 32, (ext[a_out] + 31) / 32};
    const int league = f.tiles_in * f.tiles_out * ext[others[0]] * ext[others[1]];
    launch_teams_recommended("kcnn::transform_tiled", exec, league, functor::scratch::shmem_size(32 * 33), f, 256);
  }
};
// The portable mapping (kcnn/lanes.hpp): a team per 32 x 32 tile over the input's and the
// output's contiguous axes, read with the lanes along the input's (coalesced loads) into team
// scratch and written with the lanes along the output's (coalesced stores); where one of them is
// w and both layouts store h before w, the tile spans h * w instead (transform_hw_functor); when
// both layouts have the same contiguous axis, a copy by rows with the lanes along it. Host tuning
// (kcnn/host/transform.hpp): where both layouts store h before w, 16 x 16 blocks transposed in
// registers; otherwise the tiles with lane blocks. Compile-time layouts.
struct transform_vector {
  using op = ops::transform;
  static constexpr bool host_tunable = true;
  template <class Exec, class In, class Out>
  void run(const Exec& exec, const In& in, const Out& out, const no_params& p) const {
    run_tuned<tunings::automatic>(exec, in, out, p);
  }
  template <class T, class Exec, class In, class Out>
  void run_tuned(const Exec& exec, const In& in, const Out& out, const no_params&) const {
    using LI = typename In::layout_tag;
    using LO = typename Out::layout_tag;
    static_assert(!LI::runtime_strided && !LO::runtime_strided,
                  "kcnn::transform: transform_vector needs compile-time layouts");
    constexpr axis AI = run_axis<LI>, AO = run_axis<LO>;
    if constexpr (takes_host_tuning<T, Exec>) {
      host_tuning::tuned<transform_vector, Exec>::run(exec, in, out);
    } else if constexpr (AI == AO) {
      for_each_element_by_rows<LO, tunings::portable>("kcnn::transform_vector_copy", exec, out.dims(),
                                                      detail::copy_element<In, Out>{in, out});
    } else if constexpr ((AI == axis::w || AO == axis::w) && AI != axis::h && AO != axis::h &&
                         detail::hw_adjacent<LI> && detail::hw_adjacent<LO>) {
      using functor = detail::transform_hw_functor<Exec, In, Out>;
      const dims4& d = in.dims();
      const int thw = (d.h * d.w + functor::T - 1) / functor::T;
      const int tx = (extent<functor::X>(d) + functor::T - 1) / functor::T;
      const std::size_t league = std::size_t(thw) * tx * extent<functor::R>(d);
      launch_teams("kcnn::transform_vector", exec, int(league), 8, 32,
                   functor::scratch::shmem_size(functor::T, functor::pitch), functor{in, out, thw, tx});
    } else {
      launch_tiles<1>(exec, in, out, 8, 32);
    }
  }
  // The 32 x 32 tiles with lane blocks of W elements, teams of `team` threads of `vector` lanes.
  template <int W, class Exec, class In, class Out>
  static void launch_tiles(const Exec& exec, const In& in, const Out& out, const int team, const int vector) {
    using functor = detail::transform_vector_functor<Exec, W, In, Out>;
    const dims4& d = in.dims();
    const int ti = (extent<functor::AI>(d) + functor::T - 1) / functor::T;
    const int to = (extent<functor::AO>(d) + functor::T - 1) / functor::T;
    const std::size_t league = std::size_t(ti) * to * extent<functor::O1>(d) * extent<functor::O2>(d);
    launch_teams("kcnn::transform_vector", exec, int(league), team, vector,
                 functor::scratch::shmem_size(functor::T, functor::pitch), functor{in, out, ti, to});
  }
};
}  // namespace variant

// out (its layout) = in (its layout): the same logical tensor. in and out: equal dims, any
// layouts and memory spaces the execution space can access. Throws std::invalid_argument when
// the dims differ.
template <class Exec, class In, class Out, class V = variant::transform_naive>
void transform(const Exec& exec, const In& in, const Out& out, const V& v = V{}) {
  static_assert(detail::is_variant_of<V, ops::transform>,
                "kcnn::transform: not a transform variant (kcnn::variant::transform_*)");
  const detail::checker<Exec> check{"transform"};
  check.tensor("in", in, out.dims());
  check.tensor("out", out, in.dims());
  v.run(exec, in, out, no_params{});
}

}  // namespace kcnn

#if KCNN_HOST_TUNING
#include <kcnn/host/transform.hpp>
#endif
