#pragma once
// The benchmark case shared by every conv2d and fc variant: allocation, seeded fill, NaN
// poison, reference and validation. (A fully connected layer is a convolution whose window is
// the whole input, so both ops share the case, the reference and the cost model.) A variant
// file supplies only a launcher and registers it with register_conv2d / register_fc.
#include "../harness/reference_cache.hpp"
#include "../harness/memory_spaces.hpp"
#include "../harness/registry.hpp"

#include <kcnn/conv2d_params.hpp>
#include <kcnn/fc.hpp>
#include <kcnn/fill.hpp>
#include <kcnn/reference/conv2d.hpp>
#include <kcnn/tensor.hpp>
#include <kcnn/traffic_model.hpp>
#include <kcnn/validate.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <memory>

namespace kcnn::bench {

inline conv2d_params conv2d_from_spec(const layer_spec& s) {
  return conv2d_params{s.n, s.c, s.h, s.w, s.k, s.r, s.s, s.stride, s.pad, s.groups};
}
inline conv2d_params fc_from_spec(const layer_spec& s) { return fc_params(s.n, s.c, s.h, s.w, s.k); }

// fp32 accumulation against a double reference.
inline constexpr double conv2d_tolerance = 1e-4;

// What a launcher may override. prepare() runs once after the fill, untimed (weight packing,
// workspace allocation); operator() is the timed launch.
struct conv_launch_base {
  // The largest relative L2 error accepted (TF32 variants accept more).
  static constexpr double tolerance = conv2d_tolerance;
  template <class Exec, class In, class Wt, class Bias>
  void prepare(const Exec&, const conv2d_params&, const In&, const Wt&, const Bias&) {}
  double workspace_bytes(const conv2d_params&) const { return 0.0; }
  template <class Layout>
  static std::string unsupported(const conv2d_params&) { return {}; }
  // The tile the traffic model charges (kcnn/traffic_model.hpp): one thread per output, so the
  // unit sharing loads is a warp of 32 threads along the output layout's fastest dimension
  // (filters for nhwc, output positions otherwise).
  template <class Layout>
  static conv_tile traffic_tile(const conv2d_params&) {
    return std::is_same_v<Layout, layout::nhwc> ? conv_tile{1, 32} : conv_tile{32, 1};
  }
  // DRAM bytes beyond the operands (e.g. a workspace written and read back).
  double extra_dram_bytes(const conv2d_params&) const { return 0.0; }
  // What the row's note should say about the variant (e.g. a library's thread count).
  std::string note() const { return {}; }
};

// Launches kcnn::conv2d / kcnn::fc with a variant tag: all most variants need.
template <class Variant>
struct conv2d_tag_launch : conv_launch_base {
  template <class Exec, class In, class Wt, class Bias, class Out>
  void operator()(const Exec& e, const In& in, const Wt& wt, const Bias& b, const Out& out,
                  const conv2d_params& p) const {
    conv2d(e, in, wt, b, out, p, Variant{});
  }
};
template <class Variant>
struct fc_tag_launch : conv_launch_base {
  template <class Exec, class In, class Wt, class Bias, class Out>
  void operator()(const Exec& e, const In& in, const Wt& wt, const Bias& b, const Out& out,
                  const conv2d_params& p) const {
    fc(e, in, wt, b, out, p, Variant{});
  }
};

// Base of the constant-memory variants: weights and bias copied to the host once (untimed)
// into the by-value filter that every launch then carries.
struct constant_weights_launch : conv_launch_base {
  using filter = constant_filter<constant_filter_capacity>;
  std::shared_ptr<filter> f;

  template <class Exec, class In, class Wt, class Bias>
  void prepare(const Exec&, const conv2d_params& p, const In&, const Wt& wt, const Bias& b) {
    auto wt_h = create_mirror_view(wt);
    deep_copy(wt_h, wt);
    auto b_h = Kokkos::create_mirror_view(b);
    Kokkos::deep_copy(b_h, b);
    f = std::make_shared<filter>(filter::from_host(p, wt_h, b_h));
  }
  template <class Layout>
  static std::string unsupported(const conv2d_params& p) {
    if (filter::fits(p)) return {};
    return "weights and bias (" + std::to_string(std::size_t(p.weight_count())) +
           " floats) exceed the constant capacity of " + std::to_string(filter::capacity);
  }
};

// Launch with input, weights and bias as const MemoryTraits<RandomAccess> views (CUDA: the
// read-only data cache path, ld.global.nc).
template <class Launch>
struct readonly_launch : Launch {
  template <class Exec, class In, class Wt, class Bias, class Out>
  void operator()(const Exec& e, const In& in, const Wt& wt, const Bias& b, const Out& out,
                  const conv2d_params& p) const {
    Launch::operator()(e, read_only(in), read_only(wt), read_only(b), out, p);
  }
};

template <class Layout, class Launch, class Space = space_global>
class conv_case : public bench_case {
 public:
  using MemSpace = typename Space::memory_space;
  using exec = Kokkos::DefaultExecutionSpace;
  using tensor = tensor4<float, Layout, MemSpace>;

  conv_case(const std::string& op, const conv2d_params& p, std::array<axis, 4> order)
      : op_(op), p_(p), order_(order) {}

  void setup(std::uint64_t seed) override {
    seed_ = seed;
    in_ = make("in", p_.input_dims());
    wt_ = make("wt", p_.filter_dims());
    out_ = make("out", p_.output_dims());
    bias_ = Kokkos::View<float*, MemSpace>(op_ + ".bias", p_.k);
    fill_random(in_, seed);
    // Weights scaled by 1/sqrt(fan-in) keep outputs O(1) whatever the layer size.
    fill_random(wt_, seed + 1, float(1.0 / std::sqrt(double(p_.c_per_group() * p_.r * p_.s))));
    fill_random(bias_, seed + 2, 0.1f);
    poison(out_);
    launch_.prepare(exec(), p_, in_, wt_, bias_);
    Kokkos::fence();
    space_.prepare(buffers());
  }

  void before_run() override { space_.before_run(buffers()); }
  void run() override { launch_(exec(), in_, wt_, bias_, out_, p_); }
  std::string extra_note() const override { return join_notes(space_.note(), launch_.note()); }

  comparison validate() override {
    auto out_h = create_mirror_view(out_);
    deep_copy(out_h, out_);
    return compare(out_h, p_.output_dims(), *reference(), Launch::tolerance);
  }

  std::vector<double> output() override {
    auto out_h = create_mirror_view(out_);
    deep_copy(out_h, out_);
    return to_logical(out_h);
  }

  case_cost cost() const override {
    case_cost c{p_.min_bytes(sizeof(float)), p_.flops(), launch_.workspace_bytes(p_)};
    const conv_tile tile = Launch::template traffic_tile<Layout>(p_);
    c.predicted_dram_bytes = conv2d_traffic(p_, tile, device_l2_bytes(), conv_sector_factor(Layout::name, p_),
                                            launch_.extra_dram_bytes(p_)).dram;
    return c;
  }

  bool bindable() const override { return std::is_same_v<Space, space_global> && !Layout::runtime_strided; }
  void bind(const std::vector<float*>& ins, float* out) override {
    if constexpr (!Layout::runtime_strided) {
      if (ins.size() != 1) throw std::invalid_argument("bind: conv2d and fc take one input");
      in_ = tensor(typename tensor::view_type(ins[0], Layout::make(p_.input_dims())), p_.input_dims());
      out_ = tensor(typename tensor::view_type(out, Layout::make(p_.output_dims())), p_.output_dims());
    }
  }
  std::vector<double> reference_on(const std::vector<std::vector<double>>& logical) override {
    using host_t = decltype(create_mirror_view(in_));
    host_t in_h(Kokkos::create_mirror(in_.view()), p_.input_dims(), order_);  // a new allocation
    from_logical(in_h, logical.at(0));
    auto wt_h = create_mirror_view(wt_);
    auto bias_h = Kokkos::create_mirror_view(bias_);
    deep_copy(wt_h, wt_);
    Kokkos::deep_copy(bias_h, bias_);
    return reference::conv2d(p_, in_h, wt_h, [&](int k) { return bias_h(k); });
  }

 private:
  tensor make(const std::string& name, const dims4& d) const {
    if constexpr (Layout::runtime_strided) return tensor(op_ + "." + name, d, order_);
    else return tensor(op_ + "." + name, d);
  }

  // Every variant of a layer sees the same logical inputs (the fill is layout-independent),
  // so the reference is computed once per layer shape and seed.
  std::shared_ptr<const std::vector<double>> reference() {
    const std::string key = "conv/" + std::to_string(p_.n) + "," + std::to_string(p_.c) + "," +
                            std::to_string(p_.h) + "," + std::to_string(p_.w) + "," +
                            std::to_string(p_.k) + "," + std::to_string(p_.r) + "," +
                            std::to_string(p_.s) + "," + std::to_string(p_.stride) + "," +
                            std::to_string(p_.pad) + "," + std::to_string(p_.groups) + "/" +
                            std::to_string(seed_);
    return cached_reference(key, [&] {
      auto in_h = create_mirror_view(in_);
      auto wt_h = create_mirror_view(wt_);
      auto bias_h = Kokkos::create_mirror_view(bias_);
      deep_copy(in_h, in_);
      deep_copy(wt_h, wt_);
      Kokkos::deep_copy(bias_h, bias_);
      return reference::conv2d(p_, in_h, wt_h, [&](int k) { return bias_h(k); });
    });
  }

  std::vector<buffer> buffers() const {
    return {{in_.view().data(), in_.bytes(), false},
            {wt_.view().data(), wt_.bytes(), true},
            {bias_.data(), bias_.span() * sizeof(float), true},
            {out_.view().data(), out_.bytes(), false}};
  }

  std::string op_;
  conv2d_params p_;
  Space space_;
  std::array<axis, 4> order_;
  std::uint64_t seed_ = 0;
  tensor in_, wt_, out_;
  Kokkos::View<float*, MemSpace> bias_;
  Launch launch_;
};

namespace detail {
template <class Layout, class Launch, class Space = space_global>
void register_conv_variant(registry& r, const std::string& op,
                           conv2d_params (*to_params)(const layer_spec&), const std::string& space,
                           const std::string& pattern, const std::string& variant,
                           const std::string& tuning, std::array<axis, 4> order,
                           const std::string& layout_name) {
  r.add_variant(variant_info{
      op, layout_name, space, pattern, variant, tuning, Launch::tolerance,
      [to_params](const layer_spec& s) {
        return Launch::template unsupported<Layout>(to_params(s));
      },
      [op, to_params, order](const layer_spec& s) -> std::unique_ptr<bench_case> {
        return std::make_unique<conv_case<Layout, Launch, Space>>(op, to_params(s), order);
      }});
}
}  // namespace detail

// Registers one conv2d variant for each of the given compile-time layouts.
template <class Launch, class... Layouts>
void register_conv2d(registry& r, const std::string& space, const std::string& pattern,
                     const std::string& variant, const std::string& tuning = {}) {
  (detail::register_conv_variant<Layouts, Launch>(r, "conv2d", conv2d_from_spec, space, pattern,
                                                  variant, tuning, Layouts::order, Layouts::name),
   ...);
}

// The same for fully connected layers.
template <class Launch, class... Layouts>
void register_fc(registry& r, const std::string& space, const std::string& pattern,
                 const std::string& variant, const std::string& tuning = {}) {
  (detail::register_conv_variant<Layouts, Launch>(r, "fc", fc_from_spec, space, pattern, variant,
                                                  tuning, Layouts::order, Layouts::name),
   ...);
}

// The CUDA-only memory spaces (managed cold / prefetched / advised, pinned) of a conv2d or fc
// launcher, in nchw, nhwc and chwn; nothing on host builds.
template <class Launch>
void register_conv_cuda_spaces(registry& r, const std::string& op, const std::string& pattern,
                               const std::string& variant) {
  auto to_params = op == "fc" ? fc_from_spec : conv2d_from_spec;
  for_each_cuda_space([&](auto space) {
    using S = decltype(space);
    detail::register_conv_variant<layout::nchw, Launch, S>(r, op, to_params, S::name, pattern, variant, "", layout::nchw::order, "nchw");
    detail::register_conv_variant<layout::nhwc, Launch, S>(r, op, to_params, S::name, pattern, variant, "", layout::nhwc::order, "nhwc");
    detail::register_conv_variant<layout::chwn, Launch, S>(r, op, to_params, S::name, pattern, variant, "", layout::chwn::order, "chwn");
  });
}

// Registers a conv2d variant on the runtime-strided layout, once per physical order given
// (e.g. "nchw", "nhwc"); the order is the key's tuning field ("order_nhwc").
template <class Launch>
void register_conv2d_strided_layout(registry& r, const std::string& space,
                                    const std::string& pattern, const std::string& variant,
                                    const std::vector<std::string>& orders) {
  for (const auto& o : orders)
    detail::register_conv_variant<layout::strided, Launch>(r, "conv2d", conv2d_from_spec, space,
                                                           pattern, variant, "order_" + o,
                                                           layout::parse_order(o), "strided");
}

}  // namespace kcnn::bench
