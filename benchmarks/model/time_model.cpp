// The model's predicted time (predict, gpu_model.hpp): per launch the largest of its DRAM, L2,
// issue and latency bounds, summed over the case's launches, or the case's FLOPs at the FP32 peak
// when that is larger; the bound that decides is named. Arithmetic on the recorded counts only.
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
  double memory_time = 0, worst = -1;
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
    // Issue: memory instructions (global and shared requests, shared replays included) over the
    // busiest SM's four schedulers, or one warp's own chain at one per clock.
    const double per_block = f.blocks > 0 ? (f.ld_requests + f.st_requests + f.smem_wavefronts) / double(f.blocks) : 0;
    const double blocks_on_busiest = std::ceil(double(f.blocks) / d.sms);
    f.t_issue = std::max(blocks_on_busiest * per_block / 4.0, f.max_warp_requests) / d.clock_hz;
    // Latency: each wave lasts at least its busiest warp's global loads, loads_in_flight of them
    // at a time, each taking the launch's mean load latency (its loads' sectors served by L1, L2
    // or DRAM, in the proportions the caches gave). Stores do not stall a warp, and shared-memory
    // requests are in the issue bound. (Until the H200 run of 2026-11-27 this chain held every
    // request, stores and shared ones included, at least mlp_per_warp of them in flight.)
    const double waves = f.resident_blocks_per_sm > 0 ? std::ceil(double(f.blocks) / (double(d.sms) * f.resident_blocks_per_sm)) : 1;
    const double dram_sectors = f.dram_read_bytes / d.sector_bytes;
    const double load_sectors = f.l1_hit_sectors + f.l2_load_hit_sectors + dram_sectors;
    const double latency = load_sectors > 0 ? (f.l1_hit_sectors * d.l1_latency_s + f.l2_load_hit_sectors * d.l2_latency_s +
                                               dram_sectors * d.mem_latency_s) / load_sectors
                                            : d.l2_latency_s;
    // Loads in flight per warp: the median loads per iteration (a compiler issues an
    // iteration's independent loads before their uses), at least mlp_per_warp (the unrolling
    // of a loop with one load) where most iterations do not store (a reduction's loop), and at
    // most 32; a loop whose iterations store gets no such floor (its loads wait for the previous
    // iteration's store: a row walk of one element per lane, which kept kcnn's pooling and
    // batch norm at a third of the H200's bandwidth); a warp whose loads never repeat has them
    // all in flight, however few (a one-element-per-thread kernel: one, as kcnn's copy and relu).
    double repeats = 0, below = 0, median = 0;
    for (const double h : f.loads_per_iteration) repeats += h;
    for (std::size_t b = 0; b < f.loads_per_iteration.size(); ++b)
      if ((below += f.loads_per_iteration[b]) >= repeats / 2) {
        median = double(b);
        break;
      }
    const double floor = f.storing_iterations > repeats / 2 ? 1.0 : double(std::max(1, d.mlp_per_warp));
    f.loads_in_flight = repeats > 0 ? std::clamp(median, floor, 32.0)
                                    : std::clamp(f.max_warp_loads, 1.0, 32.0);
    f.t_latency = waves * f.max_warp_loads / f.loads_in_flight * latency;
    const double t = std::max({f.t_dram, f.t_l2, f.t_issue, f.t_latency});
    memory_time += t;
    if (t > worst) {
      worst = t;
      c.dominant = int(&f - c.launches.data());
      worst_bound = t == f.t_dram ? "dram" : t == f.t_l2 ? "l2" : t == f.t_issue ? "issue" : "latency";
    }
  }
  const double t_fp32 = c.flops / d.fp32_flops_per_s;
  c.time_s = std::max(memory_time, t_fp32);
  c.bound = t_fp32 > memory_time ? "fp32" : worst_bound;
}

}  // namespace kcnn::model
