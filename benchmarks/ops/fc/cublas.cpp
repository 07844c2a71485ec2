// fc / {nchw,nhwc} / global / library / cublas (tuning fp32 or tf32): the vendor peer on CUDA
// builds, one cublasSgemm (out = in x W^T over the flattened c h w, which nchw and nhwc flatten
// the same way for input and weights) and a Kokkos kernel adding the bias, both timed. fp32:
// CUBLAS_DEFAULT_MATH (no TF32); tf32: CUBLAS_TF32_TENSOR_OP_MATH, with a TF32-sized tolerance.
// Needs cuBLAS at configure time.
#include "../conv2d/conv_descriptor.hpp"

#if defined(KCNN_HAVE_CUBLAS)
#include <cublas_v2.h>

#include <stdexcept>

namespace {
using namespace kcnn;

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string("cuBLAS ") + what + " failed");
}

const bench::variant_kind cublas_kind{"cublas", "one cublasSgemm plus a Kokkos bias kernel (CUDA builds)", bench::origin::peer,
                                      false, "cuBLAS"};

template <bool TF32>
struct cublas_fc : bench::conv_descriptor<cublas_fc<TF32>, true> {
  static double tolerance(const conv2d_params&) { return TF32 ? 5e-3 : bench::conv2d_tolerance; }
  struct handle {
    cublasHandle_t h = nullptr;
    ~handle() {
      if (h) cublasDestroy(h);
    }
  };
  std::shared_ptr<handle> d;

  template <class Layout>
  static std::string unsupported(const conv2d_params&) {
    if (std::is_same_v<Layout, layout::nchw> || std::is_same_v<Layout, layout::nhwc>) return {};
    return "chwn puts the batch innermost: not one GEMM on the stored operands";
  }
  template <class Exec, class Ops, class Out>
  void prepare(const Exec& e, const conv2d_params&, const Ops&, const Out&) {
    d = std::make_shared<handle>();
    check(cublasCreate(&d->h), "create");
    check(cublasSetStream(d->h, e.cuda_stream()), "stream");
    check(cublasSetMathMode(d->h, TF32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH), "math mode");
  }
  template <class Exec, class Ops, class Out>
  void run(const Exec& e, const Ops& o, const Out& out, const conv2d_params& p) const {
    const auto& in = o.ins[0];
    const auto& wt = o.weights[0];
    const auto& b = o.vecs[0];
    const int inner = p.c * p.h * p.w;
    const float one = 1.f, zero = 0.f;
    // Column-major view: out^T (k x n) = W (stored k x inner row-major, i.e. inner x k) ^T x in^T.
    check(cublasSgemm(d->h, CUBLAS_OP_T, CUBLAS_OP_N, p.k, p.n, inner, &one, wt.view().data(), inner,
                      in.view().data(), inner, &zero, out.view().data(), p.k), "sgemm");
    float* dst = out.view().data();
    const float* bias = b.data();
    const int k = p.k;
    Kokkos::parallel_for("kcnn::fc_cublas_bias", Kokkos::RangePolicy<Exec>(e, 0, std::size_t(p.n) * p.k),
                         KOKKOS_LAMBDA(const std::size_t i) { dst[i] += bias[i % k]; });
  }
};

const bench::registrar reg([](bench::registry& r) {
  using namespace kcnn::layout;
  bench::register_variant<cublas_fc<false>, nchw, nhwc>(
      r, {"fc", bench::space_axis::global, bench::pattern_axis::library, &cublas_kind, {"fp32", "CUBLAS_DEFAULT_MATH: no TF32"}});
  bench::register_variant<cublas_fc<true>, nchw, nhwc>(
      r, {"fc", bench::space_axis::global, bench::pattern_axis::library, &cublas_kind,
          {"tf32", "CUBLAS_TF32_TENSOR_OP_MATH, validated with a TF32-sized tolerance"}});
});
}  // namespace
#elif defined(KOKKOS_ENABLE_CUDA)
namespace {
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  r.add_unavailable("fc/*/global/library/cublas", "cuBLAS was not found at configure time");
});
}  // namespace
#endif
