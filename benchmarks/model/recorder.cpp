// The GPU execution model's recorder (gpu_model.hpp): the hooks kcnn/map.hpp calls while a kernel
// runs in its CUDA geometry (launch, block, thread, team scratch), and the compiler's load and
// store callbacks, which keep each access of a traced block with its address space and CUDA
// thread. Compiled without the trace instrumentation, as every model source is (its own loads are
// not the kernels').
#include "recorder.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace kcnn::model {

namespace {
thread_local thread_coords current_thread_;
thread_local block_dims current_dims;
}  // namespace

thread_coords current_thread() { return current_thread_; }
void set_thread(int x, int y, int z) { current_thread_ = thread_coords{x, y, z}; }
block_dims current_block_dims() { return current_dims; }

namespace detail {
recorder rec;
bool recording_now = false;
}  // namespace detail

using namespace detail;

namespace {

int threads_of(const launch_geometry& g) { return g.block_x * g.block_y * g.block_z; }

// Resident blocks per SM: bounded by threads, blocks, shared memory and, when the kernel's
// registers are known, the register file (a warp's registers allocated 256 at a time, as the CUDA
// occupancy calculator does).
int resident_blocks(const device_description& d, const launch_geometry& g, int registers) {
  const int threads = threads_of(g);
  const int warps = (threads + d.warp_size - 1) / d.warp_size;
  int by_threads = d.max_threads_per_sm / std::max(1, warps * d.warp_size);
  int by_smem = g.scratch_bytes > 0 ? int(d.smem_bytes_per_sm / double(g.scratch_bytes)) : d.max_blocks_per_sm;
  int by_registers = d.max_blocks_per_sm;
  if (registers > 0) {
    const int per_warp = (registers * d.warp_size + 255) / 256 * 256;
    by_registers = d.registers_per_sm / per_warp / std::max(1, warps);
  }
  return std::max(0, std::min({d.max_blocks_per_sm, by_threads, by_smem, by_registers}));
}

void record(const void* p, std::uint8_t size, bool store, const void* pc) {
  recorder& r = rec;
  const std::uintptr_t addr = reinterpret_cast<std::uintptr_t>(p);
  std::uint8_t sp = global_space;
  if (addr >= r.params_lo && addr < r.params_hi) {
    if (store) return;  // the functor's own copy written (host-side bookkeeping)
    sp = constant_space;
  } else {
    const char here = 0;
    // Anything else on this thread's stack (the simulated thread's locals, the host's loop and
    // team bookkeeping) is a register or a local on a GPU: not a memory access.
    if (addr >= reinterpret_cast<std::uintptr_t>(&here) && addr < r.stack_hi) return;
    for (const auto& s : r.scratch)
      if (addr >= s.first && addr < s.second) {
        sp = shared_space;
        break;
      }
  }
  const thread_coords c = current_thread_;
  const block_dims& g = current_dims;
  const int x0 = c.x < 0 ? 0 : c.x, x1 = c.x < 0 ? g.x : c.x + 1;
  const int y0 = c.y < 0 ? 0 : c.y, y1 = c.y < 0 ? g.y : c.y + 1;
  const int z0 = c.z < 0 ? 0 : c.z, z1 = c.z < 0 ? g.z : c.z + 1;
  const std::uint32_t seq = r.seq++;
  for (int z = z0; z < z1; ++z)
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x)
        r.accesses.push_back(access{addr, reinterpret_cast<std::uint64_t>(pc),
                                    std::uint32_t(x + g.x * (y + g.y * z)), seq, 0, size, std::uint8_t(store), sp});
}

// The recorder's own code may run an instrumented copy of a library template (the linker keeps
// one copy of each): recording is off while it runs.
void record_guarded(const void* p, std::uint8_t size, bool store, const void* pc) {
  recording_now = false;
  record(p, size, store, pc);
  recording_now = true;
}

}  // namespace

// ---- hooks called by kcnn/map.hpp and kcnn/lanes.hpp ----

void executed_flops(double flops) {
  recorder& r = rec;
  if (r.session_open) r.executed_flops += flops;
}

int device_concurrency() {
  const recorder& r = rec;
  return r.session_open && r.dev ? r.dev->sms * r.dev->max_threads_per_sm : 0;
}

void launch_begin(const launch_geometry& g) {
  current_dims = block_dims{g.block_x, g.block_y, g.block_z};
  current_thread_ = thread_coords{};
  recorder& r = rec;
  if (!r.session_open) return;
  if (r.in_launch) throw std::logic_error("kcnn model: a launch inside a launch");
  r.in_launch = true;
  r.geometry = g;
  r.fig = launch_figures{};
  r.fig.label = g.label;
  r.fig.kernel = kernel_key(g.kernel);
  r.fig.registers = r.registers ? r.registers->registers(r.fig.kernel) : 0;
  r.fig.blocks = g.blocks;
  r.fig.threads_per_block = threads_of(g);
  r.resident_per_sm = resident_blocks(*r.dev, g, r.fig.registers);
  r.fig.resident_blocks_per_sm = r.resident_per_sm;
  r.fig.waves = r.resident_per_sm > 0 ? double(g.blocks) / double(r.dev->sms * r.resident_per_sm) : 0;
  r.accesses_this_launch = 0;
  r.tracing_blocks = true;
  // L1 holds what shared memory leaves of the combined array (the carve-out for the resident blocks).
  const double smem = double(g.scratch_bytes) * r.resident_per_sm;
  for (sector_cache& c : r.l1) {
    c.configure(std::max(0.0, r.dev->l1_smem_bytes_per_sm - smem), r.dev->line_bytes, r.dev->sector_bytes, 4);
  }
}

void launch_end() {
  recorder& r = rec;
  current_dims = block_dims{};
  current_thread_ = thread_coords{};
  if (!r.session_open || !r.in_launch) return;
  launch_figures& f = r.fig;
  const bool sampled = f.traced_blocks > 0 && f.traced_blocks < f.blocks;
  if (sampled && r.wave.size() >= 2) {
    // The traced blocks' second half, after the first has brought in what all blocks share: its
    // DRAM rate is the untraced blocks', and its warps' waits (not the first half's, which fetched
    // the shared data) are the latency chain's.
    const std::size_t half = r.wave.size() / 2;
    replay_blocks(0, half, false);
    r.dram_read_per_block = replay_blocks(half, r.wave.size()) / double(r.wave.size() - half);
    r.wave.clear();
  } else if (!r.wave.empty()) {
    replay_wave();
  }
  // Written data reaches DRAM: the L2's dirty sectors are written back at the end of each launch.
  r.fig.dram_write_bytes += r.l2.clean() * r.dev->sector_bytes;
  if (sampled) {
    // Per-block figures scale with the blocks; DRAM reads do not (the first blocks also fetched
    // what every block shares): the untraced blocks read at the marginal rate of the last traced ones.
    const double k = double(f.blocks) / double(f.traced_blocks);
    for (double* v : {&f.ld_requests, &f.ld_sectors, &f.ld_bytes, &f.st_requests, &f.st_sectors, &f.st_bytes,
                      &f.smem_requests, &f.smem_wavefronts, &f.const_requests, &f.const_words, &f.l1_hit_sectors,
                      &f.l2_load_hit_sectors, &f.l2_bytes, &f.dram_write_bytes})
      *v *= k;
    f.extrapolated_dram_read_bytes = double(f.blocks - f.traced_blocks) * r.dram_read_per_block;
    f.dram_read_bytes += f.extrapolated_dram_read_bytes;
  }
  r.launches.push_back(f);
  r.in_launch = false;
}

void block_begin(long long block, const void* params, std::size_t params_bytes) {
  recorder& r = rec;
  current_thread_ = thread_coords{};
  if (!r.session_open || !r.in_launch) return;
  r.recording = r.tracing_blocks;
  if (!r.recording) return;
  r.block = block;
  r.params_lo = reinterpret_cast<std::uintptr_t>(params);
  r.params_hi = r.params_lo + params_bytes;
  r.scratch.clear();
  r.scratch_base = 0;
  r.accesses.clear();
  r.seq = 0;
  recording_now = true;
}

void block_end() {
  recorder& r = rec;
  recording_now = false;
  if (!r.recording) return;
  r.recording = false;
  r.accesses_this_launch += r.accesses.size();
  ++r.fig.traced_blocks;
  finish_block();
  if (r.accesses_this_launch >= r.limits.max_accesses_per_launch) r.tracing_blocks = false;
}

void scratch_region(const void* p, std::size_t bytes) {
  recorder& r = rec;
  if (!r.recording) return;
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p);
  if (r.scratch.empty()) r.scratch_base = a;  // bank 0 at the first allocation (Kokkos' offset shifts all alike)
  r.scratch.emplace_back(a, a + bytes);
}

}  // namespace kcnn::model

// ---- the compiler's callbacks (clang -fsanitize-coverage=trace-loads,trace-stores) ----
extern "C" {
#define KCNN_TRACE_CALLBACK(kind, bits, bytes, store)                                                     \
  __attribute__((no_sanitize("coverage"))) void __sanitizer_cov_##kind##bytes(std::uint##bits##_t* p) {   \
    if (__builtin_expect(kcnn::model::detail::recording_now, 0))                                          \
      kcnn::model::record_guarded(p, bytes, store, __builtin_return_address(0));                          \
  }
KCNN_TRACE_CALLBACK(load, 8, 1, false)
KCNN_TRACE_CALLBACK(load, 16, 2, false)
KCNN_TRACE_CALLBACK(load, 32, 4, false)
KCNN_TRACE_CALLBACK(load, 64, 8, false)
KCNN_TRACE_CALLBACK(store, 8, 1, true)
KCNN_TRACE_CALLBACK(store, 16, 2, true)
KCNN_TRACE_CALLBACK(store, 32, 4, true)
KCNN_TRACE_CALLBACK(store, 64, 8, true)
__attribute__((no_sanitize("coverage"))) void __sanitizer_cov_load16(__int128* p) {
  if (__builtin_expect(kcnn::model::detail::recording_now, 0)) kcnn::model::record_guarded(p, 16, false, __builtin_return_address(0));
}
__attribute__((no_sanitize("coverage"))) void __sanitizer_cov_store16(__int128* p) {
  if (__builtin_expect(kcnn::model::detail::recording_now, 0)) kcnn::model::record_guarded(p, 16, true, __builtin_return_address(0));
}
}
