#pragma once
// A profiler's capture range around one run of a case (kcnn-bench --profile). On a CUDA build:
// cudaProfilerStart and cudaProfilerStop, what `ncu --profile-from-start off` and `nsys profile
// --capture-range=cudaProfilerApi --capture-range-end=repeat` wait for, inside an NVTX range named
// by the case's key (`ncu --nvtx --print-nvtx-rename kernel` then names each kernel after its
// case; a toolkit without the header-only NVTX 3 leaves them unnamed, which scripts/ncu-counters
// refuses). Everything else the process launches (the timer's calibration, fills, validation,
// timed runs) stays outside. Other builds have no such range: kcnn-bench warns and makes the run.
#include <string>

namespace kcnn::bench {

// True on a build whose device a capture range applies to (CUDA).
bool profiler_capture_available();

class profiler_range {
 public:
  explicit profiler_range(const std::string& name);
  ~profiler_range();
  profiler_range(const profiler_range&) = delete;
  profiler_range& operator=(const profiler_range&) = delete;
};

}  // namespace kcnn::bench
