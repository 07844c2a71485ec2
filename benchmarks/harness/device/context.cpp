#include "device/context.hpp"

#include "kcnn_build_info.hpp"

#include <kcnn/compat.hpp>
#include "device/host_stores.hpp"
#include <kcnn/tensor.hpp>

#include <Kokkos_Core.hpp>
#if __has_include(<KokkosKernels_config.h>)
#include <KokkosKernels_config.h>
#endif
#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <type_traits>

namespace kcnn::bench {

std::string slugify(const std::string& s) {
  std::string out;
  for (char ch : s) {
    const unsigned char u = static_cast<unsigned char>(ch);
    if (std::isalnum(u)) out += char(std::tolower(u));
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "unknown-device" : out;
}

static std::string format_time(const char* fmt) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, fmt, &tm);
  return buf;
}
std::string utc_stamp() { return format_time("%Y%m%dT%H%M%SZ"); }
std::string utc_iso8601() { return format_time("%Y-%m-%dT%H:%M:%SZ"); }

static std::string lower(std::string s) {
  for (auto& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

static std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto v = line.substr(colon + 1);
        const auto b = v.find_first_not_of(' ');
        return b == std::string::npos ? v : v.substr(b);
      }
    }
  return "unknown CPU";
}

// Reads the first line of a sysfs file ("" when it cannot be read).
static std::string sysfs_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

// A sysfs cache size ("32768K", "1M", "512"): bytes, 0 when unreadable.
static double sysfs_size_bytes(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || v <= 0) return 0;
  const char unit = *end == '\0' ? ' ' : char(std::toupper(static_cast<unsigned char>(*end)));
  return unit == 'K' ? v * 1024 : unit == 'M' ? v * 1024 * 1024 : unit == 'G' ? v * 1024 * 1024 * 1024 : v;
}

double reachable_llc_bytes(const std::string& cpu_root, const std::vector<int>& cpus) {
  int top_level = 0;
  double bytes = 0;
  std::set<std::string> instances;
  for (const int cpu : cpus) {
    const std::string caches = cpu_root + "/cpu" + std::to_string(cpu) + "/cache/index";
    for (int index = 0;; ++index) {
      const std::string dir = caches + std::to_string(index) + "/";
      const std::string level_text = sysfs_line(dir + "level");
      if (level_text.empty()) break;
      if (sysfs_line(dir + "type") == "Instruction") continue;
      const int level = std::atoi(level_text.c_str());
      const double size = sysfs_size_bytes(sysfs_line(dir + "size"));
      if (level < top_level || size <= 0) continue;
      if (level > top_level) {
        top_level = level;
        bytes = 0;
        instances.clear();
      }
      if (instances.insert(sysfs_line(dir + "shared_cpu_list")).second) bytes += size;
    }
  }
  return bytes;
}

// The last-level cache the host backend's threads reach (reachable_llc_bytes): as many CPUs of
// the process' affinity mask as the backend has threads (1 on Serial), the first ones standing in
// for wherever the OS puts them. glibc's sysconf(_SC_LEVEL3_CACHE_SIZE) reports a whole socket's
// L3 on AMD EPYC, where the cores of each CCD share a slice of it: two cores of one CCD reach an
// eighth of what sysconf says on an 8-CCD socket, and the ceilings' arrays, --fill's batches and
// --cold's flush were sized by the larger figure. sysconf where sysfs lists no cache.
static double host_llc_bytes() {
  const int threads = std::max(1, compat::concurrency(Kokkos::DefaultHostExecutionSpace()));
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) == 0) {
    std::vector<int> cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE && int(cpus.size()) < threads; ++cpu)
      if (CPU_ISSET(cpu, &mask)) cpus.push_back(cpu);
    if (const double bytes = reachable_llc_bytes("/sys/devices/system/cpu", cpus); bytes > 0) return bytes;
  }
  long l3 = -1, l2 = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
  l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
  l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  if (l3 > 0) return double(l3);
  if (l2 > 0) return double(l2);
  return 32.0 * 1024 * 1024;  // unknown: assume a generous last-level cache
}

// The one place that asks the CUDA runtime about the device.
device_info query_device() {
  device_info d;
  d.backend = lower(Kokkos::DefaultExecutionSpace::name());
#if defined(KOKKOS_ENABLE_CUDA)
  if (std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::Cuda>) {
    int dev = 0;
    cudaGetDevice(&dev);
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, dev) == cudaSuccess) {
      d.name = p.name;
      auto attr = [&](cudaDeviceAttr a) {
        int v = 0;
        return cudaDeviceGetAttribute(&v, a, dev) == cudaSuccess ? v : 0;
      };
      const int mem_clock_khz = attr(cudaDevAttrMemoryClockRate);
      const int bus_bits = attr(cudaDevAttrGlobalMemoryBusWidth);
      const int sm_clock_khz = attr(cudaDevAttrClockRate);
      int runtime = 0, driver = 0;
      cudaRuntimeGetVersion(&runtime);
      cudaDriverGetVersion(&driver);
      d.properties = {
          {"compute_capability", "\"" + std::to_string(p.major) + "." + std::to_string(p.minor) + "\""},
          {"sm_count", std::to_string(p.multiProcessorCount)},
          {"global_memory_bytes", std::to_string(p.totalGlobalMem)},
          {"l2_cache_bytes", std::to_string(p.l2CacheSize)},
          {"shared_memory_per_block_bytes", std::to_string(p.sharedMemPerBlock)},
          {"shared_memory_per_sm_bytes", std::to_string(p.sharedMemPerMultiprocessor)},
          {"max_threads_per_block", std::to_string(p.maxThreadsPerBlock)},
          {"warp_size", std::to_string(p.warpSize)},
          {"sm_clock_khz", std::to_string(sm_clock_khz)},
          {"memory_clock_khz", std::to_string(mem_clock_khz)},
          {"memory_bus_width_bits", std::to_string(bus_bits)},
          // DDR: two transfers per clock.
          {"theoretical_bandwidth_gbps",
           std::to_string(2.0 * mem_clock_khz * 1e3 * (bus_bits / 8.0) / 1e9)},
          {"cuda_runtime_version", std::to_string(runtime)},
          {"cuda_driver_version", std::to_string(driver)}};
      d.l2_or_llc_bytes = double(p.l2CacheSize);
      d.memory_bytes = double(p.totalGlobalMem);
    }
  }
#endif
  if (d.name.empty()) {
    d.name = cpu_model();
    d.l2_or_llc_bytes = host_llc_bytes();
    d.memory_bytes = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
    d.properties = {{"last_level_cache_bytes", std::to_string(static_cast<long long>(d.l2_or_llc_bytes))},
                    {"concurrency", std::to_string(compat::concurrency(Kokkos::DefaultExecutionSpace()))}};
  }
  d.slug = slugify(d.name);
  return d;
}

std::string run_command(const std::string& cmd, bool& ok) {
  ok = false;
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  std::array<char, 256> buf;
  while (fgets(buf.data(), int(buf.size()), p)) out += buf.data();
  ok = pclose(p) == 0;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string describe_gemm_backend(bool device_is_cuda, bool tpl_cublas, bool tpl_blas, const std::string& host_blas) {
  if (device_is_cuda)
    return tpl_cublas ? "cuBLAS (Kokkos Kernels' cuBLAS TPL)"
                      : "Kokkos Kernels' own CUDA kernels (built without its cuBLAS TPL: not a tuned GEMM)";
  return tpl_blas ? "host BLAS " + host_blas + " (Kokkos Kernels' BLAS TPL)" : "Kokkos Kernels' own host kernels";
}

std::vector<std::pair<std::string, std::string>> environment_subset(const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, std::string>> env;
  for (const auto& n : names)
    if (const char* v = std::getenv(n.c_str())) env.emplace_back(n, v);
  return env;
}

run_context make_context(int argc, char** argv, const std::string& suite) {
  run_context c;
  c.timestamp = utc_iso8601();
  std::random_device rd;
  char tag[9];
  std::snprintf(tag, sizeof tag, "%08x", rd());
  c.run_id = utc_stamp() + "-" + tag;
  c.suite = suite;
  for (int i = 0; i < argc; ++i) c.command_line.push_back(argv[i]);
  c.device = query_device();
  c.kokkos_version = compat::version_string();
#ifdef KOKKOSKERNELS_VERSION
  c.kokkos_kernels_version = std::to_string(KOKKOSKERNELS_VERSION / 10000) + "." +
                             std::to_string((KOKKOSKERNELS_VERSION / 100) % 100) + "." +
                             std::to_string(KOKKOSKERNELS_VERSION % 100);
#else
  c.kokkos_kernels_version = c.kokkos_version;  // Trilinos ships both in lock-step
#endif
#ifdef KOKKOS_ENABLE_SERIAL
  c.kokkos_backends.push_back("serial");
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  c.kokkos_backends.push_back("openmp");
#endif
#ifdef KOKKOS_ENABLE_THREADS
  c.kokkos_backends.push_back("threads");
#endif
#ifdef KOKKOS_ENABLE_CUDA
  c.kokkos_backends.push_back("cuda");
#endif
#ifdef KOKKOS_ENABLE_HIP
  c.kokkos_backends.push_back("hip");
#endif
#ifdef KOKKOS_ENABLE_SYCL
  c.kokkos_backends.push_back("sycl");
#endif
  c.blas = detect_blas();
#if defined(KOKKOS_ENABLE_IMPL_VIEW_LEGACY) || KOKKOS_VERSION < 40700
  c.kokkos_view = "legacy";
#else
  c.kokkos_view = "mdspan";
#endif
  c.read_only_loads = read_only_load_path();
#if defined(KOKKOS_ENABLE_CUDA)
  const bool device_is_cuda = std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::Cuda>;
#else
  const bool device_is_cuda = false;
#endif
  c.gemm_backend = describe_gemm_backend(device_is_cuda, c.blas.kokkos_kernels_tpl_cublas, c.blas.kokkos_kernels_tpl_blas,
                                         c.blas.library);
  c.environment = environment_subset({"NVIDIA_TF32_OVERRIDE", "CUDA_VISIBLE_DEVICES", "CUDA_LAUNCH_BLOCKING",
                                      "CUBLAS_WORKSPACE_CONFIG", "OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES",
                                      "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE", "KOKKOS_NUM_THREADS",
                                      "KCNN_STREAMING_STORE_BYTES"});
  c.streaming_stores = run_streams_available();
  c.streaming_store_threshold_bytes = run_streaming_store_bytes();
  std::ostringstream cfg;
  Kokkos::print_configuration(cfg, true);
  c.kokkos_configuration = cfg.str();
  c.host_cpu = cpu_model();
  c.host_logical_cpus = int(sysconf(_SC_NPROCESSORS_ONLN));
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  c.hostname = host;
#if defined(__clang__)
  c.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  c.compiler = "gcc " __VERSION__;
#else
  c.compiler = "unknown";
#endif
#if defined(__NVCC__)
  c.compiler += " via nvcc " + std::to_string(__CUDACC_VER_MAJOR__) + "." +
                std::to_string(__CUDACC_VER_MINOR__);
#endif
  c.cxx_flags = KCNN_CXX_FLAGS;
  c.build_type = KCNN_BUILD_TYPE;
  // The commit and tree state this binary was compiled from, taken at its build (not at
  // configure time, not from wherever the binary runs): kcnn_build_info.hpp.
  c.git_commit = KCNN_BUILD_GIT_COMMIT;
  c.git_clean = std::string(KCNN_BUILD_GIT_CLEAN) == "1";
  c.git_known = !c.git_commit.empty();
  return c;
}

}  // namespace kcnn::bench
