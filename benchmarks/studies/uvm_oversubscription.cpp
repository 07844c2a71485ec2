// uvm_oversubscription (CUDA builds): a chain of conv2d 3x3 (c -> c, pad 1) and max pool 3x3
// (stride 1, pad 1) layers whose activations all stay alive (as for a backward pass) and exceed
// the device memory left to them (sizing in oversubscription.hpp: a ballast takes
// the rest of the device). One timed run is a forward pass of the whole chain. Variants:
//   managed          every activation in managed memory; the driver migrates and evicts on faults
//   managed_prefetch the same, with the next layer's output prefetched to the device and the
//                    finished layer's input sent back to the host on a second stream (vDNN-style)
//   pinned_offload   three device buffers in rotation; each output is copied to its own
//                    host-pinned buffer on a second stream while the next layer computes
// Validation: the final activation equals, bit for bit, an in-core run of the same kernels over
// two device buffers (the kernels themselves are validated against host references in their
// own rows). Suite: suites/uvm_oversubscription.csv; params budget (share of free device memory
// left to the chain, default 0.25, capped by --uvm-cap), ratio (activations / budget, default 1.5).
#include "oversubscription.hpp"
#include "cases/registry.hpp"
#include "cases/op_case.hpp"

#include <kcnn/conv2d/direct_global.hpp>
#include <kcnn/fill.hpp>
#include <kcnn/pool.hpp>

#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

#include <cmath>
#include <sstream>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

field_error check_study_spec(const layer_spec& s) {
  if (const field_error e = check_positive_nchw(s)) return e;
  for (const char* key : {"budget", "ratio"})
    try {
      if (param_or(s, key, 1.0) <= 0) return {"params", std::string(key) + " must be > 0"};
    } catch (const std::exception& e) {
      return {"params", e.what()};
    }
  return {};
}

#if defined(KOKKOS_ENABLE_CUDA)
void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

void prefetch_async(const void* p, std::size_t bytes, bool to_device, cudaStream_t s) {
  int dev = 0;
  cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
#if CUDART_VERSION >= 13000
  cudaMemLocation loc{};
  loc.type = to_device ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
  loc.id = to_device ? dev : 0;
  cuda_check(cudaMemPrefetchAsync(p, bytes, loc, 0, s), "cudaMemPrefetchAsync");
#else
  cuda_check(cudaMemPrefetchAsync(p, bytes, to_device ? dev : cudaCpuDeviceId, s), "cudaMemPrefetchAsync");
#endif
}

enum class chain_mode { managed, managed_prefetch, pinned_offload };

class oversubscription_case : public bench_case {
 public:
  using exec = Kokkos::Cuda;
  template <class Mem>
  using tensor = tensor4<float, layout::nchw, Mem>;

  oversubscription_case(const layer_spec& s, const case_settings& st, chain_mode m) : mode_(m), d_{s.n, s.c, s.h, s.w} {
    std::size_t free_b = 0, total_b = 0;
    cuda_check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    plan_ = plan_oversubscription(double(free_b), param_or(s, "budget", 0.25), st.uvm_cap_bytes,
                                  param_or(s, "ratio", 1.5), 4.0 * double(d_.size()));
    conv_ = conv2d_params{d_.n, d_.c, d_.h, d_.w, d_.c, 3, 3, 1, 1, 1};
    pool_.n = d_.n; pool_.c = d_.c; pool_.h = d_.h; pool_.w = d_.w;
    pool_.r = pool_.s = 3; pool_.stride = 1; pool_.pad = 1;
  }
  ~oversubscription_case() override {
    if (ballast_) cudaFree(ballast_);
    for (auto ev : done_) cudaEventDestroy(ev);
    for (auto ev : ready_) cudaEventDestroy(ev);
  }

  void setup(std::uint64_t seed) override {
    wt_ = tensor<Kokkos::CudaSpace>("chain.wt", conv_.filter_dims());
    bias_ = Kokkos::View<float*, Kokkos::CudaSpace>("chain.bias", d_.c);
    fill_random(wt_, seed + 1, float(1.0 / std::sqrt(9.0 * d_.c)));
    fill_random(bias_, seed + 2, 0.1f);
    // The in-core reference first, while the whole device is still free.
    tensor<Kokkos::CudaSpace> a("chain.ref0", d_), b("chain.ref1", d_);
    fill_random(a, seed);
    for (int i = 0; i < plan_.layers; ++i) {
      layer(exec(), i, a, b);
      std::swap(a, b);
    }
    Kokkos::fence();
    const auto ref4 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.view());
    reference_ = Kokkos::View<float*, Kokkos::HostSpace>("chain.reference", d_.size());
    std::copy(ref4.data(), ref4.data() + d_.size(), reference_.data());
    // The side stream's instance is made once, here: a Kokkos::Cuda instance allocates per-instance
    // resources, which must not happen inside the timed region.
    side_exec_ = Kokkos::Experimental::partition_space(exec(), 1)[0];
    side_ = side_exec_.cuda_stream();
    for (auto* evs : {&done_, &ready_}) {
      evs->resize(std::size_t(plan_.layers) + 1);
      for (auto& ev : *evs) cuda_check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreate");
    }
    if (mode_ == chain_mode::pinned_offload) {
      for (int i = 0; i < 3; ++i) ring_.emplace_back("chain.ring" + std::to_string(i), d_);
      for (int i = 0; i <= plan_.layers; ++i) host_.emplace_back("chain.host" + std::to_string(i), d_);
      fill_random(host_[0], seed);
    } else {
      for (int i = 0; i <= plan_.layers; ++i) managed_.emplace_back("chain.act" + std::to_string(i), d_);
      // fill_random runs on the device; the input's pages are then sent to the host, where a
      // pass starts from.
      fill_random(managed_[0], seed);
      Kokkos::fence();
      prefetch_async(managed_[0].view().data(), std::size_t(plan_.activation_bytes), false, nullptr);
      cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
    // Shrink the device last, so that only the chain feels it.
    std::size_t free_b = 0, total_b = 0;
    cuda_check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    const double ballast = double(free_b) - plan_.budget_bytes;
    if (ballast > 0) cuda_check(cudaMalloc(&ballast_, std::size_t(ballast)), "cudaMalloc (ballast)");
  }

  void run() override {
    const exec main;
    const exec& side = side_exec_;
    const cudaStream_t ms = main.cuda_stream();
    const std::size_t act = std::size_t(plan_.activation_bytes);
    if (mode_ == chain_mode::pinned_offload) {
      Kokkos::deep_copy(main, ring_[0].view(), host_[0].view());
      for (int i = 0; i < plan_.layers; ++i) {
        // The output buffer last held activation i - 2, whose offload (recorded as ready_[i - 3],
        // after layer i - 3 wrote it) must have finished; the offload of activation i - 1 reads
        // the other buffer and may overlap this layer.
        if (i >= 3) cuda_check(cudaStreamWaitEvent(ms, ready_[i - 3], 0), "cudaStreamWaitEvent");
        layer(main, i, ring_[i % 3], ring_[(i + 1) % 3]);
        cuda_check(cudaEventRecord(done_[i], ms), "cudaEventRecord");
        cuda_check(cudaStreamWaitEvent(side_, done_[i], 0), "cudaStreamWaitEvent");
        Kokkos::deep_copy(side, host_[i + 1].view(), ring_[(i + 1) % 3].view());
        cuda_check(cudaEventRecord(ready_[i], side_), "cudaEventRecord");
      }
      moved_bytes_ = double(plan_.layers + 1) * double(act);
      return;
    }
    const bool prefetch = mode_ == chain_mode::managed_prefetch;
    double moved = 0;
    if (prefetch) {
      prefetch_async(managed_[0].view().data(), act, true, ms);
      prefetch_async(managed_[1].view().data(), act, true, ms);
      moved = 2.0 * double(act);
    }
    for (int i = 0; i < plan_.layers; ++i) {
      // Layer i's output was prefetched while layer i - 1 computed.
      if (prefetch && i >= 1) cuda_check(cudaStreamWaitEvent(ms, ready_[i - 1], 0), "cudaStreamWaitEvent");
      layer(main, i, managed_[i], managed_[i + 1]);
      if (!prefetch) continue;
      // On the side stream, while layer i computes: bring the next layer's output pages to the
      // device; once layer i is done, send its input back to the host to make room.
      cuda_check(cudaEventRecord(done_[i], ms), "cudaEventRecord");
      if (i + 2 <= plan_.layers) {
        prefetch_async(managed_[i + 2].view().data(), act, true, side_);
        cuda_check(cudaEventRecord(ready_[i], side_), "cudaEventRecord");
        moved += double(act);
      }
      cuda_check(cudaStreamWaitEvent(side_, done_[i], 0), "cudaStreamWaitEvent");
      prefetch_async(managed_[i].view().data(), act, false, side_);
      moved += double(act);
    }
    moved_bytes_ = moved;
  }

  comparison validate() override {
    auto out = final_output();
    const dims4 flat{1, 1, 1, int(reference_.extent(0))};
    std::vector<double> ref(reference_.data(), reference_.data() + reference_.extent(0));
    return compare([&](int, int, int, int w) { return double(out(std::size_t(w))); }, flat, ref, tolerance());
  }
  std::vector<double> output() override {
    auto out = final_output();
    return std::vector<double>(out.data(), out.data() + out.extent(0));
  }
  std::string extra_note() const override {
    const double gib = double(1 << 30);
    std::ostringstream o;
    o.precision(3);
    o << plan_.layers << " layers, " << plan_.total_bytes() / gib << " GiB of activations in a budget of "
      << plan_.budget_bytes / gib << " GiB (ballast " << plan_.ballast_bytes / gib << " GiB); ";
    if (mode_ == chain_mode::managed)
      o << "at least " << (plan_.total_bytes() - plan_.budget_bytes) / gib
        << " GiB must migrate per pass (driver faults; not counted)";
    else
      o << moved_bytes_ / gib << " GiB moved explicitly per pass"
        << (mode_ == chain_mode::pinned_offload ? " (device to pinned host, plus the input)" : " (prefetches)");
    return o.str();
  }
  // bytes: what the chain must read and write at least (each activation written once and read
  // once, the input read once); flops: the convolutions' and the pools' (9 compares per output).
  double tolerance() const override { return 0.0; }  // the reference chain runs the same kernels
  bool timed_on_one_stream() const override { return false; }  // the side stream's copies and prefetches
  case_cost cost() const override {
    const double act = plan_.activation_bytes;
    const int convs = (plan_.layers + 1) / 2, pools = plan_.layers / 2;
    return {2.0 * act * plan_.layers, convs * conv_.flops() + pools * 9.0 * double(d_.size()), 0.0};
  }

 private:
  template <class Exec, class In, class Out>
  void layer(const Exec& e, int i, const In& in, const Out& out) const {
    if (i % 2 == 0) conv2d(e, in, wt_, bias_, out, conv_, variant::direct_coalesced{});
    else pool(e, in, out, pool_, variant::pool_naive{});
  }
  // Managed and pinned memory are both readable on the host once the device is idle.
  Kokkos::View<float*, Kokkos::HostSpace> final_output() {
    Kokkos::fence();
    const float* last = mode_ == chain_mode::pinned_offload ? host_.back().view().data()
                                                           : managed_.back().view().data();
    Kokkos::View<float*, Kokkos::HostSpace> out("chain.out", d_.size());
    std::copy(last, last + d_.size(), out.data());
    return out;
  }

  chain_mode mode_;
  dims4 d_;
  oversubscription_plan plan_;
  conv2d_params conv_;
  pool_params pool_;
  tensor<Kokkos::CudaSpace> wt_;
  Kokkos::View<float*, Kokkos::CudaSpace> bias_;
  std::vector<tensor<Kokkos::CudaUVMSpace>> managed_;
  std::vector<tensor<Kokkos::CudaSpace>> ring_;
  std::vector<tensor<Kokkos::CudaHostPinnedSpace>> host_;
  Kokkos::View<float*, Kokkos::HostSpace> reference_;
  void* ballast_ = nullptr;
  exec side_exec_;                 // its own stream, owned by Kokkos
  cudaStream_t side_ = nullptr;    // side_exec_'s stream
  std::vector<cudaEvent_t> done_, ready_;  // per layer: computed; its output moved
  double moved_bytes_ = 0;
};
#endif

const registrar reg([](registry& r) {
  register_op(r, {"uvm_oversubscription", check_study_spec, {}, {}, false, false, false, {"budget", "ratio"}});
#if defined(KOKKOS_ENABLE_CUDA)
  static const variant_kind managed{"managed", "the chain's activations in managed memory, paged on demand", origin::kcnn,
                                    false, "CUDA"};
  static const variant_kind managed_prefetch{"managed_prefetch", "managed memory, each layer's operands prefetched ahead on a second stream",
                                             origin::kcnn, false, "CUDA"};
  static const variant_kind pinned_offload{"pinned_offload", "device ring buffers, finished activations offloaded to pinned host memory on a second stream (vDNN)",
                                           origin::kcnn, false, "CUDA"};
  const struct { const variant_kind* kind; chain_mode mode; space_axis space; } modes[] = {
      {&managed, chain_mode::managed, space_axis::uvm_cold},
      {&managed_prefetch, chain_mode::managed_prefetch, space_axis::uvm_prefetch},
      {&pinned_offload, chain_mode::pinned_offload, space_axis::pinned}};
  for (const auto& m : modes) {
    const chain_mode mode = m.mode;
    register_study(r, {"uvm_oversubscription", m.space, pattern_axis::coalesced, m.kind},
                   [](const layer_spec&) { return std::string(); },
                   [mode](const layer_spec& s, const case_settings& st) -> std::unique_ptr<bench_case> {
                     return std::make_unique<oversubscription_case>(s, st, mode);
                   });
  }
#else
  r.add_unavailable("uvm_oversubscription (managed, managed_prefetch, pinned_offload)",
                    "the study needs CUDA managed memory and streams; this build's Kokkos has no CUDA backend");
#endif
});
}  // namespace
