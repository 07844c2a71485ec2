#pragma once
// What a run was measured on: device, backend, Kokkos, BLAS, host, build and source tree.
#include "blas_runtime.hpp"

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
  std::string host_cpu, hostname;
  int host_logical_cpus = 0;
  std::string compiler, cxx_flags, build_type;
  std::string git_commit;
  bool git_clean = false;
  bool git_known = false;
};

device_info query_device();
run_context make_context(int argc, char** argv, const std::string& suite);
std::string slugify(const std::string& s);
std::string utc_stamp();          // 20261122T133000Z
std::string utc_iso8601();        // 2026-11-22T13:30:00Z

}  // namespace kcnn::bench
