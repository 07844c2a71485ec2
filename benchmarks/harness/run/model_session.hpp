#pragma once
// The gpu-model build's hooks into the benchmark run, in one place: the run's sampler, whether
// the host's ceilings apply, and the context rewritten for the modelled GPU. Every other file of
// the run is the same in both builds.
#include "cli/options.hpp"
#include "device/context.hpp"
#include "measure/sampler.hpp"

#include <memory>

namespace kcnn::bench {

// The run's sampler: the device model in the gpu-model build (it models, never times), else the
// device-event timer on CUDA builds (the fenced timer with --host-timer) and the fenced timer on
// host backends.
std::unique_ptr<sampler> make_sampler(const options& o);

// False in the gpu-model build, which models a GPU: the host's ceilings would describe the wrong
// machine.
bool host_ceilings_apply();

// The gpu-model build's rows describe the modelled GPU, not the host that ran the model; a no-op
// in other builds.
void describe_modelled_device(const options& opt, run_context& ctx);

}  // namespace kcnn::bench
