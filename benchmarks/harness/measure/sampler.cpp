#include "measure/sampler.hpp"

#include "measure/stats.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kcnn::bench {

double fenced_timer::sample(bench_case& c, int launches, rank_agreement& ranks, const std::string& what) const {
  return timed_sample(launches, [&] { c.run(); }, [&] { ranks.barrier("a sample of " + what); });
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

double timer_overhead_seconds() {
  std::vector<double> t;
  for (int i = 0; i < 200; ++i)
    t.push_back(timed_sample(1, [] { Kokkos::parallel_for("kcnn::empty", Kokkos::RangePolicy<>(0, 1), empty_kernel{}); }));
  return summarize(t).median;
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
