#pragma once
// The recorder's state, shared by the model's sources and not part of its interface
// (gpu_model.hpp): the accesses of the block being traced, the warp requests they group into, the
// wave of blocks the caches replay, and the launch and session under way. There is one recorder
// (rec), used from one thread: the model runs on the Serial backend.
#include "cache_model.hpp"
#include "gpu_model.hpp"

#include <kcnn/model_hooks.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

namespace kcnn::model::detail {

enum space : std::uint8_t { global_space = 0, shared_space = 1, constant_space = 2 };

struct access {
  std::uint64_t addr, pc;
  std::uint32_t thread, seq, occ;
  std::uint8_t size, store, space;
};

// One warp request after grouping.
struct request {
  std::uint32_t first_seq, warp;
  std::uint8_t store, space;
  std::uint32_t sector_begin, sector_count;  // into block_trace::sectors (global only)
  std::uint32_t turn = 0;                     // its position in its warp's program order
  std::uint8_t level = 0;                     // a load's deepest sector once replayed: 0 L1, 1 L2, 2 DRAM
};

struct block_trace {
  long long block = 0;
  std::vector<request> requests;  // global requests in program order
  std::vector<std::uint64_t> sectors;
};

// Everything the recorder keeps; one model session at a time (single-threaded by construction).
struct recorder {
  const device_description* dev = nullptr;
  const register_table* registers = nullptr;  // the kernels' registers (none: no register limit)
  trace_limits limits;
  bool session_open = false;
  bool debug = std::getenv("KCNN_MODEL_DEBUG") != nullptr;  // prints block 0's warp 0 requests
  // The launch being run.
  bool in_launch = false;
  launch_geometry geometry;
  launch_figures fig;
  std::size_t accesses_this_launch = 0;
  bool tracing_blocks = true;
  int resident_per_sm = 1;
  // The block being run.
  bool recording = false;
  long long block = 0;
  std::uintptr_t params_lo = 0, params_hi = 0, stack_hi = 0;
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> scratch;
  std::uintptr_t scratch_base = 0;
  std::vector<access> accesses;
  std::uint32_t seq = 0;
  // The wave being assembled, and the caches.
  std::vector<block_trace> wave;
  std::vector<sector_cache> l1;
  // DRAM bytes read per block once the launch is under way (data shared by every block, such as
  // weights, already in the L2): what the untraced blocks of a sampled launch are given.
  double dram_read_per_block = 0;
  sector_cache l2;
  std::vector<launch_figures> launches;
  double executed_flops = 0;  // what the session's kernels declared they execute (executed_flops())
};

extern recorder rec;
// Read by the instrumentation callbacks on every load and store of the program (recorder.cpp).
extern bool recording_now;

// Groups the block just traced into warp requests and counts them (warp_requests.cpp).
void finish_block();
// Replays blocks [first, last) of the wave on the caches; returns the DRAM bytes read
// (cache_model.cpp). chain: add the blocks' warps to the latency chain (launch_figures::load_chain_s).
double replay_blocks(std::size_t first, std::size_t last, bool chain = true);
// Replays the whole wave; the DRAM bytes read per block of it are the latest marginal rate.
void replay_wave();

}  // namespace kcnn::model::detail
