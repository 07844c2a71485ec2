#pragma once
// The portable mapping of kcnn's memory-bound `vector` variants: the Kokkos source that a GPU,
// the GPU model and a host's portable path run (kcnn/tuning.hpp).
//
// A tensor in a compile-time layout is a set of rows (its three slower physical axes) of runs
// (its fastest physical axis, contiguous in memory). A kernel takes a block of rows per team
// (TeamThreadRange, the coordinates of a row recovered once per row, never per element) and walks
// a run with the vector lanes (ThreadVectorRange): on a GPU the lanes are adjacent threads of a
// warp, so adjacent lanes touch adjacent addresses (coalesced); on a host backend a team is what
// the backend allows (kcnn/map.hpp) and a vector range is Kokkos' loop.
// Bytes in flight (Little's law: a GPU thread must keep about 20 bytes of loads in flight per DRAM
// round trip to reach the memory's bandwidth at full occupancy): each lane takes a batch of
// lane_batch_size elements of its row at once (reduce_batch_size in a reduction, or a body's
// row_batch), element k of slot s at s + k * S (S the run's
// slots: adjacent lanes still on adjacent addresses in each of the batch's loads), and every
// load of a batch is issued before its first store (the bodies are written so: loads, then
// compute and store; kcnn::unrolled keeps the batch's loads apart in the code). The body
// functors take the lane width W as a parameter: 1 here (batches of single lanes);
// kcnn/host/rows.hpp runs the same bodies with blocks of W = 16 consecutive elements (the host
// tuning).
// Kernels whose reduction or window runs along an axis that is a row axis in one layout and the
// run in another (LRN and softmax over channels, pooling windows) choose their form per layout
// at compile time, from the layout's run axis.
#include <kcnn/compat.hpp>
#include <kcnn/layout.hpp>
#include <kcnn/map.hpp>
#include <kcnn/tuning.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace kcnn {

// The threads Exec's device holds at once (a GPU: SMs x threads per SM; a host: its threads); in a
// gpu-model build, the modelled GPU's while a model session is open (a traced run), the host's
// otherwise.
template <class Exec>
std::size_t device_concurrency(const Exec& exec) {
#if defined(KCNN_GPU_MODEL)
  if (const int m = model::device_concurrency(); m > 0) return std::size_t(m);
#endif
  return std::size_t(compat::concurrency(exec));
}

// The flat forms (activation_flat, add_flat: an elementwise function over a storage as one run,
// no coordinates): an item is a thread. While the device holds a thread per element at once, one
// element each: every load is already in flight. Beyond that, flat_interleave elements a quarter
// of the storage apart (i, i + q, i + 2q, i + 3q, q = ceil(n / 4)): each load coalesced across a
// warp, all issued before the first store, four in flight per thread instead of one
// (docs/gpu-results.md compares the two). The host tuning takes chunks instead (kcnn/host/flat.hpp).
inline constexpr std::size_t flat_interleave = 4;
// A flat launch over n elements: `items` work items; interleaved: an item's elements `q` apart.
struct flat_items {
  std::size_t items, q;
  bool interleaved;
};
template <class Exec>
flat_items flat_items_of(const Exec& exec, const std::size_t n) {
  if (n <= device_concurrency(exec)) return {n, n, false};
  const std::size_t q = (n + flat_interleave - 1) / flat_interleave;
  return {q, q, true};
}

// The elements a lane of the portable row walks takes at once (for_lanes unless its body asks for
// more, for_each_element_by_rows, for_each_span): independent loads in flight per lane per round
// trip, 16 bytes of floats, what a GPU copy needs to approach the memory's bandwidth
// (docs/gpu-results.md's copy ceilings with one and four elements per thread).
inline constexpr int lane_batch_size = 4;
// The loads a lane of a reduction (lanes_reduce, reduce_in_batches) takes at once: two batches.
// A reduction stores nothing between its loads, so the lane holds only the loaded values and its
// accumulators: 32 bytes of floats in flight, above the about 23 bytes a thread needs at an
// H200's full occupancy and DRAM latency (docs/gpu-model.md), which a row walk's 16 reach only
// because its stores stream behind its loads.
inline constexpr int reduce_batch_size = 2 * lane_batch_size;

// f(std::integral_constant<int, 0>{}) ... f(std::integral_constant<int, N - 1>{}), written out:
// each call its own code, so that a batch's loads are separate instructions that a GPU issues
// back to back (and that the GPU model, which tells loads apart by their code address, sees as
// a batch), whatever a compiler's unrolling heuristics decide.
namespace detail {
template <class F, int... K>
KOKKOS_FORCEINLINE_FUNCTION void unrolled_impl(const F& f, std::integer_sequence<int, K...>) {
  (f(std::integral_constant<int, K>{}), ...);
}
}  // namespace detail
template <int N, class F>
KOKKOS_FORCEINLINE_FUNCTION void unrolled(const F& f) {
  detail::unrolled_impl(f, std::make_integer_sequence<int, N>{});
}

// A batch of a run's elements that one lane takes at once (for_lanes' width on the portable
// paths): element l at offset(l) from the first, l * step, at most `last` (a batch that would run
// past the run's end repeats its last element instead: an Overlap walk's bodies tolerate
// recomputing an element). value: the batch's size, as std::integral_constant's.
template <int B>
struct lane_batch {
  static constexpr int value = B;
  int step = 1;
  int last = 2147483647;
  KOKKOS_FORCEINLINE_FUNCTION int offset(int l) const {
    const int o = l * step;
    return o < last ? o : last;
  }
  // Element l repeats the run's last element (another lane's, or this lane's own l - 1).
  KOKKOS_FORCEINLINE_FUNCTION bool repeats(int l) const { return l * step > last; }
};
// Offset of element l of a width from for_lanes or for_each_span: l for blocks of consecutive
// elements (std::integral_constant<int, W>, the host tuning's blocks and single elements), the
// batch's interleave otherwise.
template <int W>
KOKKOS_FORCEINLINE_FUNCTION constexpr int lane_offset(std::integral_constant<int, W>, int l) {
  return l;
}
template <int B>
KOKKOS_FORCEINLINE_FUNCTION int lane_offset(const lane_batch<B>& b, int l) {
  return b.offset(l);
}
// A count of consecutive elements known only at run time (the host tuning's spans).
KOKKOS_FORCEINLINE_FUNCTION constexpr int lane_offset(int, int l) { return l; }
// Whether element l of a width repeats an element computed elsewhere (an Overlap walk's batch
// past the run's end: the run's last element again): a body may leave its store out, saving the
// store requests that would write that element once more. Blocks and counts of consecutive
// elements never repeat.
template <int W>
KOKKOS_FORCEINLINE_FUNCTION constexpr bool lane_repeats(std::integral_constant<int, W>, int) {
  return false;
}
template <int B>
KOKKOS_FORCEINLINE_FUNCTION bool lane_repeats(const lane_batch<B>& b, int l) {
  return b.repeats(l);
}
KOKKOS_FORCEINLINE_FUNCTION constexpr bool lane_repeats(int, int) { return false; }
// for (l = 0; l < width's size; ++l) f(l), written out for a portable batch (kcnn::unrolled),
// a plain loop for the host tuning's blocks (its vectoriser's shape).
template <class Width, class F>
KOKKOS_FORCEINLINE_FUNCTION void for_each_lane(const Width&, const F& f) {
  constexpr int B = Width::value;
  if constexpr (B <= reduce_batch_size) unrolled<B>([&](auto l) { f(int(decltype(l)::value)); });
  else
    for (int l = 0; l < B; ++l) f(l);
}
template <class F>
KOKKOS_FORCEINLINE_FUNCTION void for_each_lane(const int n, const F& f) {
  for (int l = 0; l < n; ++l) f(l);
}
// The lanes a run of `length` elements needs on the portable paths: a power of two covering its
// batches of `batch` elements (at most 32, one warp).
KOKKOS_INLINE_FUNCTION int lanes_for_run(const int length, const int batch = lane_batch_size) {
  const int slots = (length + batch - 1) / batch;
  int vector = 1;
  while (vector < 32 && vector < slots) vector *= 2;
  return vector;
}

// W floats held as one value, for register tiles whose accumulators must stay in registers:
// W = 1 (a GPU thread, the portable paths) is a plain float, anything else an array; the host
// tuning makes W = 8, 16, 32 vector-extension types (kcnn/host/simd_types.hpp).
// Operations: float_lanes<W>{} (zeros), fill_lanes, load_lanes / store_lanes (unaligned),
// madd_lanes (acc += x * w, x broadcast), madd_each_lane, max_each_lane, add_each_lane,
// scale_lanes, lane_get. They take and give vectors by reference, never by value: GCC notes
// (-Wpsabi) every function that passes or returns a 64-byte vector by value in a build without
// AVX-512 (its ABI differs there), and a user's -Werror build at plain -O2 must compile
// (tests/consumer builds every op at -Wall -Wextra -Werror).
namespace detail {
template <int W>
struct float_array {
  float v[W];
};
template <int W>
struct float_lanes_of {
  using type = float_array<W>;
};
template <>
struct float_lanes_of<1> {
  using type = float;
};
}  // namespace detail
}  // namespace kcnn

#if KCNN_HOST_TUNING
#include <kcnn/host/simd_types.hpp>
#endif

namespace kcnn {
template <int W>
using float_lanes = typename detail::float_lanes_of<W>::type;

template <int W>
KOKKOS_FORCEINLINE_FUNCTION void load_lanes(float_lanes<W>& v, const float* p) {
  if constexpr (W == 1) v = *p;
  else if constexpr (!std::is_same_v<float_lanes<W>, detail::float_array<W>>) std::memcpy(&v, p, sizeof(v));
  else
    for (int l = 0; l < W; ++l) v.v[l] = p[l];
}
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void store_lanes(float* p, const float_lanes<W>& v) {
  if constexpr (W == 1) *p = v;
  else if constexpr (!std::is_same_v<float_lanes<W>, detail::float_array<W>>) std::memcpy(p, &v, sizeof(v));
  else
    for (int l = 0; l < W; ++l) p[l] = v.v[l];
}
// acc += x * w, x broadcast over the lanes (one FMA per register where the compiler contracts).
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void madd_lanes(float_lanes<W>& acc, float x, const float_lanes<W>& w) {
  if constexpr (std::is_same_v<float_lanes<W>, detail::float_array<W>>) {
    for (int l = 0; l < W; ++l) acc.v[l] += x * w.v[l];
  } else {
    acc = acc + x * w;
  }
}
// acc += a * w, lane by lane (its own name: for W = 1 both forms take three floats).
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void madd_each_lane(float_lanes<W>& acc, const float_lanes<W>& a, const float_lanes<W>& w) {
  if constexpr (std::is_same_v<float_lanes<W>, detail::float_array<W>>) {
    for (int l = 0; l < W; ++l) acc.v[l] += a.v[l] * w.v[l];
  } else {
    acc = acc + a * w;
  }
}
// Every lane x.
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void fill_lanes(float_lanes<W>& v, float x) {
  if constexpr (W == 1) v = x;
  else if constexpr (std::is_same_v<float_lanes<W>, detail::float_array<W>>)
    for (int l = 0; l < W; ++l) v.v[l] = x;
  else
    v = float_lanes<W>{} + x;
}
// acc = max(acc, a) and acc += a, lane by lane; v *= x.
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void max_each_lane(float_lanes<W>& acc, const float_lanes<W>& a) {
  if constexpr (W == 1) acc = a > acc ? a : acc;
  else if constexpr (std::is_same_v<float_lanes<W>, detail::float_array<W>>)
    for (int l = 0; l < W; ++l) acc.v[l] = a.v[l] > acc.v[l] ? a.v[l] : acc.v[l];
  else
    acc = a > acc ? a : acc;
}
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void add_each_lane(float_lanes<W>& acc, const float_lanes<W>& a) {
  if constexpr (std::is_same_v<float_lanes<W>, detail::float_array<W>>)
    for (int l = 0; l < W; ++l) acc.v[l] += a.v[l];
  else
    acc = acc + a;
}
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void scale_lanes(float_lanes<W>& v, float x) {
  if constexpr (std::is_same_v<float_lanes<W>, detail::float_array<W>>)
    for (int l = 0; l < W; ++l) v.v[l] *= x;
  else
    v = v * x;
}
// Four 4-byte values moved as one 16-byte access: ld/st.v4 on a GPU (the aligned 16-byte struct
// nvcc moves whole), one 16-byte access in the GPU-model build (Clang's vector type, so the model
// records one request, not four), four accesses a host compiler may merge elsewhere. p must be
// 16-byte aligned: the caller arranges it (a packed operand, a scratch row of a multiple of 4).
template <class T>
struct alignas(16) chunk16 {
  static_assert(sizeof(T) == 4, "kcnn::chunk16 holds four 4-byte values");
  T v[4];
};
template <class T>
KOKKOS_FORCEINLINE_FUNCTION chunk16<T> load_chunk16(const T* p) {
#if defined(KCNN_GPU_MODEL) && defined(__clang__)
  typedef T vec4 __attribute__((ext_vector_type(4)));
  const vec4 q = *reinterpret_cast<const vec4*>(p);
  return chunk16<T>{{q[0], q[1], q[2], q[3]}};
#else
  return *reinterpret_cast<const chunk16<T>*>(p);
#endif
}
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void store_chunk16(T* p, const chunk16<T>& c) {
#if defined(KCNN_GPU_MODEL) && defined(__clang__)
  typedef T vec4 __attribute__((ext_vector_type(4)));
  *reinterpret_cast<vec4*>(p) = vec4{c.v[0], c.v[1], c.v[2], c.v[3]};
#else
  *reinterpret_cast<chunk16<T>*>(p) = c;
#endif
}

// The fastest-varying logical axis of a compile-time layout (nchw: w, nhwc: c, chwn: n).
template <class Layout>
inline constexpr axis run_axis = Layout::order[3];
// Physical axis I (0: slowest) of a compile-time layout, as a constant that device code can use
// (to nvcc, std::array's operator[] is a host function).
template <class Layout, int I>
inline constexpr axis order_at = Layout::order[I];

// Logical coordinates (n, c, h, w) with one axis replaceable by id at compile time. Values
// only, never references: a coordinate whose address is taken lives in memory, and the
// vectoriser then gives up on the loop.
struct coords4 {
  int n = 0, c = 0, h = 0, w = 0;
  template <axis A>
  KOKKOS_FORCEINLINE_FUNCTION coords4 with(int v) const {
    return coords4{A == axis::n ? v : n, A == axis::c ? v : c, A == axis::h ? v : h, A == axis::w ? v : w};
  }
  template <axis A>
  KOKKOS_FORCEINLINE_FUNCTION int get() const {
    return A == axis::n ? n : A == axis::c ? c : A == axis::h ? h : w;
  }
};

namespace detail {
// Element x + l along Run of a tensor whose operator() returns a value (CUDA's RandomAccess
// handles): indexed through the View.
template <axis Run, class T>
struct lane_proxy {
  T t;
  coords4 x;
  KOKKOS_FORCEINLINE_FUNCTION auto operator[](int l) const {
    const coords4 y = x.with<Run>(x.get<Run>() + l);
    return t(y.n, y.c, y.h, y.w);
  }
};
}  // namespace detail

// The run of tensor t that starts at element x, indexed by the lane offset l along Run (the
// layout's contiguous axis, stride 1): lane_ptr<Run>(t, x)[l] is element x + l along Run. A
// pointer where t hands out references (GCC 12 vectorises a loop over a pointer, not over a
// rank-4 View's operator()), otherwise an indexing proxy.
template <axis Run, class T>
KOKKOS_FORCEINLINE_FUNCTION auto lane_ptr(const T& t, const coords4& x) {
  // Run must have stride 1 for t's dims: its layout's run axis, or an axis every later one of
  // which has extent 1 (softmax over the channels of an nchw tensor with h = w = 1).
  static_assert(!T::layout_tag::runtime_strided, "kcnn::lane_ptr needs a compile-time layout");
  if constexpr (std::is_reference_v<typename T::reference_type>) return &t(x.n, x.c, x.h, x.w);
  else return detail::lane_proxy<Run, T>{t, x};
}

// Logical extent of axis A.
template <axis A>
KOKKOS_FORCEINLINE_FUNCTION int extent(const dims4& d) {
  if constexpr (A == axis::n) return d.n;
  else if constexpr (A == axis::c) return d.c;
  else if constexpr (A == axis::h) return d.h;
  else return d.w;
}

// The logical coordinates of the first element of row (i0, i1, i2): Layout's three slower
// physical axes, slowest first.
template <class Layout>
KOKKOS_FORCEINLINE_FUNCTION coords4 row_start(int i0, int i1, int i2) {
  return coords4{}.with<order_at<Layout, 0>>(i0).template with<order_at<Layout, 1>>(i1).template with<order_at<Layout, 2>>(i2);
}

namespace detail {
// The batch a row body's lanes take (for_lanes' B): Body::row_batch where the body declares one
// (a body whose rows are short and whose loads are mostly re-reads from L1, as LRN's window, so
// that a warp holding 2 rows keeps twice the bytes in flight), lane_batch_size otherwise.
template <class Body, class = void>
struct lane_batch_of_t : std::integral_constant<int, lane_batch_size> {};
template <class Body>
struct lane_batch_of_t<Body, std::void_t<decltype(Body::row_batch)>> : std::integral_constant<int, Body::row_batch> {};
template <class Body>
constexpr int lane_batch_of() {
  return lane_batch_of_t<Body>::value;
}

// The rows of Layout's storage: extents of its three slower physical axes, Skip's set to 1.
struct row_grid {
  int e0 = 1, e1 = 1, e2 = 1;
  KOKKOS_INLINE_FUNCTION std::size_t size() const { return std::size_t(e0) * std::size_t(e1) * std::size_t(e2); }
};
template <class Layout, int Skip>
row_grid storage_rows(const dims4& d) {
  constexpr axis a0 = Layout::order[0], a1 = Layout::order[1], a2 = Layout::order[2];
  return {int(a0) == Skip ? 1 : extent<a0>(d), int(a1) == Skip ? 1 : extent<a1>(d), int(a2) == Skip ? 1 : extent<a2>(d)};
}

// Calls body.row(member, first element of the row) for each row of a team's block of rows.
template <class Exec, class Layout, class Body>
struct rows_functor {
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  Body body;
  row_grid grid;
  int rows_per_team;
  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const std::size_t first = std::size_t(m.league_rank()) * std::size_t(rows_per_team);
    const std::size_t total = grid.size();
    const int count = int(total - first < std::size_t(rows_per_team) ? total - first : std::size_t(rows_per_team));
      // One row per team thread: its coordinates in 32-bit arithmetic (for_each_row checks that
      // the rows fit), two divisions where 64-bit ones are emulated in tens of instructions.
      team_rows(m, count, [&](const int r) {
        unsigned row = unsigned(first) + unsigned(r);
        const int i2 = int(row % unsigned(grid.e2));
        row /= unsigned(grid.e2);
        const int i1 = int(row % unsigned(grid.e1)), i0 = int(row / unsigned(grid.e1));
        body.row(m, row_start<Layout>(i0, i1, i2));
      });
  }
};
}  // namespace detail

namespace host_tuning {
// The host tuning's walks of rows and spans (kcnn/host/rows.hpp).
template <class Exec, class = void>
struct rows_walk;
}  // namespace host_tuning

// Launches body.row(member, x) for every row of Layout's storage of a tensor of dims d, x the
// logical coordinates of the row's first element. The rows are the three slower physical axes;
// with Skip (an axis id) that axis is left out of the rows (its coordinate is 0): a kernel that
// walks it inside each row (a reduction or a sliding window across channels) uses this. The
// runs have run_length elements. Vector length the power of two covering the run's batches
// (lanes_for_run: at most 32, one warp; batches of Body::row_batch elements where the body
// declares it, of lane_batch_size otherwise), 256 / vector length rows per team, one row per team
// thread (a host backend's team is what it allows, kcnn/map.hpp; kcnn/host/rows.hpp has the host
// tuning's walk).
// T: the caller's tuning; where it takes the host tuning (kcnn/tuning.hpp), the host's walk
// (kcnn/host/rows.hpp) runs the body instead.
template <class Layout, int Skip = -1, class T = tunings::automatic, class Exec, class Body>
void for_each_row(const char* label, const Exec& exec, const dims4& d, int run_length, const Body& body) {
  static_assert(!Layout::runtime_strided, "kcnn: the vector mapping needs a compile-time layout");
  if constexpr (takes_host_tuning<T, Exec>) {
    host_tuning::rows_walk<Exec>::template each_row<Layout, Skip>(label, exec, d, run_length, body);
    return;
  }
  const detail::row_grid grid = detail::storage_rows<Layout, Skip>(d);
  if (grid.size() == 0 || run_length <= 0) return;
  using functor = detail::rows_functor<Exec, Layout, Body>;
  const int vector = lanes_for_run(run_length, detail::lane_batch_of<Body>());
  const int team = 256 / vector, rows_per_team = team;
  if (grid.size() > std::size_t(2147483647))
    throw std::invalid_argument(std::string(label) + ": tensor too large for one launch");
  const std::size_t league = (grid.size() + std::size_t(rows_per_team) - 1) / std::size_t(rows_per_team);
  launch_teams(label, exec, int(league), team, vector, 0, functor{body, grid, rows_per_team});
}

// The count an int or a std::integral_constant<int, N> holds, in device code too (to nvcc,
// integral_constant's conversion operator is a host function).
KOKKOS_FORCEINLINE_FUNCTION int count_value(int n) { return n; }
template <int N>
KOKKOS_FORCEINLINE_FUNCTION constexpr int count_value(std::integral_constant<int, N>) {
  return N;
}
template <int B>
KOKKOS_FORCEINLINE_FUNCTION constexpr int count_value(const lane_batch<B>&) {
  return B;
}

// The slots of an Overlap walk of len elements in batches of B: ceil(len / B), rounded up to a
// multiple of 8 (floats in a 32-byte sector) past 8. Never more lanes than lanes_for_run gives;
// up to S * B - len elements repeat, each still loaded and computed; the bodies (LRN's,
// pooling's) leave their stores out (lane_repeats).
KOKKOS_INLINE_FUNCTION constexpr int overlap_slots(const int len, const int B) {
  const int s = (len + B - 1) / B;
  return s > 8 ? (s + 7) / 8 * 8 : s;
}

// Walks [begin, end) of a run with the vector lanes: f(i, width) for the elements i +
// lane_offset(width, l), l < width's size (decltype(width)::value). The portable paths (W = 1)
// give each lane batches of B elements (lane_batch_size unless the body asks for more, as
// for_each_row's Body::row_batch) a slot count S apart (kcnn::lane_batch),
// adjacent lanes on adjacent elements; the host tuning (W > 1) gives blocks of W consecutive
// elements (std::integral_constant<int, W>). The elements left over: with Overlap, the last batch
// or block repeats the run's last elements (computed twice or more, so f must write only what it
// does not read: an output distinct from the inputs; kcnn::lane_repeats tells which), otherwise
// one by one, f(i, std::integral_constant<int, 1>). An Overlap walk of more than 8 slots takes a
// whole number of 8 (overlap_slots): each of a batch's stores then covers whole 32-byte sectors of
// floats where the run starts on one, where 12 lanes of 4 bytes would share their end sectors
// with the next store (AlexNet's LRN over 96 channels in batches of 8).
template <int W, bool Overlap = false, int B = lane_batch_size, class Member, class F>
KOKKOS_INLINE_FUNCTION void for_lanes(const Member& m, int begin, int end, const F& f) {
  static_assert(B >= 1 && B <= reduce_batch_size, "kcnn::for_lanes: a batch of 1 to reduce_batch_size elements");
  if (end <= begin) return;
  if constexpr (W == 1) {
    const int len = end - begin;
    if constexpr (Overlap) {
      const int slots = overlap_slots(len, B);
      vector_lanes(m, 0, slots, [&](const int s) { f(begin + s, lane_batch<B>{slots, len - 1 - s}); });
    } else {
      const int slots = len / B;
      vector_lanes(m, 0, slots, [&](const int s) { f(begin + s, lane_batch<B>{slots}); });
      vector_lanes(m, begin + slots * B, end, [&](const int i) { f(i, std::integral_constant<int, 1>{}); });
    }
  } else {
    const int blocks = (end - begin) / W;
    vector_lanes(m, blocks,
                         [&](const int b) { f(begin + b * W, std::integral_constant<int, W>{}); });
    if constexpr (Overlap) {
      if (blocks > 0 && begin + blocks * W < end) {
        f(end - W, std::integral_constant<int, W>{});
        return;
      }
    }
    vector_lanes(m, begin + blocks * W, end,
                         [&](const int i) { f(i, std::integral_constant<int, 1>{}); });
  }
}

// Op (max_op or sum_op) of f(i) over [begin, end) in one lane, reduce_batch_size independent
// accumulators (i, i + 1, ... taken a batch at a time: their loads in flight together), combined
// at the end.
template <class Op, class F>
KOKKOS_INLINE_FUNCTION float reduce_in_batches(const int begin, const int end, const F& f) {
  constexpr int B = reduce_batch_size;
  const Op op{};
  float acc[B];
  unrolled<B>([&](auto k) { acc[decltype(k)::value] = Op::identity; });
  int i = begin;
  for (; i + B <= end; i += B) {
    float v[B];
    unrolled<B>([&](auto k) { v[decltype(k)::value] = f(i + int(decltype(k)::value)); });
    unrolled<B>([&](auto k) { acc[decltype(k)::value] = op(acc[decltype(k)::value], v[decltype(k)::value]); });
  }
  for (; i < end; ++i) acc[0] = op(acc[0], f(i));
  unrolled<B - 1>([&](auto k) { acc[0] = op(acc[0], acc[decltype(k)::value + 1]); });
  return acc[0];
}
// store(i, load(i)) for i in [begin, end) in one lane, a batch's loads before its stores.
template <class Load, class Store>
KOKKOS_INLINE_FUNCTION void copy_in_batches(const int begin, const int end, const Load& load, const Store& store) {
  constexpr int B = lane_batch_size;
  int i = begin;
  for (; i + B <= end; i += B) {
    float v[B];
    unrolled<B>([&](auto k) { v[decltype(k)::value] = load(i + int(decltype(k)::value)); });
    unrolled<B>([&](auto k) { store(i + int(decltype(k)::value), v[decltype(k)::value]); });
  }
  for (; i < end; ++i) store(i, load(i));
}

// A team's tile of `rows` x `lanes` elements read in batches (the transposes' read phase, whose
// store is to team scratch): team thread t takes rows t + k * S (S = ceil(rows / lane_batch_size),
// k < lane_batch_size), each of its vector lanes an element i of each of them, every load of the
// batch (v = load(r, i)) before its first store (store(r, i, v)).
template <class Member, class Load, class Store>
KOKKOS_INLINE_FUNCTION void team_rows_in_batches(const Member& m, int rows, int lanes, const Load& load, const Store& store) {
  constexpr int B = lane_batch_size;
  const int slots = (rows + B - 1) / B;
  team_rows(m, slots, [&](const int t) {
    vector_lanes(m, lanes, [&](const int i) {
      float v[B];
      unrolled<B>([&](auto k) {
        const int r = t + int(decltype(k)::value) * slots;
        v[decltype(k)::value] = r < rows ? load(r, i) : 0.0f;
      });
      unrolled<B>([&](auto k) {
        const int r = t + int(decltype(k)::value) * slots;
        if (r < rows) store(r, i, v[decltype(k)::value]);
      });
    });
  });
}

// Where a body is about to read or write ([p, p + bytes)), for a walk whose streams a hardware
// prefetcher follows badly: nothing here; the host tuning's prefetch_hints (kcnn/host/
// simd_types.hpp) asks for the lines.
struct no_hints {
  KOKKOS_FORCEINLINE_FUNCTION static void will_read(const void*, std::size_t) {}
  KOKKOS_FORCEINLINE_FUNCTION static void will_write(const void*, std::size_t) {}
};

// The two reductions kernels need along a run: the operation, its identity and the matching
// Kokkos reducer.
struct max_op {
  static constexpr float identity = -3.402823466e38f;
  using reducer = Kokkos::Max<float>;
  KOKKOS_FORCEINLINE_FUNCTION float operator()(float a, float b) const { return a > b ? a : b; }
};
struct sum_op {
  static constexpr float identity = 0.0f;
  using reducer = Kokkos::Sum<float>;
  KOKKOS_FORCEINLINE_FUNCTION float operator()(float a, float b) const { return a + b; }
};

namespace host_tuning {
// lanes_reduce over blocks of W > 1 lanes (kcnn/host/rows.hpp).
template <int W, class Op, class F>
KOKKOS_INLINE_FUNCTION float lanes_reduce_blocks(int len, const F& f);
}  // namespace host_tuning

// Op (max_op or sum_op) of f(i) over [0, len) across the lanes: Kokkos' vector reduction (warp
// shuffles on a GPU); W > 1 (the host tuning's blocks) is kcnn/host/rows.hpp's.
template <int W, class Op, class Member, class F>
KOKKOS_INLINE_FUNCTION float lanes_reduce(const Member& m, int len, const F& f) {
  if constexpr (W == 1) {
    // Batches of reduce_batch_size elements a slot count apart, each lane's batch read before it
    // is combined: independent loads in flight (as for_lanes', twice as many: nothing is stored).
    constexpr int B = reduce_batch_size;
    const Op op{};
    const int slots = (len + B - 1) / B;
    float result = Op::identity;
    vector_lanes_reduce(m, slots, [&](const int s, float& acc) {
      float v[B];
      unrolled<B>([&](auto k) {
        const int i = s + int(decltype(k)::value) * slots;
        v[decltype(k)::value] = i < len ? f(i) : Op::identity;
      });
      unrolled<B>([&](auto k) { acc = op(acc, v[decltype(k)::value]); });
    }, typename Op::reducer(result));
    return result;
  } else {
    (void)m;
    return host_tuning::lanes_reduce_blocks<W, Op>(len, f);
  }
}

// The portable walk of one run of len elements with the vector lanes: per lane, batches of
// lane_batch_size elements S apart (S = len / lane_batch_size slots, adjacent lanes on adjacent
// elements), each batch's loads (v = load(l), reads only) all issued before its stores (store(l,
// v)); the run's last len % lane_batch_size elements one by one. An element's store follows its
// own load, so an output may be an input (in place).
template <class Member, class Load, class Store>
KOKKOS_FORCEINLINE_FUNCTION void run_in_batches(const Member& m, const int len, const Load& load, const Store& store) {
  constexpr int B = lane_batch_size;
  const int slots = len / B;
  using value = decltype(load(0));
  vector_lanes(m, 0, slots, [&](const int s) {
    value v[B];
    unrolled<B>([&](auto k) { v[decltype(k)::value] = load(s + int(decltype(k)::value) * slots); });
    unrolled<B>([&](auto k) { store(s + int(decltype(k)::value) * slots, v[decltype(k)::value]); });
  });
  vector_lanes(m, slots * B, len, [&](const int i) { store(i, load(i)); });
}

// The 16-byte chunks (kcnn::chunk16, four floats) a lane of chunks_in_batches takes at once:
// 32 bytes in flight per lane, as a reduction's batch (reduce_batch_size floats).
inline constexpr int chunk_batch_size = 2;
// The portable walk of a run of `chunks` 16-byte chunks with the vector lanes, for a run whose
// every row starts on 16 bytes and holds a multiple of four floats (the caller checks the
// pointers and extents; a scalar walk takes the rest): per lane, batches of chunk_batch_size
// chunks S apart (S = ceil(chunks / chunk_batch_size) slots, adjacent lanes on adjacent chunks:
// a request of L lanes covers 16 * L contiguous bytes, whole 32-byte sectors where L is even and
// the run starts on 32 bytes), each batch's loads (v = load(i), a chunk16) before its stores
// (store(i, v)); a batch past the run's end takes fewer.
// An element's store follows its own load: an output may be an input.
template <class Member, class Load, class Store>
KOKKOS_FORCEINLINE_FUNCTION void chunks_in_batches(const Member& m, const int chunks, const Load& load, const Store& store) {
  constexpr int B = chunk_batch_size;
  const int slots = (chunks + B - 1) / B;
  using value = decltype(load(0));
  vector_lanes(m, 0, slots, [&](const int s) {
    value v[B] = {};
    unrolled<B>([&](auto k) {
      const int i = s + int(decltype(k)::value) * slots;
      if (i < chunks) v[decltype(k)::value] = load(i);
    });
    unrolled<B>([&](auto k) {
      const int i = s + int(decltype(k)::value) * slots;
      if (i < chunks) store(i, v[decltype(k)::value]);
    });
  });
}

namespace detail {
// The portable walk of for_each_element_by_rows: each row through run_in_batches. x is the row's
// first element and the element's offset along the run its l, so the row's addresses are
// computed once.
template <class Exec, class Layout, class F>
struct elementwise_rows_body {
  F f;
  dims4 d;
  KOKKOS_INLINE_FUNCTION void row(const typename Kokkos::TeamPolicy<Exec>::member_type& m, const coords4& x) const {
    run_in_batches(
        m, extent<run_axis<Layout>>(d), [&](const int l) { return f.load(x, l); },
        [&](const int l, const auto v) { f.store(x, l, v); });
  }
};
}  // namespace detail

// Calls f for every element of a tensor of dims d, in Layout's storage order: rows of the three
// slower physical axes, lanes along the fastest (coalesced on a GPU). f is an element body split
// in two: v = f.load(x, l) reads what element x + l along the run axis needs and computes its
// value (it reads only), f.store(x, l, v) writes it. Each reads and writes through lane_ptr. f must be safe to call in any order;
// an output may be an input (in place): an element's store follows its own loads.
// T as for_each_row's (the host tuning's walk takes lane blocks).
template <class Layout, class T = tunings::automatic, class Exec, class F>
void for_each_element_by_rows(const char* label, const Exec& exec, const dims4& d, const F& f) {
  if constexpr (takes_host_tuning<T, Exec>)
    host_tuning::rows_walk<Exec>::template each_element<Layout>(label, exec, d, f);
  else
    for_each_row<Layout, -1, tunings::portable>(label, exec, d, extent<run_axis<Layout>>(d),
                                               detail::elementwise_rows_body<Exec, Layout, F>{f, d});
}

// A tensor of a compile-time layout seen along one of its row axes A (not the run axis): `outer`
// blocks (the axes stored before A) of `planes` planes (one per index along A) of `length`
// contiguous elements (the axes stored after A). nchw along c: n blocks of c planes of h * w;
// chwn along c: one block of c planes of h * w * n. A kernel that reduces or slides along A
// (LRN, softmax over channels) walks the planes for each element of a plane, and the elements
// of a plane are contiguous however many axes they span: long runs even when the layout's own
// run is short (w = 7 in nchw).
struct plane_geometry {
  int outer = 0, planes = 0;
  std::size_t length = 0;
  // Offset of element i of plane p of outer block o in the (dense) storage.
  KOKKOS_FORCEINLINE_FUNCTION std::size_t offset(int o, int p, std::size_t i) const {
    return (std::size_t(o) * std::size_t(planes) + std::size_t(p)) * length + i;
  }
};
template <class Layout, axis A>
plane_geometry planes_along(const dims4& d) {
  static_assert(!Layout::runtime_strided, "kcnn: planes_along needs a compile-time layout");
  static_assert(run_axis<Layout> != A, "kcnn: planes_along: A is the layout's run axis");
  plane_geometry g{1, extent<A>(d), 1};
  bool after = false;
  for (const axis a : Layout::order) {
    const int e = a == axis::n ? d.n : a == axis::c ? d.c : a == axis::h ? d.h : d.w;
    if (a == A) after = true;
    else if (after) g.length *= std::size_t(e);
    else g.outer *= e;
  }
  return g;
}

namespace detail {
template <class Exec, class Body>
struct spans_functor {
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  static constexpr int team = 8, lanes = 32, per_thread = lanes * lane_batch_size, chunk = team * per_thread;
  Body body;
  plane_geometry g;
  int chunks;  // per outer block
  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const int o = m.league_rank() / chunks;
    const std::size_t begin = std::size_t(m.league_rank() % chunks) * std::size_t(chunk);
    const std::size_t left = g.length - begin;
    const int count = left < std::size_t(chunk) ? int(left) : chunk;
    team_rows(m, (count + per_thread - 1) / per_thread, [&](const int t) {
      const int first = t * per_thread, n = count - first < per_thread ? count - first : per_thread;
      const int slots = (n + lane_batch_size - 1) / lane_batch_size;
      vector_lanes(m, 0, slots, [&](const int x) {
        body.span(o, begin + std::size_t(first + x), lane_batch<lane_batch_size>{slots, n - 1 - x});
      });
    });
  }
};
}  // namespace detail

// Calls body.span(o, i, count) for the elements of the planes of outer block o: on the portable
// paths count is a kcnn::lane_batch (the elements i + lane_offset(count, l), l < count_value(count),
// a batch's last element repeated where a thread's part of the plane ends: the body's output must
// be distinct from its inputs); kcnn/host/rows.hpp calls it with runs of consecutive elements
// (an int). The body walks the planes inside: for each plane, its elements (adjacent lanes take
// adjacent elements: coalesced on a GPU). Teams of 8 threads x 32 lanes, a batch per lane: 1,024
// elements per team.
// T as for_each_row's (the host tuning's spans are blocks of elements).
template <class T = tunings::automatic, class Exec, class Body>
void for_each_span(const char* label, const Exec& exec, const plane_geometry& g, const Body& body) {
  if (g.outer <= 0 || g.planes <= 0 || g.length == 0) return;
  if constexpr (takes_host_tuning<T, Exec>) {
    host_tuning::rows_walk<Exec>::each_span(label, exec, g, body);
    return;
  }
  using functor = detail::spans_functor<Exec, Body>;
  const std::size_t chunks = (g.length + std::size_t(functor::chunk) - 1) / std::size_t(functor::chunk);
  const std::size_t league = chunks * std::size_t(g.outer);
  if (league > std::size_t(2147483647))
    throw std::invalid_argument(std::string(label) + ": tensor too large for one launch");
  launch_teams(label, exec, int(league), functor::team, functor::lanes, 0, functor{body, g, int(chunks)});
}

}  // namespace kcnn

#if KCNN_HOST_TUNING
#include <kcnn/host/rows.hpp>
#endif
