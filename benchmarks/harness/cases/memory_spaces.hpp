#pragma once
// Memory-space policies of the benchmark cases: where the operands are allocated and what is
// done to them outside the timed region. The CUDA-only spaces (managed memory cold, prefetched
// and advised; host-pinned zero-copy) live here and in memory_spaces.cpp, behind
// KOKKOS_ENABLE_CUDA, and nowhere else.
//
// global, scratch, constant and readonly all allocate in the default device memory; scratch and
// constant differ in the kernel, readonly in the views' traits.
#include "cases/axes.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace kcnn::bench {

class sampler;  // measure/sampler.hpp: a space that reports a figure beside the row takes it there

// One allocation of a case, as the space policies see it.
struct buffer {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  bool read_mostly = false;  // weights and per-channel parameters, as opposed to activations
};

struct space_global {
  static constexpr space_axis space = space_axis::global;
  using memory_space = Kokkos::DefaultExecutionSpace::memory_space;
  static constexpr bool runs_back_to_back = true;  // before_run has nothing to redo
  static constexpr bool device_memory = true;      // the default execution space's own memory
  void prepare(const std::vector<buffer>&) {}     // once, after the fill
  void before_run(const std::vector<buffer>&, const sampler*) {}  // before every run, untimed
  std::string note() const { return {}; }
};

class registry;
// What --list says about the memory spaces this build or the ops do not have (the registry adds
// these itself when it is created).
void add_memory_space_notes(registry& r);

// True when this build has the CUDA-only spaces.
bool have_cuda_spaces();
// Why the CUDA-only spaces are missing (empty if they are not).
std::string cuda_spaces_unavailable_reason();

#if defined(KOKKOS_ENABLE_CUDA)
namespace cuda_memory {
// Migrates the buffers' managed pages to the host in bulk (cudaMemPrefetchAsync to the CPU,
// then synchronise), so that the next kernel pays the page faults. Nothing is written: pages
// advised read-mostly keep their device copy (the host gets a read-only duplicate), which is
// what uvm_advise measures. (Writing one byte per page on the host instead would drop every
// read-mostly copy, making uvm_advise equal uvm_cold, and faults page by page: seconds on
// large tensors.)
void send_to_host(const std::vector<buffer>& bs);
// cudaMemPrefetchAsync to the current device (CUDA 13 and older signatures), then synchronise.
void prefetch_to_device(const buffer& b);
// Read-mostly advice for weights, preferred location = device for activations.
void advise(const buffer& b);
}  // namespace cuda_memory

// Managed memory sent to the host before every run: the kernel pays the faults.
struct space_uvm_cold {
  static constexpr space_axis space = space_axis::uvm_cold;
  using memory_space = Kokkos::CudaUVMSpace;
  static constexpr bool runs_back_to_back = false;  // every run starts from host-resident pages
  static constexpr bool device_memory = false;
  void prepare(const std::vector<buffer>&) {}
  void before_run(const std::vector<buffer>& bs, const sampler*) { cuda_memory::send_to_host(bs); }
  std::string note() const { return "managed memory sent to the host before every run"; }
};

// Cold as above, then an explicit prefetch to the device before the timed region; the
// prefetch is timed on its own and reported in the note.
struct space_uvm_prefetch {
  static constexpr space_axis space = space_axis::uvm_prefetch;
  using memory_space = Kokkos::CudaUVMSpace;
  static constexpr bool runs_back_to_back = false;  // every run starts from host-resident pages
  static constexpr bool device_memory = false;
  std::vector<double> prefetch_s;
  void prepare(const std::vector<buffer>&) {}
  void before_run(const std::vector<buffer>& bs, const sampler* timer);
  std::string note() const;
};

// Cold as above, with memory advice given once: read-mostly for weights (their device copy
// survives the trip to the host), preferred location device for activations.
struct space_uvm_advise {
  static constexpr space_axis space = space_axis::uvm_advise;
  using memory_space = Kokkos::CudaUVMSpace;
  static constexpr bool runs_back_to_back = false;  // every run starts from host-resident pages
  static constexpr bool device_memory = false;
  void prepare(const std::vector<buffer>& bs) {
    for (const auto& b : bs) cuda_memory::advise(b);
  }
  void before_run(const std::vector<buffer>& bs, const sampler*) { cuda_memory::send_to_host(bs); }
  std::string note() const {
    return "managed memory with advice (weights read-mostly, activations preferred on the device), sent to the host "
           "before every run";
  }
};

// Host-pinned memory read and written by the kernel directly (zero copy over the link).
struct space_pinned {
  static constexpr space_axis space = space_axis::pinned;
  using memory_space = Kokkos::CudaHostPinnedSpace;
  static constexpr bool runs_back_to_back = true;
  static constexpr bool device_memory = false;  // host memory, read over the link
  void prepare(const std::vector<buffer>&) {}
  void before_run(const std::vector<buffer>&, const sampler*) {}
  std::string note() const { return {}; }
};
#endif

// Calls f(Space{}) for each CUDA-only space on CUDA builds; nothing on host builds.
// Registration helpers use it so that layer files never test KOKKOS_ENABLE_CUDA.
template <class F>
void for_each_cuda_space(const F& f) {
#if defined(KOKKOS_ENABLE_CUDA)
  f(space_uvm_cold{});
  f(space_uvm_prefetch{});
  f(space_uvm_advise{});
  f(space_pinned{});
#else
  (void)f;
#endif
}

}  // namespace kcnn::bench
