#include "measure/ceilings.hpp"

#include "measure/clock.hpp"
#include "measure/sampler.hpp"
#include "measure/stop.hpp"

#include <kcnn/compat.hpp>
#include <kcnn/compat_blas.hpp>
#include <kcnn/lanes.hpp>
#if KCNN_HOST_TUNING
#include <kcnn/host/streaming.hpp>  // with kcnn/lanes.hpp's host part (kcnn/host/rows.hpp)
#endif

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>
#include <vector>

namespace kcnn::bench {

namespace {

struct copy_kernel {
  Kokkos::View<const float*> a;
  Kokkos::View<float*> b;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const { b(i) = a(i); }
};
// Item i copies i, i + q, i + 2q, i + 3q (copy4_of gives q): four loads issued before the first store.
struct copy4_kernel {
  Kokkos::View<const float*> a;
  Kokkos::View<float*> b;
  std::size_t q;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    const float x0 = a(i), x1 = a(i + q), x2 = a(i + 2 * q), x3 = a(i + 3 * q);
    b(i) = x0;
    b(i + q) = x1;
    b(i + 2 * q) = x2;
    b(i + 3 * q) = x3;
  }
};
#if KCNN_HOST_TUNING
// The copy with non-temporal stores (kcnn::host_tuning::stream_lanes over chunks of host_tuning::flat_chunk
// elements, as the host tuning's flat forms take them): no write-allocate read of the destination, the bandwidth a
// kernel that streams its output can reach. Vector by vector, not through stream_chunk's
// buffer: GCC makes a copy into the buffer a memcpy call, which halves the copy's bandwidth.
// A template (instantiated for host backends only: a GPU build has no use for it).
template <class Exec>
struct copy_stream_kernel {
  const float* a;
  float* b;
  std::size_t n;
  void operator()(const std::size_t item) const {
    constexpr std::size_t chunk = host_tuning::flat_chunk;
    const std::size_t begin = item * chunk, end = n - begin < chunk ? n : begin + chunk;
    std::size_t i = begin;
    for (; i + 16 <= end; i += 16) {
      float_lanes<16> v;
      load_lanes<16>(v, a + i);
      host_tuning::stream_lanes<16>(b + i, v);
    }
    for (; i < end; ++i) b[i] = a[i];
  }
};
#endif
struct triad_kernel {
  Kokkos::View<float*> a;
  Kokkos::View<const float*> b, c;
  float s;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const { a(i) = b(i) + s * c(i); }
};

// Each work item runs `chains` independent multiply-add chains, `iters` times. A GPU hides FMA
// latency across warps, so 32 per thread suffice; a CPU core needs latency x FMA ports vector
// registers in flight from one work item (4 x 2 x 16 lanes with AVX-512).
template <int chains>
struct fma_kernel {
  Kokkos::View<float*> out;
  int iters;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    float x[chains];
    for (int j = 0; j < chains; ++j) x[j] = float(i % 7) * 1e-3f + float(j) * 1e-4f;
    const float m = 0.999f, a = 1e-6f;
    for (int t = 0; t < iters; ++t)
      for (int j = 0; j < chains; ++j) x[j] = compat::fma(x[j], m, a);
    float s = 0;
    for (int j = 0; j < chains; ++j) s += x[j];
    out(i) = s;  // keeps the chains alive
  }
};

// Seconds per launch of f, best of `reps` samples; a sample is as many back-to-back launches
// as make the fence-and-timer overhead under 1 % of it (launches_per_sample), so a ceiling
// kernel of 100 us on a GPU is not inflated by a 10 us floor.
// Every sample through the run's sampler: on a GPU the device timer's figure.
template <class F>
double best_seconds(const sampler& timer, int reps, double overhead_s, const F& f) {
  if (stop_requested()) return 1e30;
  f();  // first touch, lazy initialisation
  if (stop_requested()) return 1e30;
  timed_work w;
  w.launch = f;
  w.launches = launches_per_sample(timer.take(w).host_s, overhead_s, true, 1000);
  double best = 1e30;
  for (int r = 0; r < reps && !stop_requested(); ++r) best = std::min(best, timer.take(w).seconds());
  return best;  // a stop before the first sample: 1e30 (calibrate then drops the ceilings)
}

// Seconds of the streamed copy of n floats from a to b; 0 (not measured) where Exec is not a
// host's.
template <class Exec>
double copy_stream_seconds(const sampler& timer, const float* a, float* b, const std::size_t n, const int reps,
                           const double overhead_s) {
  if constexpr (!host_backend<Exec> || !host_tuning_built) {
    (void)timer, (void)a, (void)b, (void)n, (void)reps, (void)overhead_s;
    return 0;
  } else {
#if KCNN_HOST_TUNING
    constexpr std::size_t chunk = host_tuning::flat_chunk;
    const Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::size_t>> chunks(0, (n + chunk - 1) / chunk);
    return best_seconds(timer, reps, overhead_s, [&] {
      Kokkos::parallel_for("kcnn::ceil.copy_stream", chunks, copy_stream_kernel<Exec>{a, b, n});
      host_tuning::stream_fence_threads(Exec());
    });
#endif
  }
}

// copy4 over arrays of n floats: item i copies i, i + stride, i + 2 stride, i + 3 stride, for
// `items` items. The stride is a quarter of the array rounded down to 32 floats, plus 32 (128
// bytes): four read and four write streams a multiple of 4 KiB apart fall into the same sets of a
// host core's L1 and L2 and slow the copy by an order of magnitude, while 128 bytes keep every
// warp's requests on a GPU aligned. items = n - 3 stride <= stride: the quarters do not overlap.
struct copy4_geometry {
  std::size_t stride = 0, items = 0;
};
copy4_geometry copy4_of(const std::size_t n) {
  constexpr std::size_t pad = 32;
  const std::size_t stride = n / 4 / pad * pad + pad;
  return {stride, n > 3 * stride ? n - 3 * stride : 0};
}

// The other copies over the same arrays (nullptr: not measured).
struct more_copies {
  double* copy4 = nullptr;        // the 4-element copy (copy4_of(n))
  double* copy_stream = nullptr;  // the streamed copy (host backends)
  double* d2d = nullptr;          // the runtime's device-to-device copy (GPU backends)
};

// Copy bandwidth over two arrays of n floats each: seconds of the one-element copy and of the
// copies `more` asks for.
double copy_seconds(const sampler& timer, std::size_t n, int reps, double overhead_s, const more_copies& more = {}) {
  using exec = Kokkos::DefaultExecutionSpace;
  Kokkos::View<float*> a("kcnn::ceil.a", n), b("kcnn::ceil.b", n);
  Kokkos::deep_copy(a, 1.0f);
  const Kokkos::RangePolicy<exec, Kokkos::IndexType<std::size_t>> range(0, n);
  const double s =
      best_seconds(timer, reps, overhead_s, [&] { Kokkos::parallel_for("kcnn::ceil.copy", range, copy_kernel{a, b}); });
  if (more.copy4 && !stop_requested()) {
    const copy4_geometry g = copy4_of(n);
    const Kokkos::RangePolicy<exec, Kokkos::IndexType<std::size_t>> quarter(0, g.items);
    *more.copy4 = best_seconds(timer, reps, overhead_s,
                               [&] { Kokkos::parallel_for("kcnn::ceil.copy4", quarter, copy4_kernel{a, b, g.stride}); });
  }
  if (more.copy_stream && !stop_requested())
    *more.copy_stream = copy_stream_seconds<exec>(timer, a.data(), b.data(), n, reps, overhead_s);
  if (more.d2d && !host_backend<exec> && !stop_requested())
    *more.d2d = best_seconds(timer, reps, overhead_s, [&] { Kokkos::deep_copy(exec(), b, a); });
  return s;
}

// The copy ceilings over two arrays of n floats: the one-element copy, and the 4-element,
// streamed and device-to-device copies where measured.
void copy_ceilings(ceilings& c, const sampler& timer, std::size_t n, double overhead_s) {
  c.array_bytes = double(n) * sizeof(float);
  c.copy_s = copy_seconds(timer, n, c.reps, overhead_s, {&c.copy4_s, &c.copy_stream_s, &c.d2d_copy_s});
  c.copy_gbps = 2.0 * c.array_bytes / c.copy_s / 1e9;
  if (c.d2d_copy_s > 0) c.d2d_copy_gbps = 2.0 * c.array_bytes / c.d2d_copy_s / 1e9;
  if (c.copy_stream_s > 0) c.copy_stream_gbps = 2.0 * c.array_bytes / c.copy_stream_s / 1e9;
  c.copy4_array_bytes = double(4 * copy4_of(n).items) * sizeof(float);
  if (c.copy4_s > 0) c.copy4_gbps = 2.0 * c.copy4_array_bytes / c.copy4_s / 1e9;
}

void triad_ceiling(ceilings& c, const sampler& timer, std::size_t n, double overhead_s) {
  using exec = Kokkos::DefaultExecutionSpace;
  Kokkos::View<float*> a("kcnn::ceil.a", n), b("kcnn::ceil.b", n), cc("kcnn::ceil.c", n);
  Kokkos::deep_copy(b, 2.0f);
  Kokkos::deep_copy(cc, 3.0f);
  const Kokkos::RangePolicy<exec, Kokkos::IndexType<std::size_t>> range(0, n);
  c.triad_s = best_seconds(timer, c.reps, overhead_s,
                           [&] { Kokkos::parallel_for("kcnn::ceil.triad", range, triad_kernel{a, b, cc, 0.5f}); });
  c.triad_gbps = 3.0 * c.array_bytes / c.triad_s / 1e9;
}

// The same copy with both arrays in half the last-level cache (L2 on a GPU): the ceiling of
// warm cases whose working set fits there (fits_in_cache).
void cache_copy_ceiling(ceilings& c, const sampler& timer, double llc_bytes, double overhead_s) {
  const std::size_t m = std::max<std::size_t>(1024, std::size_t(llc_bytes / 4 / sizeof(float)));
  c.cache_array_bytes = double(m) * sizeof(float);
  c.cache_copy_s = copy_seconds(timer, m, c.reps, overhead_s);
  c.cache_copy_gbps = 2.0 * c.cache_array_bytes / c.cache_copy_s / 1e9;
}

void fma_ceiling(ceilings& c, const sampler& timer, bool host, double overhead_s) {
  using exec = Kokkos::DefaultExecutionSpace;
  // Enough work items to fill a GPU many times over; on a host, enough to run ~0.1 s.
  const std::size_t items = host ? std::size_t(2048) * std::max(1, exec().concurrency()) : std::size_t(1) << 20;
  const int iters = host ? 512 : 2048;
  Kokkos::View<float*> out("kcnn::ceil.fma", items);
  const Kokkos::RangePolicy<exec, Kokkos::IndexType<std::size_t>> range(0, items);
  constexpr int host_chains = 128, device_chains = 32;
  const double t = best_seconds(timer, c.reps, overhead_s, [&] {
    if (host) Kokkos::parallel_for("kcnn::ceil.fma", range, fma_kernel<host_chains>{out, iters});
    else Kokkos::parallel_for("kcnn::ceil.fma", range, fma_kernel<device_chains>{out, iters});
  });
  c.fma_s = t;
  c.fma_flops = 2.0 * double(items) * iters * (host ? host_chains : device_chains);
  c.fma_gflops = c.fma_flops / t / 1e9;
}

void gemm_ceiling(ceilings& c, const sampler& timer, bool host, double overhead_s) {
  using exec = Kokkos::DefaultExecutionSpace;
  c.gemm_n = host ? 1024 : 8192;
  const int m = c.gemm_n;
  Kokkos::View<float**, Kokkos::LayoutLeft> A("kcnn::ceil.A", m, m), B("kcnn::ceil.B", m, m),
      C("kcnn::ceil.C", m, m);
  Kokkos::deep_copy(A, 0.5f);
  Kokkos::deep_copy(B, 0.25f);
  const double t = best_seconds(timer, host ? 2 : c.reps, overhead_s, [&] { compat::gemm(exec(), "N", "N", 1.0f, A, B, 0.0f, C); });
  c.gemm_s = t;
  c.gemm_gflops = 2.0 * double(m) * m * m / t / 1e9;
}

}  // namespace

ceilings measure_ceilings(double llc_bytes, const sampler& timer) {
  ceilings c;
  const budget_clock total;  // how long the ceilings took (the context's seconds), not a ceiling
  using exec = Kokkos::DefaultExecutionSpace;
  const bool host = kcnn::host_backend<exec>;
  c.device_roof = !host;
  c.reps = 5;
  const double overhead_s = timer_overhead(timer).host_s;

  // 4x the last-level cache, at least 64 MiB and at most 1 GiB per array (server CPUs report a
  // socket-wide L3 of hundreds of MiB that a few cores cannot fill anyway).
  const std::size_t n = std::size_t(std::clamp(4.0 * llc_bytes, 64.0 * 1024 * 1024, 1024.0 * 1024 * 1024) / sizeof(float));
  copy_ceilings(c, timer, n, overhead_s);
  // A stop (SIGINT, SIGTERM) ends the ceilings after the section it arrives in: the sections left
  // would still allocate and first-touch their arrays (seconds on a loaded host).
  if (stop_requested()) return c;
  triad_ceiling(c, timer, n, overhead_s);
  if (stop_requested()) return c;
  if (llc_bytes > 0) cache_copy_ceiling(c, timer, llc_bytes, overhead_s);
  if (stop_requested()) return c;
  fma_ceiling(c, timer, host, overhead_s);
  if (stop_requested()) return c;
  gemm_ceiling(c, timer, host, overhead_s);
  c.timer_overhead_s = overhead_s;
  c.seconds = total.seconds();
  c.measured = true;
  return c;
}

namespace {
// The bandwidth ceilings that make the roof, by name.
std::vector<std::pair<const char*, double>> roof_candidates(const ceilings& c) {
  std::vector<std::pair<const char*, double>> v = {{"copy", c.copy_gbps}, {"triad", c.triad_gbps}};
  if (c.device_roof) {
    v.push_back({"copy4", c.copy4_gbps});
    v.push_back({"d2d_copy", c.d2d_copy_gbps});
  } else {
    v.push_back({"copy_stream", c.copy_stream_gbps});
  }
  return v;
}
}  // namespace

double ceilings::bandwidth_gbps() const {
  double best = 0;
  for (const auto& [name, gbps] : roof_candidates(*this)) best = std::max(best, gbps);
  return best;
}

const char* ceilings::bandwidth_source() const {
  const char* source = "copy";
  double best = 0;
  for (const auto& [name, gbps] : roof_candidates(*this))
    if (gbps > best) {
      best = gbps;
      source = name;
    }
  return source;
}

double roofline_pct(const ceilings& c, double bytes, double flops, double seconds) {
  if (!c.measured || seconds <= 0 || bytes <= 0) return -1;
  if (flops <= 0) return bytes / seconds / 1e9 / c.bandwidth_gbps() * 100.0;
  const double attainable = std::min(c.bandwidth_gbps() * flops / bytes, c.peak_gflops());
  return flops / seconds / 1e9 / attainable * 100.0;
}

json ceilings_json(const ceilings& c) {
  if (!c.measured) return json();
  json j = json::object();
  j.set("copy_gbps", c.copy_gbps)
      .set("triad_gbps", c.triad_gbps)
      .set("cache_copy_gbps", c.cache_copy_gbps)
      .set("cache_array_bytes", static_cast<unsigned long long>(c.cache_array_bytes))
      .set("copy4_gbps", c.copy4_gbps)
      .set("copy_stream_gbps", c.copy_stream_gbps)
      .set("fma_gflops", c.fma_gflops)
      .set("gemm_gflops", c.gemm_gflops)
      .set("d2d_copy_gbps", c.d2d_copy_gbps)
      .set("bandwidth_gbps", c.bandwidth_gbps())
      .set("bandwidth_source", c.bandwidth_source())
      .set("peak_gflops", c.peak_gflops())
      .set("array_bytes", static_cast<unsigned long long>(c.array_bytes))
      .set("gemm_n", c.gemm_n)
      .set("reps", c.reps)
      .set("seconds", c.seconds)
      .set("method",
           "best of reps samples, each of enough back-to-back launches to last 100x the timer overhead; copy 2 x 4 B "
           "and triad 3 x 4 B per element (no write-allocate); cache_copy: the copy with both arrays in half the "
           "last-level cache (L2 on a GPU); copy4: the copy with 4 independent elements per work item, a quarter of "
           "the array rounded down to 128 bytes plus 128 bytes apart (no 4 KiB aliasing on a host), part of "
           "a GPU's roof; copy_stream (host): the copy with non-temporal stores (no write-allocate), part of a "
           "host's roof; d2d_copy (GPU): Kokkos::deep_copy between two device Views, part of a GPU's roof; "
           "bandwidth_gbps: the roof, bandwidth_source: which ceiling it is; every sample through the run's "
           "sampler (timing.sampler); fma: 128 (host) or 32 (GPU) independent fp32 chains per work item; "
           "gemm: KokkosBlas::gemm fp32 square");
  return j;
}

}  // namespace kcnn::bench
