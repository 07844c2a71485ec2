#pragma once
// Softmax over the channel axis of (n, c, h, w): one row per pixel (n, h, w), of length c.
// Over classes it is the case h = w = 1. Numerically stable: exp(x - max(row)).
//
// multi_kernel follows Caffe's softmax_layer: copy, channel max, subtract, exp, channel sum,
// divide: six launches, the two reductions with one thread per row; 6 reads + 4 writes of
// the tensor = 10 passes over memory.
// fused: one launch, a team per row; the row is staged in team scratch when it fits, so the
// tensor is read once and written once (2 passes); otherwise max, sum and write each read it
// (4 passes).
#include <kcnn/compat.hpp>
#include <kcnn/layout.hpp>
#include <kcnn/team.hpp>
#include <kcnn/transform.hpp>

#include <Kokkos_Core.hpp>

namespace kcnn {

struct softmax_params {
  int n = 0, c = 0, h = 1, w = 1;
  dims4 dims() const { return {n, c, h, w}; }
  dims4 rows() const { return {n, 1, h, w}; }
  double min_bytes() const { return 8.0 * double(dims().size()); }
  // max, subtract, exp, add, divide per element.
  double flops() const { return 5.0 * double(dims().size()); }
};

namespace detail {

// Per-row reduction over the channels with one thread per row, as Caffe does: the max (op 0)
// or the sum (op 1), written to scale(row).
template <class T, class V>
struct softmax_row_reduce {
  T x;
  V scale;
  dims4 rows;
  int op;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, z, h, w;
    T::layout_tag::storage_coords(i, rows, n, z, h, w);
    float acc = op == 0 ? float(x(n, 0, h, w)) : 0.0f;
    for (int c = 0; c < x.dims().c; ++c)
      acc = op == 0 ? compat::fmax(acc, float(x(n, c, h, w))) : acc + float(x(n, c, h, w));
    scale(rows.logical_index(n, 0, h, w)) = acc;
  }
};
// op 0: x -= scale, op 1: x = exp(x), op 2: x /= scale
template <class T, class V>
struct softmax_elementwise {
  T x;
  V scale;
  dims4 rows;
  int op;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, c, h, w;
    x.storage_coords(i, n, c, h, w);
    const float v = x(n, c, h, w);
    if (op == 1) {
      x(n, c, h, w) = compat::exp(v);
      return;
    }
    const float s = scale(rows.logical_index(n, 0, h, w));
    x(n, c, h, w) = op == 0 ? v - s : v / s;
  }
};

template <class Exec, class In, class Out>
struct softmax_fused_functor {
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  using scratch = Kokkos::View<float*, typename Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  In in;
  Out out;
  dims4 rows;
  bool staged;
  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    int n, z, h, w;
    Out::layout_tag::storage_coords(std::size_t(m.league_rank()), rows, n, z, h, w);
    const int C = out.dims().c;
    float mx = 0.0f, sum = 0.0f;
    if (staged) {
      scratch row(m.team_scratch(0), std::size_t(C));
      Kokkos::parallel_for(Kokkos::TeamThreadRange(m, C), [&](const int c) { row(c) = in(n, c, h, w); });
      m.team_barrier();
      Kokkos::parallel_reduce(Kokkos::TeamThreadRange(m, C),
                              [&](const int c, float& lm) { lm = compat::fmax(lm, row(c)); },
                              Kokkos::Max<float>(mx));
      Kokkos::parallel_reduce(Kokkos::TeamThreadRange(m, C),
                              [&](const int c, float& ls) {
                                const float e = compat::exp(row(c) - mx);
                                row(c) = e;
                                ls += e;
                              },
                              sum);
      m.team_barrier();
      const float inv = 1.0f / sum;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(m, C), [&](const int c) { out(n, c, h, w) = row(c) * inv; });
    } else {
      Kokkos::parallel_reduce(Kokkos::TeamThreadRange(m, C),
                              [&](const int c, float& lm) { lm = compat::fmax(lm, float(in(n, c, h, w))); },
                              Kokkos::Max<float>(mx));
      Kokkos::parallel_reduce(Kokkos::TeamThreadRange(m, C),
                              [&](const int c, float& ls) { ls += compat::exp(float(in(n, c, h, w)) - mx); },
                              sum);
      const float inv = 1.0f / sum;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(m, C),
                           [&](const int c) { out(n, c, h, w) = compat::exp(float(in(n, c, h, w)) - mx) * inv; });
    }
  }
};

}  // namespace detail

namespace variant {
struct softmax_multi_kernel {};
struct softmax_fused {};
}  // namespace variant

// Passes over the tensor (reads + writes) each variant makes.
inline int softmax_passes(variant::softmax_multi_kernel, const softmax_params&, std::size_t) { return 10; }
template <class Exec>
bool softmax_fused_staged(const softmax_params& p) {
  using scratch = Kokkos::View<float*, typename Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  return scratch::shmem_size(std::size_t(p.c)) + 64 <= scratch_limit<Exec>(0);
}

// workspace: one float per row (the per-row max, then the sum), as Caffe's scale blob.
template <class Exec, class In, class Out, class Vec>
void softmax(const Exec& exec, const In& in, const Out& out, const Vec& workspace,
             const softmax_params& p, variant::softmax_multi_kernel) {
  using R = Kokkos::RangePolicy<Exec>;
  const dims4 rows = p.rows();
  Kokkos::parallel_for("kcnn::softmax_copy", R(exec, 0, out.size()), detail::transform_naive_functor<In, Out>{in, out});
  Kokkos::parallel_for("kcnn::softmax_max", R(exec, 0, rows.size()), detail::softmax_row_reduce<Out, Vec>{out, workspace, rows, 0});
  Kokkos::parallel_for("kcnn::softmax_subtract", R(exec, 0, out.size()), detail::softmax_elementwise<Out, Vec>{out, workspace, rows, 0});
  Kokkos::parallel_for("kcnn::softmax_exp", R(exec, 0, out.size()), detail::softmax_elementwise<Out, Vec>{out, workspace, rows, 1});
  Kokkos::parallel_for("kcnn::softmax_sum", R(exec, 0, rows.size()), detail::softmax_row_reduce<Out, Vec>{out, workspace, rows, 1});
  Kokkos::parallel_for("kcnn::softmax_divide", R(exec, 0, out.size()), detail::softmax_elementwise<Out, Vec>{out, workspace, rows, 2});
}

template <class Exec, class In, class Out>
void softmax(const Exec& exec, const In& in, const Out& out, const softmax_params& p, variant::softmax_fused) {
  using functor = detail::softmax_fused_functor<Exec, In, Out>;
  const bool staged = softmax_fused_staged<Exec>(p);
  functor f{in, out, p.rows(), staged};
  const std::size_t bytes = staged ? functor::scratch::shmem_size(std::size_t(p.c)) : 0;
  Kokkos::parallel_for("kcnn::softmax_fused", make_team_policy(exec, int(p.rows().size()), bytes, f, 256), f);
}

}  // namespace kcnn
