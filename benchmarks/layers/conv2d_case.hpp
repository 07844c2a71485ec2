#pragma once
// The benchmark case shared by every conv2d variant: allocation, seeded fill, NaN poison,
// reference and validation. A variant file supplies only the launch and registers itself
// with register_conv2d<Launch, Layouts...>(...).
#include "../harness/reference_cache.hpp"
#include "../harness/registry.hpp"

#include <kcnn/conv2d_params.hpp>
#include <kcnn/fill.hpp>
#include <kcnn/reference/conv2d.hpp>
#include <kcnn/tensor.hpp>
#include <kcnn/validate.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <memory>

namespace kcnn::bench {

inline conv2d_params conv2d_from_spec(const layer_spec& s) {
  conv2d_params p;
  p.n = s.n; p.c = s.c; p.h = s.h; p.w = s.w; p.k = s.k; p.r = s.r; p.s = s.s;
  p.stride = s.stride; p.pad = s.pad; p.groups = s.groups;
  return p;
}

// Conv tolerance: fp32 accumulation against a double reference.
inline constexpr double conv2d_tolerance = 1e-4;

template <class Layout, class Launch, class MemSpace = Kokkos::DefaultExecutionSpace::memory_space>
class conv2d_case : public bench_case {
 public:
  using exec = Kokkos::DefaultExecutionSpace;
  using tensor = tensor4<float, Layout, MemSpace>;

  explicit conv2d_case(const layer_spec& s) : p_(conv2d_from_spec(s)) {}

  void setup(std::uint64_t seed) override {
    seed_ = seed;
    in_ = tensor("conv2d.in", p_.input_dims());
    wt_ = tensor("conv2d.wt", p_.filter_dims());
    out_ = tensor("conv2d.out", p_.output_dims());
    bias_ = Kokkos::View<float*, MemSpace>("conv2d.bias", p_.k);
    fill_random(in_, seed);
    // Weights scaled by 1/sqrt(fan-in) keep outputs O(1) whatever the layer size.
    fill_random(wt_, seed + 1, float(1.0 / std::sqrt(double(p_.c_per_group() * p_.r * p_.s))));
    fill_random(bias_, seed + 2, 0.1f);
    poison(out_);
  }

  void run() override { Launch{}(exec(), in_, wt_, bias_, out_, p_); }

  comparison validate() override {
    auto out_h = create_mirror_view(out_);
    deep_copy(out_h, out_);
    // Every conv2d variant of a layer sees the same logical inputs (the fill is
    // layout-independent), so the reference is computed once per layer and seed.
    const std::string key = "conv2d/" + std::to_string(p_.n) + "," + std::to_string(p_.c) + "," +
                            std::to_string(p_.h) + "," + std::to_string(p_.w) + "," +
                            std::to_string(p_.k) + "," + std::to_string(p_.r) + "," +
                            std::to_string(p_.s) + "," + std::to_string(p_.stride) + "," +
                            std::to_string(p_.pad) + "," + std::to_string(p_.groups) + "/" +
                            std::to_string(seed_);
    const auto ref = cached_reference(key, [&] {
      auto in_h = create_mirror_view(in_);
      auto wt_h = create_mirror_view(wt_);
      auto bias_h = Kokkos::create_mirror_view(bias_);
      deep_copy(in_h, in_);
      deep_copy(wt_h, wt_);
      Kokkos::deep_copy(bias_h, bias_);
      return reference::conv2d(p_, in_h, wt_h, [&](int k) { return bias_h(k); });
    });
    return compare(out_h, p_.output_dims(), *ref, conv2d_tolerance);
  }

  case_cost cost() const override {
    return {p_.min_bytes(sizeof(float)), p_.flops(), 0.0};
  }

 private:
  conv2d_params p_;
  std::uint64_t seed_ = 0;
  tensor in_, wt_, out_;
  Kokkos::View<float*, MemSpace> bias_;
};

// Registers one conv2d variant for each of the given layouts.
template <class Launch, class... Layouts>
void register_conv2d(registry& r, const std::string& space, const std::string& pattern,
                     const std::string& variant, const std::string& tuning = {},
                     std::function<std::string(const layer_spec&)> unsupported = {}) {
  (r.add_variant(variant_info{
       "conv2d", Layouts::name, space, pattern, variant, tuning, conv2d_tolerance, unsupported,
       [](const layer_spec& s) -> std::unique_ptr<bench_case> {
         return std::make_unique<conv2d_case<Layouts, Launch>>(s);
       }}),
   ...);
}

}  // namespace kcnn::bench
