#pragma once
// The benchmark run: the selected cases through the measurement's stages (measure/measure.hpp),
// one row each, under Google Benchmark (which sees one iteration whose manual time is the
// harness's median), then --network's plans, then the results closed with the run's context.
// With --mpi, each rank runs its share (shard) or every case is run by 1, 2, 4, ... ranks at
// once (replicate); rank 0's file ends with every rank's rows.
#include "cli/options.hpp"
#include "suites/selection.hpp"
#include "suites/suite.hpp"

#include <cstddef>
#include <vector>

namespace kcnn::bench {

// Returns 0 (every case ok or skipped), 1 (a case failed or errored), 2 (input error) or
// 128 + the signal that interrupted it.
int run_benchmarks(int argc, char** argv, const options& opt, const std::vector<suite>& suites,
                   std::vector<planned_case> cases, std::size_t cases_in_all);

}  // namespace kcnn::bench
