#include "run/calibration.hpp"

#include "measure/stop.hpp"
#include "modes/modes.hpp"
#include "run/model_session.hpp"

#include <algorithm>
#include <iostream>

namespace kcnn::bench {

timing_policy timing_policy_from(const options& o, double overhead_s, const sampler& timer) {
  timing_policy p;
  p.warmup = o.warmup;
  p.min_reps = o.min_reps;
  p.max_reps = o.max_reps;
  p.budget_s = o.budget_s;
  p.target_spread = o.target_spread;
  p.noisy_spread = o.noisy_spread;
  p.quick = o.quick;
  p.overhead_s = overhead_s;
  p.profile = o.profile;
  // A device timer holds a batch only up to its queue-safe size: batches no larger.
  if (timer.max_launches() > 0) p.max_launches = std::min(p.max_launches, timer.max_launches());
  p.profile_only = o.profile_only;
  p.slow_reps = o.slow_reps;
  p.slow_s = o.slow_ms * 1e-3;
  return p;
}

run_calibration calibrate(const options& opt, const run_context& ctx, const sampler& timer, bool speak) {
  run_calibration cal;
  cal.clocks_start = read_gpu_clocks();
  if (cal.clocks_start.available && speak)
    std::cerr << "kcnn-bench: GPU clocks at the start: SM " << cal.clocks_start.sm_mhz << " of "
              << cal.clocks_start.sm_max_mhz << " MHz, memory " << cal.clocks_start.memory_mhz << " MHz, "
              << cal.clocks_start.temperature_c << " C\n";
  const bool want_ceilings = host_ceilings_apply() && !opt.no_ceilings && !opt.profile_only;
  if (want_ceilings) {
    if (speak) std::cerr << "kcnn-bench: measuring the ceilings (--no-ceilings skips them)\n";
    cal.ceil = measure_ceilings(ctx.device.l2_or_llc_bytes, timer);
    if (stop_requested()) cal.ceil = {};  // cut short: not ceilings (the cases are skipped too)
    else if (speak) print_ceilings(std::cerr, cal.ceil, ctx.blas);
  }
  // --profile-only times nothing: no calibration either (a profiler sees only the cases' runs).
  if (opt.profile_only) return cal;
  const timer_floor floor = timer_overhead(timer);
  cal.overhead_s = floor.host_s;
  cal.device_floor_s = floor.device_s;
  for (const auto& c : registry::instance().launch_costs())
    cal.launch_costs_s.push_back({c.name, c.space, c.seconds(timer)});
  return cal;
}

}  // namespace kcnn::bench
