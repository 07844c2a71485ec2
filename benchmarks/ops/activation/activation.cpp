// Activations relu, leaky_relu (params: alpha, default 0.01), sigmoid, tanh, elu (alpha,
// default 1), relu6 (MobileNet's min(max(x, 0), 6)), swish (EfficientNet's x sigmoid(x)):
//   naive / global / coalesced (baseline): one thread per element in storage order, out of
//     place; also readonly and the CUDA spaces;
//   in_place: the same, writing over its input;
//   flat: contiguous runs without coordinates (what the coordinate mapping costs a CPU);
//   onednn (host builds): the peer.
#include "../common/fault_injection.hpp"
#include "../common/onednn_peer.hpp"
#include "../common/variant_kinds.hpp"

#include <kcnn/activation.hpp>
#include <kcnn/reference/layers.hpp>

#include <limits>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

struct act_params {
  dims4 d;
  activation_params a;
};

template <activation_kind Kind, class Variant>
struct act_kernel;
template <activation_kind Kind>
struct act_of {
  template <class Variant>
  using type = act_kernel<Kind, Variant>;
};

template <activation_kind Kind, class Variant = variant::activation_naive>
struct act_kernel : library_descriptor<act_of<Kind>::template type, Variant, variant::activation_naive> {
  using params = act_params;
  static constexpr bool in_place_safe = true;  // each element read before it is written
  static params from_spec(const layer_spec& s) {
    params p;
    p.d = {s.n, s.c, s.h, s.w};
    p.a.kind = Kind;
    // No alpha in the suite: NaN, the library's default for the kind (leaky_relu 0.01, elu 1).
    p.a.alpha = float(param_or(s, "alpha", std::numeric_limits<double>::quiet_NaN()));
    return p;
  }
  static std::vector<dims4> inputs(const params& p) { return {p.d}; }
  static dims4 output(const params& p) { return p.d; }
  // relu and relu6 select or clamp: exact.
  static double tolerance(const params&) {
    return Kind == activation_kind::relu || Kind == activation_kind::relu6 ? 0.0 : 1e-5;
  }
  static double bytes(const params& p) { return 8.0 * double(p.d.size()); }
  static double flops(const params& p) { return p.a.flops_per_element() * double(p.d.size()); }
  template <class Exec, class Ops, class Out>
  void prepare(const Exec& e, const params& p, const Ops& o, const Out& out) {
    kcnn::prepare(e, this->v, p.a, o.ins[0], out);
  }
  template <class Exec, class Ops, class Out>
  void run(const Exec& e, const Ops& o, const Out& out, const params& p) const {
    activation(e, o.ins[0], out, p.a, this->v);
  }
  template <class HostOps>
  static std::vector<double> reference(const params& p, const HostOps& h) {
    return reference::activation(p.a, p.d, h.ins[0]);
  }
};

#if defined(KCNN_HAVE_ONEDNN)
// The vendor peer: oneDNN eltwise (relu with alpha for leaky relu, logistic, tanh, elu, clip to
// [0, 6] for relu6, swish with beta 1), out of place.
template <activation_kind Kind>
struct act_onednn : onednn::peer<act_kernel<Kind>> {
  template <class Exec, class Ops, class Out>
  void run(const Exec&, const Ops& o, const Out& out, const act_params& p) const {
    this->template run_src_dst<typename Out::layout_tag>(p.d, o.ins[0].view().data(), out.view().data(), [&](const auto& md) {
      dnnl::algorithm alg = dnnl::algorithm::eltwise_relu;
      float alpha = 0, beta = 0;
      switch (Kind) {
        case activation_kind::relu: break;
        case activation_kind::leaky_relu: alpha = p.a.effective_alpha(); break;
        case activation_kind::sigmoid: alg = dnnl::algorithm::eltwise_logistic; break;
        case activation_kind::tanh: alg = dnnl::algorithm::eltwise_tanh; break;
        case activation_kind::elu: alg = dnnl::algorithm::eltwise_elu; alpha = p.a.effective_alpha(); break;
        case activation_kind::relu6: alg = dnnl::algorithm::eltwise_clip; beta = 6; break;
        case activation_kind::swish: alg = dnnl::algorithm::eltwise_swish; alpha = 1; break;
      }
      const dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, alg, md, alpha, beta);
      return std::make_shared<dnnl::eltwise_forward>(dnnl::eltwise_forward::primitive_desc(d, onednn::engine()));
    });
  }
};
#endif

template <activation_kind Kind>
void add_activation(registry& r) {
  const std::string op = activation_name(Kind);
  register_op(r, {op,
                  [](const layer_spec& s) {
                    if (auto e = check_positive_nchw(s)) return e;
                    return field_error_from(act_kernel<Kind>::from_spec(s).a.check());
                  },
                  {}, {}, true, false, false,
                  Kind == activation_kind::leaky_relu || Kind == activation_kind::elu ? std::vector<std::string>{"alpha"}
                                                                                      : std::vector<std::string>{}});
  using namespace kcnn::layout;
  register_variant<act_kernel<Kind>, nchw, nhwc, chwn>(r, {op, space_axis::global, pattern_axis::coalesced, &kinds::naive, {}, true}, with_memory_spaces);
  fault::register_faults<act_kernel<Kind>>(r, op);
  r.add_unavailable(op + "/*/scratch", "elementwise: no data is reused, nothing to stage in scratch");
  register_variant<act_kernel<Kind>, nchw, nhwc, chwn>(r, {op, space_axis::global, pattern_axis::coalesced, &kinds::in_place});
  register_variant<act_kernel<Kind, variant::activation_flat>, nchw, nhwc, chwn>(r, {op, space_axis::global, pattern_axis::coalesced, &kinds::flat});
  register_portable_tuning<act_kernel<Kind, variant::activation_flat>, nchw, nhwc, chwn>(r, {op, space_axis::global, pattern_axis::coalesced, &kinds::flat});
#if defined(KCNN_HAVE_ONEDNN)
  if (onednn::usable)
    register_variant<act_onednn<Kind>, nchw, nhwc, chwn>(r, {op, space_axis::global, pattern_axis::library, &kinds::onednn});
#endif
}

const registrar reg([](registry& r) {
  add_activation<activation_kind::relu>(r);
  add_activation<activation_kind::leaky_relu>(r);
  add_activation<activation_kind::sigmoid>(r);
  add_activation<activation_kind::tanh>(r);
  add_activation<activation_kind::elu>(r);
  add_activation<activation_kind::relu6>(r);
  add_activation<activation_kind::swish>(r);
});
}  // namespace
