#pragma once
// Command-line options of kcnn-bench (Google Benchmark's --benchmark_* flags pass through).
#include "cases/axes.hpp"

#include <algorithm>
#include <cstdint>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

namespace kcnn::bench {

// --mpi: none, each rank its share of the cases (shard), or every case on 1, 2, 4, ... ranks at
// once (replicate); run/mpi_job.hpp runs the job.
enum class mpi_mode { none, shard, replicate };

struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One --key pattern, or one line of a --key-file: a case is selected when its key contains a
// match of any of them (std::regex ECMAScript: anchor with ^ and $ for a whole key).
struct key_pattern {
  std::string text;
  std::string where;  // "--key" or "FILE:LINE", for messages
  std::regex re;
};

struct options {
  bool list = false;
  bool catalogue = false;             // --catalogue: the registry as Markdown
  bool help = false;
  bool quick = false;
  bool cold = false;                  // flush caches between repetitions
  std::vector<std::string> suites{"smoke"};
  bool suites_given = false;          // --suite on the command line
  bool memory_plan = false;           // --memory-plan: the memory-planning table instead of cases
  std::vector<double> memory_limits_mib;  // --memory-limit: a swap plan (and pass) under each limit
  bool network = false;               // --network: whole-network forward passes
  std::string session;                // --session NAME: a sequence of runs under a time budget
  double session_minutes = 30;        // --session-minutes: that budget
  bool session_minutes_given = false;
  bool print_device = false;          // --print-device: the device's results folder and name
  bool ceilings_only = false;         // --ceilings: measure the device's ceilings and exit
  bool no_ceilings = false;           // --no-ceilings: skip them (roofline_pct stays empty)
  bool profile = false;               // --profile: each case run once more inside a profiler capture range
  bool profile_only = false;          // --profile-only: validate, one captured run, no timing
  std::vector<key_pattern> keys;      // --key / --key-file: only cases whose key matches one
  bool fill = false;                  // --fill: each layer's batch sized to the device (suites/suite.hpp)
  int slow_reps = 0;                  // --slow-reps N: a case slower than slow_ms per launch is timed N times at most
  double slow_ms = 10;                // --slow-ms: that threshold
  bool host_timer = false;            // --host-timer: the fenced host clock even where a device timer exists
  double hold_timeout_ms = 20;        // --hold-timeout-ms: how long the device timer's blocking kernel waits
  std::string resume;                 // --resume FILE: skip its ok cases, append the rest to it
  std::vector<std::string> ops;
  std::vector<layout_axis> layouts;
  std::vector<space_axis> spaces;
  std::vector<pattern_axis> patterns;
  std::vector<const variant_kind*> variants;  // every registered kind of each name given
  int batch = 0;                      // 0: the suite's own batch
  std::string out = "results";
  std::uint64_t seed = 20161113;
  double uvm_cap_gib = 4.0;           // cap on the device budget of the UVM oversubscription study
  mpi_mode mpi = mpi_mode::none;      // --mpi shard | replicate (MPI builds, under mpirun or srun)
  double mpi_timeout_s = 600;         // --mpi-timeout: the longest wait for the other ranks
  // Timing policy (quick mode lowers these).
  int warmup = 2;
  int min_reps = 10;
  int max_reps = 10000;
  double budget_s = 1.0;              // per case, for the timed repetitions
  double target_spread = 0.01;        // stop once stddev/mean falls below this
  double noisy_spread = 0.05;         // a row whose final stddev/mean exceeds this is marked noisy
  std::string model_device = "h100_sxm";  // --model-device: the GPU the gpu-model build models
  std::string model_devices;          // --model-devices FILE: descriptions (default: kcnn's devices.csv)
  double model_trace_millions = 8;    // --model-trace M: accesses traced per launch, in millions
  std::vector<std::string> passthrough;  // argv for Google Benchmark
};

// True when this build can run --mpi (defined in run/mpi_job.cpp, the one file that includes <mpi.h>).
bool have_mpi();

// Parses argv (after Kokkos has removed its own flags). Throws usage_error.
options parse_options(int argc, char** argv);
std::string usage_text();

// The patterns of a --key-file: one regex per line; blank lines and lines starting with # are
// skipped. Throws usage_error naming the file and line (unreadable file, bad regex).
std::vector<key_pattern> read_key_file(const std::string& path);

// An empty filter matches everything.
template <class T>
bool matches(const std::vector<T>& filter, const T& value) {
  return filter.empty() || std::find(filter.begin(), filter.end(), value) != filter.end();
}

}  // namespace kcnn::bench
