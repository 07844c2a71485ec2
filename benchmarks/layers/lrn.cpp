// lrn across channels (params: size, alpha, beta, k; AlexNet defaults 5, 1e-4, 0.75, 1):
// naive (each output sums its window) and sliding (running sum over channels per pixel).
#include "onednn_peer.hpp"
#include "fault_injection.hpp"
#include "tensor_case.hpp"

#include <kcnn/lrn.hpp>
#include <kcnn/reference/layers.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

lrn_params lrn_from_spec(const layer_spec& s) {
  lrn_params p;
  p.n = s.n; p.c = s.c; p.h = s.h; p.w = s.w;
  p.size = int_param_or(s, "size", 5);
  p.alpha = float(param_or(s, "alpha", 1e-4));
  p.beta = float(param_or(s, "beta", 0.75));
  p.k = float(param_or(s, "k", 1.0));
  return p;
}

template <class Variant>
struct lrn_kernel : layer_kernel_base {
  using params = lrn_params;
  static params from_spec(const layer_spec& s) { return lrn_from_spec(s); }
  static std::vector<dims4> inputs(const params& p) { return {p.dims()}; }
  static dims4 output(const params& p) { return p.dims(); }
  static double tolerance(const params&) { return 1e-4; }
  static double bytes(const params& p) { return p.min_bytes(); }
  static double flops(const params& p) { return p.flops(); }
  template <class Exec, class Ins, class Vecs, class Out>
  void run(const Exec& e, const Ins& ins, const Vecs&, const Out& out, const params& p) const {
    lrn(e, ins[0], out, p, Variant{});
  }
  template <class HIns, class HVecs>
  static std::vector<double> reference(const params& p, const HIns& ins, const HVecs&) {
    return reference::lrn(p, ins[0]);
  }
};

#if defined(KCNN_HAVE_ONEDNN)
// The vendor peer: oneDNN LRN across channels (k + alpha / size * sum of squares, Caffe's form).
struct lrn_onednn : onednn::peer<lrn_kernel<variant::lrn_naive>> {
  template <class Exec, class Ins, class Vecs, class Out>
  void run(const Exec&, const Ins& ins, const Vecs&, const Out& out, const lrn_params& p) const {
    run_src_dst<typename Out::layout_tag>(p.dims(), ins[0].view().data(), out.view().data(), [&](const auto& md) {
      const dnnl::lrn_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::lrn_across_channels, md,
                                      p.size, p.alpha, p.beta, p.k);
      return std::make_shared<dnnl::lrn_forward>(dnnl::lrn_forward::primitive_desc(d, onednn::engine()));
    });
  }
};
#endif

const registrar reg([](registry& r) {
  r.add_op({"lrn",
            [](const layer_spec& s) -> field_error {
              if (auto e = check_positive_nchw(s)) return e;
              const lrn_params p = lrn_from_spec(s);
              if (p.size < 1 || p.size % 2 == 0) return {"params", "lrn size must be odd and > 0"};
              if (!(p.k > 0)) return {"params", "lrn k must be > 0"};
              return {};
            },
            [](const layer_spec& s) { return dims4{s.n, s.c, s.h, s.w}; }, {}, true});
  register_layer_all_layouts<lrn_kernel<variant::lrn_naive>>(r, "lrn", "global", "coalesced", "naive", "", 1e-4);
  fault::register_faults<lrn_kernel<variant::lrn_naive>>(r, "lrn", 1e-4);
  register_layer_spaces<lrn_kernel<variant::lrn_naive>>(r, "lrn", "coalesced", "naive", "", 1e-4);
  register_layer_all_layouts<lrn_kernel<variant::lrn_sliding>>(r, "lrn", "global", "coalesced", "sliding", "", 1e-4);
#if defined(KCNN_HAVE_ONEDNN)
  if (onednn::usable) register_layer_all_layouts<lrn_onednn>(r, "lrn", "global", "tiled", "onednn", "", 1e-4);
#endif
});
}  // namespace
