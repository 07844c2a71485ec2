// The model's predicted time (predict, gpu_model.hpp): per launch the largest of its DRAM, L2,
// load/store pipe and latency bounds, summed over the case's launches, or, when larger, the case's
// FMA pipe (its FLOPs at the FP32 peak; since version 6 what its kernels execute where they declare
// more, an implicit GEMM's padding) or its instruction issue (FMAs and memory instructions
// through the schedulers); the bound that decides is named. Arithmetic on the recorded counts only.
#include "gpu_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

namespace kcnn::model {

void predict(const device_description& d, case_figures& c) {
  c.ld_requests = c.ld_sectors = c.st_requests = c.st_sectors = c.smem_requests = c.smem_wavefronts = 0;
  c.const_requests = c.const_words = c.l2_bytes = c.dram_bytes = 0;
  c.blocks = c.traced_blocks = 0;
  double memory_time = 0, worst = -1, memory_instructions = 0;
  c.dominant = -1;
  std::string worst_bound = "dram";
  for (launch_figures& f : c.launches) {
    c.ld_requests += f.ld_requests, c.ld_sectors += f.ld_sectors;
    c.st_requests += f.st_requests, c.st_sectors += f.st_sectors;
    c.smem_requests += f.smem_requests, c.smem_wavefronts += f.smem_wavefronts;
    c.const_requests += f.const_requests, c.const_words += f.const_words;
    c.l2_bytes += f.l2_bytes, c.dram_bytes += f.dram_read_bytes + f.dram_write_bytes;
    c.blocks += f.blocks, c.traced_blocks += f.traced_blocks;
    f.t_dram = (f.dram_read_bytes + f.dram_write_bytes) / d.dram_bytes_per_s;
    f.t_l2 = f.l2_bytes / d.l2_bytes_per_s;
    // Load/store pipe: the busiest SM's global requests and shared wavefronts (a conflicting or
    // 16-byte shared request takes the pipe once per wavefront) at lsu_per_clock, or one warp's own
    // chain of requests at one per clock.
    const double per_block = f.blocks > 0 ? (f.ld_requests + f.st_requests + f.smem_wavefronts) / double(f.blocks) : 0;
    const double blocks_on_busiest = std::ceil(double(f.blocks) / d.sms);
    f.t_lsu = std::max(blocks_on_busiest * per_block / d.lsu_per_clock, f.max_warp_requests) / d.clock_hz;
    memory_instructions += f.ld_requests + f.st_requests + f.smem_requests;
    // Latency: each wave lasts at least its busiest warp's global loads, loads_in_flight of them
    // at a time, each batch waiting for the slowest of its loads (a warp's FMAs need every operand
    // of the batch; until model version 4 a batch took the mean of its loads' latencies). Since
    // version 5 a batch's wait is what the replayed warps' batches waited (load_chain_s: each load
    // where the caches served it). Without a replay (a launch given by hand), from the launch's
    // shares: all served by L1 with the L1 share of load sectors to the power of the batch, some
    // by DRAM with one less the non-DRAM share to that power, by L2 otherwise (version 4's rule,
    // which gave a row's L1-resident second sweep the first sweep's DRAM misses). Resident blocks
    // per SM count the kernel's registers where the table has them. Stores do not stall a warp,
    // and shared-memory requests are in the load/store bound. (Until the H200 run of 2026-11-27
    // this chain held every request, stores and shared ones included, at least mlp_per_warp of
    // them in flight.)
    const double waves = f.resident_blocks_per_sm > 0 ? std::ceil(double(f.blocks) / (double(d.sms) * f.resident_blocks_per_sm)) : 1;
    const double dram_sectors = f.dram_read_bytes / d.sector_bytes;
    const double load_sectors = f.l1_hit_sectors + f.l2_load_hit_sectors + dram_sectors;
    // Loads in flight per warp: the median loads per iteration (a compiler issues an
    // iteration's independent loads before their uses; a load executed once is in flight with
    // its stretch between two stores), at least mlp_per_warp (the unrolling of a loop with one
    // load) where most loads repeat in iterations that do not store (a reduction's loop), and at
    // most 32; a loop whose iterations store gets no such floor (its loads wait for the previous
    // iteration's store: a row walk of one element per lane, which kept kcnn's pooling and
    // batch norm at a third of the H200's bandwidth), nor do loads executed once (a
    // one-element-per-thread kernel: one in flight, as kcnn's copy and relu).
    double repeats = 0, below = 0, median = 0;
    for (const double h : f.loads_per_iteration) repeats += h;
    for (std::size_t b = 0; b < f.loads_per_iteration.size(); ++b)
      if ((below += f.loads_per_iteration[b]) >= repeats / 2) {
        median = double(b);
        break;
      }
    const double repeated = repeats - f.first_loads;
    const bool unrollable = repeated > repeats / 2 && f.storing_iterations <= repeated / 2;
    const double floor = unrollable ? double(std::max(1, d.mlp_per_warp)) : 1.0;
    f.loads_in_flight = repeats > 0 ? std::clamp(median, floor, 32.0)
                                    : std::clamp(f.max_warp_loads, 1.0, 32.0);
    const std::size_t batch = std::size_t(std::clamp(std::lround(f.loads_in_flight), 1L, 32L));
    if (f.load_chain_loads > 0) {
      // The replay's own chain (launch_figures::load_chain_s): the mean wait per load of batches
      // of this size, a batch's mean wait, and the busiest warp's loads at that rate.
      const double per_load = f.load_chain_s[batch] / f.load_chain_loads;
      f.batch_latency_s = per_load * double(batch);
    } else if (load_sectors > 0) {
      const double l1 = std::min(1.0, f.l1_hit_sectors / load_sectors), not_dram = std::max(0.0, 1 - dram_sectors / load_sectors);
      const double all_l1 = std::pow(l1, f.loads_in_flight), no_dram = std::pow(not_dram, f.loads_in_flight);
      f.batch_latency_s = all_l1 * d.l1_latency_s + std::max(0.0, no_dram - all_l1) * d.l2_latency_s +
                          (1 - no_dram) * d.mem_latency_s;
    } else {
      f.batch_latency_s = d.l2_latency_s;
    }
    f.t_latency = waves * f.max_warp_loads / f.loads_in_flight * f.batch_latency_s;
    const double t = std::max({f.t_dram, f.t_l2, f.t_lsu, f.t_latency});
    memory_time += t;
    if (t > worst) {
      worst = t;
      c.dominant = int(&f - c.launches.data());
      worst_bound = t == f.t_dram ? "dram" : t == f.t_l2 ? "l2" : t == f.t_lsu ? "lsu" : "latency";
    }
  }
  // The FMA pipe: the case's FLOPs (or what its kernels execute, when they declared more: a case is
  // one op's launches, and where one of them declares, it holds the op's FMAs, as the implicit
  // GEMM's tiles do beside its split-K sum pass) at the FP32 peak. Issue: every scheduler issues one warp
  // instruction per clock, and a case's FMAs (FLOPs / 2, a warp's worth an instruction) and its
  // memory instructions all go through them.
  const double flops = std::max(c.flops, c.executed_flops);
  c.t_fp32 = flops / d.fp32_flops_per_s;
  c.t_issue = (flops / 2 / d.warp_size + memory_instructions) / (d.issue_per_clock * d.sms * d.clock_hz);
  c.time_s = std::max({memory_time, c.t_fp32, c.t_issue});
  c.bound = c.time_s == memory_time ? worst_bound : c.time_s == c.t_issue ? "issue" : "fp32";
}

}  // namespace kcnn::model
