#pragma once
// kcnn's host tuning, part 2: non-temporal stores. The host paths of activation_flat, add_flat and
// pool_vector (nhwc, chwn) store an output of at least a threshold of bytes with stream_lanes,
// which skips the write-allocate read of every line an ordinary store makes; the threshold is a
// field of those variants (host_store_options), set by the caller, never read from the
// environment.
#include <kcnn/compat.hpp>
#include <kcnn/lanes.hpp>
#include <kcnn/map.hpp>
#include <kcnn/tuning.hpp>

#include <Kokkos_Core.hpp>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>  // sysconf: the last-level cache, default_streaming_store_threshold
#endif

#include <cstddef>
#include <cstdint>

namespace kcnn {
namespace host_tuning {

// Whether this build's host code has non-temporal stores (stream_lanes): x86 with GCC or Clang
// vector extensions (not nvcc's or hipcc's host pass). Without them nothing streams.
inline constexpr bool streaming_available =
#if defined(KCNN_X86_HOST)
    true;
#else
    false;
#endif

// The output size in bytes from which a host kernel stores with stream_lanes: the variant's
// host_store_options (kcnn/tuning.hpp); its default, half the last-level cache sysconf reports
// (the output shares the cache with the input it is computed from), 16 MiB where it reports none.
// The fence after a streamed launch (stream_fence_threads) assumes what Kokkos' Serial, OpenMP
// and Threads backends do: a range of concurrency() items gives each thread one.
inline std::size_t half_last_level_cache_bytes() {
  static const std::size_t bytes = [] {
    long llc = 0;
#if defined(_SC_LEVEL3_CACHE_SIZE)
    llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
#if defined(_SC_LEVEL2_CACHE_SIZE)
    if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    return llc > 0 ? std::size_t(llc) / 2 : std::size_t(16) << 20;
  }();
  return bytes;
}
inline std::size_t streaming_store_bytes(const host_store_options& o) {
  return o.streaming_store_bytes == host_store_options::half_last_level_cache ? half_last_level_cache_bytes()
                                                                              : o.streaming_store_bytes;
}
// Whether a host kernel writing output_bytes streams its stores.
inline bool streams_output(const host_store_options& o, const std::size_t output_bytes) {
  return streaming_available && output_bytes >= streaming_store_bytes(o);
}

// store_lanes without the write-allocate: on an x86 host, non-temporal stores of a 16-float
// vector at a 16-byte aligned address (one 64-byte store with AVX-512, four 16-byte ones
// otherwise: the write-combining buffer joins them into one line); elsewhere (a GPU, another
// CPU, an unaligned address) an ordinary store. An ordinary store first reads the line it
// writes, so an output that will not be read from the cache again (larger than the cache:
// streaming_store_bytes) moves half as much again as it needs (docs/performance.md measures
// what that costs: the copy and copy_stream ceilings). Non-temporal
// stores are weakly ordered: a launch that streamed is followed by stream_fence_threads (an
// sfence on every host thread). Not one per work item: an sfence waits for the thread's stores
// in flight, and one per chunk slowed the streamed copy severalfold.
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
inline void stream_chunk(float* out, const std::size_t count, const Compute& compute) {
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
}  // namespace host_tuning
}  // namespace kcnn
