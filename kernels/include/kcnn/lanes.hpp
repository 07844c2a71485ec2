#pragma once
// The performance-portable mapping of kcnn's memory-bound `vector` variants.
//
// A tensor in a compile-time layout is a set of rows (its three slower physical axes) of runs
// (its fastest physical axis, contiguous in memory). A kernel takes a block of rows per team
// (GPU: TeamThreadRange, the coordinates of a row recovered once per row, never per element;
// host: one thread walks the block, the coordinates advanced by a carry) and walks a run with
// the vector lanes (ThreadVectorRange):
//  * on a GPU the lanes are adjacent threads of a warp, one element each, so adjacent lanes
//    touch adjacent addresses: the loads and stores along a run are coalesced;
//  * on a host, a lane is a block of lane_width consecutive elements (16 floats: one AVX-512
//    register, two AVX2 ones) processed by a fixed-length inner loop that the compiler
//    vectorises, so per-lane state (a running max, a window sum) lives in vector registers.
//    Two rules keep it vectorisable (GCC 12 checked with -fopt-info-vec): coordinates are values
//    (coords4 never hands out references), and float parameters are copied to locals before the
//    loops (a float store to the output could alias a float member, forcing a reload per lane).
// The same kernel source serves both; only the block width differs (1 on a GPU).
// Kernels whose reduction or window runs along an axis that is a row axis in one layout and the
// run in another (LRN and softmax over channels, pooling windows) choose their form per layout
// at compile time, from the layout's run axis.
#include <kcnn/compat.hpp>
#include <kcnn/layout.hpp>
#include <kcnn/map.hpp>

#include <Kokkos_Core.hpp>

#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && !defined(__HIPCC__) && \
    !defined(__SYCL_DEVICE_ONLY__) && defined(__SSE2__)
#define KCNN_X86_HOST 1
#include <immintrin.h>  // broadcast_quad's 16-byte broadcast, stream_lanes' non-temporal stores
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>  // sysconf: the last-level cache, streaming_store_threshold's default
#endif

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace kcnn {

// Put before a fixed-length lane loop whose body selects (a max: `v > acc ? v : acc`). GCC 12
// unrolls a 16-iteration loop completely, and its straight-line vectoriser then leaves the
// selects scalar (16 vmaxss); kept as a loop, the loop vectoriser makes it one vmaxps. Other
// compilers vectorise the select either way; nvcc warns on GCC pragmas, so only GCC gets it.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && !defined(__INTEL_LLVM_COMPILER)
#define KCNN_LANE_LOOP _Pragma("GCC unroll 1")
#else
#define KCNN_LANE_LOOP
#endif

// Put before a loop over a register tile's accumulators (a fixed trip count) that must unroll
// completely so that they stay in registers: GCC peels at most 16 iterations by itself, and a
// tile of 24 accumulators left in an array lived on the stack (a load and a store per multiply-
// add). GCC and Clang on a host; nvcc unrolls fixed trip counts by itself (and warns on GCC
// pragmas).
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && !defined(__INTEL_LLVM_COMPILER)
#define KCNN_UNROLL_TILE _Pragma("GCC unroll 64")
#elif defined(__clang__) && !defined(__CUDACC__)
#define KCNN_UNROLL_TILE _Pragma("clang loop unroll(full)")
#else
#define KCNN_UNROLL_TILE
#endif

// A hint that the host is about to read (ForWrite: write) [p, p + bytes): one prefetch per
// 64-byte line, the last line included. For access patterns that interleave many streams page by
// page (a pooling window's rows in nhwc and chwn, LRN's channel planes), which the hardware
// prefetcher follows badly. No effect on a device, or on a compiler without __builtin_prefetch.
template <bool ForWrite = false>
KOKKOS_FORCEINLINE_FUNCTION void prefetch_host(const void* p, std::size_t bytes) {
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && \
    !defined(__SYCL_DEVICE_ONLY__)
  const char* c = static_cast<const char*>(p);
  for (std::size_t b = 0; b < bytes; b += 64) __builtin_prefetch(c + b, ForWrite ? 1 : 0);
  if (bytes > 0) __builtin_prefetch(c + bytes - 1, ForWrite ? 1 : 0);  // a start not on a line
#else
  (void)p;
  (void)bytes;
#endif
}

// True when Exec runs on the host (its memory is host-accessible): Serial, OpenMP, Threads.
// The GPU-model build (KCNN_GPU_MODEL) runs on a host backend and takes the GPU paths everywhere.
template <class Exec>
inline constexpr bool host_backend =
#if defined(KCNN_GPU_MODEL)
    false;
#else
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible;
#endif

// Whether this build's host code has non-temporal stores (stream_lanes): x86 with GCC or Clang
// vector extensions (not nvcc's or hipcc's host pass). Without them nothing streams.
inline constexpr bool streaming_available =
#if defined(KCNN_X86_HOST)
    true;
#else
    false;
#endif

// The output size, in bytes, from which host kernels store with stream_lanes (non-temporal):
// by default half the last-level cache sysconf reports (the output shares the cache with the
// input it is computed from), 16 MiB where it reports none. The environment variable
// KCNN_STREAMING_STORE_BYTES (decimal digits only; anything else, or a value past SIZE_MAX,
// throws std::invalid_argument naming it, at every call until it is fixed or overridden)
// replaces the default; set_streaming_store_threshold replaces both for the launches after it
// (0: always stream; SIZE_MAX: never). A GPU kernel never streams, nor a build without
// streaming_available. Kernels that stream: activation_flat, add_flat, and pool_vector's host
// path for nhwc and chwn (windows up to 16 columns wide). The fence after a streamed launch
// (stream_fence_threads) assumes what Kokkos' Serial, OpenMP and Threads backends do: a range
// of concurrency() items gives each thread one.
namespace detail {
inline std::size_t parse_byte_count(const char* name, const char* text) {
  std::size_t v = 0;
  const char* p = text;
  for (; *p >= '0' && *p <= '9'; ++p) {
    const std::size_t d = std::size_t(*p - '0');
    if (v > (std::numeric_limits<std::size_t>::max() - d) / 10) break;
    v = v * 10 + d;
  }
  if (p == text || *p != '\0')
    throw std::invalid_argument(std::string(name) + ": not a byte count (decimal digits, at most SIZE_MAX): '" + text + "'");
  return v;
}
inline std::size_t default_streaming_store_threshold() {
  if (const char* e = std::getenv("KCNN_STREAMING_STORE_BYTES")) return parse_byte_count("KCNN_STREAMING_STORE_BYTES", e);
  long llc = 0;
#if defined(_SC_LEVEL3_CACHE_SIZE)
  llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
#if defined(_SC_LEVEL2_CACHE_SIZE)
  if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  return llc > 0 ? std::size_t(llc) / 2 : std::size_t(16) << 20;
}
struct streaming_store_override {
  std::atomic<bool> set{false};
  std::atomic<std::size_t> bytes{0};
};
inline streaming_store_override& streaming_store_setting() {
  static streaming_store_override o;
  return o;
}
}  // namespace detail
inline std::size_t streaming_store_threshold() {
  const auto& o = detail::streaming_store_setting();
  if (o.set.load(std::memory_order_acquire)) return o.bytes.load(std::memory_order_relaxed);
  static const std::size_t from_environment = detail::default_streaming_store_threshold();
  return from_environment;
}
inline void set_streaming_store_threshold(const std::size_t bytes) {
  auto& o = detail::streaming_store_setting();
  o.bytes.store(bytes, std::memory_order_relaxed);
  o.set.store(true, std::memory_order_release);
}
// Whether a kernel on Exec writing output_bytes streams its stores (host only).
template <class Exec>
bool streams_output(const std::size_t output_bytes) {
  if constexpr (!host_backend<Exec> || !streaming_available) return false;
  else return output_bytes >= streaming_store_threshold();
}

// Elements per vector lane: 16 on a host (one 512-bit register of floats), 1 on a GPU.
template <class Exec>
inline constexpr int lane_width = host_backend<Exec> ? 16 : 1;

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
// no coordinates).
//  * Host: an item is a chunk of flat_chunk consecutive elements, a loop the compiler vectorises
//    with its loop invariants in registers.
//  * GPU: an item is a thread. While the GPU holds a thread per element at once, one element each:
//    every load is already in flight. Beyond that, flat_interleave elements a quarter of the
//    storage apart (i, i + q, i + 2q, i + 3q, q = ceil(n / 4)): each load coalesced across the
//    warp, all issued before the first store, four in flight per thread instead of one. Measured
//    on an H200 (docs/gpu-results.md): a copy of one float per thread 1.66 TB/s, of four such
//    4.01 TB/s (the copy and copy4 ceilings); relu over 205 M elements 1.67 TB/s one per thread,
//    4.07 TB/s four; the smoke activations over 65536 elements (a quarter of the H200's 270336
//    threads) 5.1 us one per thread, 6.9 us four. Between one and four times the threads the GPU
//    holds, nothing is measured yet.
template <class Exec>
inline constexpr std::size_t flat_chunk = host_backend<Exec> ? 4096 : 1;
inline constexpr std::size_t flat_interleave = 4;
// A flat launch over n elements: `items` work items; interleaved: an item's elements `q` apart.
struct flat_items {
  std::size_t items, q;
  bool interleaved;
};
template <class Exec>
flat_items flat_items_of(const Exec& exec, const std::size_t n) {
  if (host_backend<Exec> || n <= device_concurrency(exec))
    return {(n + flat_chunk<Exec> - 1) / flat_chunk<Exec>, n, false};
  const std::size_t q = (n + flat_interleave - 1) / flat_interleave;
  return {q, q, true};
}

// W floats held as one value, for register tiles whose accumulators must stay in registers
// (conv2d direct_vector): on a host built by GCC or Clang, a vector-extension type (one zmm
// register for W = 16 whatever the compiler's preferred vector width; an array of 16 floats
// written as fixed-length loops was split into ymm halves by GCC 12's znver tuning and its
// accumulators spilled); W = 1 (a GPU thread) is a plain float; anything else is an array.
// Operations: float_lanes<W>{} (zeros), fill_lanes, load_lanes / store_lanes (unaligned),
// madd_lanes (acc += x * w, x broadcast), madd_each_lane, max_each_lane, add_each_lane,
// scale_lanes, lane_get. They take and give vectors by reference,
// never by value: GCC notes (-Wpsabi) every function that passes or returns a 64-byte vector by
// value in a build without AVX-512 (its ABI differs there), and a user's -Werror build at plain
// -O2 must compile (tests/consumer builds direct_vector at -Wall -Wextra -Werror).
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
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && !defined(__HIPCC__) && \
    !defined(__SYCL_DEVICE_ONLY__)
#define KCNN_VECTOR_EXTENSIONS 1
template <>
struct float_lanes_of<8> {
  typedef float type __attribute__((vector_size(32)));
};
template <>
struct float_lanes_of<16> {
  typedef float type __attribute__((vector_size(64)));
};
template <>
struct float_lanes_of<32> {
  typedef float type __attribute__((vector_size(128)));
};
#endif
}  // namespace detail
template <int W>
using float_lanes = typename detail::float_lanes_of<W>::type;

template <int W>
KOKKOS_FORCEINLINE_FUNCTION void load_lanes(float_lanes<W>& v, const float* p) {
  if constexpr (W == 1) v = *p;
#ifdef KCNN_VECTOR_EXTENSIONS
  else if constexpr (!std::is_same_v<float_lanes<W>, detail::float_array<W>>) __builtin_memcpy(&v, p, sizeof(v));
#endif
  else
    for (int l = 0; l < W; ++l) v.v[l] = p[l];
}
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void store_lanes(float* p, const float_lanes<W>& v) {
  if constexpr (W == 1) *p = v;
#ifdef KCNN_VECTOR_EXTENSIONS
  else if constexpr (!std::is_same_v<float_lanes<W>, detail::float_array<W>>) __builtin_memcpy(p, &v, sizeof(v));
#endif
  else
    for (int l = 0; l < W; ++l) p[l] = v.v[l];
}
// store_lanes without the write-allocate: on an x86 host, non-temporal stores of a 16-float
// vector at a 16-byte aligned address (one 64-byte store with AVX-512, four 16-byte ones
// otherwise: the write-combining buffer joins them into one line); elsewhere (a GPU, another
// CPU, an unaligned address) an ordinary store. An ordinary store first reads the line it
// writes, so an output that will not be read from the cache again (larger than the cache:
// streaming_store_threshold) moves half as much again as it needs (relu 2 x 822 MB on this
// project's Xeon host: 134 ms with ordinary stores, 86 ms streamed, one thread). Non-temporal
// stores are weakly ordered: a launch that streamed is followed by stream_fence_threads (an
// sfence on every host thread). Not one per work item: an sfence waits for the thread's stores
// in flight, and one per 16 KB chunk halved the streamed copy (8.4 against 18 GB/s).
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void stream_lanes(float* p, const float_lanes<W>& v) {
#if defined(KCNN_X86_HOST) && defined(KCNN_VECTOR_EXTENSIONS)
  if constexpr (W == 16) {
    if ((reinterpret_cast<std::uintptr_t>(p) & 15) == 0) {
#if defined(__AVX512F__)
      if ((reinterpret_cast<std::uintptr_t>(p) & 63) == 0) {
        _mm512_stream_ps(p, (__m512)v);
        return;
      }
#endif
      for (int q = 0; q < 4; ++q)
        _mm_stream_ps(p + 4 * q, __m128{v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]});
      return;
    }
  }
#endif
  store_lanes<W>(p, v);
}
// Orders this thread's earlier stream_lanes stores before its later stores (sfence); nothing
// where stream_lanes stores ordinarily.
KOKKOS_FORCEINLINE_FUNCTION void stream_fence() {
#if defined(KCNN_X86_HOST) && defined(KCNN_VECTOR_EXTENSIONS)
  _mm_sfence();
#endif
}
namespace detail {
struct stream_fence_functor {
  KOKKOS_INLINE_FUNCTION void operator()(const int) const { stream_fence(); }
};
}  // namespace detail
// stream_fence on each of Exec's threads (a launch of one item per thread: Kokkos' host backends
// give each thread one contiguous block of a range), after a launch whose stores streamed and
// before what reads its output. Nothing on a GPU.
template <class Exec>
void stream_fence_threads(const Exec& exec) {
  if constexpr (host_backend<Exec>)
    Kokkos::parallel_for("kcnn::stream_fence", Kokkos::RangePolicy<Exec>(exec, 0, compat::concurrency(exec)),
                         detail::stream_fence_functor{});
}
// A host flat form's chunk, streamed: count elements computed a block at a time into a buffer
// in L1 (compute(buffer, offset, length) writes buffer[0, length) for out[offset, offset +
// length)), each block then stored to out with stream_lanes (the launch is followed by
// stream_fence_threads). The compute loop stays the one the compiler vectorises (its stores go
// to the local buffer, which nothing aliases).
template <class Compute>
KOKKOS_INLINE_FUNCTION void stream_chunk(float* out, const std::size_t count, const Compute& compute) {
  constexpr std::size_t block = 256;
  alignas(64) float buffer[block];
  for (std::size_t o = 0; o < count; o += block) {
    const std::size_t length = count - o < block ? count - o : block;
    compute(buffer, o, length);
    std::size_t i = 0;
    for (; i + 16 <= length; i += 16) {
      float_lanes<16> v;
      load_lanes<16>(v, buffer + i);
      stream_lanes<16>(out + o + i, v);
    }
    for (; i < length; ++i) out[o + i] = buffer[i];
  }
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
// out lane l = in lane (l - l mod G + C): lane C of each group of G lanes, spread over the group
// (a grouped convolution whose lanes span several groups: each lane's input channel C of its own
// group). One permute where the compiler has __builtin_shufflevector (GCC >= 12, Clang).
namespace detail {
#if defined(KCNN_VECTOR_EXTENSIONS) && (defined(__clang__) || __GNUC__ >= 12)
template <int G, int C, class V, std::size_t... L>
KOKKOS_FORCEINLINE_FUNCTION void spread_in_groups_impl(V& out, const V& in, std::index_sequence<L...>) {
  out = __builtin_shufflevector(in, in, int(L - L % G + C)...);
}
#define KCNN_HAVE_SHUFFLEVECTOR 1
#endif
}  // namespace detail
template <int W, int G, int C>
KOKKOS_FORCEINLINE_FUNCTION void spread_in_groups(float_lanes<W>& out, const float_lanes<W>& in) {
  static_assert(W % G == 0 && C < G, "spread_in_groups: G must divide W, C < G");
#ifdef KCNN_HAVE_SHUFFLEVECTOR
  if constexpr (W > 1 && !std::is_same_v<float_lanes<W>, detail::float_array<W>>) {
    detail::spread_in_groups_impl<G, C>(out, in, std::make_index_sequence<W>{});
    return;
  }
#endif
  if constexpr (W == 1) out = in;
  else if constexpr (std::is_same_v<float_lanes<W>, detail::float_array<W>>)
    for (int l = 0; l < W; ++l) out.v[l] = in.v[l - l % G + C];
  else
    for (int l = 0; l < W; ++l) out[l] = in[l - l % G + C];
}

// out = the even lanes of (lo, hi): lo's lanes 0, 2, .., W - 2 then hi's (a stride-2 row of 2 W
// floats, loaded as two vectors, gives the W elements a stride-2 window reads). One two-source
// permute where the compiler has __builtin_shufflevector.
namespace detail {
#ifdef KCNN_HAVE_SHUFFLEVECTOR
template <class V, std::size_t... L>
KOKKOS_FORCEINLINE_FUNCTION void even_lanes_impl(V& out, const V& lo, const V& hi, std::index_sequence<L...>) {
  out = __builtin_shufflevector(lo, hi, int(2 * L)...);
}
#endif
}  // namespace detail
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void even_lanes(float_lanes<W>& out, const float_lanes<W>& lo, const float_lanes<W>& hi) {
#ifdef KCNN_HAVE_SHUFFLEVECTOR
  if constexpr (W > 1 && !std::is_same_v<float_lanes<W>, detail::float_array<W>>) {
    detail::even_lanes_impl(out, lo, hi, std::make_index_sequence<W>{});
    return;
  }
#endif
  if constexpr (W == 1) out = lo;
  else if constexpr (std::is_same_v<float_lanes<W>, detail::float_array<W>>)
    for (int l = 0; l < W; ++l) out.v[l] = 2 * l < W ? lo.v[2 * l] : hi.v[2 * l - W];
  else
    for (int l = 0; l < W; ++l) out[l] = 2 * l < W ? lo[2 * l] : hi[2 * l - W];
}

template <int W>
KOKKOS_FORCEINLINE_FUNCTION float lane_get(const float_lanes<W>& v, int l) {
  if constexpr (W == 1) return (void)l, v;
  else if constexpr (std::is_same_v<float_lanes<W>, detail::float_array<W>>) return v.v[l];
  else return v[l];
}

// r[i] lane j becomes r[j] lane i: a W x W block transposed in registers, in log2(W) stages of
// W / 2 pairs, each pair (r[i], r[i + d]) exchanging its off-diagonal halves of width d (one
// two-source shuffle per vector per stage where the compiler has __builtin_shufflevector: 64 for
// W = 16); element by element otherwise.
namespace detail {
constexpr int transpose_lo(int j, int d, int W) { return (j & d) == 0 ? j : W + j - d; }
constexpr int transpose_hi(int j, int d, int W) { return (j & d) == 0 ? j + d : W + j; }
#ifdef KCNN_HAVE_SHUFFLEVECTOR
template <int D, class V, std::size_t... L>
KOKKOS_FORCEINLINE_FUNCTION void transpose_stage(V* r, std::index_sequence<L...>) {
  constexpr int W = sizeof...(L);
  KCNN_UNROLL_TILE
  for (int i = 0; i < W; ++i)
    if ((i & D) == 0) {
      const V lo = __builtin_shufflevector(r[i], r[i + D], transpose_lo(L, D, W)...);
      const V hi = __builtin_shufflevector(r[i], r[i + D], transpose_hi(L, D, W)...);
      r[i] = lo;
      r[i + D] = hi;
    }
}
template <int D, class V, class Seq>
KOKKOS_FORCEINLINE_FUNCTION void transpose_stages(V* r, Seq seq) {
  transpose_stage<D>(r, seq);
  if constexpr (D > 1) transpose_stages<D / 2>(r, seq);
}
#endif
}  // namespace detail
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void transpose_lanes(float_lanes<W> (&r)[W]) {
#ifdef KCNN_HAVE_SHUFFLEVECTOR
  if constexpr (W > 1 && !std::is_same_v<float_lanes<W>, detail::float_array<W>>) {
    detail::transpose_stages<W / 2>(r, std::make_index_sequence<W>{});
    return;
  }
#endif
  if constexpr (W > 1) {
    float t[W][W];
    for (int i = 0; i < W; ++i) store_lanes<W>(t[i], r[i]);
    for (int j = 0; j < W; ++j) {
      float c[W];
      for (int i = 0; i < W; ++i) c[i] = t[i][j];
      load_lanes<W>(r[j], c);
    }
  }
}

// Lanes of four input-channel phases (a grouped convolution's phase tile: lane l of a vector is
// output channel l / 4 of the vector's W / 4 and input phase l mod 4). broadcast_quad: the 4
// floats at p repeated over the W lanes, lane l = p[l mod 4] (one 16-byte broadcast load with
// AVX-512 at W = 16; element by element otherwise, unmeasured). sum_phases: out lane j W/4 + q =
// the sum of a_j's lanes 4 q .. 4 q + 3, the four phases of a_j's channel q (six two-source
// shuffles, three adds and one permute for W outputs, where the compiler has
// __builtin_shufflevector).
namespace detail {
constexpr int phase_pair(int p, int W) { return p % 4 < 2 ? p / 4 * 4 + p % 4 : W + p / 4 * 4 + p % 4 - 2; }
constexpr int phase_even(int p, int W) { return p % 4 < 2 ? p / 4 * 4 + 2 * (p % 4) : W + p / 4 * 4 + 2 * (p % 4 - 2); }
constexpr int phase_order(int o, int W) { return 4 * (o % (W / 4)) + o / (W / 4); }
#ifdef KCNN_HAVE_SHUFFLEVECTOR
template <class V, std::size_t... L>
KOKKOS_FORCEINLINE_FUNCTION void sum_phases_impl(V& out, const V& a0, const V& a1, const V& a2, const V& a3,
                                                 std::index_sequence<L...>) {
  constexpr int W = sizeof...(L);
  const V s01 = __builtin_shufflevector(a0, a1, phase_pair(L, W)...) +
                __builtin_shufflevector(a0, a1, (phase_pair(L, W) + 2)...);
  const V s23 = __builtin_shufflevector(a2, a3, phase_pair(L, W)...) +
                __builtin_shufflevector(a2, a3, (phase_pair(L, W) + 2)...);
  const V r = __builtin_shufflevector(s01, s23, phase_even(L, W)...) +
              __builtin_shufflevector(s01, s23, (phase_even(L, W) + 1)...);
  out = __builtin_shufflevector(r, r, phase_order(L, W)...);
}
#endif
}  // namespace detail
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void broadcast_quad(float_lanes<W>& out, const float* p) {
  static_assert(W % 4 == 0, "broadcast_quad: W must be a multiple of 4");
  // The instruction itself: GCC 12 widens a 4-lane __builtin_shufflevector through a stack slot
  // (a 16-byte store, then a 64-byte load that cannot be forwarded: a stall per broadcast).
#if defined(KCNN_VECTOR_EXTENSIONS) && defined(KCNN_X86_HOST) && defined(__AVX512F__)
  if constexpr (W == 16) {
    out = (float_lanes<16>)_mm512_broadcast_f32x4(_mm_loadu_ps(p));
    return;
  }
#endif
  if constexpr (std::is_same_v<float_lanes<W>, detail::float_array<W>>)
    for (int l = 0; l < W; ++l) out.v[l] = p[l % 4];
  else
    for (int l = 0; l < W; ++l) out[l] = p[l % 4];
}
template <int W>
KOKKOS_FORCEINLINE_FUNCTION void sum_phases(float_lanes<W>& out, const float_lanes<W>& a0, const float_lanes<W>& a1,
                                            const float_lanes<W>& a2, const float_lanes<W>& a3) {
  static_assert(W % 4 == 0, "sum_phases: W must be a multiple of 4");
#ifdef KCNN_HAVE_SHUFFLEVECTOR
  if constexpr (!std::is_same_v<float_lanes<W>, detail::float_array<W>>) {
    detail::sum_phases_impl(out, a0, a1, a2, a3, std::make_index_sequence<W>{});
    return;
  }
#endif
  const float_lanes<W>* a[4] = {&a0, &a1, &a2, &a3};
  float r[W];
  for (int o = 0; o < W; ++o) {
    const int j = o / (W / 4), q = o % (W / 4);
    r[o] = 0;
    for (int ph = 0; ph < 4; ++ph) r[o] += lane_get<W>(*a[j], 4 * q + ph);
  }
  load_lanes<W>(out, r);
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
    if constexpr (host_backend<Exec>) {
      // One thread walks the team's rows in order: the coordinates advance with a carry (two
      // 64-bit divisions per row cost as much as a short row's work).
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
    } else {
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
  }
};
}  // namespace detail

// Launches body.row(member, x) for every row of Layout's storage of a tensor of dims d, x the
// logical coordinates of the row's first element. The rows are the three slower physical axes;
// with Skip (an axis id) that axis is left out of the rows (its coordinate is 0): a kernel that
// walks it inside each row (a reduction or a sliding window across channels) uses this. The
// runs have run_length elements. GPU: vector length the power of two covering the run (at most
// 32, one warp), team size 256 / vector length (explicit, kcnn/map.hpp), one row per team
// thread. Host: one thread per team, a block of rows of about 4096 elements per team (enough
// work per team for the OpenMP scheduler, enough teams to balance).
template <class Layout, int Skip = -1, class Exec, class Body>
void for_each_row(const char* label, const Exec& exec, const dims4& d, int run_length, const Body& body) {
  static_assert(!Layout::runtime_strided, "kcnn: the vector mapping needs a compile-time layout");
  const detail::row_grid grid = detail::storage_rows<Layout, Skip>(d);
  if (grid.size() == 0 || run_length <= 0) return;
  using functor = detail::rows_functor<Exec, Layout, Body>;
  int vector = 1, team = 1, rows_per_team = 1;
  if constexpr (host_backend<Exec>) {
    rows_per_team = std::max(1, 4096 / run_length);
  } else {
    while (vector < 32 && vector < run_length) vector *= 2;
    team = 256 / vector;
    rows_per_team = team;
  }
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

// Walks [begin, end) of a run with the vector lanes: f(i, width) for blocks of W consecutive
// elements starting at i (width is std::integral_constant<int, W>), then the elements left over:
// with Overlap, one more full block ending at `end` (it recomputes up to W - 1 elements, so f
// must write only what it does not read: an output distinct from the inputs), otherwise one by
// one, f(i, width 1). W is lane_width<Exec>.
template <int W, bool Overlap = false, class Member, class F>
KOKKOS_INLINE_FUNCTION void for_lanes(const Member& m, int begin, int end, const F& f) {
  if (end <= begin) return;
  if constexpr (W == 1) {
    vector_lanes(m, begin, end,
                         [&](const int i) { f(i, std::integral_constant<int, 1>{}); });
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

// Op (max_op or sum_op) of f(i) over [0, len) across the lanes. Host: W partial results in a
// vector register, combined at the end (each partial is updated in order, so the loop
// vectorises without -ffast-math). GPU: Kokkos' vector reduction (warp shuffles).
template <int W, class Op, class Member, class F>
KOKKOS_INLINE_FUNCTION float lanes_reduce(const Member& m, int len, const F& f) {
  const Op op{};
  if constexpr (W == 1) {
    float result = Op::identity;
    vector_lanes_reduce(m, len, [&](const int i, float& acc) { acc = op(acc, f(i)); }, typename Op::reducer(result));
    return result;
  } else {
    (void)m;
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
}

namespace detail {
template <class Exec, class Layout, class F>
struct elementwise_rows_body {
  F f;
  dims4 d;
  KOKKOS_INLINE_FUNCTION void row(const typename Kokkos::TeamPolicy<Exec>::member_type& m, const coords4& x) const {
    constexpr axis run = run_axis<Layout>;
    for_lanes<lane_width<Exec>>(m, 0, extent<run>(d), [&](const int i, auto width) {
      const coords4 y = x.with<run>(i);
      for (int l = 0; l < decltype(width)::value; ++l) f(y, l);
    });
  }
};
}  // namespace detail

// Calls f(x, l) for every element of a tensor of dims d, in Layout's storage order: rows of
// the three slower physical axes, lanes along the fastest (coalesced on a GPU, vectorised on a
// host). The element is x + l along the run axis; f reads and writes it through lane_ptr. f must
// be safe to call in any order.
template <class Layout, class Exec, class F>
void for_each_element_by_rows(const char* label, const Exec& exec, const dims4& d, const F& f) {
  for_each_row<Layout>(label, exec, d, extent<run_axis<Layout>>(d), detail::elementwise_rows_body<Exec, Layout, F>{f, d});
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

// Elements of a plane per call of a span body: 512 on a host (a block of 2 KB per plane visit,
// enough for the hardware prefetcher; the per-element state, a few 2 KB arrays, stays in L1),
// 1 on a GPU (one element per lane).
template <class Exec>
inline constexpr int span_width = host_backend<Exec> ? 512 : 1;

namespace detail {
template <class Exec, class Body>
struct spans_functor {
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  Body body;
  plane_geometry g;
  int chunks;       // per outer block
  int chunk_size;   // elements of a plane per team
  int lanes;        // GPU: vector length (elements per team thread)
  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const int o = m.league_rank() / chunks;
    const std::size_t begin = std::size_t(m.league_rank() % chunks) * std::size_t(chunk_size);
    const std::size_t left = g.length - begin;
    const int count = left < std::size_t(chunk_size) ? int(left) : chunk_size;
    if constexpr (host_backend<Exec>) {
      body.span(o, begin, count);
    } else {
      team_rows(m, (count + lanes - 1) / lanes, [&](const int t) {
        const int end = (t + 1) * lanes < count ? (t + 1) * lanes : count;
        vector_lanes(m, t * lanes, end, [&](const int i) {
          body.span(o, begin + std::size_t(i), std::integral_constant<int, 1>{});
        });
      });
    }
  }
};
}  // namespace detail

// Calls body.span(o, i, count) for every block of elements [i, i + count) of the planes of outer
// block o, count <= span_width<Exec> (an int on a host; std::integral_constant<int, 1> on a GPU).
// The body walks the planes inside: for each plane, its count consecutive elements (a loop that
// vectorises on a host; on a GPU adjacent lanes take adjacent elements: coalesced). GPU: teams
// of 8 threads x 32 lanes, 256 elements per team. Host: one thread per team, span_width elements.
template <class Exec, class Body>
void for_each_span(const char* label, const Exec& exec, const plane_geometry& g, const Body& body) {
  if (g.outer <= 0 || g.planes <= 0 || g.length == 0) return;
  using functor = detail::spans_functor<Exec, Body>;
  int team = 1, vector = 1, chunk = span_width<Exec>;
  if constexpr (!host_backend<Exec>) {
    vector = 32;
    team = 8;
    chunk = team * vector;
  }
  const std::size_t chunks = (g.length + std::size_t(chunk) - 1) / std::size_t(chunk);
  const std::size_t league = chunks * std::size_t(g.outer);
  if (league > std::size_t(2147483647))
    throw std::invalid_argument(std::string(label) + ": tensor too large for one launch");
  launch_teams(label, exec, int(league), team, vector, 0, functor{body, g, int(chunks), chunk, vector});
}

}  // namespace kcnn
