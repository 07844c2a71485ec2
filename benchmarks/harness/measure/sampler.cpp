#include "measure/sampler.hpp"

#include "measure/stats.hpp"
#if defined(KOKKOS_ENABLE_CUDA) && defined(KCNN_HAVE_GPU_EVENTS)
#include "measure/gpu_events.hpp"
#endif

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

namespace kcnn::bench {

timing_sample sampler::sample(bench_case& c, int launches, rank_agreement& ranks, const std::string& what,
                              bool hold) const {
  timed_work w;
  w.launches = launches;
  w.launch = [&c] { c.run(); };
  w.at_start = [&] { ranks.barrier("a sample of " + what); };
  w.kind = !c.timed_on_one_stream() ? work_kind::host_clock : hold ? work_kind::device : work_kind::synchronising;
  w.subject = &c;
  w.flops = c.cost().flops;
  return take(w);
}

namespace {

// The one place a harness clock starts: (a fence,) at_start(), before_clock() (a device timer's
// hold and start event, outside the clock), the clock, `launches` calls of launch(),
// after_launches() (the stop event and the wait for it), (a fence,) the clock read.
template <class Before, class After>
double host_clock_sample(const timed_work& w, const Before& before_clock, const After& after_launches) {
  if (w.fenced) Kokkos::fence();
  if (w.at_start) w.at_start();
  before_clock();
  Kokkos::Timer t;
  for (int i = 0; i < w.launches; ++i) w.launch();
  after_launches();
  if (w.fenced) Kokkos::fence();
  return t.seconds() / std::max(1, w.launches);
}

void nothing() {}

}  // namespace

timing_sample fenced_timer::take(const timed_work& w) const {
  timing_sample s;
  s.host_s = host_clock_sample(w, nothing, nothing);
  return s;
}

#if defined(KOKKOS_ENABLE_CUDA) && defined(KCNN_HAVE_GPU_EVENTS)
namespace {

// Device events on the default execution space's stream (every kcnn kernel and every peer runs
// on it) beside the host clock. A sample of device work is held behind the blocking kernel until
// all its launches are queued (nvbench's cold measurement for one launch; its batch measurement,
// held, for several); synchronising work gets events without a hold; host-clock work and unfenced
// work the host clock alone.
class gpu_event_timer final : public sampler {
 public:
  explicit gpu_event_timer(const device_timer_settings& s)
      : settings_(s),
        timer_(std::make_unique<gpu_events::stream_timer>(Kokkos::DefaultExecutionSpace().cuda_stream(),
                                                          s.hold_timeout_s)) {}
  const char* name() const override { return "cuda_events"; }
  bool times_device() const override { return true; }
  int max_launches() const override { return settings_.max_held_launches; }
  timing_sample take(const timed_work& w) const override {
    timing_sample s;
    if (w.kind == work_kind::host_clock || !w.fenced) {
      s.host_s = host_clock_sample(w, nothing, nothing);
      return s;
    }
    const bool hold = w.kind == work_kind::device && w.launches <= settings_.max_held_launches;
    gpu_events::stream_sample g;
    // A launch that throws leaves no blocking kernel spinning.
    struct abandon_on_throw {
      gpu_events::stream_timer& t;
      bool done = false;
      ~abandon_on_throw() {
        if (!done) t.abandon();
      }
    } guard{*timer_};
    s.host_s = host_clock_sample(
        w,
        [&] {
          if (hold) timer_->hold();
          timer_->start();
        },
        [&] {
          timer_->stop();
          g = timer_->finish();  // releases the hold first
        });
    guard.done = true;
    s.held = hold;
    s.hold_timed_out = g.hold_timed_out;
    s.gpu_s = g.gpu_s / std::max(1, w.launches);
    s.sm_clock_hz = g.sm_clock_hz;
    s.throttled = g.sm_clock_hz > 0 && g.sm_clock_hz < settings_.throttle_fraction * timer_->peak_sm_clock_hz();
    return s;
  }
  std::string context_json() const override {
    std::ostringstream o;
    o << "{\"device_timer\": \"cudaEvent pair on the default execution space's stream\", \"hold_timeout_s\": "
      << settings_.hold_timeout_s << ", \"max_held_launches\": " << settings_.max_held_launches
      << ", \"throttle_fraction\": " << settings_.throttle_fraction
      << ", \"peak_sm_clock_mhz\": " << timer_->peak_sm_clock_hz() / 1e6
      << ", \"min_clock_interval_us\": " << gpu_events::stream_timer::min_clock_interval_s * 1e6 << "}";
    return o.str();
  }

 private:
  device_timer_settings settings_;
  std::unique_ptr<gpu_events::stream_timer> timer_;
};

}  // namespace
#endif

std::unique_ptr<sampler> make_timing_sampler(bool host_clock_only, const device_timer_settings& s) {
#if defined(KOKKOS_ENABLE_CUDA) && defined(KCNN_HAVE_GPU_EVENTS)
  if (!host_clock_only) return std::make_unique<gpu_event_timer>(s);
#endif
  (void)host_clock_only;
  (void)s;
  return std::make_unique<fenced_timer>();
}

int launches_per_sample(double one_launch_s, double overhead_s, bool back_to_back, int max_launches) {
  if (!back_to_back || overhead_s <= 0 || one_launch_s <= 0) return 1;
  const double min_sample_s = 100.0 * overhead_s;
  if (one_launch_s >= min_sample_s) return 1;
  return int(std::min(double(std::max(1, max_launches)), std::ceil(min_sample_s / one_launch_s)));
}

namespace {
struct empty_kernel {
  KOKKOS_INLINE_FUNCTION void operator()(const int) const {}
};
// Reads every element and writes nothing: a buffer of zeros never holds the marker, but the
// compiler cannot know that, so the loads stay. (A flush that writes leaves its lines dirty in
// the cache, and their write-back then lands inside the next timed kernel.)
struct read_every_element {
  Kokkos::View<const float*> b;
  Kokkos::View<int> found_marker;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    if (b(i) == 1.0f) found_marker() = 1;
  }
};
}  // namespace

timer_floor timer_overhead(const sampler& timer) {
  timed_work w;
  w.launch = [] { Kokkos::parallel_for("kcnn::empty", Kokkos::RangePolicy<>(0, 1), empty_kernel{}); };
  std::vector<double> host, device;
  for (int i = 0; i < 200; ++i) {
    const timing_sample s = timer.take(w);
    host.push_back(s.host_s);
    if (s.gpu_s >= 0 && !s.hold_timed_out) device.push_back(s.gpu_s);
  }
  timer_floor f;
  f.host_s = summarize(host).median;
  if (!device.empty()) f.device_s = summarize(device).median;
  return f;
}

cache_flusher::cache_flusher(double cache_bytes) {
  const std::size_t n = std::size_t(std::max(4.0 * cache_bytes, 64.0 * 1024 * 1024) / sizeof(float));
  buf_ = Kokkos::View<float*>("kcnn::cache_flush", n);  // zeros
  found_marker_ = Kokkos::View<int>("kcnn::cache_flush.marker");
}

void cache_flusher::operator()() const {
  Kokkos::parallel_for("kcnn::cache_flush", Kokkos::RangePolicy<Kokkos::IndexType<std::size_t>>(0, buf_.extent(0)),
                       read_every_element{buf_, found_marker_});
}

}  // namespace kcnn::bench
