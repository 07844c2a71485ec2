#pragma once
// Device events, a blocking kernel and an SM-clock probe on one CUDA stream: the parts of the
// device-event timer (sampler.cpp, CUDA builds) that need the CUDA runtime, in a CUDA source of
// their own (gpu_events.cu) that nvcc compiles wherever it is installed, so host builds
// compile-check it. No CUDA type crosses this header.
//
// One sample: hold() (optional), start(), the launches, stop(), finish() (which releases the
// hold). As nvbench's cold measurement: the blocking kernel keeps the stream from running the
// launches until all of them and both events are queued, so the events time the kernels and not
// the host's launch rate; it ends by itself after its timeout, which finish() reports.
#include <memory>

namespace kcnn::bench::gpu_events {

struct stream_sample {
  double gpu_s = -1;            // between the start and the stop event
  double sm_clock_hz = -1;      // SM 0's clock over the sample (< 0: the sample was too short to tell)
  bool hold_timed_out = false;  // the blocking kernel ended on its timeout, not on release()
};

class stream_timer {
 public:
  // `stream` is a cudaStream_t; hold_timeout_s bounds the blocking kernel.
  stream_timer(void* stream, double hold_timeout_s);
  ~stream_timer();
  stream_timer(const stream_timer&) = delete;
  stream_timer& operator=(const stream_timer&) = delete;

  void hold();     // queue the blocking kernel
  void start();    // queue the first clock probe and the start event
  void stop();     // queue the stop event and the second clock probe
  stream_sample finish();  // releases the hold, waits for the stream
  void abandon() noexcept;  // a sample given up half-way (an exception): releases and waits
  double peak_sm_clock_hz() const;  // the device's peak SM clock (cudaDevAttrClockRate)

  // The shortest sample whose clock is estimated: the global timer's granularity (about 1 us on
  // some GPUs) would make a shorter estimate meaningless.
  static constexpr double min_clock_interval_s = 20e-6;

 private:
  struct state;
  std::unique_ptr<state> s_;
};

}  // namespace kcnn::bench::gpu_events
