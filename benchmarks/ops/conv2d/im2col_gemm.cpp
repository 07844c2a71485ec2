// conv2d / {nchw,nhwc,chwn} / global / library / im2col_gemm: explicit lowering into a
// workspace and KokkosBlas::gemm per group; the workspace is reported in workspace_bytes, and each
// part's time (lowering, GEMM, scatter) in the row's note.
#include "conv_descriptor.hpp"

#include <kcnn/conv2d/im2col_gemm.hpp>

#include "measure/sampler.hpp"
#include "measure/stats.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

const variant_kind im2col_gemm_kind{"im2col_gemm", "lowering into a (C R S) x (N P Q) workspace, then KokkosBlas::gemm per group"};

struct im2col_gemm_conv : conv_call<im2col_gemm_conv, variant::im2col_gemm, false> {
  // Each part timed apart once prepared, by the run's sampler, for the row's note (the row's
  // time is the whole run's).
  const sampler* run_sampler = nullptr;  // set by the case before prepare
  std::string parts;
  static constexpr int part_samples = 5;
  template <class Exec, class Ops, class Out>
  void prepare(const Exec& e, const conv2d_params& p, const Ops& o, const Out& out) {
    conv_call::prepare(e, p, o, out);
    if (!run_sampler) return;
    using algo_t = conv2d_im2col_gemm<Exec>;
    const algo_t& algo = v.algorithm<Exec>(p);
    const auto& in = o.ins[0];
    const auto& bias = o.vecs[0];
    algo(e, in, bias, out);  // warm-up: the workspace as each part finds it in a run
    parts = "parts (median of " + std::to_string(part_samples) + " samples each):";
    const std::pair<typename algo_t::part, const char*> named[] = {
        {algo_t::part::lower, "im2col"}, {algo_t::part::multiply, "gemm"}, {algo_t::part::scatter, "scatter"}};
    for (const auto& [which, name] : named) {
      timed_work w;
      w.launch = [&, which = which] {
        for (int g = 0; g < algo.groups(); ++g) algo.run_part(e, which, g, in, bias, out);
      };
      std::vector<double> s;
      for (int k = 0; k < part_samples; ++k) s.push_back(run_sampler->take(w).seconds());
      const double t = summarize(s).median;
      char buf[160];
      if (which == algo_t::part::multiply)
        std::snprintf(buf, sizeof buf, " %s %.1f us (%.2f TFLOP/s)", name, t * 1e6, p.flops() / t * 1e-12);
      else
        std::snprintf(buf, sizeof buf, " %s %.1f us (%.1f GB/s)", name, t * 1e6, algo.part_bytes(which) / t * 1e-9);
      parts += buf;
    }
  }
  std::string note() const { return parts; }
  // Exact once prepared; before that (the footprint check), the lowered matrix it will allocate.
  double workspace_bytes(const conv2d_params& p) const {
    return std::max(kcnn::workspace_bytes(v), conv2d_im2col_gemm<Kokkos::DefaultExecutionSpace>::workspace_bytes(p));
  }
  // Traffic model: a nominal 64 x 64 GEMM tile (Kokkos Kernels chooses its own blocking), plus
  // the lowered matrix (C R S x N P Q floats), written by im2col and read back by the GEMM.
  template <class Layout>
  static conv_tile traffic_tile(const conv2d_params&) { return {64, 64}; }
  double extra_dram_bytes(const conv2d_params& p) const {
    return 2.0 * sizeof(float) * double(p.c) * p.r * p.s * double(p.n) * p.p() * p.q();
  }
};

const registrar reg([](registry& r) {
  using namespace kcnn::layout;
  register_variant<im2col_gemm_conv, nchw, nhwc, chwn>(
      r, {"conv2d", space_axis::global, pattern_axis::library, &im2col_gemm_kind});
});
}  // namespace
