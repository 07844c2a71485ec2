#include "measure.hpp"

#include "stats.hpp"

#include <kcnn/conv2d/direct_constant.hpp>
#include <kcnn/constant.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <new>
#include <vector>

namespace kcnn::bench {

timing_policy timing_policy::from(const options& o) {
  timing_policy p;
  p.warmup = o.warmup;
  p.min_reps = o.min_reps;
  p.max_reps = o.max_reps;
  p.budget_s = o.budget_s;
  p.target_spread = o.target_spread;
  p.noisy_spread = o.noisy_spread;
  p.quick = o.quick;
  return p;
}

namespace {
// Reads every element and writes nothing: a buffer of zeros never holds the marker, but the
// compiler cannot know that, so the loads stay. (A flush that writes leaves its lines dirty in
// the cache, and their write-back then lands inside the next timed kernel.)
struct read_every_element {
  Kokkos::View<const float*> b;
  Kokkos::View<int> found_marker;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    if (b(i) == 1.0f) found_marker() = 1;
  }
};
struct empty_kernel {
  KOKKOS_INLINE_FUNCTION void operator()(const int) const {}
};
// A one-element kernel carrying as many floats by value as a constant-memory conv2d does.
struct constant_sized_kernel {
  Kokkos::Array<float, constant_filter_capacity> w;
  Kokkos::View<float*> out;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const { out(i) = w[int(i)]; }
};
}  // namespace

cache_flusher::cache_flusher(double cache_bytes) {
  const std::size_t n = std::size_t(std::max(4.0 * cache_bytes, 64.0 * 1024 * 1024) / sizeof(float));
  buf_ = Kokkos::View<float*>("kcnn::cache_flush", n);  // zeros
  found_marker_ = Kokkos::View<int>("kcnn::cache_flush.marker");
}

void cache_flusher::operator()() const {
  Kokkos::parallel_for("kcnn::cache_flush", Kokkos::RangePolicy<Kokkos::IndexType<std::size_t>>(0, buf_.extent(0)),
                       read_every_element{buf_, found_marker_});
}

result_row case_row(const planned_case& pc, const std::string& suite, bool cold) {
  result_row r;
  const auto& s = pc.spec;
  const auto& v = *pc.variant;
  r.suite = suite;
  r.network = s.network;
  r.layer = s.layer;
  r.op = s.op;
  r.n = s.n; r.c = s.c; r.h = s.h; r.w = s.w; r.k = s.k; r.r = s.r; r.s = s.s;
  r.stride = s.stride; r.pad = s.pad; r.groups = s.groups;
  r.out_h = s.out.h; r.out_w = s.out.w; r.repeat = s.repeat;
  r.layout = name(v.layout);
  r.memory_space = name(v.space);
  r.access_pattern = name(v.pattern);
  r.variant = v.variant_name();
  r.tuning = v.tuning.name;
  r.origin = name(v.origin());
  r.key = pc.key;
  r.cache = cold ? "flushed" : "warm";
  return r;
}

bool fits_in_cache(double bytes, double workspace_bytes, double cache_bytes) {
  return cache_bytes > 0 && bytes > 0 && bytes + workspace_bytes <= cache_bytes;
}

int launches_per_sample(double one_launch_s, double overhead_s, bool back_to_back, int max_launches) {
  if (!back_to_back || overhead_s <= 0 || one_launch_s <= 0) return 1;
  const double min_sample_s = 100.0 * overhead_s;
  if (one_launch_s >= min_sample_s) return 1;
  return int(std::min(double(std::max(1, max_launches)), std::ceil(min_sample_s / one_launch_s)));
}

bool out_of_memory(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e)) return true;
  const std::string m = e.what();
  return m.find("failed to allocate") != std::string::npos || m.find("cudaErrorMemoryAllocation") != std::string::npos;
}

void measure_case(const planned_case& pc, const case_settings& settings, const timing_policy& policy,
                  std::uint64_t seed, const cache_flusher* flusher, result_row& row) {
  // With other ranks (policy.sync), every collective below is made by each of them in the same
  // order, whatever happens here: a rank that failed before the validation agreement still
  // takes part in it (in the catch block).
  sample_sync* const sync = policy.sync;
  bool agreed_on_validation = false;
  const std::string what = pc.key;
  try {
    std::unique_ptr<bench_case> c = pc.variant->make(pc.spec, settings);
    row.tolerance = c->tolerance();
    // The cost as declared (a case that cannot be set up keeps it in its row), then the workspace
    // again after setup: a library may size its workspace there.
    const case_cost cost = c->cost();
    row.bytes = cost.bytes;
    row.flops = cost.flops;
    row.workspace_bytes = cost.workspace_bytes;
    row.passes = cost.passes;
    row.predicted_dram_bytes = cost.predicted_dram_bytes;
    c->setup(seed);
    Kokkos::fence();
    row.workspace_bytes = c->cost().workspace_bytes;
    // Validate first: one run on poisoned outputs, compared with the host reference.
    c->before_run();
    Kokkos::fence();
    Kokkos::Timer validate_clock;
    c->run();
    Kokkos::fence();
    const double validate_s = validate_clock.seconds();
    const comparison cmp = c->validate();
    row.rel_error = cmp.non_finite > 0 ? -1 : cmp.rel_l2;
    bool everyone_passed = cmp.passed;
    if (sync) {
      agreed_on_validation = true;
      everyone_passed = sync->agree_min(cmp.passed ? 1 : 0, "the validation of " + what) == 1;
    }
    if (!cmp.passed) {
      row.status = "failed_validation";
      row.note = cmp.message;
      return;
    }
    if (!everyone_passed) {
      row.status = "skipped";
      row.note = "another rank failed the validation of this case: not timed";
      return;
    }
    // Quick mode is a smoke pass: a case whose validation run alone exceeded the budget is not
    // run again; that fenced run is its one sample (the row's note says so).
    bool slow_quick = policy.quick && validate_s > policy.budget_s;
    if (sync) slow_quick = sync->agree_max(slow_quick ? 1 : 0, "quick mode of " + what) == 1;
    std::vector<double> samples;
    int launches = 1;
    if (slow_quick) {
      samples.push_back(validate_s);
    } else {
      for (int k = 0; k < policy.warmup; ++k) {
        c->before_run();
        Kokkos::fence();
        c->run();
      }
      Kokkos::fence();
      // A sample of `launches` runs; untimed work (flush, before_run) happens once before it, so
      // only cases that need none between runs are batched.
      auto sample = [&](int k) {
        if (flusher) (*flusher)();
        c->before_run();
        return timed_sample(k, [&] { c->run(); }, [&] {
          if (sync) sync->barrier("a sample of " + what);  // every rank starts together
        });
      };
      launches = launches_per_sample(sample(1), policy.overhead_s, !flusher && c->runs_back_to_back(),
                                     policy.max_launches);
      if (sync) launches = sync->agree_max(launches, "the launches per sample of " + what);
      Kokkos::Timer budget;
      while (true) {
        samples.push_back(sample(launches));
        const int n = int(samples.size());
        bool stop = n >= policy.max_reps ||
                    (n >= policy.min_reps &&
                     (summarize(samples).rel_spread() < policy.target_spread || budget.seconds() > policy.budget_s));
        if (sync) stop = sync->agree_max(stop ? 1 : 0, "the repetitions of " + what) == 1;
        if (stop) break;
      }
    }
    const sample_stats s = summarize(samples);
    row.reps = int(samples.size());
    row.launches = launches;
    row.time_ms_median = s.median * 1e3;
    row.time_ms_min = s.min * 1e3;
    row.time_ms_max = s.max * 1e3;
    row.time_ms_mean = s.mean * 1e3;
    row.time_ms_stddev = s.stddev * 1e3;
    row.status = "ok";
    row.fits_in_cache =
        !flusher && c->operands_in_device_memory() && fits_in_cache(row.bytes, row.workspace_bytes, settings.device_l2_bytes);
    row.note = c->extra_note();
    if (launches > 1)
      row.note = join_notes(row.note, std::to_string(launches) + " back-to-back launches per sample (time per launch)");
    if (slow_quick) row.note = join_notes(row.note, "quick: the validation run timed");
    row.note = join_notes(row.note, noisy_note(s, samples.size(), policy.noisy_spread));
  } catch (const std::exception& e) {
    // A case too big for the device is skipped (the run goes on); anything else is an error.
    const bool oom = out_of_memory(e);
    row.status = oom ? "skipped" : "error";
    row.note = oom ? std::string("out of memory: ") + e.what() : e.what();
    if (sync && !agreed_on_validation) sync->agree_min(0, "the validation of " + what);
    // Past that agreement the other ranks are inside the sample loop's collectives, which this
    // rank can no longer match: the job ends, naming the case, rather than hang or mismatch.
    if (sync && agreed_on_validation)
      mpi_job::instance().abort("error in " + what + " while the ranks timed it together: " + row.note);
  }
}

double timer_overhead_seconds() {
  std::vector<double> t;
  for (int i = 0; i < 200; ++i)
    t.push_back(timed_sample(1, [] { Kokkos::parallel_for("kcnn::empty", Kokkos::RangePolicy<>(0, 1), empty_kernel{}); }));
  return summarize(t).median;
}

double constant_launch_seconds() {
  constant_sized_kernel k{};
  k.out = Kokkos::View<float*>("kcnn::constant_launch", 1);
  auto launch = [&] { parallel_for_constant("kcnn::constant_launch", Kokkos::DefaultExecutionSpace(), 1, k); };
  launch();
  std::vector<double> t;
  for (int i = 0; i < 50; ++i) t.push_back(timed_sample(10, launch));
  return summarize(t).median;
}

}  // namespace kcnn::bench
