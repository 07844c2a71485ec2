#pragma once
// What the benchmark run measures once, before the cases (GPU clocks, ceilings, the timer's
// floor, the registered launch costs), and the timing policy the cases are measured under.
#include "cli/options.hpp"
#include "device/context.hpp"
#include "device/gpu_clocks.hpp"
#include "measure/ceilings.hpp"
#include "measure/measure.hpp"
#include "measure/sampler.hpp"

#include <string>
#include <vector>

namespace kcnn::bench {

timing_policy timing_policy_from(const options& o, double overhead_s, const sampler& timer);

// What the run measures once, before the cases; recorded in the context.
struct run_calibration {
  gpu_clocks clocks_start;
  ceilings ceil;
  double overhead_s = 0;          // the host clock's floor (batching amortises it)
  double device_floor_s = -1;     // the device timer's figure of the same empty kernel (< 0: none)
  struct measured_cost {
    std::string name;
    space_axis space;
    double seconds;
  };
  std::vector<measured_cost> launch_costs_s;  // registry's launch_costs(), measured
};

// `speak`: this rank prints the clocks and ceilings (with MPI, rank 0 alone).
run_calibration calibrate(const options& opt, const run_context& ctx, const sampler& timer, bool speak);

}  // namespace kcnn::bench
