#pragma once
// How one sample is taken: the harness's one timing path. Everything kcnn-bench times (cases,
// ceilings, the timer's overhead, launch costs, forward-pass steps, layout transforms, the host
// work it reports the duration of) is a timed_work given to the run's sampler, so every figure
// of a run is taken one way and a device model (the gpu-model build) models all of them.
// tests/check_one_timing_path.py fails when a clock is read anywhere else in the harness.
//
// Samplers: fenced_timer (host clock between two fences: every backend), and on CUDA builds
// gpu_event_timer (device events on the execution space's stream, beside the host clock; a
// sample of device work queued behind a blocking kernel, the SM clock estimated per sample).
#include "cases/registry.hpp"
#include "measure/rank_agreement.hpp"
#include "results/results.hpp"

#include <Kokkos_Core.hpp>

#include <functional>
#include <memory>
#include <string>

namespace kcnn::bench {

// What a timed_work does, which decides how a device timer may hold and time it.
enum class work_kind {
  // Asynchronous launches on the default execution space's stream and nothing else: a device
  // timer may queue them behind a blocking kernel.
  device,
  // Device work that waits for the host or for another stream inside (a swap's copies, a
  // prefetch, a fence): events around it, nothing may hold it back.
  synchronising,
  // The host clock only: host work, or device work that events on one stream cannot bound (a
  // synchronous copy, work on other streams).
  host_clock,
};

// What one sample times: `launches` calls of launch(), after at_start() (e.g. a barrier with the
// other ranks, outside the clock).
struct timed_work {
  int launches = 1;
  std::function<void()> launch;
  std::function<void()> at_start;  // may be empty
  work_kind kind = work_kind::device;
  // For a device model: the case these launches belong to (nullptr: none) and its FLOPs.
  const bench_case* subject = nullptr;
  double flops = 0;
  // False: no fence before or after the launches (work that waits where it must itself: a
  // swapped forward pass's step, whose copies overlap the next step). The host clock alone.
  bool fenced = true;
};

// One sample, in seconds per launch.
struct timing_sample {
  double host_s = 0;        // host clock from the first launch to after the closing fence
  double gpu_s = -1;        // between device events around the launches (< 0: no device timer)
  double sm_clock_hz = -1;  // the SM clock over the sample, estimated (< 0: not estimated)
  bool throttled = false;   // sm_clock_hz below the sampler's throttle threshold
  bool held = false;        // queued behind a blocking kernel (launches queued before any ran)
  bool hold_timed_out = false;  // the blocking kernel ended on its timeout: not a valid sample
  // The figure rates are computed from: device time where there is one.
  double seconds() const { return gpu_s >= 0 ? gpu_s : host_s; }
};

class sampler {
 public:
  virtual ~sampler() = default;
  // What the rows' times are, for the context and the rows' `timer` column (e.g. "fenced_timer").
  virtual const char* name() const = 0;
  // One sample of w. The caller does untimed work (before_run, a flush) before it.
  virtual timing_sample take(const timed_work& w) const = 0;
  // True when take() gives device times (gpu_s) for device work.
  virtual bool times_device() const { return false; }
  // The most launches one sample should hold (0: no limit): a device timer's queue-safe batch.
  virtual int max_launches() const { return 0; }
  // A device model (the gpu-model build) models instead of timing: take() runs the work once,
  // traced, and returns the modelled seconds; the case's figures come from last_model().
  virtual bool models() const { return false; }
  // The model's figures of the last sample whose subject was `c` (models() only).
  virtual model_figures last_model(const bench_case& c) const {
    (void)c;
    return {};
  }
  // The sampler's part of the run's context, as JSON text (empty: none).
  virtual std::string context_json() const { return {}; }

  // One sample of case c: `launches` back-to-back c.run() calls, every rank in `ranks` starting
  // together; `hold` false keeps a device timer from queueing them behind its blocking kernel.
  timing_sample sample(bench_case& c, int launches, rank_agreement& ranks, const std::string& what,
                       bool hold = true) const;
};

// A sample is the wall-clock time of `launches` back-to-back launches between two fences
// (Kokkos::fence() before: nothing else in flight when the clock starts; after: the kernels have
// finished when it stops): what the device did, with the launch and fence overhead included
// once per sample.
class fenced_timer final : public sampler {
 public:
  const char* name() const override { return "fenced_timer"; }
  timing_sample take(const timed_work& w) const override;
};

// How the device timer of CUDA builds holds and checks samples (its defaults documented here).
struct device_timer_settings {
  // A sample of device work (up to max_held_launches launches) waits behind a blocking kernel
  // until it is queued; the kernel ends by itself after this long (a case that waits for the host
  // inside its run would otherwise never start): such a sample is discarded and the case is not
  // held again.
  double hold_timeout_s = 0.02;
  // The most launches a held sample queues: a launch queue of about a thousand entries must take
  // them all (a case of several kernels per run included) before the hold is released.
  int max_held_launches = 128;
  // A sample whose estimated SM clock is below this fraction of the device's peak clock is
  // throttled: the measurement discards it and counts it in the row (nvbench's 0.75).
  double throttle_fraction = 0.75;
};

// The run's sampler: on a CUDA build the device-event timer unless `host_clock_only`
// (--host-timer), elsewhere the fenced timer. (The gpu-model build makes its own.)
std::unique_ptr<sampler> make_timing_sampler(bool host_clock_only, const device_timer_settings& s = {});

// How many back-to-back launches one sample times. One, unless a fenced launch (one_launch_s,
// overhead included) is so short that the fence-and-timer overhead would be more than 1 % of
// it and the case may run back to back: then enough launches that a sample lasts 100x the
// overhead, at most max_launches (nvbench's batch measurement). The row's time is the sample
// divided by the launches.
int launches_per_sample(double one_launch_s, double overhead_s, bool back_to_back, int max_launches);

// What one timed repetition costs with nothing in it, through `timer`: an empty one-element
// kernel, one launch per sample, median of 200 samples. `host` is the host clock's figure (fence,
// clock start, launch, fence, clock read: the floor under every host-clock sample); `device` the
// device timer's (< 0: none).
struct timer_floor {
  double host_s = 0, device_s = -1;
};
timer_floor timer_overhead(const sampler& timer);

// Evicts caches between repetitions (--cold): reads a buffer of at least 4x the last-level
// cache (L2 on GPUs), and 64 MiB, in the default execution space. It only reads, so no dirty
// line is left to be written back during the timed kernel.
class cache_flusher {
 public:
  explicit cache_flusher(double cache_bytes);
  void operator()() const;
  std::size_t bytes() const { return buf_.span() * sizeof(float); }
  // The buffer it reads (tests check that a flush leaves it as it was).
  const Kokkos::View<float*>& buffer() const { return buf_; }

 private:
  Kokkos::View<float*> buf_;
  Kokkos::View<int> found_marker_;
};

}  // namespace kcnn::bench
