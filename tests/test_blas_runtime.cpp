// The BLAS recorded in a run's context is the one that actually defines sgemm_ in the process,
// found independently here; its thread count follows set_blas_threads.
#include "device/blas_runtime.hpp"
#include "device/context.hpp"
#include "results/results.hpp"

#if __has_include(<KokkosKernels_config.h>)
#include <KokkosKernels_config.h>
#endif

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <string>

namespace {

std::string sgemm_owner() {
  void* f = dlsym(RTLD_DEFAULT, "sgemm_");
  Dl_info info{};
  if (!f || !dladdr(f, &info) || !info.dli_fname) return "";
  char buf[PATH_MAX];
  return realpath(info.dli_fname, buf) ? buf : info.dli_fname;
}

}  // namespace

TEST(BlasRuntime, NamesTheLibraryThatDefinesSgemm) {
  const kcnn::bench::blas_info b = kcnn::bench::detect_blas();
  const std::string owner = sgemm_owner();
  EXPECT_EQ(b.path, owner);
  if (owner.empty()) {
    EXPECT_EQ(b.library, "none");
  } else {
    EXPECT_NE(b.library, "none");
    EXPECT_NE(kcnn::bench::describe(b).find(owner), std::string::npos) << kcnn::bench::describe(b);
  }
#ifdef KOKKOSKERNELS_ENABLE_TPL_BLAS
  EXPECT_TRUE(b.kokkos_kernels_tpl_blas);
  EXPECT_FALSE(owner.empty()) << "Kokkos Kernels uses its BLAS TPL, yet no sgemm_ is loaded";
#else
  EXPECT_FALSE(b.kokkos_kernels_tpl_blas);
#endif
}

TEST(BlasRuntime, ThreadCountFollowsTheRequest) {
  // Only a BLAS that reports its own thread count can show the request took effect.
  const kcnn::bench::blas_info before = kcnn::bench::detect_blas();
  if (before.library != "OpenBLAS") GTEST_SKIP() << "no thread count query for " << before.library;
  kcnn::bench::set_blas_threads(1);
  EXPECT_EQ(kcnn::bench::detect_blas().threads, 1);
  kcnn::bench::set_blas_threads(2);
  EXPECT_EQ(kcnn::bench::detect_blas().threads, 2);
  kcnn::bench::set_blas_threads(before.threads);  // restore for the tests that follow
  EXPECT_EQ(kcnn::bench::detect_blas().threads, before.threads);
}

TEST(BlasRuntime, WarnsOnlyWhenOpenBlasLeavesAvx512Unused) {
  using kcnn::bench::openblas_kernel_warning;
  const std::string dynamic = "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64";
  const std::string w = openblas_kernel_warning("Haswell", dynamic, true);
  EXPECT_NE(w.find("Haswell"), std::string::npos) << w;
  EXPECT_NE(w.find("OPENBLAS_CORETYPE=SkylakeX"), std::string::npos) << w;
  EXPECT_EQ(openblas_kernel_warning("SkylakeX", dynamic, true), "");
  EXPECT_EQ(openblas_kernel_warning("Cooperlake", dynamic, true), "");
  EXPECT_EQ(openblas_kernel_warning("Haswell", dynamic, false), "");  // no AVX-512 to leave unused
  const std::string fixed = openblas_kernel_warning("Haswell", "OpenBLAS 0.3.21 Haswell", true);
  EXPECT_FALSE(fixed.empty());
  EXPECT_EQ(fixed.find("OPENBLAS_CORETYPE"), std::string::npos) << "no DYNAMIC_ARCH: the variable does nothing";
}

TEST(BlasRuntime, RecordedInTheRunContext) {
  char arg0[] = "kcnn-bench";
  char* argv[] = {arg0, nullptr};
  const kcnn::bench::run_context c = kcnn::bench::make_context(1, argv, "smoke");
  const std::string j = kcnn::bench::context_json(c).dump();
  EXPECT_NE(j.find("\"blas\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"library\": \"" + c.blas.library + "\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"kokkos_kernels_tpl_blas\""), std::string::npos) << j;
}
