#include "measure/gpu_events.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace kcnn::bench::gpu_events {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("device timer: ") + what + ": " + cudaGetErrorString(e));
}

__device__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Spins until the host sets *released (mapped host memory), or until timeout_ns have passed, in
// which case it says so in *timed_out.
__global__ void hold_stream(const volatile int* released, volatile int* timed_out, unsigned long long timeout_ns) {
  const unsigned long long start = global_timer_ns();
  while (*released == 0) {
    if (global_timer_ns() - start > timeout_ns) {
      *timed_out = 1;
      return;
    }
  }
}

// The global timer and SM 0's cycle counter, read together: launched with one block per SM, so
// that one of them runs on SM 0 (cycle counters of different SMs are not comparable); should two
// land there, the first to claim the slot (zeroed before the launch) writes both values.
__global__ void probe_sm0_clock(int* claim, unsigned long long* ns_and_cycles) {
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  if (smid == 0 && atomicCAS(claim, 0, 1) == 0) {
    ns_and_cycles[0] = global_timer_ns();
    ns_and_cycles[1] = static_cast<unsigned long long>(clock64());
  }
}

}  // namespace

struct stream_timer::state {
  cudaStream_t stream = nullptr;
  unsigned long long timeout_ns = 0;
  int sms = 1;
  double peak_hz = 0;
  cudaEvent_t start = nullptr, stop = nullptr;
  // Mapped host memory: [0] released, [1] timed out; then two probes of (ns, cycles).
  int* flags = nullptr;
  int* flags_dev = nullptr;
  unsigned long long* probes = nullptr;
  unsigned long long* probes_dev = nullptr;
  int* claims = nullptr;  // device memory: each probe's SM-0 slot
  bool held = false;
  // Whatever was made, released (also when the constructor stops half-way); never leaves a
  // blocking kernel spinning.
  ~state() {
    if (held) {
      static_cast<volatile int*>(flags)[0] = 1;
      cudaStreamSynchronize(stream);
    }
    if (claims) cudaFree(claims);
    if (probes) cudaFreeHost(probes);
    if (flags) cudaFreeHost(flags);
    if (stop) cudaEventDestroy(stop);
    if (start) cudaEventDestroy(start);
  }
};

stream_timer::stream_timer(void* stream, double hold_timeout_s) : s_(std::make_unique<state>()) {
  if (!(hold_timeout_s > 0) || !(hold_timeout_s < 3600))
    throw std::invalid_argument("device timer: the hold timeout must be positive and under an hour");
  s_->stream = static_cast<cudaStream_t>(stream);
  s_->timeout_ns = static_cast<unsigned long long>(hold_timeout_s * 1e9);
  int dev = 0, khz = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&s_->sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute(SMs)");
  check(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev), "cudaDeviceGetAttribute(clock rate)");
  s_->peak_hz = double(khz) * 1e3;
  check(cudaEventCreate(&s_->start), "cudaEventCreate");
  check(cudaEventCreate(&s_->stop), "cudaEventCreate");
  check(cudaHostAlloc(reinterpret_cast<void**>(&s_->flags), 2 * sizeof(int), cudaHostAllocMapped), "cudaHostAlloc");
  check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&s_->flags_dev), s_->flags, 0), "cudaHostGetDevicePointer");
  check(cudaHostAlloc(reinterpret_cast<void**>(&s_->probes), 4 * sizeof(unsigned long long), cudaHostAllocMapped),
        "cudaHostAlloc");
  check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&s_->probes_dev), s_->probes, 0), "cudaHostGetDevicePointer");
  check(cudaMalloc(reinterpret_cast<void**>(&s_->claims), 2 * sizeof(int)), "cudaMalloc");
}

stream_timer::~stream_timer() = default;

void stream_timer::abandon() noexcept {
  if (!s_->held) return;
  static_cast<volatile int*>(s_->flags)[0] = 1;
  cudaStreamSynchronize(s_->stream);
  s_->held = false;
}

void stream_timer::hold() {
  volatile int* f = s_->flags;
  f[0] = 0;
  f[1] = 0;
  hold_stream<<<1, 1, 0, s_->stream>>>(s_->flags_dev, s_->flags_dev + 1, s_->timeout_ns);
  check(cudaGetLastError(), "the blocking kernel's launch");
  s_->held = true;
}

void stream_timer::start() {
  volatile unsigned long long* p = s_->probes;
  for (int i = 0; i < 4; ++i) p[i] = 0;
  check(cudaMemsetAsync(s_->claims, 0, 2 * sizeof(int), s_->stream), "cudaMemsetAsync");
  probe_sm0_clock<<<unsigned(s_->sms), 1, 0, s_->stream>>>(s_->claims, s_->probes_dev);
  check(cudaGetLastError(), "the clock probe's launch");
  check(cudaEventRecord(s_->start, s_->stream), "cudaEventRecord(start)");
}

void stream_timer::stop() {
  check(cudaEventRecord(s_->stop, s_->stream), "cudaEventRecord(stop)");
  probe_sm0_clock<<<unsigned(s_->sms), 1, 0, s_->stream>>>(s_->claims + 1, s_->probes_dev + 2);
  check(cudaGetLastError(), "the clock probe's launch");
}

stream_sample stream_timer::finish() {
  if (s_->held) static_cast<volatile int*>(s_->flags)[0] = 1;  // let the blocking kernel end
  check(cudaStreamSynchronize(s_->stream), "cudaStreamSynchronize");
  stream_sample r;
  r.hold_timed_out = s_->held && static_cast<volatile int*>(s_->flags)[1] != 0;
  s_->held = false;
  float ms = 0;
  check(cudaEventElapsedTime(&ms, s_->start, s_->stop), "cudaEventElapsedTime");
  r.gpu_s = double(ms) * 1e-3;
  const volatile unsigned long long* p = s_->probes;
  const unsigned long long ns0 = p[0], cycles0 = p[1], ns1 = p[2], cycles1 = p[3];
  if (ns0 > 0 && ns1 > ns0 && cycles1 > cycles0 && double(ns1 - ns0) * 1e-9 >= min_clock_interval_s)
    r.sm_clock_hz = double(cycles1 - cycles0) / (double(ns1 - ns0) * 1e-9);
  return r;
}

double stream_timer::peak_sm_clock_hz() const { return s_->peak_hz; }

}  // namespace kcnn::bench::gpu_events
