#pragma once
// The modes of kcnn-bench besides the per-case benchmark run (run/benchmark_run.hpp): --list,
// --catalogue (catalogue.hpp), --ceilings, --memory-plan and --network. Each takes the parsed
// options and returns the process's exit status.
#include "cases/registry.hpp"
#include "device/blas_runtime.hpp"
#include "measure/ceilings.hpp"
#include "measure/sampler.hpp"
#include "results/results.hpp"
#include "cli/options.hpp"
#include "suites/selection.hpp"
#include "suites/suite.hpp"

#include <iosfwd>
#include <vector>

namespace kcnn::bench {

// --list: one key per line on stdout, what is not on this build and not applicable on stderr.
int list_cases(const selection& sel);

// --ceilings: the ceilings alone, as op `ceiling` rows (variant copy, triad, cache_copy, fma,
// gemm) and in the context.
int run_ceilings_mode(int argc, char** argv, const options& opt);
// The ceilings' line on the terminal (and the host BLAS behind KokkosBlas::gemm).
void print_ceilings(std::ostream& os, const ceilings& c, const blas_info& blas);

// --memory-plan: the memory-planning table of every network suite (batches 1 and 64, or --batch),
// printed and written as rows.
int run_memory_plan_mode(int argc, char** argv, const options& opt, std::vector<suite>& suites);
int run_memory_plan(const options& opt, std::vector<suite>& suites, results_writer& writer);

// A case the per-case run measured (for the per-layer and optimal plans of --network).
struct measured_case {
  const variant_info* variant;
  std::string network, layer;
  double time_ms;  // median; in the gpu-model build, the device model's time
};

// --network: after the per-case run over the network suites, runs the uniform plans (nchw,
// nhwc, chwn baselines), the per-layer plan (each layer's fastest measured chainable variant,
// transforms inserted where layouts change) and the optimal layout plan, validates each pass
// against the host reference forward pass, then the uniform nchw arena pass and, under each
// --memory-limit, the swapped pass (both validated), prints the tables and writes rows (op
// network). Returns the number of failed plans.
// `timer` is the run's sampler: with the device model (the gpu-model build) the plans' times are
// modelled, not timed (run_network_plans in network_mode.cpp says how), and the arena and swapped
// passes are not run.
int run_network_plans(const options& opt, const std::vector<suite>& suites, const std::vector<measured_case>& measured,
                      results_writer& writer, const case_settings& settings, const sampler& timer);

// --session NAME: a sequence of kcnn-bench runs (child processes) under --session-minutes,
// then the session's record (<out>/<device>/<stamp>-session.json) and kcnn-report's report.
// Called before Kokkos is initialised (the steps need the device); argv still holds --kokkos-*.
int run_session_mode(int argc, char** argv, const options& opt);

}  // namespace kcnn::bench
