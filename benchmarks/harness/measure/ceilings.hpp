#pragma once
// The device's ceilings, measured at the start of a run with the same Kokkos backend the cases
// use, through the run's sampler (the device timer's figures on a GPU): stream copy and triad
// bandwidth, an FMA peak and a large KokkosBlas::gemm rate. They anchor every row's roofline_pct
// (docs/measurement.md, "Ceilings and roofline").
#include "measure/sampler.hpp"
#include "results/json.hpp"

#include <string>

namespace kcnn::bench {

struct ceilings {
  double copy_gbps = 0;    // b[i] = a[i]: 2 x 4 bytes per element (STREAM convention)
  double triad_gbps = 0;   // a[i] = b[i] + s c[i]: 3 x 4 bytes per element
  double cache_copy_gbps = 0;  // the copy with both arrays in half the LLC / L2 (0: not measured)
  double cache_copy_s = 0, cache_array_bytes = 0;
  // The copy with 4 independent elements per work item (n/4 apart, so each load stays coalesced):
  // 4x the bytes in flight per GPU thread. Part of a GPU's roof (a one-element copy is short of
  // memory-level parallelism there and would understate what the memory can do); on a host it
  // only tells whether the one-element kernels are short of it.
  double copy4_gbps = 0, copy4_s = 0, copy4_array_bytes = 0;  // bytes of each array it copies
  // The runtime's own device-to-device copy (Kokkos::deep_copy between two device Views: a
  // cudaMemcpyAsync on CUDA), GPU backends only (0 on a host): part of a GPU's roof.
  double d2d_copy_gbps = 0, d2d_copy_s = 0;
  bool device_roof = false;  // a GPU backend's ceilings: copy4 and the d2d copy count in the roof
  // The copy with non-temporal stores (kcnn::stream_lanes: no write-allocate read of the
  // destination), host backends only (0 on a GPU): what a kernel that streams its output (the
  // flat forms and host pooling, above the run's streaming threshold) can reach. Part of the
  // roof.
  double copy_stream_gbps = 0, copy_stream_s = 0;
  double timer_overhead_s = 0;  // what the samples amortised
  double fma_gflops = 0;   // independent fp32 FMA chains, 2 FLOP per FMA
  double gemm_gflops = 0;  // KokkosBlas::gemm, fp32, square
  double copy_s = 0, triad_s = 0, fma_s = 0, gemm_s = 0;  // best time of each
  double fma_flops = 0;    // FLOPs of one FMA run
  double array_bytes = 0;  // bytes of each stream array
  int gemm_n = 0;
  int reps = 0;            // best of this many runs per ceiling
  double seconds = 0;      // time spent measuring them
  bool measured = false;

  // The roof: the best bandwidth and the best compute rate measured. On a host the best of the
  // copy, the triad and the streamed copy; on a GPU the best of the copy, copy4, the triad and
  // the d2d copy.
  double bandwidth_gbps() const;
  const char* bandwidth_source() const;  // which ceiling the roof is (e.g. "copy4")
  double peak_gflops() const { return fma_gflops > gemm_gflops ? fma_gflops : gemm_gflops; }
};

// Measures the ceilings of the default execution space, every sample through `timer`. llc_bytes
// sizes the stream arrays (4x the last-level cache, at least 64 MiB each). A stop (SIGINT,
// SIGTERM) during them ends them after the current section, unmeasured (measured = false).
ceilings measure_ceilings(double llc_bytes, const sampler& timer);

// achieved / min(bandwidth x intensity, peak) x 100; for a case without FLOPs,
// achieved GB/s / bandwidth x 100. Negative when it cannot be computed (no ceilings, no time).
double roofline_pct(const ceilings& c, double bytes, double flops, double seconds);

// The "ceilings" object of the JSON context (null when not measured).
json ceilings_json(const ceilings& c);  // null when not measured

}  // namespace kcnn::bench
