// transfer: the copy bandwidth study. A row copies n*c*h*w floats between two memory spaces
// with Kokkos::deep_copy. Bytes: a copy within one memory (h2h, d2d) counts the read and the
// write, 2 x the buffer, as STREAM's and BabelStream's Copy do (the memory moves both); a copy
// over the link (h2d, d2h) counts the buffer once, what crossed the link, as CUDA's
// bandwidthTest and nvbandwidth do. Host builds: host to host.
// CUDA builds (this file is the one place for them): host to device and device to host from
// pageable and from pinned host memory, and device to device; and k = 1, 2, 4 concurrent
// pinned host-to-device copies on their own streams sharing the link (variant h2d_concurrent,
// tuning streams_k), a stand-in for the PCIe contention between the GPUs of one node (Kim et
// al.): each stream copies the whole buffer, bytes count all k copies, so GB/s is the aggregate
// and GB/s / k what each stream got. Transfers are one-dimensional; their layout field reads nchw.
#include "cases/op_case.hpp"

#include <kcnn/fill.hpp>
#include <kcnn/validate.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

// What a copy of `bytes` counts (see above).
double counted_bytes(double bytes, bool within_one_memory) { return within_one_memory ? 2 * bytes : bytes; }
const char* const within_note = "bytes = read + write (2 x the buffer: STREAM's copy convention)";
const char* const link_note = "bytes = the buffer once (what crossed the link)";

template <class Src, class Dst>
class transfer_case : public bench_case {
  static constexpr bool within_one_memory = std::is_same_v<Src, Dst>;

 public:
  explicit transfer_case(const layer_spec& s) : d_{s.n, s.c, s.h, s.w} {}
  void setup(std::uint64_t seed) override {
    src_ = Kokkos::View<float*, Src>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "transfer.src"), d_.size());
    dst_ = Kokkos::View<float*, Dst>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "transfer.dst"), d_.size());
    fill_random(src_, seed);
    Kokkos::deep_copy(dst_, compat::quiet_nan<float>());
  }
  void run() override { Kokkos::deep_copy(dst_, src_); }
  comparison validate() override {
    auto s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), src_);
    auto d = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dst_);
    std::vector<double> ref(d_.size());
    for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = s(i);
    return compare_flat(d, ref);
  }
  std::vector<double> output() override {
    auto d = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dst_);
    return std::vector<double>(d.data(), d.data() + d.extent(0));
  }
  case_cost cost() const override { return {counted_bytes(4.0 * double(d_.size()), within_one_memory), 0.0, 0.0}; }
  double tolerance() const override { return 0.0; }  // a copy is exact
  bool runs_back_to_back() const override { return true; }
  bool timed_on_one_stream() const override { return false; }
  bool operands_in_device_memory() const override { return within_one_memory; }
  std::string extra_note() const override { return within_one_memory ? within_note : link_note; }

 private:
  template <class V>
  comparison compare_flat(const V& d, const std::vector<double>& ref) const {
    const dims4 flat{1, 1, 1, int(ref.size())};
    return compare([&](int, int, int, int w) { return double(d(std::size_t(w))); }, flat, ref, 0.0);
  }
  dims4 d_;
  Kokkos::View<float*, Src> src_;
  Kokkos::View<float*, Dst> dst_;
};

#if defined(KOKKOS_ENABLE_CUDA)
class concurrent_h2d_case : public bench_case {
 public:
  concurrent_h2d_case(const layer_spec& s, int streams) : d_{s.n, s.c, s.h, s.w}, k_(streams) {}
  void setup(std::uint64_t seed) override {
    inst_ = Kokkos::Experimental::partition_space(Kokkos::Cuda(), std::vector<int>(std::size_t(k_), 1));
    for (int i = 0; i < k_; ++i) {
      src_.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "transfer.src"), d_.size());
      dst_.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "transfer.dst"), d_.size());
      fill_random(src_.back(), seed + std::uint64_t(i));
      Kokkos::deep_copy(dst_.back(), compat::quiet_nan<float>());
    }
  }
  void run() override {
    for (int i = 0; i < k_; ++i) Kokkos::deep_copy(inst_[std::size_t(i)], dst_[std::size_t(i)], src_[std::size_t(i)]);
  }
  comparison validate() override {
    std::vector<double> ref, got;
    for (int i = 0; i < k_; ++i) {
      auto d = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dst_[std::size_t(i)]);
      const auto& sv = src_[std::size_t(i)];
      ref.insert(ref.end(), sv.data(), sv.data() + sv.extent(0));
      got.insert(got.end(), d.data(), d.data() + d.extent(0));
    }
    const dims4 flat{1, 1, 1, int(ref.size())};
    return compare([&](int, int, int, int w) { return got[std::size_t(w)]; }, flat, ref, 0.0);
  }
  std::vector<double> output() override {
    auto d = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dst_.front());
    return std::vector<double>(d.data(), d.data() + d.extent(0));
  }
  case_cost cost() const override { return {4.0 * double(d_.size()) * k_, 0.0, 0.0}; }
  double tolerance() const override { return 0.0; }  // copies are exact
  bool runs_back_to_back() const override { return true; }
  bool timed_on_one_stream() const override { return false; }
  std::string extra_note() const override {
    return std::to_string(k_) + " concurrent copies; GB/s is the aggregate, per stream divide by " + std::to_string(k_) +
           "; " + link_note;
  }

 private:
  dims4 d_;
  int k_;
  std::vector<Kokkos::Cuda> inst_;
  std::vector<Kokkos::View<float*, Kokkos::CudaHostPinnedSpace>> src_;
  std::vector<Kokkos::View<float*, Kokkos::CudaSpace>> dst_;
};
#endif

std::string too_many_elements(const layer_spec& s) {
  return s.out.size() > std::size_t(2147483647) ? std::string("more than 2^31 elements") : std::string();
}

const variant_kind h2h{"h2h", "Kokkos::deep_copy host to host"};
#if defined(KOKKOS_ENABLE_CUDA)
const variant_kind h2d{"h2d", "Kokkos::deep_copy host to device", origin::kcnn, false, "CUDA"};
const variant_kind d2h{"d2h", "Kokkos::deep_copy device to host", origin::kcnn, false, "CUDA"};
const variant_kind d2d{"d2d", "Kokkos::deep_copy device to device", origin::kcnn, false, "CUDA"};
const variant_kind h2d_concurrent{"h2d_concurrent", "k pinned host-to-device copies on their own streams at once (tuning streams_k)",
                                  origin::kcnn, false, "CUDA"};
#endif

template <class Src, class Dst>
void add_transfer(registry& r, space_axis space, const variant_kind& direction) {
  register_study(r, {"transfer", space, pattern_axis::coalesced, &direction}, too_many_elements,
                 [](const layer_spec& s, const case_settings&) -> std::unique_ptr<bench_case> {
                   return std::make_unique<transfer_case<Src, Dst>>(s);
                 });
}

const registrar reg([](registry& r) {
  register_op(r, {"transfer", check_positive_nchw});
  add_transfer<Kokkos::HostSpace, Kokkos::HostSpace>(r, space_axis::global, h2h);
#if defined(KOKKOS_ENABLE_CUDA)
  add_transfer<Kokkos::HostSpace, Kokkos::CudaSpace>(r, space_axis::global, h2d);
  add_transfer<Kokkos::CudaHostPinnedSpace, Kokkos::CudaSpace>(r, space_axis::pinned, h2d);
  add_transfer<Kokkos::CudaSpace, Kokkos::HostSpace>(r, space_axis::global, d2h);
  add_transfer<Kokkos::CudaSpace, Kokkos::CudaHostPinnedSpace>(r, space_axis::pinned, d2h);
  add_transfer<Kokkos::CudaSpace, Kokkos::CudaSpace>(r, space_axis::global, d2d);
  for (int k : {1, 2, 4})
    register_study(r, {"transfer", space_axis::pinned, pattern_axis::coalesced, &h2d_concurrent,
                       {"streams_" + std::to_string(k), std::to_string(k) + " concurrent streams"}},
                   too_many_elements, [k](const layer_spec& s, const case_settings&) -> std::unique_ptr<bench_case> {
                     return std::make_unique<concurrent_h2d_case>(s, k);
                   });
#else
  r.add_unavailable("transfer h2d, d2h (pageable and pinned), d2d, h2d_concurrent (1, 2, 4 streams)",
                    "no CUDA backend in this build");
#endif
});
}  // namespace
