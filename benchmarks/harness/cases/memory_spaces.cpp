#include "cases/memory_spaces.hpp"

#include "cases/registry.hpp"
#include "measure/sampler.hpp"
#include "measure/stats.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

#include <sstream>
#include <stdexcept>

namespace kcnn::bench {

bool have_cuda_spaces() {
#if defined(KOKKOS_ENABLE_CUDA)
  return true;
#else
  return false;
#endif
}

std::string cuda_spaces_unavailable_reason() {
  return have_cuda_spaces() ? std::string()
                            : "CUDA managed and pinned memory; this build's Kokkos has no CUDA backend";
}

void add_memory_space_notes(registry& r) {
  if (!have_cuda_spaces())
    for (space_axis s : all_values<space_axis>())
      if (cuda_only(s)) r.add_unavailable(std::string("memory space ") + name(s), cuda_spaces_unavailable_reason());
}

#if defined(KOKKOS_ENABLE_CUDA)
namespace cuda_memory {

namespace {
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
int current_device() {
  int d = 0;
  check(cudaGetDevice(&d), "cudaGetDevice");
  return d;
}
}  // namespace

namespace {
void prefetch(const buffer& b, bool to_device) {
#if CUDART_VERSION >= 13000
  cudaMemLocation loc{};
  loc.type = to_device ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
  loc.id = to_device ? current_device() : 0;
  check(cudaMemPrefetchAsync(b.ptr, b.bytes, loc, 0, 0), "cudaMemPrefetchAsync");
#else
  check(cudaMemPrefetchAsync(b.ptr, b.bytes, to_device ? current_device() : cudaCpuDeviceId, 0), "cudaMemPrefetchAsync");
#endif
}
}  // namespace

void send_to_host(const std::vector<buffer>& bs) {
  for (const auto& b : bs) prefetch(b, false);
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

void prefetch_to_device(const buffer& b) { prefetch(b, true); }

void advise(const buffer& b) {
  const cudaMemoryAdvise a =
      b.read_mostly ? cudaMemAdviseSetReadMostly : cudaMemAdviseSetPreferredLocation;
#if CUDART_VERSION >= 13000
  cudaMemLocation loc{};
  loc.type = cudaMemLocationTypeDevice;
  loc.id = current_device();
  check(cudaMemAdvise(b.ptr, b.bytes, a, loc), "cudaMemAdvise");
#else
  check(cudaMemAdvise(b.ptr, b.bytes, a, current_device()), "cudaMemAdvise");
#endif
}

}  // namespace cuda_memory

void space_uvm_prefetch::before_run(const std::vector<buffer>& bs, const sampler* timer) {
  cuda_memory::send_to_host(bs);
  timed_work w;
  w.launch = [&] {
    for (const auto& b : bs) cuda_memory::prefetch_to_device(b);
    cudaDeviceSynchronize();
  };
  w.kind = work_kind::synchronising;  // the prefetches are waited for on the host
  if (timer) prefetch_s.push_back(timer->take(w).seconds());
  else w.launch();
}

std::string space_uvm_prefetch::note() const {
  if (prefetch_s.empty()) return {};
  const sample_stats s = summarize(prefetch_s);
  std::ostringstream o;
  o << "prefetch to device (untimed): median " << s.median * 1e3 << " ms over " << prefetch_s.size()
    << " runs";
  return o.str();
}
#endif

}  // namespace kcnn::bench
