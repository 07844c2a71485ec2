#pragma once
// What a run was measured on: device, backend, Kokkos, BLAS, host, build and source tree.
#include "device/blas_runtime.hpp"

#include <map>
#include <string>
#include <vector>

namespace kcnn::bench {

struct device_info {
  std::string name;    // e.g. "NVIDIA H100 80GB HBM3" or the host CPU model
  std::string slug;    // folder name under results/
  std::string backend; // Kokkos default execution space, lowercase (cuda, openmp, serial...)
  // Numeric / textual properties where the runtime exposes them (JSON-ready values).
  std::vector<std::pair<std::string, std::string>> properties;
  double l2_or_llc_bytes = 0;  // for cache flushing
  double memory_bytes = 0;     // device memory (host backends: physical memory), for footprint checks
};

struct run_context {
  std::string run_id, timestamp, suite;
  std::vector<std::string> command_line;
  device_info device;
  std::string kokkos_version, kokkos_kernels_version;
  std::vector<std::string> kokkos_backends;
  blas_info blas;  // the host BLAS behind KokkosBlas::gemm, as loaded
  std::string kokkos_configuration;  // Kokkos::print_configuration text
  std::string kokkos_view;           // "mdspan" (Kokkos >= 4.7's default) or "legacy"
  std::string read_only_loads;       // what the readonly space's loads compile to (kcnn::read_only_load_path)
  std::string gemm_backend;          // what KokkosBlas::gemm reaches for the default execution space
  // Environment variables that change what is measured (set ones only), e.g. NVIDIA_TF32_OVERRIDE,
  // which would let cuBLAS/cuDNN fp32 run on TF32 tensor cores.
  std::vector<std::pair<std::string, std::string>> environment;
  std::string host_cpu, hostname;
  int host_logical_cpus = 0;
  // Whether host kernels store outputs of at least the threshold non-temporally
  // (the host tuning's stream_lanes: a host backend on x86), and the threshold in effect
  // (device/host_stores.hpp).
  bool streaming_stores = false;
  std::size_t streaming_store_threshold_bytes = 0;
  std::string compiler, cxx_flags, build_type;
  std::string git_commit;
  bool git_clean = false;
  bool git_known = false;
};

device_info query_device();
// The last-level cache the given CPUs reach, from a Linux sysfs CPU folder (/sys/devices/system/cpu
// on a host): per CPU, the highest-level data or unified cache listed under cpuN/cache/indexK/,
// each instance (its shared_cpu_list) counted once. 0 when none is listed for them. A host
// backend's device_info takes it for as many CPUs of the process' affinity mask as the backend has
// threads (sysconf where it is 0).
double reachable_llc_bytes(const std::string& cpu_root, const std::vector<int>& cpus);
// The gemm backend description for a default execution space (cuda or a host backend), the
// Kokkos Kernels TPL flags and the host BLAS found at run time.
std::string describe_gemm_backend(bool device_is_cuda, bool tpl_cublas, bool tpl_blas, const std::string& host_blas);
// The variables of `names` that are set, with their values.
std::vector<std::pair<std::string, std::string>> environment_subset(const std::vector<std::string>& names);
run_context make_context(int argc, char** argv, const std::string& suite);
std::string slugify(const std::string& s);
// A shell command's standard output (trailing newlines removed); ok: it ran and exited 0.
std::string run_command(const std::string& cmd, bool& ok);
std::string utc_stamp();          // 20261122T133000Z
std::string utc_iso8601();        // 2026-11-22T13:30:00Z

}  // namespace kcnn::bench
