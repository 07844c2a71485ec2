// --list, --ceilings and --memory-plan: the modes that write no case rows.
#include "modes/modes.hpp"

#include "results/format.hpp"

#include <iostream>

namespace kcnn::bench {

int list_cases(const selection& sel) {
  for (const auto& c : sel.cases) std::cout << c.key << "\n";
  for (const auto& [what, why] : registry::instance().unavailable())
    std::cerr << "# not on this build: " << what << ": " << why << "\n";
  for (const auto& s : sel.not_applicable) std::cerr << "# not applicable: " << s << "\n";
  for (const auto& k : sel.unmatched_keys) std::cerr << "# selects no case of this build: " << k << "\n";
  return 0;
}

void print_ceilings(std::ostream& os, const ceilings& c, const blas_info& blas) {
  os << "kcnn-bench: ceilings: copy " << fixed(c.copy_gbps, 1) << " GB/s, triad " << fixed(c.triad_gbps, 1)
     << " GB/s, copy 4 per item " << fixed(c.copy4_gbps, 1) << " GB/s, "
     << (c.d2d_copy_gbps > 0 ? "d2d copy " + fixed(c.d2d_copy_gbps, 1) + " GB/s, " : std::string())
     << (c.copy_stream_gbps > 0 ? "copy streamed " + fixed(c.copy_stream_gbps, 1) + " GB/s, " : std::string())
     << "copy in cache "
     << fixed(c.cache_copy_gbps, 1) << " GB/s, fma " << fixed(c.fma_gflops, 1)
     << " GFLOP/s, gemm(" << c.gemm_n << ") " << fixed(c.gemm_gflops, 1) << " GFLOP/s; roof "
     << fixed(c.bandwidth_gbps(), 1) << " GB/s (" << c.bandwidth_source() << ") (" << fixed(c.seconds, 1) << " s)\n";
  os << "kcnn-bench: host BLAS behind KokkosBlas::gemm: " << describe(blas) << "\n";
  if (!blas.warning.empty() && blas.kokkos_kernels_tpl_blas) os << "kcnn-bench: warning: " << blas.warning << "\n";
}

int run_ceilings_mode(int argc, char** argv, const options& opt) {
  const run_context ctx = make_context(argc, argv, "ceilings");
  results_writer writer(opt.out, ctx);
  device_timer_settings timer_settings;
  timer_settings.hold_timeout_s = opt.hold_timeout_ms * 1e-3;
  const std::unique_ptr<sampler> timer = make_timing_sampler(opt.host_timer, timer_settings);
  const ceilings c = measure_ceilings(ctx.device.l2_or_llc_bytes, *timer);
  print_ceilings(std::cout, c, ctx.blas);
  auto row = [&](const std::string& variant, double seconds, double bytes, double flops, const std::string& note) {
    result_row r;
    r.suite = "ceilings";
    r.network = "device";
    r.layer = variant;
    r.op = "ceiling";
    r.layout = "-";
    r.memory_space = name(space_axis::global);
    r.access_pattern = name(pattern_axis::coalesced);
    r.variant = variant;
    r.key = "ceiling/" + variant;
    r.cache = "warm";
    r.reps = c.reps;
    // The ceiling's figure is the sampler's (the device timer's on a GPU): both columns hold it.
    r.time_ms_median = r.time_ms_min = r.time_ms_max = r.time_ms_mean = seconds * 1e3;
    r.timer = timer->name();
    if (timer->times_device()) r.gpu_time_ms_median = r.gpu_time_ms_min = r.gpu_time_ms_max = seconds * 1e3;
    r.bytes = bytes;
    r.flops = flops;
    r.status = case_status::ok;
    r.note = note + "; best of " + std::to_string(c.reps);
    r.roofline_pct = roofline_pct(c, bytes, flops, seconds);
    writer.write(r);
  };
  const std::string arrays = fixed(c.array_bytes / 1048576.0, 0) + " MiB arrays";
  row("copy", c.copy_s, 2 * c.array_bytes, 0, "b[i] = a[i] over " + arrays);
  row("triad", c.triad_s, 3 * c.array_bytes, 0, "a[i] = b[i] + s c[i] over " + arrays);
  row("copy4", c.copy4_s, 2 * c.copy4_array_bytes, 0,
      "b[i + j q] = a[i + j q], j = 0..3, q = n / 4 (4 loads in flight per work item; part of a GPU's roof) over " +
          arrays);
  if (c.d2d_copy_s > 0)
    row("d2d_copy", c.d2d_copy_s, 2 * c.array_bytes, 0,
        "Kokkos::deep_copy between two device Views (the runtime's copy; part of a GPU's roof) over " + arrays);
  if (c.copy_stream_s > 0)
    row("copy_stream", c.copy_stream_s, 2 * c.array_bytes, 0,
        "b[i] = a[i] with non-temporal stores (no write-allocate; part of the roof) over " + arrays);
  if (c.cache_copy_s > 0)
    row("cache_copy", c.cache_copy_s, 2 * c.cache_array_bytes, 0,
        "b[i] = a[i] over " + fixed(c.cache_array_bytes / 1048576.0, 1) + " MiB arrays (both in half the last-level cache)");
  row("fma", c.fma_s, 0, c.fma_flops, "independent fp32 FMA chains per work item (128 host, 32 GPU)");
  const double g = double(c.gemm_n);
  row("gemm", c.gemm_s, 3 * 4 * g * g, 2 * g * g * g, "KokkosBlas::gemm fp32 " + std::to_string(c.gemm_n) + "^3");
  writer.close(json::object().set("ceilings", ceilings_json(c)).set("mode", "ceilings"));
  std::cerr << "kcnn-bench: results in " << writer.final_path() << "\n";
  return 0;
}

int run_memory_plan_mode(int argc, char** argv, const options& opt, std::vector<suite>& suites) {
  const run_context ctx = make_context(argc, argv, "memory_plan");
  results_writer writer(opt.out, ctx);
  const int rc = run_memory_plan(opt, suites, writer);
  writer.close(json::object().set("mode", "memory_plan"));
  std::cerr << "kcnn-bench: results in " << writer.final_path() << "\n";
  return rc;
}

}  // namespace kcnn::bench
