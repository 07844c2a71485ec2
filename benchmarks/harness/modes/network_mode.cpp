// --network: whole-network forward passes per plan, with per-layer breakdowns (see modes.hpp).
#include "results/format.hpp"
#include "modes/forward_pass.hpp"
#include "modes/modes.hpp"

#include <Kokkos_Core.hpp>

#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

namespace kcnn::bench {

namespace {
// Variants that can run on chained buffers: the default memory space, a fixed layout, out of
// place (an in-place variant would need its producer's layout; the planner keeps it simple).
bool chainable(const variant_info& v) {
  return device_resident(v.space) && v.layout != layout_axis::strided && !v.variant->in_place;
}

result_row network_row(const run_context& ctx, const layer_spec& l0, const std::string& plan,
                       const std::string& layer, const std::string& layout, const std::string& chosen) {
  result_row r;
  r.suite = ctx.suite;
  r.network = l0.network;
  r.layer = layer;
  r.op = "network";
  r.n = l0.n; r.c = l0.c; r.h = l0.h; r.w = l0.w;
  r.layout = layout;
  r.memory_space = "global";
  r.access_pattern = "none";
  r.variant = plan;
  r.tuning = chosen;
  std::string tag = layer;
  for (auto& ch : tag)
    if (ch == ' ' || ch == '>') ch = '_';
  r.key = "network/" + layout + "/global/none/" + plan + "/" + l0.network + "." + tag + "/n" + std::to_string(l0.n);
  r.cache = "warm";
  return r;
}
}  // namespace

int run_network_plans(const options& opt, const std::vector<suite>& suites,
                      const std::vector<measured_case>& measured, results_writer& writer, const case_settings& settings) {
  int failures = 0;
  const double tolerance = 1e-3;  // fp32 kernels against a double reference, through the whole network
  for (const auto& su : suites) {
    if (su.kind != suite_kind::network) continue;
    const auto& l0 = su.layers.front();
    std::cout << "\nkcnn network " << l0.network << " (batch " << l0.n << ", " << su.layers.size() << " layers)\n";
    Kokkos::Timer ref_clock;
    const std::vector<double> reference = reference_forward(su, opt.seed, settings);
    std::cout << "host reference forward pass: " << fixed(ref_clock.seconds(), 1) << " s\n";

    std::vector<forward_plan> plans;
    for (layout_axis lay : {layout_axis::nchw, layout_axis::nhwc, layout_axis::chwn}) plans.push_back(uniform_plan(su, lay));
    // The per-layer plan: each layer's fastest measured chainable case of this run.
    forward_plan per_layer{"per_layer", {}};
    for (const auto& l : su.layers) {
      const measured_case* best = nullptr;
      for (const auto& m : measured)
        if (m.network == l.network && m.layer == l.layer && chainable(*m.variant) &&
            (!best || m.time_ms < best->time_ms))
          best = &m;
      per_layer.variants.push_back(best ? best->variant : nullptr);
    }
    const bool have_per_layer = std::all_of(per_layer.variants.begin(), per_layer.variants.end(), [](auto* v) { return v != nullptr; });
    if (have_per_layer) plans.push_back(per_layer);
    else std::cout << "per_layer plan: not every layer has a measured chainable case (filters?); skipped\n";

    std::vector<forward_result> results;
    for (const auto& p : plans) {
      forward_result r;
      std::string error;
      try {
        r = run_forward(su, p, opt.seed, reference, tolerance, opt.min_reps, opt.max_reps, opt.budget_s,
                        activation_memory::separate, settings);
      } catch (const std::exception& e) {
        error = e.what();
      }
      r.plan = p.name;
      const std::string lay = p.name.rfind("uniform_", 0) == 0 ? p.name.substr(8) : "mixed";
      result_row row = network_row(writer.context(), l0, p.name, "all", lay, "");
      row.bytes = r.arena_bytes;
      if (!error.empty()) {
        row.status = case_status::error;
        row.note = error;
        ++failures;
      } else if (!r.check.passed) {
        row.status = case_status::failed_validation;
        row.rel_error = r.check.rel_l2;
        row.note = r.check.message;
        ++failures;
      } else {
        row.status = case_status::ok;
        row.reps = r.reps;
        row.rel_error = r.check.rel_l2;
        row.tolerance = tolerance;
        row.time_ms_median = r.total_ms;
        const double base = results.empty() ? r.total_ms : results.front().total_ms;
        row.note = "speedup " + fixed(base / r.total_ms, 2) + "x over uniform_nchw; " + std::to_string(r.transforms) +
                   " layout transforms; activations " + fixed(r.arena_bytes / 1048576.0, 1) + " MiB";
        for (const auto& s : r.steps) {
          result_row sr = network_row(writer.context(), l0, p.name, s.label, s.layout, s.variant);
          sr.status = case_status::ok;
          sr.reps = r.reps;
          sr.time_ms_median = s.ms;
          sr.note = "fenced step of the forward pass";
          writer.write(sr);
        }
      }
      writer.write(row);
      std::cout << std::left << std::setw(14) << p.name << std::right;
      if (is_timed(row.status))
        std::cout << std::setw(12) << fixed(r.total_ms, 3) << " ms  speedup " << fixed(results.empty() ? 1.0 : results.front().total_ms / r.total_ms, 2)
                  << "x  transforms " << r.transforms << "  rel_err " << std::setprecision(2) << r.check.rel_l2 << "\n";
      else
        std::cout << "  " << name(row.status) << ": " << row.note << "\n";
      results.push_back(r);
    }

    // Per-layer breakdown, plans side by side (ms of the fenced steps).
    if (!results.empty() && results.front().check.passed) {
      std::cout << std::left << std::setw(28) << "layer" << std::right;
      for (const auto& r : results) std::cout << std::setw(14) << r.plan;
      std::cout << "  per_layer choice\n";
      const auto& last = results.back();
      std::map<std::string, std::vector<double>> by_label;
      for (const auto& r : results)
        for (const auto& s : r.steps) by_label[s.label].resize(results.size(), -1);
      for (std::size_t k = 0; k < results.size(); ++k)
        for (const auto& s : results[k].steps) by_label[s.label][k] = s.ms;
      std::vector<std::string> order;
      for (const auto& s : last.steps) order.push_back(s.label);
      for (const auto& s : results.front().steps)
        if (std::find(order.begin(), order.end(), s.label) == order.end()) order.push_back(s.label);
      for (const auto& label : order) {
        std::cout << std::left << std::setw(28) << label.substr(0, 27) << std::right;
        for (double ms : by_label[label]) std::cout << std::setw(14) << (ms < 0 ? "-" : fixed(ms, 3));
        for (const auto& s : last.steps)
          if (s.label == label) std::cout << "  " << s.layout << " " << s.variant;
        std::cout << "\n";
      }
    }

    // The planned arena: the same pass with every activation carved out of one first-fit arena.
    if (!results.empty() && results.front().check.passed) {
      forward_result a;
      std::string error;
      try {
        a = run_forward(su, plans.front(), opt.seed, reference, tolerance, 1, 1, 0.0, activation_memory::arena, settings);
      } catch (const std::exception& e) {
        error = e.what();
      }
      const bool same = error.empty() && a.output == results.front().output;
      result_row row = network_row(writer.context(), l0, "uniform_nchw_arena", "all", "nchw", "");
      row.bytes = a.arena_bytes;
      row.status = same ? case_status::ok : (error.empty() ? case_status::failed_validation : case_status::error);
      row.rel_error = a.check.rel_l2;
      row.note = error.empty() ? "first-fit arena of " + fixed(a.arena_bytes / 1048576.0, 1) + " MiB vs " +
                                     fixed(results.front().arena_bytes / 1048576.0, 1) + " MiB in separate buffers; output " +
                                     (same ? "identical to" : "DIFFERENT from") + " the separate-buffer pass"
                               : error;
      if (is_timed(row.status)) {
        row.time_ms_median = a.total_ms;
        row.reps = a.reps;
      } else {
        ++failures;
      }
      writer.write(row);
      std::cout << "arena: " << row.note << "\n";
    }
  }
  return failures;
}

}  // namespace kcnn::bench
