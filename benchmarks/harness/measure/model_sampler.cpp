#include "measure/model_sampler.hpp"

#include "cases/registry.hpp"
#include "results/json.hpp"

#include <kcnn/map.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <sstream>

namespace kcnn::bench {

device_model_sampler::device_model_sampler(const std::string& devices_file, const std::string& device,
                                           model::trace_limits limits)
    : devices_file_(devices_file.empty() ? model::default_devices_file() : devices_file),
      devices_(model::load_devices(devices_file_)),
      device_(&model::find_device(devices_, device)),
      registers_(model::register_table::load(model::default_registers_file())),
      limits_(limits) {}

timing_sample device_model_sampler::take(const timed_work& w) const {
  if (w.kind == work_kind::host_clock) return fenced_timer().take(w);  // not a kcnn kernel's: the host clock
  timing_sample t;
  // One traced run: the model's figures are per run, whatever the launches asked for.
  Kokkos::fence();
  model::session s(*device_, limits_, &registers_);
  w.launch();
  Kokkos::fence();
  last_ = s.finish(w.flops, w.subject ? std::max(0.0, w.subject->cost().read_bytes) : 0.0);
  last_case_ = w.subject;
  t.host_s = last_.time_s;  // modelled seconds, not a clock reading
  return t;
}

model_figures row_figures(const model::case_figures& c) {
  model_figures m;
  if (c.dominant < 0) return m;
  const model::launch_figures& dominant = c.launches[std::size_t(c.dominant)];
  m.present = true;
  m.blocks = dominant.blocks;
  m.threads_per_block = dominant.threads_per_block;
  m.waves = dominant.waves;
  m.registers = dominant.registers;
  m.ld_requests = c.ld_requests;
  m.ld_sectors_per_request = c.ld_requests > 0 ? c.ld_sectors / c.ld_requests : -1;
  m.st_requests = c.st_requests;
  m.st_sectors_per_request = c.st_requests > 0 ? c.st_sectors / c.st_requests : -1;
  m.smem_conflict_ways = c.smem_requests > 0 ? c.smem_wavefronts / c.smem_requests : -1;
  m.const_serialization = c.const_requests > 0 ? c.const_words / c.const_requests : -1;
  m.l2_bytes = c.l2_bytes;
  m.dram_bytes = c.dram_bytes;
  m.time_us = c.time_s * 1e6;
  m.bound = c.bound;
  if (dominant.ld_requests > 0)
    m.bytes_in_flight = dominant.loads_in_flight * dominant.ld_bytes / dominant.ld_requests /
                        double(std::max(1, std::min(dominant.threads_per_block, 32)));
  m.traced_blocks = c.traced_blocks;
  m.all_blocks = c.blocks;
  m.dram_reads_capped = c.dram_reads_capped;
  return m;
}

model_figures device_model_sampler::last_model(const bench_case& c) const {
  if (last_case_ != &c) return {};
  return row_figures(last_);
}

std::string device_model_sampler::context_json() const {
  const model::device_description& d = *device_;
  json dev = json::object();
  dev.set("name", d.name)
      .set("sms", d.sms)
      .set("clock_mhz", d.clock_hz / 1e6)
      .set("fp32_tflops", d.fp32_flops_per_s / 1e12)
      .set("dram_gb_s", d.dram_bytes_per_s / 1e9)
      .set("l2_gb_s", d.l2_bytes_per_s / 1e9)
      .set("l2_mib", d.l2_bytes / 1048576.0)
      .set("l1_smem_kib_per_sm", d.l1_smem_bytes_per_sm / 1024)
      .set("smem_kib_per_sm", d.smem_bytes_per_sm / 1024)
      .set("l1_latency_ns", d.l1_latency_s * 1e9)
      .set("l2_latency_ns", d.l2_latency_s * 1e9)
      .set("mem_latency_ns", d.mem_latency_s * 1e9)
      .set("mlp_per_warp", d.mlp_per_warp)
      .set("registers_per_sm", d.registers_per_sm)
      .set("lsu_per_clock", d.lsu_per_clock)
      .set("issue_per_clock", d.issue_per_clock)
      .set("source", d.source);
  json j = json::object();
  j.set("what", "a model of the GPU, not a measurement: the kernels' CUDA code paths run on the host, their loads and "
                "stores traced and counted as the device's memory system would serve them (docs/gpu-model.md)")
      .set("version", model::model_version)
      .set("devices_file", devices_file_)
      .set("device", dev)
      .set("registers_file", registers_.file())
      .set("registers_kernels", double(registers_.size()))
      .set("range_policy_block", gpu_range_block)
      .set("max_traced_accesses_per_launch", double(limits_.max_accesses_per_launch));
  return j.dump();
}

}  // namespace kcnn::bench
