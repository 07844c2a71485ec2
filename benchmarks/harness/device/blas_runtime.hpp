#pragma once
// The host BLAS that KokkosBlas::gemm reaches, found at run time rather than assumed: Kokkos
// Kernels built with its BLAS TPL calls sgemm_ from whichever libblas.so.3 the dynamic linker
// resolved (on Debian: the alternatives link, netlib's reference BLAS unless OpenBLAS or BLIS is
// installed). The harness sets that library's thread count to the Kokkos backend's concurrency, so
// that a gemm-based variant and its peers run at equal threads (1 on Serial).
#include <string>

namespace kcnn::bench {

struct blas_info {
  bool kokkos_kernels_tpl_blas = false;    // KOKKOSKERNELS_ENABLE_TPL_BLAS: host gemm goes to sgemm_
  bool kokkos_kernels_tpl_cublas = false;  // KOKKOSKERNELS_ENABLE_TPL_CUBLAS: device gemm goes to cuBLAS
  std::string library;  // "OpenBLAS", "BLIS", "MKL", "reference" (netlib), "unknown" or "none" (sgemm_ not loaded)
  std::string path;     // the shared object that defines sgemm_, symlinks resolved
  std::string version;  // the library's own version or configuration string, where it has one
  int threads = 0;      // the library's thread count after set_blas_threads (0: unknown / not settable)
  std::string core;     // OpenBLAS: the kernel set it chose for this CPU (e.g. Haswell, SkylakeX)
  std::string warning;  // why this BLAS is likely slower here than it could be (empty: no reason known)
};

// Sets the thread count of the loaded BLAS (OpenBLAS, BLIS; MKL through MKL_Set_Num_Threads) to n.
// Does nothing for a BLAS without a thread control (netlib's, single-threaded).
void set_blas_threads(int n);

// What sgemm_ resolves to in this process, now.
blas_info detect_blas();

// Why OpenBLAS's kernel set (its core name, e.g. "Haswell") is slower here than it could be: empty
// unless the CPU has AVX-512 and the kernels do not; config: openblas_get_config()'s string.
std::string openblas_kernel_warning(const std::string& core, const std::string& config, bool cpu_has_avx512);

// One line: "OpenBLAS 0.3.21 ... (/usr/lib/.../libopenblasp-r0.3.21.so), 1 thread", or why none.
std::string describe(const blas_info& b);

}  // namespace kcnn::bench
