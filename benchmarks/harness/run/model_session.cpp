#include "run/model_session.hpp"

#if defined(KCNN_GPU_MODEL)
#include "measure/model_sampler.hpp"
#endif

#include <cstddef>

namespace kcnn::bench {

std::unique_ptr<sampler> make_sampler(const options& o) {
#if defined(KCNN_GPU_MODEL)
  model::trace_limits limits;
  limits.max_accesses_per_launch = std::size_t(o.model_trace_millions * 1e6);
  return std::make_unique<device_model_sampler>(o.model_devices, o.model_device, limits);
#else
  device_timer_settings s;
  s.hold_timeout_s = o.hold_timeout_ms * 1e-3;
  return make_timing_sampler(o.host_timer, s);
#endif
}

bool host_ceilings_apply() {
#if defined(KCNN_GPU_MODEL)
  return false;
#else
  return true;
#endif
}

void describe_modelled_device([[maybe_unused]] const options& opt, [[maybe_unused]] run_context& ctx) {
#if defined(KCNN_GPU_MODEL)
  // Their own folder under results/ (gpu-model-<name>) and device name, and the modelled L2 for
  // the traffic formula.
  const auto model_devices = model::load_devices(opt.model_devices.empty() ? model::default_devices_file() : opt.model_devices);
  const model::device_description& modelled = model::find_device(model_devices, opt.model_device);
  ctx.device.name = "GPU model: " + modelled.name + " (run on " + ctx.device.name + ")";
  ctx.device.slug = "gpu-model-" + slugify(modelled.name);
  ctx.device.l2_or_llc_bytes = modelled.l2_bytes;
#endif
}

}  // namespace kcnn::bench
