#include "measure/profiler_range.hpp"

#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_profiler_api.h>
#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>  // header-only (CUDA >= 10): nothing to link
#define KCNN_HAVE_NVTX 1
#endif
#endif

namespace kcnn::bench {

bool profiler_capture_available() {
#if defined(KOKKOS_ENABLE_CUDA)
  return true;
#else
  return false;
#endif
}

profiler_range::profiler_range(const std::string& name) {
#if defined(KCNN_HAVE_NVTX)
  nvtxRangePushA(name.c_str());
#else
  (void)name;
#endif
#if defined(KOKKOS_ENABLE_CUDA)
  cudaProfilerStart();
#endif
}

profiler_range::~profiler_range() {
#if defined(KOKKOS_ENABLE_CUDA)
  cudaProfilerStop();
#endif
#if defined(KCNN_HAVE_NVTX)
  nvtxRangePop();
#endif
}

}  // namespace kcnn::bench
