// The BLAS recorded in a run's context is the one that actually defines sgemm_ in the process,
// found independently here; its thread count follows set_blas_threads.
#include "blas_runtime.hpp"
#include "context.hpp"
#include "results.hpp"

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
  const kcnn::bench::blas_info before = kcnn::bench::detect_blas();
  if (before.library != "OpenBLAS" && before.library != "BLIS" && before.library != "reference")
    GTEST_SKIP() << "no thread control known for " << before.library;
  kcnn::bench::set_blas_threads(1);
  const kcnn::bench::blas_info one = kcnn::bench::detect_blas();
  EXPECT_EQ(one.threads, 1);
  if (before.library == "OpenBLAS" && before.threads > 1) {
    kcnn::bench::set_blas_threads(before.threads);  // restore for the tests that follow
    EXPECT_EQ(kcnn::bench::detect_blas().threads, before.threads);
  }
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
