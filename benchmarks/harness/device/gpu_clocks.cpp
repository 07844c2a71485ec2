#include "device/gpu_clocks.hpp"

#include <Kokkos_Core.hpp>
#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#include <dlfcn.h>
#endif

namespace kcnn::bench {

#if defined(KOKKOS_ENABLE_CUDA)
namespace {
// The NVML entry points used, declared here (nvml.h is not needed: the types are plain).
struct nvml_api {
  using device = struct nvml_device_st*;
  int (*init)() = nullptr;
  int (*by_pci)(const char*, device*) = nullptr;
  int (*clock)(device, int, unsigned*) = nullptr;
  int (*max_clock)(device, int, unsigned*) = nullptr;
  int (*temperature)(device, int, unsigned*) = nullptr;
  int (*power)(device, unsigned*) = nullptr;
  int (*throttle)(device, unsigned long long*) = nullptr;
  void* lib = nullptr;
  std::string why;

  nvml_api() {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      why = "libnvidia-ml.so.1 not found (NVML ships with the NVIDIA driver)";
      return;
    }
    init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    by_pci = reinterpret_cast<int (*)(const char*, device*)>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock = reinterpret_cast<int (*)(device, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    max_clock = reinterpret_cast<int (*)(device, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetMaxClockInfo"));
    temperature = reinterpret_cast<int (*)(device, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetTemperature"));
    power = reinterpret_cast<int (*)(device, unsigned*)>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
    throttle = reinterpret_cast<int (*)(device, unsigned long long*)>(
        dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (!throttle)
      throttle = reinterpret_cast<int (*)(device, unsigned long long*)>(
          dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    if (!init || !by_pci || !clock) why = "NVML lacks nvmlInit_v2, nvmlDeviceGetHandleByPciBusId_v2 or nvmlDeviceGetClockInfo";
    else if (init() != 0) why = "nvmlInit_v2 failed";
  }
  bool usable() const { return why.empty(); }
};
}  // namespace
#endif

gpu_clocks read_gpu_clocks() {
  gpu_clocks c;
#if defined(KOKKOS_ENABLE_CUDA)
  static nvml_api nvml;  // loaded and initialised once per process
  if (!nvml.usable()) {
    c.why = nvml.why;
    return c;
  }
  int dev = 0;
  char bus[32] = {0};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetPCIBusId(bus, int(sizeof bus), dev) != cudaSuccess) {
    c.why = "the CUDA runtime gave no PCI bus id for the current device";
    return c;
  }
  nvml_api::device h = nullptr;
  if (nvml.by_pci(bus, &h) != 0) {
    c.why = std::string("NVML does not know the device at PCI bus id ") + bus;
    return c;
  }
  constexpr int sm = 1, mem = 2, gpu_sensor = 0;  // NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU
  c.available = nvml.clock(h, sm, &c.sm_mhz) == 0 && nvml.clock(h, mem, &c.memory_mhz) == 0;
  if (!c.available) {
    c.why = "nvmlDeviceGetClockInfo failed";
    return c;
  }
  if (nvml.max_clock) {
    nvml.max_clock(h, sm, &c.sm_max_mhz);
    nvml.max_clock(h, mem, &c.memory_max_mhz);
  }
  if (nvml.temperature) nvml.temperature(h, gpu_sensor, &c.temperature_c);
  if (nvml.power) nvml.power(h, &c.power_mw);
  if (nvml.throttle) nvml.throttle(h, &c.throttle_reasons);
#else
  c.why = "host backend: no GPU";
#endif
  return c;
}

}  // namespace kcnn::bench
