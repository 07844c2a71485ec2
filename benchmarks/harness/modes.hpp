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
