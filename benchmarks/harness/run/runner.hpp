#pragma once

namespace kcnn::bench {
// kcnn-bench's main: initialises Kokkos and Google Benchmark, runs, finalises.
// Returns 0 (all ok), 1 (a case failed or errored) or 2 (usage or input error).
int run_main(int argc, char** argv);
}  // namespace kcnn::bench
