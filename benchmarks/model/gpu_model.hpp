#pragma once
// kcnn's GPU execution model (the gpu-model build, KCNN_GPU_MODEL): the kernels run their CUDA
// code paths on the host in their CUDA launch geometry (kcnn/map.hpp); every load and store
// they make is reported by the compiler (clang -fsanitize-coverage=trace-loads,trace-stores)
// with its program location, and attributed to the CUDA thread kcnn/map.hpp says is running.
// Per launch, the accesses are grouped into warp requests (same warp, same program location,
// same dynamic occurrence) and counted as a GPU's memory system would serve them:
//  * global: 32-byte sectors per request; then, over the blocks one wave keeps resident
//    (interleaved request by request), a per-SM L1 (sectored, caches global loads, write-through,
//    no allocate on store) and a device-wide L2 (sectored, write-back, allocate on write without
//    a fetch), both set-associative LRU; L2 misses and write-backs are DRAM bytes;
//  * team scratch (shared memory): the bank-conflict degree of each request (the most distinct
//    4-byte words any one bank must serve; the same word is a broadcast);
//  * kernel parameters and constant memory (the functor): distinct 4-byte words per request
//    (constant reads serialise over distinct addresses);
//  * locals on the simulated thread's stack are registers (not counted).
// A predicted time is the largest of DRAM, L2, load/store pipe, latency, FMA pipe and instruction
// issue bounds; it is a model figure, never a measurement. Single-threaded (Serial backend) by construction. The sources
// beside this header hold one concern each (docs/gpu-model.md, section 3).
#include <cstddef>
#include <array>
#include <string>
#include <unordered_map>
#include <vector>

namespace kcnn::model {

// Version of the model's rules, recorded in every context (bump when a figure's meaning changes).
inline constexpr const char* model_version = "6";

// A GPU as the model sees it (benchmarks/model/devices.csv).
struct device_description {
  std::string name;
  int sms = 0;
  double clock_hz = 0, fp32_flops_per_s = 0, dram_bytes_per_s = 0, l2_bytes_per_s = 0, l2_bytes = 0;
  double l1_smem_bytes_per_sm = 0, smem_bytes_per_sm = 0, smem_bytes_per_block = 0;
  int max_threads_per_sm = 0, max_blocks_per_sm = 0, warp_size = 32, sector_bytes = 32, line_bytes = 128,
      smem_banks = 32;
  double l1_latency_s = 0, l2_latency_s = 0, mem_latency_s = 0;  // a load served by L1, L2, DRAM
  int mlp_per_warp = 1;
  int registers_per_sm = 65536;  // the register file (a warp's registers are allocated 256 at a time)
  double lsu_per_clock = 1;      // memory warp instructions (and shared wavefronts) an SM's LD/ST pipe takes
  double issue_per_clock = 4;    // warp instructions an SM's schedulers issue
  std::string source;
};

// Reads a device file; a bad line throws std::invalid_argument naming the file, line and field.
std::vector<device_description> load_devices(const std::string& path);
// The description called `name` (throws, listing the names, when there is none).
const device_description& find_device(const std::vector<device_description>& devices, const std::string& name);
// The file shipped with kcnn (its source path, baked in at build time).
std::string default_devices_file();

// Registers per thread of the CUDA build's kernels, from the compiler's report (ptxas -v; the file
// benchmarks/model/registers.csv, written by scripts/model-registers): what limits a register-heavy
// kernel's resident blocks, and with them its waves. Keyed by kernel_key of the kernel's functor
// type; a kernel not in the table (a lambda, a kernel added since) has no register limit, as
// before model version 4.
class register_table {
 public:
  register_table() = default;
  // Reads a registers file: CSV with columns kernel, registers, source; '#' lines are comments.
  // A bad line throws std::invalid_argument naming the file, line and field; a missing file too.
  static register_table load(const std::string& path);
  void add(const std::string& kernel, int registers);  // kernel as kernel_key writes it
  int registers(const std::string& kernel) const;       // 0: not in the table
  std::size_t size() const { return regs_.size(); }
  const std::string& file() const { return file_; }

 private:
  std::unordered_map<std::string, int> regs_;
  std::string file_;
};
// The functor type's name as the table keys it, from a mangled (typeid) or demangled name: the
// demangled name without spaces, Kokkos' memory spaces dropped (MEM where one is a first template
// argument) and execution spaces as EXEC (the same kernel is View<float*, CudaSpace> in the CUDA
// build and View<float*, HostSpace> or View<float*> here).
// scripts/model-registers applies the same rule to the CUDA build's kernels.
std::string kernel_key(const char* name);
// The file shipped with kcnn (its source path, baked in at build time).
std::string default_registers_file();

// What one launch does to the modelled GPU. Counts are for the whole launch: when only some
// blocks were traced (traced_blocks < blocks) they are scaled by blocks / traced_blocks.
struct launch_figures {
  std::string label;
  std::string kernel;  // kernel_key of its functor type
  long long blocks = 0, traced_blocks = 0;
  int threads_per_block = 0, resident_blocks_per_sm = 0;
  int registers = 0;  // per thread, from the register table (0: unknown, no register limit)
  double waves = 0;
  double ld_requests = 0, ld_sectors = 0, ld_bytes = 0;  // global loads: warp requests, sectors, bytes asked
  double st_requests = 0, st_sectors = 0, st_bytes = 0;  // global stores
  double smem_requests = 0, smem_wavefronts = 0;         // shared: requests and the sum of their conflict degrees
  double const_requests = 0, const_words = 0;            // constant: requests and the sum of distinct words
  double l1_hit_sectors = 0, l2_load_hit_sectors = 0, l2_bytes = 0, dram_read_bytes = 0, dram_write_bytes = 0;
  // The part of dram_read_bytes charged to untraced blocks (0 when every block was traced).
  double extrapolated_dram_read_bytes = 0;
  double max_warp_requests = 0;  // the most memory requests one warp makes (a traced block's)
  double max_warp_loads = 0;     // the most global loads one warp makes (the latency bound's chain)
  // Global loads a warp makes between two executions of the same load (its loop's loads per
  // iteration, independent of each other in kcnn's kernels, which never load an address from
  // memory), and for a load not executed before, the loads of its stretch between two stores: a
  // histogram, the last bucket for 32 or more. Gives the latency bound's loads in flight.
  std::array<double, 33> loads_per_iteration{};
  // Of those repeats, the ones whose iteration also stored to global memory: a compiler cannot
  // move the next iteration's loads above a store to memory they may alias (nvcc does not), so
  // such a loop has only its own iteration's loads in flight.
  double storing_iterations = 0;
  // Of the histogram's loads, those whose location the warp had not loaded before (model version
  // 5), counted at the loads of their stretch between two stores.
  double first_loads = 0;
  // What the traced warps' loads waited, replayed on the caches: for batches of n loads (index n,
  // 1..32) taken in each warp's program order, the sum over the warps of each batch's slowest load
  // (its sectors' deepest level: L1, L2 or DRAM), and the loads those warps made. The latency
  // bound takes a batch's wait from here where there is one (a model session's launch): a load site
  // that hits L1 every time (a row's second sweep) no longer shares the launch's DRAM misses.
  std::array<double, 33> load_chain_s{};
  double load_chain_loads = 0;
  double loads_in_flight = 0;  // per warp, as the latency bound takes it (predict)
  double batch_latency_s = 0;  // what a batch of loads_in_flight loads waits: the slowest of them (predict)
  double t_dram = 0, t_l2 = 0, t_lsu = 0, t_latency = 0;
};

// A case: its launches in order and their sum.
struct case_figures {
  std::vector<launch_figures> launches;
  double flops = 0;
  double executed_flops = 0;  // what the kernels declared they execute, padding included (0: none declared)
  double ld_requests = 0, ld_sectors = 0, st_requests = 0, st_sectors = 0, smem_requests = 0, smem_wavefronts = 0,
         const_requests = 0, const_words = 0, l2_bytes = 0, dram_bytes = 0;
  double time_s = 0;
  double t_fp32 = 0, t_issue = 0;      // the FMA pipe; every warp instruction through the schedulers
  std::string bound;                   // dram, l2, lsu, latency, fp32 or issue
  int dominant = -1;  // index in launches of the one with the largest predicted time (-1: none)
  long long traced_blocks = 0, blocks = 0;
  // The untraced blocks' DRAM reads were capped by the case's read operands (finish()).
  bool dram_reads_capped = false;
};

// How much of a launch to trace: whole blocks, in launch order, until this many accesses have
// been recorded (then the remaining blocks still run, untraced, and the counts are scaled).
struct trace_limits {
  std::size_t max_accesses_per_launch = std::size_t(1) << 23;
};

// Records what the kernels launched between its construction and finish() do. One at a time.
class session {
 public:
  // `registers`: the kernels' registers (none: no register limit); kept by reference.
  session(const device_description& d, trace_limits limits = {}, const register_table* registers = nullptr);
  ~session();
  session(const session&) = delete;
  session& operator=(const session&) = delete;
  // Ends recording; `flops` is the case's declared FLOPs (the FP32 bound, or what its kernels
  // declared they execute where that is more: kcnn/model_hooks.hpp, executed_flops). `read_bytes`: what the
  // operands the case reads (inputs, weights, vectors) occupy (0: unknown). When they fit in half
  // the L2, the model's own L2 serves every re-read of them, so the DRAM reads charged to untraced
  // blocks are capped: the case reads no more from DRAM than its traced blocks did plus what of
  // its read operands is left. (The extrapolation alone charges each untraced block the traced
  // ones' rate of first reads, 83x too much on a convolution Nsight Compute measured.)
  case_figures finish(double flops, double read_bytes = 0);

 private:
  bool open_ = true;
};

// Bounds and the predicted time of a case from its launches (exposed for tests).
void predict(const device_description& d, case_figures& c);

}  // namespace kcnn::model
