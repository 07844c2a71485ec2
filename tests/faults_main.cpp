// kcnn-bench-faults: kcnn-bench with the fault-injection variants registered (tests only).
#include "cases/registry.hpp"
#include "run/runner.hpp"

int main(int argc, char** argv) {
  kcnn::bench::registry::instance().enable_faults();
  return kcnn::bench::run_main(argc, argv);
}
