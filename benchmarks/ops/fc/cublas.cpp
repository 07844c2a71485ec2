// fc / {nchw,nhwc} / global / library / cublas (tuning fp32 or tf32): the vendor peer on CUDA
// builds, one cuBLASLt matmul (out = in x W^T over the flattened c h w, which nchw and nhwc
// flatten the same way for input and weights) with the bias added by its epilogue
// (CUBLASLT_EPILOGUE_BIAS: no second pass over the output). The algorithm: the fastest of the
// heuristic's first `candidates` answers for the shape, each timed in prepare by the run's sampler
// on the case's own operands (cuBLASLt's documented way to go past the heuristic's first guess;
// without a sampler, the first answer). fp32: CUBLAS_COMPUTE_32F (no TF32); tf32:
// CUBLAS_COMPUTE_32F_FAST_TF32, with a TF32-sized tolerance. Needs cuBLAS and cuBLASLt at
// configure time. The heuristic is told the operands' real alignment: by default it assumes
// 256-byte-aligned pointers, and a Kokkos View's data lies behind its 128-byte allocation header,
// so an algorithm it picks may refuse them (in the H200 run of dc392ff every matmul of this peer
// was refused, before the status was reported: this is the documented cause, to be confirmed).
#include "../conv2d/conv_descriptor.hpp"

#if defined(KCNN_HAVE_CUBLAS)
#include <cublasLt.h>

#include "measure/sampler.hpp"
#include "measure/stats.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace {
using namespace kcnn;

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLASLt ") + what + " failed: " + cublasLtGetStatusName(s));
}

// The alignment cuBLASLt's heuristic assumes unless told, and wants of the workspace.
constexpr std::uint32_t cublaslt_alignment = 256;

// The largest power of two up to cublaslt_alignment that divides the address.
std::uint32_t alignment_of(const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::uint32_t al = cublaslt_alignment;
  while (al > 1 && a % al != 0) al /= 2;
  return al;
}

const bench::variant_kind cublas_kind{"cublas", "one cuBLASLt matmul with the bias in its epilogue, the fastest of "
                                                  "the heuristic's first 8 algorithms (CUDA builds)",
                                      bench::origin::peer, false, "cuBLAS"};

template <bool TF32>
struct cublas_fc : bench::conv_descriptor<cublas_fc<TF32>, true> {
  static double tolerance(const conv2d_params&) { return TF32 ? 5e-3 : bench::conv2d_tolerance; }
  // Workspace offered to cuBLASLt's algorithms (NVIDIA's guidance for Hopper: 32 MiB).
  static constexpr std::size_t workspace_limit = std::size_t(32) << 20;
  // How many of the heuristic's answers are timed, and how: samples of back-to-back launches,
  // the median per launch.
  static constexpr int candidates = 8, candidate_samples = 5, candidate_launches = 4;
  struct handles {
    cublasLtHandle_t h = nullptr;
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    cublasLtMatmulHeuristicResult_t algo{};
    std::uint32_t align_a = 0, align_b = 0, align_d = 0;  // what the heuristic was told
    ~handles() {
      if (pref) cublasLtMatmulPreferenceDestroy(pref);
      if (c) cublasLtMatrixLayoutDestroy(c);
      if (b) cublasLtMatrixLayoutDestroy(b);
      if (a) cublasLtMatrixLayoutDestroy(a);
      if (op) cublasLtMatmulDescDestroy(op);
      if (h) cublasLtDestroy(h);
    }
  };
  std::shared_ptr<handles> d;
  // cuBLASLt wants an aligned workspace: the View holds cublaslt_alignment bytes more, used from
  // the first aligned byte.
  Kokkos::View<char*> workspace;
  char* workspace_ptr = nullptr;
  const bench::sampler* run_sampler = nullptr;  // set by the case before prepare
  int offered = 0, chosen = 0;                  // heuristic answers timed, the rank of the one run
  double chosen_us = -1, first_us = -1;         // their times per launch (< 0: not timed)

  double workspace_bytes(const conv2d_params&) const { return d ? double(d->algo.workspaceSize) : 0.0; }
  std::string note() const {
    if (!d) return {};
    std::string choice = offered == 1 ? "heuristic's only algorithm"
                                      : "heuristic's first algorithm (not timed: no sampler)";
    if (chosen_us >= 0)
      choice = "heuristic's answer " + std::to_string(chosen + 1) + " of " + std::to_string(offered) +
               ", the fastest by the run's sampler (" + std::to_string(chosen_us) + " us; the first answer " +
               (first_us >= 0 ? std::to_string(first_us) + " us)" : std::string("refused)"));
    return std::string("cuBLASLt ") + std::to_string(cublasLtGetVersion()) +
           ", bias in the epilogue (CUBLASLT_EPILOGUE_BIAS), " + choice + ", workspace " +
           std::to_string(d->algo.workspaceSize) + " B";
  }

  template <class Layout>
  static std::string unsupported(const conv2d_params&) {
    if (std::is_same_v<Layout, layout::nchw> || std::is_same_v<Layout, layout::nhwc>) return {};
    return "chwn puts the batch innermost: not one GEMM on the stored operands";
  }
  template <class Exec, class Ops, class Out>
  void prepare(const Exec& e, const conv2d_params& p, const Ops& o, const Out& out) {
    d = std::make_shared<handles>();
    const std::uint64_t inner = std::uint64_t(p.c) * p.h * p.w, k = std::uint64_t(p.k), n = std::uint64_t(p.n);
    check(cublasLtCreate(&d->h), "create");
    check(cublasLtMatmulDescCreate(&d->op, TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F),
          "matmul descriptor");
    // Column-major view: out^T (k x n) = W (stored k x inner row-major, i.e. inner x k) ^T x in^T.
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    check(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)), "transa");
    check(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)), "transb");
    check(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)), "epilogue");
    check(cublasLtMatrixLayoutCreate(&d->a, CUDA_R_32F, inner, k, std::int64_t(inner)), "layout a");
    check(cublasLtMatrixLayoutCreate(&d->b, CUDA_R_32F, inner, n, std::int64_t(inner)), "layout b");
    check(cublasLtMatrixLayoutCreate(&d->c, CUDA_R_32F, k, n, std::int64_t(k)), "layout c");
    check(cublasLtMatmulPreferenceCreate(&d->pref), "preference");
    const std::size_t limit = workspace_limit;
    check(cublasLtMatmulPreferenceSetAttribute(d->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof(limit)),
          "workspace preference");
    d->align_a = alignment_of(o.weights[0].view().data());
    d->align_b = alignment_of(o.ins[0].view().data());
    d->align_d = alignment_of(out.view().data());
    const std::pair<cublasLtMatmulPreferenceAttributes_t, const std::uint32_t*> alignments[] = {
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &d->align_a},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &d->align_b},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &d->align_d},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &d->align_d}};
    for (const auto& [attribute, bytes] : alignments)
      check(cublasLtMatmulPreferenceSetAttribute(d->pref, attribute, bytes, sizeof(*bytes)), "alignment preference");
    cublasLtMatmulHeuristicResult_t answers[candidates] = {};
    int found = 0;
    check(cublasLtMatmulAlgoGetHeuristic(d->h, d->op, d->a, d->b, d->c, d->c, d->pref, candidates, answers, &found),
          "heuristic");
    // Only answers whose state is success are valid (cuBLASLt's documentation).
    found = int(std::remove_if(answers, answers + found,
                               [](const cublasLtMatmulHeuristicResult_t& a) { return a.state != CUBLAS_STATUS_SUCCESS; }) -
                answers);
    if (found < 1) throw std::runtime_error("cuBLASLt offers no algorithm for this fc with a bias epilogue");
    // One workspace for every candidate: the largest any asks for (each within workspace_limit).
    std::size_t ws = 0;
    for (int i = 0; i < found; ++i) ws = std::max(ws, answers[i].workspaceSize);
    workspace = Kokkos::View<char*>("cublaslt.workspace", ws + cublaslt_alignment);
    const auto base = reinterpret_cast<std::uintptr_t>(workspace.data());
    workspace_ptr = reinterpret_cast<char*>((base + cublaslt_alignment - 1) / cublaslt_alignment * cublaslt_alignment);
    d->algo = answers[0];
    offered = found;
    if (!run_sampler || found < 2) return;
    // Each candidate on the case's operands (the output is overwritten before validation), timed
    // as every figure of the run is; one that cuBLASLt refuses is skipped.
    const float* bias = o.vecs[0].data();
    check(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)), "bias");
    const float one = 1.f, zero = 0.f;
    const auto stream = e.cuda_stream();
    double best = -1;
    for (int i = 0; i < found; ++i) {
      const cublasLtMatmulHeuristicResult_t& cand = answers[i];
      const auto matmul = [&] {
        return cublasLtMatmul(d->h, d->op, &one, o.weights[0].view().data(), d->a, o.ins[0].view().data(), d->b, &zero,
                              out.view().data(), d->c, out.view().data(), d->c, &cand.algo, workspace_ptr,
                              cand.workspaceSize, stream);
      };
      if (matmul() != CUBLAS_STATUS_SUCCESS) continue;  // warm-up, and refused ones drop out
      bench::timed_work w;
      w.launches = candidate_launches;
      w.launch = [&] { check(matmul(), "matmul (timing a candidate)"); };
      std::vector<double> s, all;  // the valid samples (not throttled, hold not timed out); all of them
      for (int k = 0; k < candidate_samples; ++k) {
        const bench::timing_sample t = run_sampler->take(w);
        all.push_back(t.seconds());
        if (!t.throttled && !t.hold_timed_out) s.push_back(t.seconds());
      }
      if (s.empty()) s = all;
      const double us = bench::summarize(s).median * 1e6;
      if (i == 0) first_us = us;
      if (best < 0 || us < best) best = us, chosen = i;
    }
    if (best < 0) throw std::runtime_error("cuBLASLt refused every algorithm its heuristic offered for this fc");
    d->algo = answers[chosen];
    chosen_us = best;
  }
  template <class Exec, class Ops, class Out>
  void run(const Exec& e, const Ops& o, const Out& out, const conv2d_params&) const {
    const auto& in = o.ins[0];
    const auto& wt = o.weights[0];
    const float* bias = o.vecs[0].data();
    const float one = 1.f, zero = 0.f;
    // The algorithm was chosen for the operands' alignment at prepare; a less aligned address now
    // would be refused by cuBLASLt with a status that does not say why.
    if (alignment_of(wt.view().data()) < d->align_a || alignment_of(in.view().data()) < d->align_b ||
        alignment_of(out.view().data()) < d->align_d)
      throw std::runtime_error("cuBLASLt fc: an operand moved to a less aligned address after the algorithm was chosen");
    check(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)), "bias");
    check(cublasLtMatmul(d->h, d->op, &one, wt.view().data(), d->a, in.view().data(), d->b, &zero, out.view().data(),
                         d->c, out.view().data(), d->c, &d->algo.algo, workspace_ptr, d->algo.workspaceSize,
                         e.cuda_stream()),
          "matmul");
  }
};

const bench::registrar reg([](bench::registry& r) {
  using namespace kcnn::layout;
  bench::register_variant<cublas_fc<false>, nchw, nhwc>(
      r, {"fc", bench::space_axis::global, bench::pattern_axis::library, &cublas_kind, {"fp32", "CUBLAS_COMPUTE_32F: no TF32"}});
  bench::register_variant<cublas_fc<true>, nchw, nhwc>(
      r, {"fc", bench::space_axis::global, bench::pattern_axis::library, &cublas_kind,
          {"tf32", "CUBLAS_COMPUTE_32F_FAST_TF32, validated with a TF32-sized tolerance"}});
});
}  // namespace
#elif defined(KOKKOS_ENABLE_CUDA)
namespace {
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  r.add_unavailable("fc/*/global/library/cublas", "cuBLAS was not found at configure time");
});
}  // namespace
#endif
