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
//
// Entry point: kcnn::softmax(exec, in, out, params, variant = variant::softmax_fused{}).
// softmax_multi_kernel is stateful (its per-row workspace): kcnn::prepare first.
#include <kcnn/api.hpp>
#include <kcnn/compat.hpp>
#include <kcnn/lanes.hpp>
#include <kcnn/layout.hpp>
#include <kcnn/team.hpp>
#include <kcnn/transform.hpp>
#include <kcnn/vmath.hpp>
#include <kcnn/tuning.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>

namespace kcnn {

struct softmax_params {
  int n = 0, c = 0, h = 1, w = 1;
  dims4 dims() const { return {n, c, h, w}; }
  dims4 rows() const { return {n, 1, h, w}; }

  // Named constructors: softmax over the channels of a tensor of dims d, or over c classes of n
  // images (h = w = 1).
  static softmax_params make(const dims4& d) { return softmax_params{d.n, d.c, d.h, d.w}; }
  static softmax_params classes(int n, int c) { return softmax_params{n, c, 1, 1}; }
  // Empty when valid, otherwise the first problem found, naming the field.
  std::string check() const {
    const struct { const char* name; int v; } positive[] = {{"n", n}, {"c", c}, {"h", h}, {"w", w}};
    for (const auto& f : positive)
      if (f.v <= 0) return std::string(f.name) + ": must be > 0, got " + std::to_string(f.v);
    return {};
  }
  bool operator==(const softmax_params& o) const { return n == o.n && c == o.c && h == o.h && w == o.w; }
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
      const auto row = team_scratch<scratch>(m, std::size_t(C));
      team_rows(m, C, [&](const int c) { row(c) = in(n, c, h, w); });
      team_barrier(m);
      team_rows_reduce(m, C,
                              [&](const int c, float& lm) { lm = compat::fmax(lm, row(c)); },
                              Kokkos::Max<float>(mx));
      team_rows_reduce(m, C,
                              [&](const int c, float& ls) {
                                const float e = compat::exp(row(c) - mx);
                                row(c) = e;
                                ls += e;
                              },
                              sum);
      team_barrier(m);
      const float inv = 1.0f / sum;
      team_rows(m, C, [&](const int c) { out(n, c, h, w) = row(c) * inv; });
    } else {
      team_rows_reduce(m, C,
                              [&](const int c, float& lm) { lm = compat::fmax(lm, float(in(n, c, h, w))); },
                              Kokkos::Max<float>(mx));
      team_rows_reduce(m, C,
                              [&](const int c, float& ls) { ls += compat::exp(float(in(n, c, h, w)) - mx); },
                              sum);
      const float inv = 1.0f / sum;
      team_rows(m, C,
                           [&](const int c) { out(n, c, h, w) = compat::exp(float(in(n, c, h, w)) - mx) * inv; });
    }
  }
};


// The vector form (kcnn/lanes.hpp), exp from kcnn/vmath.hpp, where the channels are contiguous
// (nhwc; or every axis after c of extent 1, e.g. classes in nchw): a row is a pixel, the lanes
// take consecutive channels and reduce across the lanes. Three sweeps: the max; the sum of
// exp(in - max) without a store (its batches' loads all in flight, the row from L1); then each
// output computed again from the input and stored once: the row crosses L2 once each way, for a
// second exp per element. Where the channels are not contiguous: softmax_split_channels_functor
// below. The host tuning's bodies: kcnn/host/softmax.hpp.
template <class Exec, class In, class Out>
struct softmax_vector_body {
  In in;
  Out out;
  KOKKOS_INLINE_FUNCTION void row(const typename Kokkos::TeamPolicy<Exec>::member_type& m, const coords4& x) const {
    const int C = out.dims().c;
    // The channels are contiguous here (stride 1), whatever the layout's run axis.
    const auto src = lane_ptr<axis::c>(in, x.with<axis::c>(0));
    const auto dst = lane_ptr<axis::c>(out, x.with<axis::c>(0));
    const float mx = lanes_reduce<1, max_op>(m, C, [&](const int c) { return float(src[c]); });
    const float sum = lanes_reduce<1, sum_op>(m, C, [&](const int c) { return vmath::exp(float(src[c]) - mx); });
    const float inv = 1.0f / sum;
    for_lanes<1>(m, 0, C, [&](const int c0, auto width) {
      float v[decltype(width)::value];
      for_each_lane(width, [&](const int l) { v[l] = src[c0 + lane_offset(width, l)]; });
      for_each_lane(width, [&](const int l) { dst[c0 + lane_offset(width, l)] = vmath::exp(v[l] - mx) * inv; });
    });
  }
};

// The GPU form of softmax_vector where the channels are not contiguous (nchw, chwn; the
// classifier 64 x 1000 x 1 x 1 in chwn has a single row of 64 pixels): a team takes 32 pixels
// consecutive in storage order, one per lane (coalesced: adjacent pixels are adjacent floats for
// every channel), and its threads split the channels into segments. Each thread reduces its
// segment (max, then the sum of exp(x - max)), the segments meet in team scratch, and each
// thread writes its segment. The segment's three sweeps re-read what the team just loaded (32
// pixels x C floats: 32 KiB at C = 256, in L1), so DRAM sees one read and one write.
inline int softmax_split_segments(int c) { return c / 32 < 1 ? 1 : c / 32 > 16 ? 16 : c / 32; }
template <class Exec, class In, class Out>
struct softmax_split_channels_functor {
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  using scratch = Kokkos::View<float**, typename Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  static constexpr int lanes = 32;
  In in;
  Out out;
  dims4 rows;    // the pixels: (n, 1, h, w)
  int segments;  // the team's threads
  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const int C = out.dims().c;
    const int pixels = int(rows.size()), seg = (C + segments - 1) / segments;
    const auto mx = team_scratch<scratch>(m, segments, lanes), sum = team_scratch<scratch>(m, segments, lanes);
    team_rows(m, segments, [&](const int y) {
      vector_lanes(m, lanes, [&](const int x) {
        const int i = m.league_rank() * lanes + x;
        float a = max_op::identity, b = 0.0f;
        if (i < pixels) {
          int n, z, h, w;
          Out::layout_tag::storage_coords(std::size_t(i), rows, n, z, h, w);
          const int c1 = y * seg + seg < C ? y * seg + seg : C;
          a = reduce_in_batches<max_op>(y * seg, c1, [&](const int c) { return float(in(n, c, h, w)); });
          b = reduce_in_batches<sum_op>(y * seg, c1, [&](const int c) { return vmath::exp(float(in(n, c, h, w)) - a); });
        }
        mx(y, x) = a;
        sum(y, x) = b;
      });
    });
    team_barrier(m);
    team_rows(m, segments, [&](const int y) {
      vector_lanes(m, lanes, [&](const int x) {
        const int i = m.league_rank() * lanes + x;
        if (i >= pixels) return;
        float a = max_op::identity, b = 0.0f;
        for (int t = 0; t < segments; ++t) a = compat::fmax(a, mx(t, x));
        for (int t = 0; t < segments; ++t) b += sum(t, x) * compat::exp(mx(t, x) - a);
        const float inv = 1.0f / b;
        int n, z, h, w;
        Out::layout_tag::storage_coords(std::size_t(i), rows, n, z, h, w);
        const int c1 = y * seg + seg < C ? y * seg + seg : C;
        copy_in_batches(
            y * seg, c1, [&](const int c) { return vmath::exp(float(in(n, c, h, w)) - a) * inv; },
            [&](const int c, const float v) { out(n, c, h, w) = v; });
      });
    });
  }
};

// True when the channels of layout L are contiguous for these dims: c is the run axis, or every
// axis stored after c has extent 1.
template <class L>
bool softmax_channels_contiguous(const dims4& d) {
  const int e[4] = {d.n, d.c, d.h, d.w};
  bool after = false;
  for (int k = 0; k < 4; ++k) {
    if (after && e[int(L::order[k])] != 1) return false;
    if (L::order[k] == axis::c) after = true;
  }
  return true;
}
}  // namespace detail

template <class Exec>
bool softmax_fused_staged(const softmax_params& p) {
  using scratch = Kokkos::View<float*, typename Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  return scratch::shmem_size(std::size_t(p.c)) + 64 <= scratch_limit<Exec>(0);
}

namespace detail {
// Caffe's six launches; workspace: one float per row (the per-row max, then the sum).
template <class Exec, class In, class Out, class Vec>
void softmax_multi_kernel_launch(const Exec& exec, const In& in, const Out& out, const Vec& workspace,
                                 const softmax_params& p) {
  const dims4 rows = p.rows();
  launch_range("kcnn::softmax_copy", exec, out.size(), detail::transform_naive_functor<In, Out>{in, out});
  launch_range("kcnn::softmax_max", exec, rows.size(), detail::softmax_row_reduce<Out, Vec>{out, workspace, rows, 0});
  launch_range("kcnn::softmax_subtract", exec, out.size(), detail::softmax_elementwise<Out, Vec>{out, workspace, rows, 0});
  launch_range("kcnn::softmax_exp", exec, out.size(), detail::softmax_elementwise<Out, Vec>{out, workspace, rows, 1});
  launch_range("kcnn::softmax_sum", exec, rows.size(), detail::softmax_row_reduce<Out, Vec>{out, workspace, rows, 1});
  launch_range("kcnn::softmax_divide", exec, out.size(), detail::softmax_elementwise<Out, Vec>{out, workspace, rows, 2});
}
template <class Exec, class In, class Out>
void softmax_check(const In& in, const Out& out, const softmax_params& p) {
  const checker<Exec> check{"softmax"};
  check.params(p.check());
  check.tensor("in", in, p.dims());
  check.tensor("out", out, p.dims());
}
}  // namespace detail

namespace variant {
// Caffe's softmax_layer: six launches, one thread per row for the two reductions, 10 passes over
// memory. Compile-time output layouts. Stateful: kcnn::prepare allocates the per-row workspace
// (4 n h w bytes) in the execution space's memory space.
struct softmax_multi_kernel : detail::stateful_variant<softmax_params> {
  using op = ops::softmax;

  template <class Exec, class In, class Out>
  void prepare(const Exec& exec, const softmax_params& p, const In& in, const Out& out) {
    (void)exec;
    detail::softmax_check<Exec>(in, out, p);
    using ws_t = Kokkos::View<float*, typename Exec::memory_space>;
    auto ws = std::make_shared<ws_t>("kcnn::softmax_multi_kernel.scale", p.rows().size());
    state_.set(typeid(Exec), p, ws, 4.0 * double(p.rows().size()));
  }
  template <class Exec, class In, class Out>
  void run(const Exec& exec, const In& in, const Out& out, const softmax_params& p) const {
    static_assert(!Out::layout_tag::runtime_strided,
                  "kcnn::softmax: softmax_multi_kernel needs a compile-time output layout (use softmax_fused)");
    using ws_t = Kokkos::View<float*, typename Exec::memory_space>;
    const ws_t& ws = state_.get<ws_t, Exec>("softmax", "softmax_multi_kernel", p);
    detail::softmax_multi_kernel_launch(exec, in, out, ws, p);
  }
};
// One launch, a team per row; the row staged in team scratch when it fits (2 passes), else read
// three times (4 passes). Compile-time output layouts. The default.
struct softmax_fused {
  using op = ops::softmax;
  template <class Exec, class In, class Out>
  void run(const Exec& exec, const In& in, const Out& out, const softmax_params& p) const {
    static_assert(!Out::layout_tag::runtime_strided,
                  "kcnn::softmax: softmax_fused needs a compile-time output layout");
    using functor = detail::softmax_fused_functor<Exec, In, Out>;
    const bool staged = softmax_fused_staged<Exec>(p);
    functor f{in, out, p.rows(), staged};
    const std::size_t bytes = staged ? functor::scratch::shmem_size(std::size_t(p.c)) : 0;
    launch_teams_recommended("kcnn::softmax_fused", exec, int(p.rows().size()), bytes, f, 256);
  }
};
// The portable row mapping (kcnn/lanes.hpp), one launch, per layout: where the channels are
// contiguous (nhwc, or classes) the lanes take consecutive channels of a pixel and reduce across
// the lanes; otherwise (nchw, chwn) a team of up to 16 threads splits the channels of 32 pixels
// (one per lane), each thread reducing its segment, the segments combined through team scratch.
// Coalesced on a GPU (exp from kcnn/vmath.hpp). Host tuning (kcnn/host/softmax.hpp): lane blocks,
// each lane reducing over the channels itself where they are not contiguous. in and out in the
// same compile-time layout; out distinct from in.
struct softmax_vector {
  using op = ops::softmax;
  static constexpr bool host_tunable = true;
  template <class Exec, class In, class Out>
  void run(const Exec& exec, const In& in, const Out& out, const softmax_params& p) const {
    run_tuned<tunings::automatic>(exec, in, out, p);
  }
  template <class T, class Exec, class In, class Out>
  void run_tuned(const Exec& exec, const In& in, const Out& out, const softmax_params& p) const {
    using L = typename Out::layout_tag;
    static_assert(!L::runtime_strided && std::is_same_v<typename In::layout_tag, L>,
                  "kcnn::softmax: softmax_vector needs in and out in the same compile-time layout");
    detail::require_distinct("softmax", "softmax_vector", in, out);
    if constexpr (takes_host_tuning<T, Exec>) {
      host_tuning::tuned<softmax_vector, Exec>::run(exec, in, out, p);
    } else if (detail::softmax_channels_contiguous<L>(p.dims())) {
      // A pixel per row, the lanes along c (c walked inside each row).
      constexpr int skip_c = run_axis<L> == axis::c ? -1 : int(axis::c);
      for_each_row<L, skip_c, tunings::portable>("kcnn::softmax_vector", exec, p.dims(), p.c,
                                                 detail::softmax_vector_body<Exec, In, Out>{in, out});
    } else {
      using detail::softmax_split_segments;
      // Segments of at least 32 channels, at most 16 of them (teams of up to 512 threads).
      using functor = detail::softmax_split_channels_functor<Exec, In, Out>;
      const int segments = softmax_split_segments(p.c);
      const int league = int((p.rows().size() + functor::lanes - 1) / functor::lanes);
      launch_teams("kcnn::softmax_vector", exec, league, segments, functor::lanes,
                   2 * functor::scratch::shmem_size(segments, functor::lanes), functor{in, out, p.rows(), segments});
    }
  }
};
}  // namespace variant

// Passes over the tensor's memory (reads + writes) each variant makes on execution space Exec.
// Caffe's sequence: copy (r+w), max (r), subtract (r+w), exp (r+w), sum (r), divide (r+w).
template <class Exec>
int softmax_passes(const variant::softmax_multi_kernel&, const softmax_params&) { return 10; }
// The row staged in team scratch: read once, written once; else read three times.
template <class Exec>
int softmax_passes(const variant::softmax_fused&, const softmax_params& p) { return softmax_fused_staged<Exec>(p) ? 2 : 4; }
// One read and one write; the later sweeps of a row hit the cache (the row's lanes; channels not
// contiguous: the team's segment, in L1).
template <class Exec>
int softmax_passes(const variant::softmax_vector&, const softmax_params&) { return 2; }
// Read-only loads do not change the passes.
template <class Exec, class V>
int softmax_passes(const variant::read_only<V>& v, const softmax_params& p) { return softmax_passes<Exec>(v.inner, p); }

// out = softmax(in) over the channels of every pixel. in and out: p.dims(). Throws
// std::invalid_argument on invalid params or operand dims, std::logic_error when
// softmax_multi_kernel was not prepared.
template <class Exec, class In, class Out, class V = variant::softmax_fused>
void softmax(const Exec& exec, const In& in, const Out& out, const softmax_params& p, const V& v = V{}) {
  static_assert(detail::is_variant_of<V, ops::softmax>, "kcnn::softmax: not a softmax variant (kcnn::variant::softmax_*)");
  detail::softmax_check<Exec>(in, out, p);
  v.run(exec, in, out, p);
}


}  // namespace kcnn

#if KCNN_HOST_TUNING
#include <kcnn/host/softmax.hpp>
#endif
