#pragma once
// kcnn's host tuning of the portable mapping (kcnn/lanes.hpp): the same body functors, walked the
// way a CPU core wants them.
//  * for_each_row: one thread per team walks a block of rows of about 4096 elements in order,
//    the coordinates advanced by a carry (two 64-bit divisions per row cost as much as a short
//    row's work); enough work per team for the OpenMP scheduler, enough teams to balance.
//  * lane blocks: a body run with W = lane_width (16 floats: one AVX-512 register, two AVX2 ones)
//    takes blocks of W consecutive elements per vector lane, a fixed-length inner loop the
//    compiler vectorises, so per-lane state (a running max, a window sum) lives in vector
//    registers. Two rules keep it vectorisable (GCC 12 checked with -fopt-info-vec): coordinates
//    are values (coords4 never hands out references), and float parameters are copied to locals
//    before the loops (a float store to the output could alias a float member, forcing a reload
//    per lane).
//  * for_each_span: a body gets span_width consecutive elements of a plane per call.
// Part of kcnn/lanes.hpp, which includes it at its end (after the mapping it walks), under
// KCNN_HOST_TUNING: not a header of its own.
#include <kcnn/host/simd_types.hpp>
#include <kcnn/map.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace kcnn {
namespace host_tuning {

// Elements per vector lane of the host tuning's bodies.
inline constexpr int lane_width = 16;
// Elements per item of the flat forms (activation_flat, add_flat): a loop the compiler vectorises
// with its loop invariants in registers.
inline constexpr std::size_t flat_chunk = 4096;
// Elements of a plane per call of a span body: a block of 2 KB per plane visit, enough for the
// hardware prefetcher; the per-element state, a few 2 KB arrays, stays in L1.
inline constexpr int span_width = 512;

template <int W, class Op, class F>
KOKKOS_INLINE_FUNCTION float lanes_reduce_blocks(const int len, const F& f) {
  // W partial results in a vector register, combined at the end (each partial is updated in
  // order, so the loop vectorises without -ffast-math).
  const Op op{};
  float part[W];
  for (int l = 0; l < W; ++l) part[l] = Op::identity;
  const int blocks = len / W;
  for (int b = 0; b < blocks; ++b) {
    KCNN_LANE_LOOP
    for (int l = 0; l < W; ++l) part[l] = op(part[l], f(b * W + l));
  }
  for (int i = blocks * W; i < len; ++i) part[0] = op(part[0], f(i));
  float r = Op::identity;
  for (int l = 0; l < W; ++l) r = op(r, part[l]);
  return r;
}

namespace detail {
template <class Exec, class Layout, class Body>
struct rows_functor {
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  Body body;
  kcnn::detail::row_grid grid;
  int rows_per_team;
  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const std::size_t first = std::size_t(m.league_rank()) * std::size_t(rows_per_team);
    const std::size_t total = grid.size();
    const int count = int(total - first < std::size_t(rows_per_team) ? total - first : std::size_t(rows_per_team));
    std::size_t row = first;
    int i2 = int(row % std::size_t(grid.e2));
    row /= std::size_t(grid.e2);
    int i1 = int(row % std::size_t(grid.e1)), i0 = int(row / std::size_t(grid.e1));
    for (int r = 0; r < count; ++r) {
      body.row(m, row_start<Layout>(i0, i1, i2));
      if (++i2 == grid.e2) {
        i2 = 0;
        if (++i1 == grid.e1) {
          i1 = 0;
          ++i0;
        }
      }
    }
  }
};

template <class Exec, class Body>
struct spans_functor {
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  Body body;
  plane_geometry g;
  int chunks;  // per outer block
  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const int o = m.league_rank() / chunks;
    const std::size_t begin = std::size_t(m.league_rank() % chunks) * std::size_t(span_width);
    const std::size_t left = g.length - begin;
    body.span(o, begin, left < std::size_t(span_width) ? int(left) : span_width);
  }
};
}  // namespace detail

// kcnn::for_each_row's walk on a host: one thread per team, blocks of rows (see the file comment).
template <class Layout, int Skip = -1, class Exec, class Body>
void for_each_row(const char* label, const Exec& exec, const dims4& d, int run_length, const Body& body) {
  static_assert(!Layout::runtime_strided, "kcnn: the vector mapping needs a compile-time layout");
  const kcnn::detail::row_grid grid = kcnn::detail::storage_rows<Layout, Skip>(d);
  if (grid.size() == 0 || run_length <= 0) return;
  const int rows_per_team = std::max(1, 4096 / run_length);
  if (grid.size() > std::size_t(2147483647))
    throw std::invalid_argument(std::string(label) + ": tensor too large for one launch");
  const std::size_t league = (grid.size() + std::size_t(rows_per_team) - 1) / std::size_t(rows_per_team);
  launch_teams(label, exec, int(league), 1, 1, 0, detail::rows_functor<Exec, Layout, Body>{body, grid, rows_per_team});
}

namespace detail {
// A row's elements in blocks of W consecutive ones, f.store(x, l, f.load(x, l)) each.
template <class Exec, int W, class Layout, class F>
struct elementwise_rows_body {
  F f;
  dims4 d;
  void row(const typename Kokkos::TeamPolicy<Exec>::member_type& m, const coords4& x) const {
    constexpr axis run = run_axis<Layout>;
    for_lanes<W>(m, 0, extent<run>(d), [&](const int i, auto width) {
      const coords4 y = x.with<run>(i);
      for (int l = 0; l < decltype(width)::value; ++l) f.store(y, l, f.load(y, l));
    });
  }
};
}  // namespace detail

// kcnn::for_each_element_by_rows with lane blocks of lane_width elements.
template <class Layout, class Exec, class F>
void for_each_element_by_rows(const char* label, const Exec& exec, const dims4& d, const F& f) {
  host_tuning::for_each_row<Layout>(label, exec, d, extent<run_axis<Layout>>(d),
                                    detail::elementwise_rows_body<Exec, lane_width, Layout, F>{f, d});
}

// kcnn::for_each_span on a host: body.span(o, i, count) for blocks of count <= span_width
// consecutive elements (an int), one thread per team.
template <class Exec, class Body>
void for_each_span(const char* label, const Exec& exec, const plane_geometry& g, const Body& body) {
  if (g.outer <= 0 || g.planes <= 0 || g.length == 0) return;
  const std::size_t chunks = (g.length + std::size_t(span_width) - 1) / std::size_t(span_width);
  const std::size_t league = chunks * std::size_t(g.outer);
  if (league > std::size_t(2147483647))
    throw std::invalid_argument(std::string(label) + ": tensor too large for one launch");
  launch_teams(label, exec, int(league), 1, 1, 0, detail::spans_functor<Exec, Body>{body, g, int(chunks)});
}

template <class Exec, class>
struct rows_walk {
  template <class Layout, int Skip, class Body>
  static void each_row(const char* label, const Exec& exec, const dims4& d, int run_length, const Body& body) {
    host_tuning::for_each_row<Layout, Skip>(label, exec, d, run_length, body);
  }
  template <class Layout, class F>
  static void each_element(const char* label, const Exec& exec, const dims4& d, const F& f) {
    host_tuning::for_each_element_by_rows<Layout>(label, exec, d, f);
  }
  template <class Body>
  static void each_span(const char* label, const Exec& exec, const plane_geometry& g, const Body& body) {
    host_tuning::for_each_span(label, exec, g, body);
  }
};

}  // namespace host_tuning

}  // namespace kcnn
