#include "modes/forward_pass.hpp"

#include "measure/clock.hpp"
#include "measure/rank_agreement.hpp"
#include "measure/stats.hpp"
#include "measure/stop.hpp"

#include <kcnn/fill.hpp>
#include <kcnn/layout.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

namespace kcnn::bench {

namespace {

using device_buffer = Kokkos::View<float*>;
using device_span = Kokkos::View<float*, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// Where swapped tensors wait: pinned host memory where the device has its own (so the copies can
// run asynchronously on the copy instance), plain host memory on host backends.
#if defined(KOKKOS_ENABLE_CUDA)
using swap_host_space = Kokkos::CudaHostPinnedSpace;
#elif defined(KOKKOS_ENABLE_HIP)
using swap_host_space = Kokkos::HIPHostPinnedSpace;
#else
using swap_host_space = Kokkos::HostSpace;
#endif
using host_buffer = Kokkos::View<float*, swap_host_space>;

// The instance the swap copies run on, beside the default one the layers run on.
Kokkos::DefaultExecutionSpace copy_instance() {
#if KOKKOS_VERSION >= 40000
  return Kokkos::Experimental::partition_space(Kokkos::DefaultExecutionSpace(), 1)[0];
#else
  return Kokkos::DefaultExecutionSpace();
#endif
}

// Each layer's weights come from its own seed, the same in every plan (fills are layout-free).
std::uint64_t layer_seed(std::uint64_t seed, std::size_t layer) { return seed + 7919 * (layer + 1); }

std::vector<double> network_input(const suite& su, std::uint64_t seed) {
  const auto& l = su.layers.front();
  const dims4 d{l.n, l.c, l.h, l.w};
  std::vector<double> x(d.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = fill_value(seed, i);
  return x;
}

// Storage index of logical (n, c, h, w) in a layout given by its axis order, slowest first.
std::size_t storage_index(const std::array<axis, 4>& order, const dims4& d, int n, int c, int h, int w) {
  const int coord[4] = {n, c, h, w};
  const int extent[4] = {d.n, d.c, d.h, d.w};
  std::size_t idx = 0;
  for (axis a : order) idx = idx * std::size_t(extent[int(a)]) + std::size_t(coord[int(a)]);
  return idx;
}

void upload(float* dst, layout_axis layout, const dims4& d, const std::vector<double>& logical) {
  const auto order = physical_order(layout);
  Kokkos::View<float*, Kokkos::MemoryTraits<Kokkos::Unmanaged>> dev(dst, d.size());
  Kokkos::View<float*, Kokkos::HostSpace> h("forward.upload", d.size());
  std::size_t i = 0;
  for (int n = 0; n < d.n; ++n)
    for (int c = 0; c < d.c; ++c)
      for (int y = 0; y < d.h; ++y)
        for (int x = 0; x < d.w; ++x) h(storage_index(order, d, n, c, y, x)) = float(logical[i++]);
  Kokkos::deep_copy(dev, h);
}

std::vector<double> download(const float* src, layout_axis layout, const dims4& d) {
  const auto order = physical_order(layout);
  Kokkos::View<const float*, Kokkos::MemoryTraits<Kokkos::Unmanaged>> dev(src, d.size());
  Kokkos::View<float*, Kokkos::HostSpace> h("forward.download", d.size());
  Kokkos::deep_copy(h, dev);
  std::vector<double> out;
  out.reserve(d.size());
  for (int n = 0; n < d.n; ++n)
    for (int c = 0; c < d.c; ++c)
      for (int y = 0; y < d.h; ++y)
        for (int x = 0; x < d.w; ++x) out.push_back(h(storage_index(order, d, n, c, y, x)));
  return out;
}

// The transform from one layout to another: the scratch-tiled kernel when the build has it,
// else the global-memory one (kcnn's own kernels only: peers are not part of a plan).
const variant_info* transform_variant(layout_axis from, layout_axis to) {
  const variant_info* global = nullptr;
  const op_info* transform = registry::instance().layout_transform_op();
  if (!transform) return nullptr;
  for (const auto& v : registry::instance().variants())
    if (v.op == transform->name && v.layout == from && v.out_layout == to && v.origin() == origin::kcnn) {
      if (v.space == space_axis::scratch) return &v;
      if (v.space == space_axis::global) global = &v;
    }
  return global;
}

layer_spec transform_spec(const dims4& d, const std::string& name) {
  layer_spec s;
  s.network = "forward";
  s.layer = name;
  s.op = registry::instance().layout_transform_op()->name;
  s.n = d.n; s.c = d.c; s.h = d.h; s.w = d.w;
  s.out = d;
  return s;
}

dims4 input_dims(const layer_spec& l, std::size_t i) {
  return registry::instance().find_op(l.op)->input_shapes(l).at(i);
}

}  // namespace

dims4 tensor_shape(const suite& su, int producer) {
  return producer < 0 ? input_dims(su.layers.front(), 0) : su.layers.at(std::size_t(producer)).out;
}

double time_layout_transform(const dims4& d, layout_axis from, layout_axis to, std::uint64_t seed, const sampler& timer,
                             int min_reps, int max_reps, double budget_s, const case_settings& settings) {
  const variant_info* tv = transform_variant(from, to);
  if (!tv) return std::numeric_limits<double>::infinity();
  auto c = tv->make(transform_spec(d, "planner_transform"), settings);
  c->setup(seed);
  device_buffer in(Kokkos::view_alloc(Kokkos::WithoutInitializing, "planner.in"), d.size());
  device_buffer out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "planner.out"), d.size());
  Kokkos::deep_copy(in, 0.5f);
  c->bind({in.data()}, out.data());
  local_agreement alone;
  const std::string what = "the layout transform " + std::string(name(from)) + "->" + name(to);
  if (timer.models()) {  // one traced run; NaN when the model recorded no launch
    const double s = timer.sample(*c, 1, alone, what).seconds();
    return timer.last_model(*c).present ? s * 1e3 : std::nan("");
  }
  c->run();  // warm-up
  Kokkos::fence();
  std::vector<double> s;
  const budget_clock budget;
  while (int(s.size()) < max_reps && (int(s.size()) < min_reps || budget.seconds() < budget_s))
    s.push_back(timer.sample(*c, 1, alone, what).seconds());
  return summarize(s).median * 1e3;
}

forward_plan uniform_plan(const suite& su, layout_axis layout) {
  forward_plan p{std::string("uniform_") + name(layout), {}};
  for (const auto& l : su.layers) {
    const variant_info* v = registry::instance().baseline(l.op, layout);
    if (!v) throw std::runtime_error(l.file + ":" + std::to_string(l.line) + ": no " + name(layout) + " baseline of " + l.op);
    p.variants.push_back(v);
  }
  return p;
}

forward_plan in_place_plan(const suite& su, layout_axis layout, const case_settings& settings) {
  forward_plan p = uniform_plan(su, layout);
  p.name += "_in_place";
  for (std::size_t i = 0; i < su.layers.size(); ++i) {
    const auto& l = su.layers[i];
    if (!registry::instance().find_op(l.op)->in_place_capable || p.variants[i]->make(l, settings)->in_place_safe()) continue;
    for (const auto& v : registry::instance().variants())
      if (v.op == l.op && v.layout == layout && v.out_layout == layout && v.space == space_axis::global &&
          v.origin() == origin::kcnn && !v.variant->in_place && v.make(l, settings)->in_place_safe()) {
        p.variants[i] = &v;
        break;
      }
  }
  return p;
}

std::vector<double> reference_forward(const suite& su, std::uint64_t seed, const case_settings& settings) {
  const forward_plan plan = uniform_plan(su, layout_axis::nchw);
  std::map<std::string, std::vector<double>> out;  // by layer
  const std::vector<double> x0 = network_input(su, seed);
  const std::vector<double>* last = &x0;
  for (std::size_t i = 0; i < su.layers.size(); ++i) {
    const auto& l = su.layers[i];
    auto c = plan.variants[i]->make(l, settings);
    c->setup(layer_seed(seed, i));
    std::vector<std::vector<double>> ins;
    if (l.inputs.empty()) ins.push_back(x0);
    for (const auto& name : l.inputs) ins.push_back(out.at(name));
    std::vector<double> y = c->reference_on(ins);
    for (int r = 1; r < l.repeat; ++r) y = c->reference_on({y});
    out[l.layer] = std::move(y);
    last = &out[l.layer];
  }
  return *last;
}

namespace {

// One pass of run_forward, stage by stage over shared state. The members are declared in the
// order run_forward once made them as locals, so they are released in the same order.
struct forward_pass {
  // A step: a layer's runs, or a layout transform before it.
  struct step {
    bench_case* c;
    forward_step_time info;
    int repeat = 1;
    int layer = 0;
  };

  forward_pass(const suite& su, const forward_plan& plan, std::uint64_t seed, activation_memory memory,
               const case_settings& settings)
      : su(su), plan(plan), seed(seed), memory(memory), settings(settings), layers(su.layers), L(layers.size()),
        swapping(memory == activation_memory::swapped) {}

  const suite& su;
  const forward_plan& plan;
  const std::uint64_t seed;
  const activation_memory memory;
  const case_settings& settings;
  const std::vector<layer_spec>& layers;
  const std::size_t L;
  const bool swapping;
  std::vector<std::unique_ptr<bench_case>> cases;
  tensor_graph g;
  std::vector<layout_axis> tensor_layout;
  std::vector<dims4> tensor_dims;
  forward_result res;
  std::vector<device_buffer> buffers;
  device_buffer arena;
  std::vector<float*> ptr;
  std::vector<step> steps;
  std::vector<std::unique_ptr<bench_case>> transforms;
  std::vector<device_buffer> converted;
  std::map<std::pair<int, layout_axis>, float*> conversions;
  std::vector<host_buffer> host_copies;
  std::vector<std::vector<std::size_t>> copy_in_at, copy_out_after;
  Kokkos::DefaultExecutionSpace copies;

  std::string where(std::size_t i) const {
    return layers[i].file + ":" + std::to_string(layers[i].line) + ": layer '" + layers[i].layer + "': ";
  }
  layout_axis layout_of(int creator) const { return plan.variants[std::size_t(creator < 0 ? 0 : creator)]->layout; }

  // Cases with their weights.
  void make_cases() {
    for (std::size_t i = 0; i < L; ++i) {
      cases.push_back(plan.variants[i]->make(layers[i], settings));
      if (!cases.back()->bindable())
        throw std::runtime_error(where(i) + plan.variants[i]->variant_name() + " cannot be chained");
      cases.back()->setup(layer_seed(seed, i));
    }
  }

  // Whether layer i may write over its input (a layer writes over its input only in the same
  // layout, and in separate-buffer mode only if its variant always does).
  bool may_alias(int i, int creator, bool sole) const {
    const std::size_t li = std::size_t(i);
    const bool same_layout = layout_of(creator) == plan.variants[li]->layout;
    if (plan.variants[li]->variant->in_place) {
      if (!(sole && same_layout))
        throw std::runtime_error(where(li) + "an in-place variant needs its input to itself, in its own layout");
      return true;
    }
    return memory != activation_memory::separate && sole && same_layout &&
           registry::instance().find_op(layers[li].op)->in_place_capable && cases[li]->in_place_safe();
  }

  // Tensors: the graph with each variant's own in-place ability, each tensor's layout and shape.
  void build_tensors() {
    g = build_tensor_graph(su, [&](int i, int creator, bool sole) { return may_alias(i, creator, sole); });
    for (const auto& t : g.tensors) tensor_layout.push_back(layout_of(t.creator));
    tensor_dims.resize(g.tensors.size());
    tensor_dims[0] = input_dims(layers[0], 0);
    for (std::size_t i = 0; i < L; ++i) tensor_dims[std::size_t(g.output_of[i])] = layers[i].out;
  }

  // Device memory: one buffer per tensor, or one arena (with the swapped tensors' pieces). False
  // when the swap plan cannot meet the limit (nothing allocated).
  bool allocate(double memory_limit_bytes) {
    res.plan = plan.name;
    buffers.resize(g.tensors.size());
    ptr.resize(g.tensors.size());
    if (swapping) {
      res.swaps = plan_swaps(g.tensors, g.steps, memory_limit_bytes);
      res.arena_bytes = res.swaps.arena;
      if (!res.swaps.fits) {
        res.limit_met = false;
        return false;
      }
      arena = device_buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "forward.arena"), std::size_t(res.swaps.arena / sizeof(float)) + 1);
    } else if (memory == activation_memory::arena) {
      const double bytes = place_in_arena(g.tensors, fit::first);
      arena = device_buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "forward.arena"), std::size_t(bytes / sizeof(float)) + 1);
      for (std::size_t t = 0; t < g.tensors.size(); ++t) ptr[t] = arena.data() + std::size_t(g.tensors[t].offset / sizeof(float));
      res.arena_bytes = bytes;
    } else {
      for (std::size_t t = 0; t < g.tensors.size(); ++t) {
        buffers[t] = device_buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "forward." + g.tensors[t].name), tensor_dims[t].size());
        ptr[t] = buffers[t].data();
        res.arena_bytes += g.tensors[t].bytes;
      }
    }
    return true;
  }

  // Tensor t's device memory at step s: its piece's place in the arena when swapping.
  float* at(int t, int s) {
    if (!swapping) return ptr[std::size_t(t)];
    return arena.data() + std::size_t(res.swaps.piece_at(t, s).offset / sizeof(float));
  }

  // Layer i's input tensor t in the layout it wants: the tensor itself, or its converted copy,
  // made (with its transform step) the first time a layer asks for it.
  float* input_in_layout(std::size_t i, int t, layout_axis want) {
    const layout_axis have = tensor_layout[std::size_t(t)];
    if (have == want) return at(t, int(i));
    auto key = std::make_pair(t, want);
    if (!conversions.count(key)) {
      const variant_info* tv = transform_variant(have, want);
      if (!tv) throw std::runtime_error(where(i) + "no transform from " + name(have) + " to " + name(want));
      const dims4 d = tensor_dims[std::size_t(t)];
      const std::string name = g.tensors[std::size_t(t)].name + "_to_" + bench::name(want);
      transforms.push_back(tv->make(transform_spec(d, name), settings));
      transforms.back()->setup(seed);
      converted.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "forward." + name), d.size());
      res.converted_bytes += double(d.size() * sizeof(float));
      transforms.back()->bind({at(t, int(i))}, converted.back().data());
      steps.push_back({transforms.back().get(),
                       {"transform " + g.tensors[std::size_t(t)].name + " " + bench::name(have) + "->" + bench::name(want),
                        bench::name(want), tv->variant_name(), 0, int(i), true, d, have, want},
                       1, int(i)});
      conversions[key] = converted.back().data();
      ++res.transforms;
    }
    return conversions[key];
  }

  // Steps: layout transforms where a consumer's layout differs from its input's (converted
  // copies live in their own buffers, outside the arena), then the layer.
  void chain_steps() {
    for (std::size_t i = 0; i < L; ++i) {
      const layout_axis want = plan.variants[i]->layout;
      std::vector<float*> in_ptrs;
      for (int t : g.inputs_of[i]) in_ptrs.push_back(input_in_layout(i, t, want));
      cases[i]->bind(in_ptrs, at(g.output_of[i], int(i)));
      const auto* v = plan.variants[i];
      forward_step_time info;
      info.label = layers[i].layer;
      info.layout = name(v->layout);
      info.variant = v->variant_name() + (v->tuning.empty() ? "" : "/" + v->tuning.name) +
                     (v->space == space_axis::global ? "" : std::string("@") + name(v->space));
      info.layer = int(i);
      steps.push_back({cases[i].get(), info, layers[i].repeat, int(i)});
    }
  }

  // The swaps: a host buffer each; the copies out after their step `from`, back in with step
  // to-1 (overlapped) or before step `to` (synchronous), on their own instance (memory_plan.hpp).
  void plan_copies() {
    copy_in_at.resize(L);
    copy_out_after.resize(L);
    for (std::size_t k = 0; k < res.swaps.swaps.size(); ++k) {
      const auto& sw = res.swaps.swaps[k];
      host_copies.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "forward.swap." + sw.tensor),
                               std::size_t(sw.bytes / sizeof(float)));
      copy_out_after[std::size_t(sw.from)].push_back(k);
      copy_in_at[std::size_t(sw.to - (sw.overlap_in ? 1 : 0))].push_back(k);
    }
    copies = swapping ? copy_instance() : Kokkos::DefaultExecutionSpace();
  }

  device_span device_side(std::size_t k, int s) {
    const auto& sw = res.swaps.swaps[k];
    return device_span(at(sw.tensor_index, s), host_copies[k].extent(0));
  }

  // A layer's first step issues the copies back in; a synchronous one is waited for at once.
  void before_step(std::size_t s) {
    if (!swapping || (s > 0 && steps[s - 1].layer == steps[s].layer)) return;
    bool wait = false;
    for (std::size_t k : copy_in_at[std::size_t(steps[s].layer)]) {
      Kokkos::deep_copy(copies, device_side(k, res.swaps.swaps[k].to), host_copies[k]);
      wait = wait || !res.swaps.swaps[k].overlap_in;
    }
    if (wait) copies.fence();
  }

  // A layer's last step waits for the copies issued with it and after the layer before, then
  // issues the copies out of the tensors it used last before a gap.
  void after_step(std::size_t s) {
    if (!swapping || (s + 1 < steps.size() && steps[s + 1].layer == steps[s].layer)) return;
    copies.fence();
    bool wait = false;
    for (std::size_t k : copy_out_after[std::size_t(steps[s].layer)]) {
      Kokkos::deep_copy(copies, host_copies[k], device_side(k, res.swaps.swaps[k].from));
      wait = wait || !res.swaps.swaps[k].overlap_out;
    }
    if (wait) copies.fence();
  }

  // A step is timed through `timer`: its copies in, its runs, a fence, and with swaps the issue
  // of its copies out. On a GPU events around the step, never held. A swapped pass's step is the
  // host clock alone, with no fence before or after it: its copies out overlap the next step,
  // which waits for them where the plan says (before_step, after_step), as the pass would run
  // untimed. Without `step_s`, the pass runs untimed.
  void run_pass(const sampler& timer, const std::vector<double>& x0, std::vector<std::vector<double>>* step_s) {
    upload(at(0, 0), tensor_layout[0], tensor_dims[0], x0);  // the input may be overwritten in place
    Kokkos::fence();
    for (std::size_t s = 0; s < steps.size(); ++s) {
      timed_work w;
      w.kind = swapping ? work_kind::host_clock : work_kind::synchronising;
      w.fenced = !swapping;
      w.launch = [&] {
        before_step(s);
        for (int r = 0; r < steps[s].repeat; ++r) steps[s].c->run();
        if (swapping) {
          Kokkos::fence();
          after_step(s);
        }
      };
      if (!step_s) {
        w.launch();
        Kokkos::fence();
        continue;
      }
      (*step_s)[s].push_back(timer.take(w).seconds());
    }
  }

  // Validation pass: the network's output against the reference; true when it passed.
  bool validate(const sampler& timer, const std::vector<double>& x0, const std::vector<double>& reference,
                double tolerance) {
    run_pass(timer, x0, nullptr);
    const int out_t = g.output_of.back();
    const dims4 out_d = layers.back().out;
    const float* out_ptr = at(out_t, int(L) - 1);
    res.output = download(out_ptr, tensor_layout[std::size_t(out_t)], out_d);
    res.check = compare([&](int n, int c, int h, int w) { return res.output[((std::size_t(n) * out_d.c + c) * out_d.h + h) * out_d.w + w]; },
                        out_d, reference, tolerance);
    return res.check.passed;
  }

  // Timed passes until the stopping rule; the medians of the pass and of each step.
  void time_passes(const sampler& timer, const std::vector<double>& x0, int min_reps, int max_reps, double budget_s) {
    std::vector<std::vector<double>> step_s(steps.size());
    std::vector<double> totals;
    const budget_clock budget;
    while (true) {
      run_pass(timer, x0, &step_s);
      double sum = 0;
      for (const auto& v : step_s) sum += v.back();
      totals.push_back(sum);
      const int n = int(totals.size());
      if (n >= max_reps || (n >= min_reps && budget.seconds() > budget_s) || stop_requested()) break;
    }
    res.reps = int(totals.size());
    res.total_ms = summarize(totals).median * 1e3;
    for (std::size_t s = 0; s < steps.size(); ++s) {
      res.steps.push_back(steps[s].info);
      res.steps.back().ms = summarize(step_s[s]).median * 1e3;
    }
  }
};

}  // namespace

forward_result run_forward(const suite& su, const forward_plan& plan, std::uint64_t seed,
                           const std::vector<double>& reference, double tolerance, int min_reps,
                           int max_reps, double budget_s, activation_memory memory, const case_settings& settings,
                           double memory_limit_bytes) {
  forward_pass p(su, plan, seed, memory, settings);
  p.make_cases();
  p.build_tensors();
  if (!p.allocate(memory_limit_bytes)) return std::move(p.res);
  p.chain_steps();
  p.plan_copies();
  const std::vector<double> x0 = network_input(su, seed);
  // Through the run's sampler (a fenced timer when the caller gave none).
  const fenced_timer own_timer;
  const sampler& timer = settings.timer ? *settings.timer : own_timer;
  if (!p.validate(timer, x0, reference, tolerance)) return std::move(p.res);
  if (max_reps <= 0) {  // validated, not timed
    for (const auto& st : p.steps) p.res.steps.push_back(st.info);
    return std::move(p.res);
  }
  p.time_passes(timer, x0, min_reps, max_reps, budget_s);
  return std::move(p.res);
}

}  // namespace kcnn::bench
