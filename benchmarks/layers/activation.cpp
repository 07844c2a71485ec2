// Activations relu, leaky_relu (params: alpha, default 0.01), sigmoid, tanh, elu (alpha,
// default 1), relu6 (MobileNet's min(max(x, 0), 6)): naive (out of place) and in_place, one thread per element in storage order.
#include "onednn_peer.hpp"
#include "fault_injection.hpp"
#include "tensor_case.hpp"

#include <kcnn/activation.hpp>
#include <kcnn/reference/layers.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

struct act_params {
  dims4 d;
  activation_params a;
};

template <activation_kind Kind, bool InPlace, bool Flat = false>
struct act_kernel : layer_kernel_base {
  using params = act_params;
  static constexpr bool in_place = InPlace;
  static constexpr bool in_place_safe = true;  // each element read before it is written
  static params from_spec(const layer_spec& s) {
    params p;
    p.d = {s.n, s.c, s.h, s.w};
    p.a.kind = Kind;
    p.a.alpha = float(param_or(s, "alpha", Kind == activation_kind::elu ? 1.0 : 0.01));
    return p;
  }
  static std::vector<dims4> inputs(const params& p) { return {p.d}; }
  static dims4 output(const params& p) { return p.d; }
  static double tolerance(const params&) { return exact ? 0.0 : 1e-5; }
  static constexpr bool exact = Kind == activation_kind::relu || Kind == activation_kind::relu6;
  static double bytes(const params& p) { return 8.0 * double(p.d.size()); }
  static double flops(const params& p) { return p.a.flops_per_element() * double(p.d.size()); }
  template <class Exec, class Ins, class Vecs, class Out>
  void run(const Exec& e, const Ins& ins, const Vecs&, const Out& out, const params& p) const {
    if constexpr (Flat) activation_flat<Kind>(e, ins[0], out, p.a);
    else activation(e, ins[0], out, p.a);
  }
  template <class HIns, class HVecs>
  static std::vector<double> reference(const params& p, const HIns& ins, const HVecs&) {
    return reference::activation(p.a, p.d, ins[0]);
  }
};

#if defined(KCNN_HAVE_ONEDNN)
// The vendor peer: oneDNN eltwise (relu with alpha for leaky relu, logistic, tanh, elu, clip to
// [0, 6] for relu6), out of place.
template <activation_kind Kind>
struct act_onednn : onednn::peer<act_kernel<Kind, false>> {
  template <class Exec, class Ins, class Vecs, class Out>
  void run(const Exec&, const Ins& ins, const Vecs&, const Out& out, const act_params& p) const {
    this->template run_src_dst<typename Out::layout_tag>(p.d, ins[0].view().data(), out.view().data(), [&](const auto& md) {
      dnnl::algorithm alg = dnnl::algorithm::eltwise_relu;
      float alpha = 0, beta = 0;
      switch (Kind) {
        case activation_kind::relu: break;
        case activation_kind::leaky_relu: alpha = p.a.alpha; break;
        case activation_kind::sigmoid: alg = dnnl::algorithm::eltwise_logistic; break;
        case activation_kind::tanh: alg = dnnl::algorithm::eltwise_tanh; break;
        case activation_kind::elu: alg = dnnl::algorithm::eltwise_elu; alpha = p.a.alpha; break;
        case activation_kind::relu6: alg = dnnl::algorithm::eltwise_clip; beta = 6; break;
      }
      const dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, alg, md, alpha, beta);
      return std::make_shared<dnnl::eltwise_forward>(dnnl::eltwise_forward::primitive_desc(d, onednn::engine()));
    });
  }
};
#endif

template <activation_kind Kind>
void register_activation(registry& r) {
  const std::string op = activation_name(Kind);
  r.add_op({op, check_positive_nchw, [](const layer_spec& s) { return dims4{s.n, s.c, s.h, s.w}; }, {}, true});
  const double tol = act_kernel<Kind, false>::exact ? 0.0 : 1e-5;
  register_layer_all_layouts<act_kernel<Kind, false>>(r, op, "global", "coalesced", "naive", "", tol);
  fault::register_faults<act_kernel<Kind, false>>(r, op, tol);
  register_layer_spaces<act_kernel<Kind, false>>(r, op, "coalesced", "naive", "", tol);
  r.add_unavailable(op + "/*/scratch", "elementwise: no data is reused, nothing to stage in scratch");
  register_layer_all_layouts<act_kernel<Kind, true>>(r, op, "global", "coalesced", "in_place", "", tol);
  // Storage order without coordinates (tuning `flat`): what the coordinate mapping costs a CPU.
  register_layer_all_layouts<act_kernel<Kind, false, true>>(r, op, "global", "coalesced", "naive", "flat", tol);
#if defined(KCNN_HAVE_ONEDNN)
  if (onednn::usable) register_layer_all_layouts<act_onednn<Kind>>(r, op, "global", "tiled", "onednn", "", tol);
#endif
}

const registrar reg([](registry& r) {
  register_activation<activation_kind::relu>(r);
  register_activation<activation_kind::leaky_relu>(r);
  register_activation<activation_kind::sigmoid>(r);
  register_activation<activation_kind::tanh>(r);
  register_activation<activation_kind::elu>(r);
  register_activation<activation_kind::relu6>(r);
});
}  // namespace
