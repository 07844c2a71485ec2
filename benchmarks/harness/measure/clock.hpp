#pragma once
// The clock of budgets, deadlines and progress lines: how long a stage has been going, never a
// figure in a row (those are the sampler's, sampler.hpp). Budgets and measurements read
// different clocks by name, so tests/check_one_timing_path.py can tell a timer started outside
// the sampler from a deadline.
#include <chrono>

namespace kcnn::bench {

class budget_clock {
 public:
  using clock = std::chrono::steady_clock;
  budget_clock() : start_(clock::now()) {}
  double seconds() const { return std::chrono::duration<double>(clock::now() - start_).count(); }

 private:
  clock::time_point start_;
};

}  // namespace kcnn::bench
