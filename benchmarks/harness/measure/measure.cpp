#include "measure/measure.hpp"

#include "measure/clock.hpp"
#include "measure/profiler_range.hpp"
#include "measure/stats.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <new>
#include <sstream>
#include <thread>
#include <vector>

namespace kcnn::bench {

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
  r.stride_h = s.row_stride(); r.stride_w = s.col_stride();
  r.pad_h = s.pad_top(); r.pad_w = s.pad_left(); r.pad_h_end = s.pad_bottom(); r.pad_w_end = s.pad_right();
  r.dilation_h = s.dilation_h; r.dilation_w = s.dilation_w;
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

bool out_of_memory(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e)) return true;
  const std::string m = e.what();
  return m.find("failed to allocate") != std::string::npos || m.find("cudaErrorMemoryAllocation") != std::string::npos;
}

namespace {

// One case's measurement, stage by stage; each stage reads what the earlier ones left.
class case_measurement {
 public:
  case_measurement(const planned_case& pc, const measurement_env& env, result_row& row)
      : pc_(pc), env_(env), row_(row), what_(pc.key) {}

  // The case and its cost as declared (a case that cannot be set up keeps it in its row).
  void make() {
    case_ = pc_.variant->make(pc_.spec, env_.settings);
    row_.tolerance = case_->tolerance();
    const case_cost cost = case_->cost();
    row_.bytes = cost.bytes;
    row_.flops = cost.flops;
    row_.workspace_bytes = cost.workspace_bytes;
    row_.passes = cost.passes;
    row_.predicted_dram_bytes = cost.predicted_dram_bytes;
  }

  // Operands allocated, filled and poisoned; the workspace read again (a library may size it here).
  void set_up() {
    case_->setup(env_.seed);
    Kokkos::fence();
    row_.workspace_bytes = case_->cost().workspace_bytes;
  }

  // One run on poisoned outputs, compared with the host reference; every rank that times the
  // case must pass before any times it. False: the row holds the verdict, nothing is timed.
  bool validate() {
    case_->before_run();
    local_agreement alone;  // the validation run is this rank's own
    // Not held: a first run may wait for the host inside (lazy allocation, a library's handle).
    validation_ = env_.sampler.sample(*case_, 1, alone, what_, false);
    const comparison cmp = case_->validate();
    row_.rel_error = cmp.non_finite > 0 ? -1 : cmp.rel_l2;
    agreed_on_validation_ = true;
    const bool everyone_passed = env_.ranks.agree_min(cmp.passed ? 1 : 0, "the validation of " + what_) == 1;
    if (!cmp.passed) {
      row_.status = case_status::failed_validation;
      row_.note = cmp.message;
    } else if (!everyone_passed) {
      row_.status = case_status::skipped;
      row_.note = "another rank failed the validation of this case: not timed";
    }
    return cmp.passed && everyone_passed;
  }

  // --profile: one more run, warm (after the validation run), inside a profiler's capture range
  // named by the case (profiler_range.hpp): a profiler attached with its capture off sees this
  // case's kernels exactly once, and its replays of them touch no timed sample.
  void profiled_run() {
    case_->before_run();
    Kokkos::fence();
    profiler_range range(what_);
    case_->run();
    Kokkos::fence();
  }

  // Quick mode is a smoke pass: a case whose validation run alone exceeded the budget is not run
  // again; that run is its one sample (the row's note says so).
  bool validation_run_is_the_sample() {
    validation_sampled_ = env_.ranks.agree_max(env_.policy.quick && validation_.host_s > env_.policy.budget_s ? 1 : 0,
                                               "quick mode of " + what_) == 1;
    if (validation_sampled_) samples_.push_back(validation_);
    return validation_sampled_;
  }

  void warm_up() {
    for (int k = 0; k < env_.policy.warmup; ++k) {
      case_->before_run();
      Kokkos::fence();
      case_->run();
    }
    Kokkos::fence();
  }

  // Batched launches for cases too short for one fenced launch to time (launches_per_sample);
  // only cases that need nothing between runs (no flush, no before_run work) are batched.
  void choose_launches_per_sample() {
    const bool back_to_back = !env_.flusher && case_->runs_back_to_back();
    // The host clock's figure against the host clock's floor: batching amortises the host's
    // fence and launch overhead, whichever timer the rows report.
    const timing_sample one_launch = sample(1);
    launches_ = launches_per_sample(one_launch.host_s, env_.policy.overhead_s, back_to_back, env_.policy.max_launches);
    launches_ = env_.ranks.agree_max(launches_, "the launches per sample of " + what_);
    slow_ = env_.policy.slow_reps > 0 &&
            env_.ranks.agree_max(one_launch.host_s > env_.policy.slow_s ? 1 : 0, "the speed of " + what_) == 1;
  }

  // Samples until the stopping rule: at least min_reps, then until the spread is below target or
  // the budget is spent, never more than max_reps.
  void sample_until_stop() {
    const timing_policy& p = env_.policy;
    budget_clock budget;
    running_spread spread;
    for (const auto& x : samples_) spread.add(x.seconds());
    while (true) {
      const timing_sample x = sample(launches_);
      if (x.throttled) ++throttled_;
      const bool drop = env_.ranks.agree_max(x.throttled && !throttle_kept_ ? 1 : 0,
                                             "the clock of a sample of " + what_) == 1;
      if (drop) {
        // As nvbench: a moment for the clock to recover; once as many samples as the minimum
        // repetitions were dropped, the clock is taken to stay low and samples are kept.
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        throttle_kept_ = ++dropped_ >= std::max(p.min_reps, 3);
      } else {
        samples_.push_back(x);
        spread.add(x.seconds());
      }
      const int n = int(samples_.size());
      const bool stop = n >= p.max_reps || (slow_ && n >= p.slow_reps) ||
                        (n >= p.min_reps && (spread.rel_spread() < p.target_spread || budget.seconds() > p.budget_s));
      if (env_.ranks.agree_max(stop ? 1 : 0, "the repetitions of " + what_) == 1) break;
    }
  }

  // --profile-only: validated and run once for the profiler; nothing timed.
  void summarise_profile_only() {
    row_.status = case_status::ok;
    row_.reps = 0;
    row_.note = join_notes(case_->extra_note(), "profile only: validated, one run in the capture range, not timed");
  }

  // The model's figures instead of times (a device-model sampler): the validated run was traced.
  void summarise_model() {
    row_.status = case_status::ok;
    row_.reps = 0;
    row_.note = case_->extra_note();
    if (pc_.variant->pattern == pattern_axis::library) {
      row_.note = join_notes(row_.note, "not modelled: a vendor library call (validated only)");
      return;
    }
    row_.model = env_.sampler.last_model(*case_);
    if (!row_.model.present) row_.note = join_notes(row_.note, "not modelled: no kcnn launch was recorded");
    else if (row_.model.traced_blocks < row_.model.all_blocks)
      row_.note = join_notes(row_.note, "model: " + std::to_string(row_.model.traced_blocks) + " of " +
                                            std::to_string(row_.model.all_blocks) +
                                            " blocks traced, counts scaled to all" +
                                            (row_.model.dram_reads_capped
                                                 ? std::string(", DRAM reads capped at the read operands (they fit in "
                                                               "half the L2)")
                                                 : std::string()));
    if (row_.model.present && row_.model.waves < 1) {
      // Why the slowest launch leaves the GPU partly idle: the work it has, per thread.
      const double threads = double(row_.model.blocks) * row_.model.threads_per_block;
      const double outputs = double(row_.n) * (row_.k > 0 ? row_.k : row_.c) *
                             std::max(1, row_.out_h > 0 ? row_.out_h : row_.h) *
                             std::max(1, row_.out_w > 0 ? row_.out_w : row_.w);
      std::ostringstream n;
      n.precision(3);
      n << "model: below one wave (" << row_.model.waves << "): the slowest launch has " << row_.model.blocks
        << " blocks of " << row_.model.threads_per_block << " threads for " << outputs << " outputs ("
        << outputs / threads << " per thread)";
      row_.note = join_notes(row_.note, n.str());
    }
  }

  // The row's times, status and note: the host clock's figures, and the device timer's where
  // every sample has one.
  void summarise() {
    std::vector<double> host, gpu;
    for (const auto& x : samples_) {
      host.push_back(x.host_s);
      if (x.gpu_s >= 0) gpu.push_back(x.gpu_s);
    }
    const sample_stats s = summarize(host);
    const bool device = !gpu.empty() && gpu.size() == host.size();
    const sample_stats rate = device ? summarize(gpu) : s;  // the figures the rates are of
    row_.timer = device ? env_.sampler.name() : "fenced_timer";
    if (device) {
      row_.gpu_time_ms_median = rate.median * 1e3;
      row_.gpu_time_ms_min = rate.min * 1e3;
      row_.gpu_time_ms_max = rate.max * 1e3;
    }
    row_.throttled_samples = throttled_;
    row_.reps = int(samples_.size());
    row_.launches = launches_;
    row_.time_ms_median = s.median * 1e3;
    row_.time_ms_min = s.min * 1e3;
    row_.time_ms_max = s.max * 1e3;
    row_.time_ms_mean = s.mean * 1e3;
    row_.time_ms_stddev = s.stddev * 1e3;
    row_.status = case_status::ok;
    row_.fits_in_cache = !env_.flusher && case_->operands_in_device_memory() &&
                         fits_in_cache(row_.bytes, row_.workspace_bytes, env_.settings.device_l2_bytes);
    row_.note = case_->extra_note();
    if (launches_ > 1)
      row_.note = join_notes(row_.note, std::to_string(launches_) + " back-to-back launches per sample (time per launch)");
    if (validation_sampled_) row_.note = join_notes(row_.note, "quick: the validation run timed");
    if (slow_ && samples_.size() < std::size_t(env_.policy.min_reps))
      row_.note = join_notes(row_.note, "slow case: " + std::to_string(samples_.size()) + " repetitions (--slow-reps)");
    if (hold_timed_out_)
      row_.note = join_notes(row_.note, "device timer: the blocking kernel timed out (the run waits on the host for "
                                        "the device inside: a fence, a synchronous call, or Kokkos' constant-memory "
                                        "launch of a large functor waiting for the one before): samples not held, "
                                        "the GPU time includes launch gaps");
    if (throttled_ > 0)
      row_.note = join_notes(row_.note, std::to_string(throttled_) + " samples at an SM clock below the throttle "
                                        "threshold, " + std::to_string(dropped_) + " of them discarded" +
                                        (throttle_kept_ ? " (then kept: the clock stayed low)" : ""));
    row_.note = join_notes(row_.note, noisy_note(rate, samples_.size(), env_.policy.noisy_spread));
  }

  // A case too big for the device is skipped (the run goes on); anything else is an error. The
  // other ranks still get this rank's part of the validation agreement; past it they are inside
  // the sampling collectives, which this rank can no longer match.
  void record_failure(const std::exception& e) {
    const bool oom = out_of_memory(e);
    row_.status = oom ? case_status::skipped : case_status::error;
    row_.note = oom ? std::string("out of memory: ") + e.what() : e.what();
    if (!agreed_on_validation_) env_.ranks.agree_min(0, "the validation of " + what_);
    else env_.ranks.abandon_case("error in " + what_ + " while the ranks timed it together: " + row_.note);
  }

 private:
  // One sample after its untimed preparation (flush, before_run). A held sample whose blocking
  // kernel timed out is taken again unheld, and the case is not held again.
  timing_sample sample(int launches) {
    while (true) {
      if (env_.flusher) (*env_.flusher)();
      case_->before_run();
      const timing_sample x = env_.sampler.sample(*case_, launches, env_.ranks, what_, hold_);
      if (env_.ranks.agree_max(x.hold_timed_out ? 1 : 0, "the hold of a sample of " + what_) == 0) return x;
      hold_ = false;
      hold_timed_out_ = true;
    }
  }

  const planned_case& pc_;
  const measurement_env& env_;
  result_row& row_;
  const std::string what_;
  std::unique_ptr<bench_case> case_;
  timing_sample validation_;
  bool agreed_on_validation_ = false, validation_sampled_ = false;
  bool hold_ = true, hold_timed_out_ = false, throttle_kept_ = false, slow_ = false;
  int launches_ = 1, throttled_ = 0, dropped_ = 0;
  std::vector<timing_sample> samples_;
};

}  // namespace

void measure_case(const planned_case& pc, const measurement_env& env, result_row& row) {
  case_measurement m(pc, env, row);
  try {
    m.make();
    m.set_up();
    if (!m.validate()) return;
    if (env.sampler.models()) return m.summarise_model();
    if (env.policy.profile || env.policy.profile_only) m.profiled_run();
    if (env.policy.profile_only) return m.summarise_profile_only();
    if (!m.validation_run_is_the_sample()) {
      m.warm_up();
      m.choose_launches_per_sample();
      m.sample_until_stop();
    }
    m.summarise();
  } catch (const std::exception& e) {
    m.record_failure(e);
  }
}

}  // namespace kcnn::bench
