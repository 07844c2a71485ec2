// --memory-plan: the table of peak activation memory per allocation strategy for each network
// suite and batch, printed and written as rows of the results CSV (op memory_plan).
#include "modes/memory_plan.hpp"
#include "results/format.hpp"
#include "modes/modes.hpp"

#include <iomanip>
#include <iostream>
#include <sstream>

namespace kcnn::bench {

namespace {
constexpr double mib = 1024.0 * 1024.0;


result_row plan_row(const run_context& ctx, const suite& su, const std::string& strategy, double bytes,
                    double no_reuse, const std::string& extra) {
  result_row r;
  r.suite = ctx.suite;
  r.network = su.layers.front().network;
  r.layer = "all";
  r.op = "memory_plan";
  const auto& l0 = su.layers.front();
  r.n = l0.n; r.c = l0.c; r.h = l0.h; r.w = l0.w;
  r.layout = "any";
  r.memory_space = "global";
  r.access_pattern = "none";
  r.variant = strategy;
  r.key = "memory_plan/any/global/none/" + strategy + "/" + r.network + "/n" + std::to_string(r.n);
  r.cache = "none";
  r.bytes = bytes;
  r.status = case_status::ok;
  r.note = fixed(bytes / mib, 1) + " MiB, " + fixed(100.0 * (1.0 - bytes / no_reuse), 1) + "% saved vs no reuse" + extra;
  return r;
}
}  // namespace

int run_memory_plan(const options& opt, std::vector<suite>& suites, results_writer& writer) {
  const std::vector<int> batches = opt.batch > 0 ? std::vector<int>{opt.batch} : std::vector<int>{1, 64};
  std::cout << std::left << std::setw(16) << "network" << std::right << std::setw(6) << "batch" << std::setw(9)
            << "tensors" << std::setw(12) << "no reuse" << std::setw(14) << "free-after" << std::setw(12)
            << "first-fit" << std::setw(12) << "best-fit" << std::setw(13) << "lower bound" << std::setw(10)
            << "saved" << (opt.memory_limits_mib.empty() ? "" : "  swap plans") << "\n";
  int rc = 0;
  for (auto& su : suites) {
    if (su.kind != suite_kind::network) {
      std::cerr << "kcnn-bench: --memory-plan: skipping '" << su.name << "' (not a network suite)\n";
      continue;
    }
    for (int b : batches) {
      set_batch(su, b);
      const memory_plan_summary m = summarize_memory_plan(su);
      const double best = std::min(m.first_fit, m.best_fit);
      std::cout << std::left << std::setw(16) << m.network << std::right << std::setw(6) << m.batch << std::setw(9)
                << m.tensors << std::setw(12) << fixed(m.no_reuse / mib, 1) << std::setw(14)
                << fixed(m.free_after_last_use / mib, 1) << std::setw(12) << fixed(m.first_fit / mib, 1)
                << std::setw(12) << fixed(m.best_fit / mib, 1) << std::setw(13) << fixed(m.lower_bound / mib, 1)
                << std::setw(9) << fixed(100.0 * (1.0 - best / m.no_reuse), 1) << "%";
      const run_context& ctx = writer.context();
      writer.write(plan_row(ctx, su, "no_reuse", m.no_reuse, m.no_reuse, ""));
      writer.write(plan_row(ctx, su, "free_after_last_use", m.free_after_last_use, m.no_reuse,
                            " (caching allocator, no splitting)"));
      writer.write(plan_row(ctx, su, "first_fit", m.first_fit, m.no_reuse, " (one arena, largest first)"));
      writer.write(plan_row(ctx, su, "best_fit", m.best_fit, m.no_reuse, " (one arena, largest first)"));
      writer.write(plan_row(ctx, su, "lower_bound", m.lower_bound, m.no_reuse, " (peak live bytes)"));
      for (const double limit_mib : opt.memory_limits_mib) {
        const tensor_graph g = build_tensor_graph(su);
        const swap_plan sp = plan_swaps(g.tensors, g.steps, limit_mib * mib);
        std::cout << "  [" << fixed(limit_mib, 1) << ": arena " << fixed(sp.arena / mib, 1) << " MiB"
                  << (sp.fits ? "" : " (limit not reached)") << ", " << sp.swaps.size() << " swaps, "
                  << fixed(sp.moved_bytes / mib, 1) << " MiB moved]";
        result_row r = plan_row(ctx, su, "swap", sp.arena, m.no_reuse,
                                "; limit " + fixed(limit_mib, 1) + " MiB " +
                                    (sp.fits ? "met" : "not met: no tensor can be off the device at the peak step") +
                                    "; live peak " + fixed(sp.live_peak / mib, 1) + " MiB; " + fixed(sp.moved_bytes / mib, 1) +
                                    " MiB moved to and from the host; swaps: " + describe_swaps(sp));
        r.tuning = "limit_" + shortest(limit_mib) + "MiB";
        r.key += "/" + r.tuning;
        if (!sp.fits) r.status = case_status::skipped;
        writer.write(r);
      }
      std::cout << "\n";
    }
  }
  return rc;
}

}  // namespace kcnn::bench
