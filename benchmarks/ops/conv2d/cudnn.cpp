// conv2d / {nchw,nhwc} / global / library / cudnn (tuning fp32, fp32_any or tf32): the vendor peer
// on CUDA builds, cuDNN's convolution forward with the fastest algorithm of its family as
// cudnnFindConvolutionForwardAlgorithmEx measures them on the case's own buffers (once, untimed,
// in prepare; workspace allocated untimed). The bias is fused (cudnnConvolutionBiasActivationForward
// with the identity activation) when the chosen algorithm is IMPLICIT_PRECOMP_GEMM, the only one
// cuDNN allows with the identity activation; otherwise it is added by cudnnAddTensor (both timed,
// as a framework runs them). The row's note says which.
// fp32 and tf32 leave the Winograd and FFT algorithms out: their fp32 error depends on the shape
// and can exceed conv2d's 1e-4 tolerance. fp32_any is cuDNN's fastest fp32 convolution whatever
// the algorithm, Winograd and FFT included, in FMA math, validated with a tolerance of its own
// (winograd_fft_tolerance): the figure a framework's autotuner would reach. The math type cuDNN
// reports for the chosen algorithm is set on the descriptor, and the row's note names algorithm
// and math. fp32 and fp32_any: CUDNN_FMA_MATH only (no tensor cores); tf32: tensor-core math
// allowed, validated with a TF32-sized tolerance. Needs cuDNN (its development package: cudnn.h) at configure.
#include "conv_descriptor.hpp"

#if defined(KCNN_HAVE_CUDNN)
#include <cudnn.h>

#include <algorithm>
#include <stdexcept>

namespace {
using namespace kcnn;

void check(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": " + cudnnGetErrorString(s));
}

const bench::variant_kind cudnn_kind{"cudnn", "cuDNN convolution forward, the fastest algorithm by "
                                                "cudnnFindConvolutionForwardAlgorithmEx (direct or GEMM-based; fp32_any: "
                                                "any, Winograd and FFT included), the bias fused where cuDNN allows it "
                                                "(CUDA builds)", bench::origin::peer, false, "cuDNN"};

// Winograd's and FFT's fp32 error: the transforms' rounding grows with the tile and the sum's
// length, an order of magnitude over a direct sum's on the layers kcnn runs; what a row of such an
// algorithm is held to.
constexpr double winograd_fft_tolerance = 1e-3;

// The algorithms whose result is a plain (reordered) sum of the products, held to the fp32
// tolerance like every kcnn variant.
bool exact_family(cudnnConvolutionFwdAlgo_t a) {
  return a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
}
const char* algo_name(cudnnConvolutionFwdAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "unknown";
  }
}
const char* math_name(cudnnMathType_t m) {
  switch (m) {
    case CUDNN_DEFAULT_MATH: return "DEFAULT_MATH";
    case CUDNN_TENSOR_OP_MATH: return "TENSOR_OP_MATH";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "TENSOR_OP_MATH_ALLOW_CONVERSION";
    case CUDNN_FMA_MATH: return "FMA_MATH";
    default: return "unknown";
  }
}

// AnyAlgo: every algorithm cuDNN offers (fp32_any); else the direct and GEMM-based ones.
template <bool TF32, bool AnyAlgo = false>
struct cudnn_conv : bench::conv_descriptor<cudnn_conv<TF32, AnyAlgo>, false> {
  static_assert(!(TF32 && AnyAlgo), "fp32_any is FMA math");
  // TF32 keeps 10 mantissa bits: errors of ~1e-3 relative are its nature, not a bug.
  static double tolerance(const conv2d_params&) {
    return TF32 ? 5e-3 : AnyAlgo ? winograd_fft_tolerance : bench::conv2d_tolerance;
  }
  struct handles {
    cudnnHandle_t h = nullptr;
    cudnnTensorDescriptor_t x = nullptr, y = nullptr, b = nullptr;
    cudnnFilterDescriptor_t f = nullptr;
    cudnnConvolutionDescriptor_t c = nullptr;
    cudnnActivationDescriptor_t identity = nullptr;
    ~handles() {
      if (identity) cudnnDestroyActivationDescriptor(identity);
      if (c) cudnnDestroyConvolutionDescriptor(c);
      if (f) cudnnDestroyFilterDescriptor(f);
      if (b) cudnnDestroyTensorDescriptor(b);
      if (y) cudnnDestroyTensorDescriptor(y);
      if (x) cudnnDestroyTensorDescriptor(x);
      if (h) cudnnDestroy(h);
    }
  };
  std::shared_ptr<handles> d;
  cudnnConvolutionFwdAlgo_t algo{};
  cudnnMathType_t math{};
  bool fused_bias = false;
  Kokkos::View<char*> workspace;

  std::string note() const {
    if (!d) return {};
    return "cuDNN " + std::to_string(cudnnGetVersion()) + ", algorithm " + algo_name(algo) + " (fastest by " +
           "cudnnFindConvolutionForwardAlgorithmEx), " + math_name(math) + ", bias " +
           (fused_bias ? "fused (cudnnConvolutionBiasActivationForward, identity)" : "by cudnnAddTensor") +
           ", workspace " + std::to_string(workspace.span()) + " B";
  }

  template <class Layout>
  static std::string unsupported(const conv2d_params& p) {
    if (p.pad_bottom() != p.pad_top() || p.pad_right() != p.pad_left())
      return "cuDNN pads both ends of an axis alike (pad_h_end = pad_h, pad_w_end = pad_w)";
    if (std::is_same_v<Layout, layout::nchw> || std::is_same_v<Layout, layout::nhwc>) return {};
    return "cuDNN's activation formats are nchw and nhwc";
  }
  double workspace_bytes(const conv2d_params&) const { return double(workspace.span()); }

  template <class Exec, class Ops, class Out>
  void prepare(const Exec& e, const conv2d_params& p, const Ops& o, const Out& out) {
    using In = typename decltype(o.ins)::value_type;
    const cudnnTensorFormat_t fmt =
        std::is_same_v<typename In::layout_tag, layout::nhwc> ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    d = std::make_shared<handles>();
    check(cudnnCreate(&d->h), "cudnnCreate");
    check(cudnnSetStream(d->h, e.cuda_stream()), "cudnnSetStream");
    check(cudnnCreateTensorDescriptor(&d->x), "x");
    check(cudnnCreateTensorDescriptor(&d->y), "y");
    check(cudnnCreateTensorDescriptor(&d->b), "b");
    check(cudnnCreateFilterDescriptor(&d->f), "f");
    check(cudnnCreateConvolutionDescriptor(&d->c), "c");
    check(cudnnSetTensor4dDescriptor(d->x, fmt, CUDNN_DATA_FLOAT, p.n, p.c, p.h, p.w), "x");
    check(cudnnSetTensor4dDescriptor(d->y, fmt, CUDNN_DATA_FLOAT, p.n, p.k, p.p(), p.q()), "y");
    check(cudnnSetTensor4dDescriptor(d->b, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, p.k, 1, 1), "b");
    check(cudnnSetFilter4dDescriptor(d->f, CUDNN_DATA_FLOAT, fmt, p.k, p.c_per_group(), p.r, p.s), "f");
    check(cudnnSetConvolution2dDescriptor(d->c, p.pad_top(), p.pad_left(), p.row_stride(), p.col_stride(), p.dilation_h,
                                          p.dilation_w, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT), "conv");
    check(cudnnSetConvolutionGroupCount(d->c, p.groups), "groups");
    check(cudnnSetConvolutionMathType(d->c, TF32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH), "math");
    // The search's workspace: the most any admissible algorithm asks for (at most 1 GiB; one that
    // needs more is reported by the search as failed and left out).
    std::size_t search_bytes = 0;
    for (int i = 0; i < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++i) {
      const auto a = cudnnConvolutionFwdAlgo_t(i);
      if (!AnyAlgo && !exact_family(a)) continue;
      std::size_t bytes = 0;
      if (cudnnGetConvolutionForwardWorkspaceSize(d->h, d->x, d->f, d->c, d->y, a, &bytes) == CUDNN_STATUS_SUCCESS)
        search_bytes = std::max(search_bytes, std::min(bytes, std::size_t(1) << 30));
    }
    const Kokkos::View<char*> search("cudnn.search_workspace", search_bytes);
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int found = 0;
    // Runs every algorithm on the case's buffers (the output is overwritten, before validation).
    check(cudnnFindConvolutionForwardAlgorithmEx(d->h, d->x, o.ins[0].view().data(), d->f, o.weights[0].view().data(),
                                                 d->c, d->y, out.view().data(), CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found,
                                                 perf, search.data(), search.span()),
          "find algorithm");
    int pick = -1;  // perf is sorted by measured time
    for (int i = 0; i < found && pick < 0; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS && (AnyAlgo || exact_family(perf[i].algo)) &&
          (TF32 || perf[i].mathType == CUDNN_FMA_MATH || perf[i].mathType == CUDNN_DEFAULT_MATH))
        pick = i;
    if (pick < 0)
      throw std::runtime_error(AnyAlgo ? "cuDNN offers no fp32 algorithm for this shape"
                                       : "cuDNN offers no direct or GEMM-based algorithm for this shape");
    algo = perf[pick].algo;
    // Run the pair it measured, except that the fp32 tuning never takes DEFAULT_MATH, which lets
    // cuDNN use TF32 on Ampere and later.
    math = TF32 ? perf[pick].mathType : CUDNN_FMA_MATH;
    check(cudnnSetConvolutionMathType(d->c, math), "math");
    fused_bias = algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    if (fused_bias) {
      check(cudnnCreateActivationDescriptor(&d->identity), "activation");
      check(cudnnSetActivationDescriptor(d->identity, CUDNN_ACTIVATION_IDENTITY, CUDNN_NOT_PROPAGATE_NAN, 0.0),
            "identity");
    }
    std::size_t bytes = 0;
    check(cudnnGetConvolutionForwardWorkspaceSize(d->h, d->x, d->f, d->c, d->y, algo, &bytes), "workspace");
    workspace = Kokkos::View<char*>("cudnn.workspace", bytes);
  }
  template <class Exec, class Ops, class Out>
  void run(const Exec&, const Ops& o, const Out& out, const conv2d_params&) const {
    const auto& in = o.ins[0];
    const auto& wt = o.weights[0];
    const auto& b = o.vecs[0];
    const float one = 1.f, zero = 0.f;
    if (fused_bias) {  // y = conv(x) + 0 * z + bias, z = y
      check(cudnnConvolutionBiasActivationForward(d->h, &one, d->x, in.view().data(), d->f, wt.view().data(), d->c, algo,
                                                  workspace.data(), workspace.span(), &zero, d->y, out.view().data(), d->b,
                                                  b.data(), d->identity, d->y, out.view().data()),
            "forward (bias fused)");
      return;
    }
    check(cudnnConvolutionForward(d->h, &one, d->x, in.view().data(), d->f, wt.view().data(), d->c, algo,
                                  workspace.data(), workspace.span(), &zero, d->y, out.view().data()), "forward");
    check(cudnnAddTensor(d->h, &one, d->b, b.data(), &one, d->y, out.view().data()), "bias");
  }
};

const bench::registrar reg([](bench::registry& r) {
  using namespace kcnn::layout;
  bench::register_variant<cudnn_conv<false>, nchw, nhwc>(
      r, {"conv2d", bench::space_axis::global, bench::pattern_axis::library, &cudnn_kind, {"fp32", "CUDNN_FMA_MATH: no tensor cores"}});
  bench::register_variant<cudnn_conv<false, true>, nchw, nhwc>(
      r, {"conv2d", bench::space_axis::global, bench::pattern_axis::library, &cudnn_kind,
          {"fp32_any", "CUDNN_FMA_MATH, the fastest of every algorithm (Winograd and FFT included; the note names "
                       "it), validated with a tolerance of 1e-3"}});
  bench::register_variant<cudnn_conv<true>, nchw, nhwc>(
      r, {"conv2d", bench::space_axis::global, bench::pattern_axis::library, &cudnn_kind,
          {"tf32", "tensor-core TF32 math allowed, validated with a TF32-sized tolerance"}});
});
}  // namespace
#elif defined(KOKKOS_ENABLE_CUDA)
namespace {
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  r.add_unavailable("conv2d/*/global/library/cudnn", "cuDNN was not found at configure time");
});
}  // namespace
#endif
