#pragma once
// The GPU's clocks, temperature, power and throttle reasons, read through NVML (the driver's
// management library, loaded at run time: no build dependency) at the start and at the end of a
// run, so that a run measured at a lowered clock says so. Host builds have nothing to read.
#include <string>

namespace kcnn::bench {

struct gpu_clocks {
  bool available = false;
  std::string why;  // when not available
  unsigned sm_mhz = 0, memory_mhz = 0, sm_max_mhz = 0, memory_max_mhz = 0;
  unsigned temperature_c = 0, power_mw = 0;
  unsigned long long throttle_reasons = 0;  // NVML's bit mask (0: none; 1: idle)
};

// Reads the current device's (the CUDA runtime's current device, matched to NVML by PCI bus id).
gpu_clocks read_gpu_clocks();

}  // namespace kcnn::bench
