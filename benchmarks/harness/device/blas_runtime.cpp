#include "device/blas_runtime.hpp"

#if __has_include(<KokkosKernels_config.h>)
#include <KokkosKernels_config.h>
#endif

#include <dlfcn.h>

#include <cctype>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace kcnn::bench {

namespace {

std::string lower(std::string s) {
  for (auto& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// The shared object that defines sgemm_ (the one the dynamic linker bound), opened again without
// loading anything, so that its own symbols are looked up there and not in whatever else is loaded.
struct loaded_blas {
  void* handle = nullptr;
  std::string path;
  loaded_blas() {
    void* sgemm = dlsym(RTLD_DEFAULT, "sgemm_");
    Dl_info info{};
    if (!sgemm || !dladdr(sgemm, &info) || !info.dli_fname) return;
    char resolved[PATH_MAX];
    path = realpath(info.dli_fname, resolved) ? resolved : info.dli_fname;
    handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  }
  ~loaded_blas() {
    if (handle) dlclose(handle);
  }
  loaded_blas(const loaded_blas&) = delete;
  loaded_blas& operator=(const loaded_blas&) = delete;
  template <class F>
  F* find(const char* name) const {
    return handle ? reinterpret_cast<F*>(dlsym(handle, name)) : nullptr;
  }
};

bool host_has_avx512() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__)
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}

}  // namespace

std::string openblas_kernel_warning(const std::string& core, const std::string& config, bool cpu_has_avx512) {
  const std::string c = lower(core);
  const bool avx512_kernels = c.find("skylakex") != std::string::npos || c.find("cooperlake") != std::string::npos ||
                              c.find("sapphire") != std::string::npos || c.find("zen4") != std::string::npos;
  if (avx512_kernels || !cpu_has_avx512) return {};
  std::string w = "OpenBLAS chose its " + (core.empty() ? std::string("default") : core) +
                  " kernels, without AVX-512, on a CPU with AVX-512";
  // OPENBLAS_CORETYPE only exists in a build with every kernel set (DYNAMIC_ARCH).
  if (config.find("DYNAMIC_ARCH") != std::string::npos) w += "; run with OPENBLAS_CORETYPE=SkylakeX for its AVX-512 gemm";
  return w;
}

void set_blas_threads(int n) {
  if (n < 1) n = 1;
  const loaded_blas b;
  if (auto* f = b.find<void(int)>("openblas_set_num_threads")) f(n);
  if (auto* f = b.find<void(std::int64_t)>("bli_thread_set_num_threads")) f(n);  // dim_t: 64-bit
  // A BLIS that exports the BLAS interface only reads this when it initialises (its first call).
  if (b.path.find("blis") != std::string::npos) setenv("BLIS_NUM_THREADS", std::to_string(n).c_str(), 1);
  if (auto* f = b.find<void(int)>("MKL_Set_Num_Threads")) f(n);
}

blas_info detect_blas() {
  blas_info info;
#ifdef KOKKOSKERNELS_ENABLE_TPL_BLAS
  info.kokkos_kernels_tpl_blas = true;
#endif
#ifdef KOKKOSKERNELS_ENABLE_TPL_CUBLAS
  info.kokkos_kernels_tpl_cublas = true;
#endif
  const loaded_blas b;
  info.path = b.path;
  if (b.path.empty()) {
    info.library = "none";  // not found by dlsym: no BLAS loaded, or one linked statically
    return info;
  }
  const auto path_has = [&](const char* part) { return b.path.find(part) != std::string::npos; };
  if (auto* config = b.find<char*()>("openblas_get_config")) {
    info.library = "OpenBLAS";
    info.version = config();
    if (auto* threads = b.find<int()>("openblas_get_num_threads")) info.threads = threads();
    if (auto* core = b.find<char*()>("openblas_get_corename")) info.core = core();
    // OpenBLAS picks its kernels once, when it loads, from the CPU model it knows: Debian 12's
    // 0.3.21 predates AMD Zen 4 and gives it the AVX2 (Haswell/Zen) kernels, about half the
    // AVX-512 gemm rate (measured: 99 vs 180 GFLOP/s at 1024^3, 1 thread).
    info.warning = openblas_kernel_warning(info.core, info.version, host_has_avx512());
  } else if (auto* version = b.find<char*()>("bli_info_get_version_str")) {
    info.library = "BLIS";
    info.version = version();
    if (auto* threads = b.find<std::int64_t()>("bli_thread_get_num_threads")) info.threads = int(threads());
  } else if (path_has("blis")) {
    // Debian's BLIS libblas.so.3 exports the BLAS interface only; its threads come from
    // BLIS_NUM_THREADS, read when BLIS initialises (set_blas_threads sets it before any gemm).
    info.library = "BLIS";
    if (const char* env = std::getenv("BLIS_NUM_THREADS")) info.threads = std::atoi(env);
  } else if (b.find<void(int)>("MKL_Set_Num_Threads")) {
    info.library = "MKL";
    if (auto* threads = b.find<int()>("MKL_Get_Max_Threads")) info.threads = threads();
  } else if (path_has("/blas/libblas")) {
    // No vendor entry points, Debian's netlib location: the reference BLAS, single-threaded.
    info.library = "reference";
    info.threads = 1;
  } else {
    info.library = "unknown";
  }
  return info;
}

std::string describe(const blas_info& b) {
  if (!b.kokkos_kernels_tpl_blas) return "none: Kokkos Kernels built without its BLAS TPL (its own gemm)";
  if (b.library == "none") return "none found (sgemm_ not in the dynamic symbol table: none loaded, or linked statically)";
  // OpenBLAS's configuration string starts with its name.
  const bool named = b.version.rfind(b.library, 0) == 0;
  std::string s = named ? b.version : b.library + (b.version.empty() ? "" : " " + b.version);
  s += " (" + b.path + ")";
  if (b.threads > 0) s += ", " + std::to_string(b.threads) + (b.threads == 1 ? " thread" : " threads");
  return s;
}

}  // namespace kcnn::bench
