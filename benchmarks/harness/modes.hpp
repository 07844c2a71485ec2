#pragma once
// The modes of kcnn-bench besides the per-case benchmark: --memory-plan and --network.
#include "options.hpp"
#include "results.hpp"
#include "suite.hpp"

#include <vector>

namespace kcnn::bench {

// Prints the memory-plan table of every network suite (batches 1 and 64, or --batch) and
// writes its rows; returns the exit status.
int run_memory_plan(const options& opt, std::vector<suite>& suites, results_writer& writer);

}  // namespace kcnn::bench

namespace kcnn::bench {

// A case the per-case run measured (for the per-layer plan of --network).
struct measured_case {
  const variant_info* variant;
  std::string network, layer;
  double time_ms;  // median
};

// --network: after the per-case run over the network suites, runs the uniform plans (nchw,
// nhwc, chwn baselines) and the per-layer plan (each layer's fastest measured chainable
// variant, transforms inserted where layouts change), validates each pass against the host
// reference forward pass, checks the arena run against the separate-buffer run, prints the
// tables and writes rows (op network). Returns the number of failed plans.
int run_network_plans(const options& opt, const std::vector<suite>& suites,
                      const std::vector<measured_case>& measured, results_writer& writer, const case_settings& settings);

}  // namespace kcnn::bench
