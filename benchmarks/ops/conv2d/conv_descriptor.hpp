#pragma once
// The descriptor shared by every conv2d and fc variant: shapes, cost, fill, reference and traffic
// model. (A fully connected layer is a convolution whose window is the whole input, so both ops
// share it.) A variant derives from conv_descriptor<Self, FC> and adds its run() and whatever it
// overrides; conv_tag is the descriptor of a variant that is one kcnn::conv2d / kcnn::fc call.
#include "cases/op_case.hpp"

#include <kcnn/conv2d_params.hpp>
#include <kcnn/fc.hpp>
#include <kcnn/reference/conv2d.hpp>
#include <kcnn/traffic_model.hpp>

#include <cmath>
#include <memory>

namespace kcnn::bench {

inline conv2d_params conv2d_from_spec(const layer_spec& s) {
  conv2d_params p{s.n, s.c, s.h, s.w, s.k, s.r, s.s, s.stride, s.pad, s.groups};
  p.stride_h = s.stride_h; p.stride_w = s.stride_w;
  p.pad_h = s.pad_h; p.pad_w = s.pad_w; p.pad_h_end = s.pad_h_end; p.pad_w_end = s.pad_w_end;
  p.dilation_h = s.dilation_h; p.dilation_w = s.dilation_w;
  return p;
}
inline conv2d_params fc_from_spec(const layer_spec& s) { return fc_params(s.n, s.c, s.h, s.w, s.k); }

// fp32 accumulation against a double reference.
inline constexpr double conv2d_tolerance = 1e-4;

// Every conv2d (fc) descriptor fills and computes its reference the same way.
template <bool FullyConnected>
struct conv_reference {};

template <class Self, bool FullyConnected>
struct conv_descriptor : descriptor_defaults {
  using params = conv2d_params;
  using reference_family = conv_reference<FullyConnected>;
  static params from_spec(const layer_spec& s) { return FullyConnected ? fc_from_spec(s) : conv2d_from_spec(s); }
  static std::vector<dims4> inputs(const params& p) { return {p.input_dims()}; }
  static dims4 output(const params& p) { return p.output_dims(); }
  static double tolerance(const params&) { return conv2d_tolerance; }
  static double bytes(const params& p) { return p.min_bytes(sizeof(float)); }
  static double flops(const params& p) { return p.flops(); }
  // Weights scaled by 1/sqrt(fan-in) keep outputs O(1) whatever the layer size; bias 0.1.
  static std::vector<weight_spec> weights(const params& p) {
    return {{p.filter_dims(), 1, float(1.0 / std::sqrt(double(p.c_per_group() * p.r * p.s)))}};
  }
  static std::vector<vector_spec> vectors(const params& p) { return {{p.k, 2, 0.1f}}; }
  template <class HostOps>
  static std::vector<double> reference(const params& p, const HostOps& h) {
    const auto& bias = h.vecs[0];
    return reference::conv2d(p, h.ins[0], h.weights[0], [&](int k) { return bias(k); });
  }

  // The tile the traffic model charges (kcnn/traffic_model.hpp): one thread per output, so the
  // unit sharing loads is a warp of 32 threads along the output layout's fastest dimension
  // (filters for nhwc, output positions otherwise).
  template <class Layout>
  static conv_tile traffic_tile(const params&) {
    return std::is_same_v<Layout, layout::nhwc> ? conv_tile{1, 32} : conv_tile{32, 1};
  }
  // DRAM bytes beyond the operands (e.g. a workspace written and read back).
  double extra_dram_bytes(const params&) const { return 0.0; }
  template <class Layout>
  double predicted_dram_bytes(const params& p, const case_settings& s) const {
    const Self& self = static_cast<const Self&>(*this);
    return conv2d_traffic(p, Self::template traffic_tile<Layout>(p), s.device_l2_bytes,
                          conv_sector_factor(Layout::name, p), self.extra_dram_bytes(p))
        .dram;
  }
};

// A variant that is one kcnn::conv2d (or kcnn::fc) call with the variant object it holds
// (prepared once, untimed, with kcnn::prepare: stateful variants pack weights or allocate their
// workspace there). Self is the most derived descriptor (traffic model overrides).
template <class Self, class Variant, bool FullyConnected>
struct conv_call : conv_descriptor<Self, FullyConnected>, holds_variant<Variant> {
  using holds_variant<Variant>::workspace_bytes;
  template <class Exec, class Ops, class Out>
  void prepare(const Exec& e, const conv2d_params& p, const Ops& o, const Out& out) {
    kcnn::prepare(e, this->v, p, o.ins[0], o.weights[0], o.vecs[0], out);
  }
  template <class Exec, class Ops, class Out>
  void run(const Exec& e, const Ops& o, const Out& out, const conv2d_params& p) const {
    if constexpr (FullyConnected) fc(e, o.ins[0], o.weights[0], o.vecs[0], out, p, this->v);
    else conv2d(e, o.ins[0], o.weights[0], o.vecs[0], out, p, this->v);
  }
};

// conv2d's and fc's implicit GEMM (kcnn/conv2d/implicit_gemm.hpp): the traffic model charges a
// team's tile of pixels (images for fc) by output channels as the kernel chooses it for the layer
// (implicit_gemm_tile_shape): 128 x 128, 256 x 64 or 64 x 256 on a GPU path, 8 x 8 on a host.
template <class Self, class Variant, bool FullyConnected>
struct implicit_gemm_call : conv_call<Self, Variant, FullyConnected> {
  template <class Layout>
  static conv_tile traffic_tile(const conv2d_params& p) {
    const auto [channels, pixels] = implicit_gemm_tile_shape<Kokkos::DefaultExecutionSpace>(p);
    return {pixels, channels};
  }
};

template <class Variant, bool FullyConnected = false>
struct conv_tag : conv_call<conv_tag<Variant, FullyConnected>, Variant, FullyConnected> {
  template <class W>
  using with_variant = conv_tag<W, FullyConnected>;
};

// The constant-memory variants (weights and bias embedded by value in the functor) run only
// layers whose weights fit the compile-time capacity.
template <class Variant, bool FullyConnected>
struct constant_weights : conv_call<constant_weights<Variant, FullyConnected>, Variant, FullyConnected> {
  using filter = constant_filter<constant_filter_capacity>;
  template <class Layout>
  static std::string unsupported(const conv2d_params& p) {
    if (filter::fits(p)) return {};
    return "weights and bias (" + std::to_string(std::size_t(p.weight_count())) +
           " floats) exceed the constant capacity of " + std::to_string(filter::capacity);
  }
  // The weights travel with every launch (constant memory), not in a device workspace.
  double workspace_bytes(const conv2d_params&) const { return 0.0; }
};

}  // namespace kcnn::bench
