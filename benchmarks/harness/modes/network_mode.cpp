// --network: whole-network forward passes per plan, with per-layer breakdowns (see modes.hpp).
#include "results/format.hpp"
#include "modes/forward_pass.hpp"
#include "modes/layout_planner.hpp"
#include "modes/modes.hpp"
#include "measure/clock.hpp"
#include "measure/stop.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>

namespace kcnn::bench {

namespace {
// Variants that can run on chained buffers: the default memory space, a fixed layout, out of
// place (an in-place variant would need its producer's layout; the planner keeps it simple).
bool chainable(const variant_info& v) {
  return device_resident(v.space) && v.layout != layout_axis::strided && !v.variant->in_place;
}

const layout_axis plan_layouts[] = {layout_axis::nchw, layout_axis::nhwc, layout_axis::chwn};

// The planner's costs from this run: each layer's fastest measured chainable case per layout (times
// its repeat), and every transform a plan could insert, timed once per tensor shape and pair of
// layouts. Also the layer variant behind each (layer, layout) cost.
struct plan_costs {
  layout_plan_problem problem;
  std::vector<std::vector<const variant_info*>> best;  // [layer][layout]
  int transform_shapes = 0;                            // distinct (shape, from, to) timed
  std::map<std::tuple<int, int, int, int, int, int>, double> transform_ms;  // (n, c, h, w, from, to)
  // A transform's cost (ms; NaN: not timed in this run).
  double transform(const dims4& d, layout_axis from, layout_axis to) const {
    const auto it = transform_ms.find(std::make_tuple(d.n, d.c, d.h, d.w, layout_index(from), layout_index(to)));
    return it == transform_ms.end() ? std::nan("") : it->second;
  }
  // Its index in plan_layouts (plan_layouts' size: not a planned layout).
  static int layout_index(layout_axis l) {
    int k = 0;
    while (k < int(std::size(plan_layouts)) && plan_layouts[k] != l) ++k;
    return k;
  }
};

// `timer` is the run's sampler: the transforms are timed like the cases, or modelled by the
// device model in the gpu-model build (where `measured` holds the cases' modelled times).
plan_costs measure_plan_costs(const suite& su, const std::vector<measured_case>& measured, const options& opt,
                              const case_settings& settings, const sampler& timer) {
  plan_costs pc;
  auto& p = pc.problem;
  const std::size_t L = su.layers.size();
  const int K = int(std::size(plan_layouts));
  p.layouts = K;
  std::map<std::string, int> index;
  for (std::size_t i = 0; i < L; ++i) index[su.layers[i].layer] = int(i);
  for (std::size_t i = 0; i < L; ++i) {
    const auto& l = su.layers[i];
    std::vector<int> in;
    if (l.inputs.empty()) in.push_back(-1);
    for (const auto& name : l.inputs) in.push_back(index.at(name));
    p.inputs.push_back(in);
    std::vector<double> cost(std::size_t(K), std::numeric_limits<double>::infinity());
    std::vector<const variant_info*> best(std::size_t(K), nullptr);
    for (const auto& m : measured)
      for (int k = 0; k < K; ++k)
        if (m.network == l.network && m.layer == l.layer && chainable(*m.variant) && m.variant->layout == plan_layouts[k] &&
            m.time_ms * l.repeat < cost[std::size_t(k)]) {
          cost[std::size_t(k)] = m.time_ms * l.repeat;
          best[std::size_t(k)] = m.variant;
        }
    p.layer_cost.push_back(cost);
    pc.best.push_back(best);
  }
  // Transforms of the tensors some layer reads; the network output's are never paid.
  std::vector<bool> read(L + 1, false);
  for (const auto& in : p.inputs)
    for (int t : in) read[std::size_t(t + 1)] = true;
  auto& timed = pc.transform_ms;
  p.transform_cost.assign(L + 1, std::vector<std::vector<double>>(std::size_t(K), std::vector<double>(std::size_t(K), 0.0)));
  for (std::size_t t = 0; t <= L; ++t) {
    if (!read[t]) continue;
    const dims4 d = tensor_shape(su, int(t) - 1);
    for (int a = 0; a < K; ++a)
      for (int b = 0; b < K; ++b) {
        if (a == b) continue;
        const auto key = std::make_tuple(d.n, d.c, d.h, d.w, a, b);
        auto it = timed.find(key);
        if (it == timed.end()) {
          it = timed.emplace(key, time_layout_transform(d, plan_layouts[a], plan_layouts[b], opt.seed, timer, opt.min_reps,
                                                        opt.max_reps, opt.budget_s, settings)).first;
          ++pc.transform_shapes;
        }
        p.transform_cost[t][std::size_t(a)][std::size_t(b)] = std::isfinite(it->second) ? it->second : 1e30;
      }
  }
  return pc;
}

// What the planner's costs predict for a plan (ms): its layers' measured times, and the
// transforms its layouts cause. NaN when a layer's variant was not measured in this run.
double predicted_ms(const plan_costs& pc, const forward_plan& plan, const suite& su, const std::vector<measured_case>& measured) {
  layout_plan_problem transforms_only = pc.problem;
  for (auto& row : transforms_only.layer_cost) std::fill(row.begin(), row.end(), 0.0);
  std::vector<int> layouts;
  double total = 0;
  for (std::size_t i = 0; i < plan.variants.size(); ++i) {
    const auto& l = su.layers[i];
    const auto* v = plan.variants[i];
    const int k = plan_costs::layout_index(v->layout);
    if (k == int(std::size(plan_layouts))) return std::nan("");
    layouts.push_back(k);
    double t = std::nan("");
    for (const auto& m : measured)
      if (m.variant == v && m.network == l.network && m.layer == l.layer) t = m.time_ms * l.repeat;
    if (std::isnan(t)) return t;
    total += t;
  }
  return total + layout_plan_cost(transforms_only, layouts);
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
// The arena pass under a memory limit with the swap plan executed (row uniform_nchw_swap, tuning
// limit_<MiB>MiB), against the unswapped arena pass `arena` of the same plan. 1 when it failed.
int swapped_pass(const suite& su, const options& opt, const std::vector<double>& reference, double tolerance,
                 const forward_result& arena, double limit_mib, results_writer& writer, const case_settings& settings) {
  const double mib = 1048576.0;
  forward_result w;
  std::string error;
  try {
    w = run_forward(su, in_place_plan(su, layout_axis::nchw, settings), opt.seed, reference, tolerance, opt.min_reps,
                    opt.max_reps, opt.budget_s, activation_memory::swapped, settings, limit_mib * mib);
  } catch (const std::exception& e) {
    error = e.what();
  }
  const std::string limit = shortest(limit_mib) + " MiB";
  result_row row = network_row(writer.context(), su.layers.front(), "uniform_nchw_swap", "all", "nchw",
                               "limit_" + shortest(limit_mib) + "MiB");
  row.bytes = w.arena_bytes + w.converted_bytes;
  const auto& sp = w.swaps;
  int failed = 0;
  if (!error.empty()) {
    row.status = case_status::error;
    row.note = error;
    failed = 1;
  } else if (!w.limit_met) {
    row.status = case_status::skipped;
    row.note = "limit " + limit + " not reachable by swapping: the arena stays at " + fixed(sp.arena / mib, 2) +
               " MiB (live peak " + fixed(sp.live_peak / mib, 2) + " MiB) with " + std::to_string(sp.swaps.size()) +
               " swaps: at its peak step every live tensor is used there or already off the device";
  } else if (!w.check.passed || w.output != arena.output) {
    row.status = case_status::failed_validation;
    row.rel_error = w.check.rel_l2;
    row.note = w.check.passed ? "output DIFFERENT from the unswapped arena pass" : w.check.message;
    failed = 1;
  } else {
    row.status = case_status::ok;
    row.reps = w.reps;
    row.rel_error = w.check.rel_l2;
    row.tolerance = tolerance;
    row.time_ms_median = w.total_ms;
    row.note = "peak device bytes " + fixed(row.bytes / mib, 2) + " MiB under the limit of " + limit +
               " (unswapped arena " + fixed(arena.arena_bytes / mib, 2) + " MiB); " + std::to_string(sp.swaps.size()) +
               " swaps move " + fixed(sp.moved_bytes / mib, 2) + " MiB to and from the host per pass (" +
               describe_swaps(sp) + "); slowdown " + fixed(w.total_ms / arena.total_ms, 3) +
               "x the unswapped arena pass (" + fixed(arena.total_ms, 3) + " ms); output identical to it";
  }
  writer.write(row);
  std::cout << "swap " << limit << ": " << (is_timed(row.status) ? "" : std::string(name(row.status)) + ": ") << row.note
            << "\n";
  return failed;
}

// One network suite under --network: its plans (uniform per layout, per-layer, optimal) run and
// written, the per-layer breakdown, then the arena and swapped passes; stage by stage over
// shared state.
struct network_plans {
  network_plans(const suite& su, const options& opt, const std::vector<measured_case>& measured, results_writer& writer,
                const case_settings& settings, const sampler& timer, bool modelled, double tolerance)
      : su(su), opt(opt), measured(measured), writer(writer), settings(settings), timer(timer), modelled(modelled),
        tolerance(tolerance), l0(su.layers.front()) {}

  const suite& su;
  const options& opt;
  const std::vector<measured_case>& measured;
  results_writer& writer;
  const case_settings& settings;
  const sampler& timer;
  const bool modelled;
  const double tolerance;
  const layer_spec& l0;
  std::vector<double> reference;
  std::vector<forward_plan> plans;
  bool have_per_layer = false;
  plan_costs costs;
  layout_plan_solution optimal;
  std::vector<forward_result> results;
  int failures = 0;

  void run() {
    compute_reference();
    choose_plans();
    for (const auto& p : plans) {
      if (stop_requested()) break;  // SIGINT or SIGTERM: the plans not run are not written
      run_plan(p);
    }
    print_breakdown();
    arena_and_swapped_passes();
  }

  void compute_reference() {
    std::cout << "\nkcnn network " << l0.network << " (batch " << l0.n << ", " << su.layers.size() << " layers)\n";
    const budget_clock ref_clock;  // for the progress line
    reference = reference_forward(su, opt.seed, settings);
    std::cout << "host reference forward pass: " << fixed(ref_clock.seconds(), 1) << " s\n";
  }

  // The per-layer plan: each layer's fastest measured chainable case of this run.
  forward_plan per_layer_plan() const {
    forward_plan per_layer{"per_layer", {}};
    for (const auto& l : su.layers) {
      const measured_case* best = nullptr;
      for (const auto& m : measured)
        if (m.network == l.network && m.layer == l.layer && chainable(*m.variant) &&
            (!best || m.time_ms < best->time_ms))
          best = &m;
      per_layer.variants.push_back(best ? best->variant : nullptr);
    }
    return per_layer;
  }

  void choose_plans() {
    for (layout_axis lay : plan_layouts) plans.push_back(uniform_plan(su, lay));
    const forward_plan per_layer = per_layer_plan();
    have_per_layer = std::all_of(per_layer.variants.begin(), per_layer.variants.end(), [](auto* v) { return v != nullptr; });
    if (have_per_layer) plans.push_back(per_layer);
    else std::cout << "per_layer plan: not every layer has a measured chainable case (filters?); skipped\n";
    add_optimal_plan();
  }

  // The optimal plan (modes/layout_planner.hpp) over this run's layer times and the transforms
  // timed here.
  void add_optimal_plan() {
    if (!have_per_layer) {
      std::cout << "optimal plan: needs a measured chainable case of every layer; skipped\n";
      return;
    }
    const budget_clock planning;  // for the progress line
    costs = measure_plan_costs(su, measured, opt, settings, timer);
    optimal = optimal_layout_plan(costs.problem);
    forward_plan p{"optimal", {}};
    for (std::size_t i = 0; i < su.layers.size(); ++i) p.variants.push_back(costs.best[i][std::size_t(optimal.layout[i])]);
    plans.push_back(p);
    std::cout << "optimal plan: predicted " << fixed(optimal.cost, 3) << " ms with " << optimal.transforms << " transforms ("
              << (optimal.exact ? "exact" : "pruned to the cheapest states: not proven optimal") << ", up to "
              << optimal.peak_states << " frontier states; " << costs.transform_shapes << " transforms "
              << (modelled ? "modelled" : "timed") << "; "
              << fixed(planning.seconds(), 1) << " s)\n";
  }

  // One plan's forward pass, its rows and its line.
  void run_plan(const forward_plan& p) {
    forward_result r;
    std::string error;
    try {
      r = run_forward(su, p, opt.seed, reference, tolerance, opt.min_reps, modelled ? 0 : opt.max_reps, opt.budget_s,
                      activation_memory::separate, settings);
    } catch (const std::exception& e) {
      error = e.what();
    }
    bool complete = true;  // modelled: every step has a modelled time
    if (modelled && error.empty() && r.check.passed) complete = model_plan_time(r, p);
    r.plan = p.name;
    const result_row row = plan_row(p, r, error, complete);
    writer.write(row);
    std::cout << std::left << std::setw(14) << p.name << std::right;
    if (is_timed(row.status))
      std::cout << std::setw(12) << fixed(r.total_ms, 3) << (modelled ? " ms modelled" : " ms") << "  speedup " << fixed(results.empty() ? 1.0 : results.front().total_ms / r.total_ms, 2)
                << "x  transforms " << r.transforms << "  rel_err " << std::setprecision(2) << r.check.rel_l2 << "\n";
    else
      std::cout << "  " << name(row.status) << ": " << row.note << "\n";
    results.push_back(r);
  }

  // Modelled: the pass's time is the sum of its steps' modelled times (the cases' and the
  // transforms'); false when a step has none.
  bool model_plan_time(forward_result& r, const forward_plan& p) const {
    bool complete = true;
    r.total_ms = 0;
    for (auto& st : r.steps) {
      st.ms = st.transform ? costs.transform(st.dims, st.from, st.to) : std::nan("");
      if (!st.transform)
        for (const auto& m : measured)
          if (m.variant == p.variants[std::size_t(st.layer)] && m.network == l0.network &&
              m.layer == su.layers[std::size_t(st.layer)].layer)
            st.ms = m.time_ms * su.layers[std::size_t(st.layer)].repeat;
      complete = complete && !std::isnan(st.ms);
      r.total_ms += st.ms;
    }
    return complete;
  }

  // The plan's row; a plan that ran also writes its steps' rows, before it. Counts a failure.
  result_row plan_row(const forward_plan& p, const forward_result& r, const std::string& error, bool complete) {
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
      describe_passed_plan(row, p, r, complete);
      write_step_rows(p, r);
    }
    return row;
  }

  // A validated plan's time (timed or modelled) and note: its speedup, transforms, activations
  // and, timed, what the planner's costs predicted.
  void describe_passed_plan(result_row& row, const forward_plan& p, const forward_result& r, bool complete) const {
    const double base = results.empty() ? r.total_ms : results.front().total_ms;
    row.note = (std::isnan(base) || !complete ? std::string() : "speedup " + fixed(base / r.total_ms, 2) + "x over uniform_nchw; ") +
               std::to_string(r.transforms) + " layout transforms; activations " + fixed(r.arena_bytes / 1048576.0, 1) + " MiB";
    if (modelled) {
      row.model.present = complete;
      row.model.time_us = r.total_ms * 1e3;
      row.note = complete ? "modelled: " + fixed(r.total_ms, 3) +
                                " ms, the sum of the steps' modelled times; executed once through the GPU code paths "
                                "and validated, not timed; " + row.note
                          : "not modelled: a step has no modelled time (a library call?); validated; " + row.note;
    } else {
      row.time_ms_median = r.total_ms;
    }
    if (have_per_layer && !modelled) {
      const double predicted = predicted_ms(costs, p, su, measured);
      if (!std::isnan(predicted)) row.note += "; predicted " + fixed(predicted, 3) + " ms from this run's layer and transform times";
      if (p.name == "optimal" && !optimal.exact) row.note += " (plan pruned: not proven optimal)";
    }
    if (modelled && p.name == "optimal" && !optimal.exact) row.note += " (plan pruned: not proven optimal)";
  }

  void write_step_rows(const forward_plan& p, const forward_result& r) {
    for (const auto& s : r.steps) {
      result_row sr = network_row(writer.context(), l0, p.name, s.label, s.layout, s.variant);
      sr.status = case_status::ok;
      sr.reps = r.reps;
      if (modelled) {
        sr.model.present = !std::isnan(s.ms);
        sr.model.time_us = s.ms * 1e3;
        sr.note = "modelled step of the forward pass";
      } else {
        sr.time_ms_median = s.ms;
        sr.note = "fenced step of the forward pass";
      }
      writer.write(sr);
    }
  }

  // Per-layer breakdown, plans side by side (ms of the fenced steps).
  void print_breakdown() const {
    if (results.empty() || !results.front().check.passed) return;
    std::cout << std::left << std::setw(28) << "layer" << std::right;
    for (const auto& r : results) std::cout << std::setw(14) << r.plan;
    std::cout << "  " << results.back().plan << " choice\n";
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

  // The planned arena: the uniform nchw pass with every activation carved out of one first-fit
  // arena, in-place layers on variants safe in place (in_place_plan); under --memory-limit, that
  // arena with the swap plan executed (forward_pass.hpp).
  void arena_and_swapped_passes() {
    if (modelled) {
      std::cout << "arena and swapped passes: host timings, not run in the gpu-model build\n";
      return;
    }
    if (results.empty() || !results.front().check.passed || stop_requested()) return;
    const double mib = 1048576.0;
    forward_result a;
    std::string error, swapped_in;
    try {
      const forward_plan arena_plan = in_place_plan(su, layout_axis::nchw, settings);
      for (std::size_t i = 0; i < su.layers.size(); ++i)
        if (arena_plan.variants[i] != plans.front().variants[i])
          swapped_in += (swapped_in.empty() ? "" : ", ") + su.layers[i].layer + " " + arena_plan.variants[i]->variant_name();
      a = run_forward(su, arena_plan, opt.seed, reference, tolerance, opt.min_reps, opt.max_reps, opt.budget_s,
                      activation_memory::arena, settings);
    } catch (const std::exception& e) {
      error = e.what();
    }
    // The same kernels as the separate-buffer pass must give the same bits; other (in-place)
    // variants are held to the reference.
    const bool same = error.empty() && a.check.passed && (!swapped_in.empty() || a.output == results.front().output);
    result_row row = network_row(writer.context(), l0, "uniform_nchw_arena", "all", "nchw", "");
    row.bytes = a.arena_bytes;
    row.status = same ? case_status::ok : (error.empty() ? case_status::failed_validation : case_status::error);
    row.rel_error = a.check.rel_l2;
    row.note = error.empty() ? "first-fit arena of " + fixed(a.arena_bytes / mib, 1) + " MiB vs " +
                                   fixed(results.front().arena_bytes / mib, 1) + " MiB in separate buffers" +
                                   (swapped_in.empty() ? "" : "; in place with " + swapped_in) + "; output " +
                                   (a.output == results.front().output ? "identical to the separate-buffer pass"
                                    : swapped_in.empty() ? "DIFFERENT from the separate-buffer pass (same kernels)"
                                                         : "validated against the reference (other variants: other rounding)")
                             : error;
    if (is_timed(row.status)) {
      row.time_ms_median = a.total_ms;
      row.reps = a.reps;
      row.tolerance = tolerance;
    } else {
      ++failures;
    }
    writer.write(row);
    std::cout << "arena: " << row.note << "\n";

    if (same)
      for (const double limit_mib : opt.memory_limits_mib)
        if (!stop_requested()) failures += swapped_pass(su, opt, reference, tolerance, a, limit_mib, writer, settings);
  }
};
}  // namespace

int run_network_plans(const options& opt, const std::vector<suite>& suites, const std::vector<measured_case>& measured,
                      results_writer& writer, const case_settings& settings, const sampler& timer) {
  // The gpu-model build models instead of timing: each plan is executed once through the GPU code
  // paths and validated, and its time is the sum of its steps' modelled times (the cases' and the
  // transforms'), in the model columns; the host's clock times nothing there.
  const bool modelled = timer.models();
  int failures = 0;
  const double tolerance = 1e-3;  // fp32 kernels against a double reference, through the whole network
  for (const auto& su : suites) {
    if (su.kind != suite_kind::network) continue;
    network_plans n(su, opt, measured, writer, settings, timer, modelled, tolerance);
    n.run();
    failures += n.failures;
  }
  return failures;
}

}  // namespace kcnn::bench
