#pragma once
// kcnn's host tuning: SIMD types, loop pragmas and prefetch. Included by kcnn/lanes.hpp between
// its portable float_lanes template and the lane operations, when the build has the host tunings
// (KCNN_HOST_TUNING, kcnn/tuning.hpp); nothing here runs on a GPU or on a portable path.
//  * float_lanes<8, 16, 32> as GCC/Clang vector-extension types (the portable form is an array):
//    one zmm register for 16 floats whatever the compiler's preferred vector width (an array
//    written as fixed-length loops was split into ymm halves by GCC 12's znver tuning and a
//    register tile spilled);
//  * the loop pragmas that keep lane loops vectorised and register tiles unrolled;
//  * prefetch_host.
#include <Kokkos_Core.hpp>

#include <cstddef>

#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && !defined(__HIPCC__) && \
    !defined(__SYCL_DEVICE_ONLY__) && defined(__SSE2__)
#define KCNN_X86_HOST 1
#include <immintrin.h>  // broadcast_quad's 16-byte broadcast, stream_lanes' non-temporal stores
#endif

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
// pragmas). Not under AddressSanitizer: a sanitized build checks the accesses, not their speed,
// and a tile unrolled in full multiplies its instrumented code (and its compile time) many times.
#if defined(__SANITIZE_ADDRESS__)
#define KCNN_DETAIL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KCNN_DETAIL_ASAN 1
#endif
#endif
#if defined(KCNN_DETAIL_ASAN)
#define KCNN_UNROLL_TILE
#elif defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && !defined(__INTEL_LLVM_COMPILER)
#define KCNN_UNROLL_TILE _Pragma("GCC unroll 64")
#elif defined(__clang__) && !defined(__CUDACC__)
#define KCNN_UNROLL_TILE _Pragma("clang loop unroll(full)")
#else
#define KCNN_UNROLL_TILE
#endif
#undef KCNN_DETAIL_ASAN

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

// kcnn::no_hints' host form: prefetch_host.
struct prefetch_hints {
  KOKKOS_FORCEINLINE_FUNCTION static void will_read(const void* p, std::size_t bytes) { prefetch_host(p, bytes); }
  KOKKOS_FORCEINLINE_FUNCTION static void will_write(const void* p, std::size_t bytes) { prefetch_host<true>(p, bytes); }
};

namespace detail {
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
}  // namespace kcnn
