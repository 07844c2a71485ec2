// lrn across channels (params: size, alpha, beta, k; AlexNet defaults 5, 1e-4, 0.75, 1):
// naive (each output sums its window; the baseline, also readonly and the CUDA spaces), sliding
// (running sum over channels per pixel; also in place, for network passes), vector (rows per team, lanes along the contiguous axis)
// and onednn (host builds).
#include "../common/onednn_peer.hpp"
#include "../common/fault_injection.hpp"
#include "../common/variant_kinds.hpp"

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

const variant_kind sliding{"sliding", "a running sum of squares across channels per pixel (each input squared once); "
                                      "one thread per pixel, adjacent threads on adjacent pixels (coalesced in nchw, "
                                      "C floats apart in nhwc)"};

template <class Variant>
struct lrn_kernel : library_descriptor<lrn_kernel, Variant, variant::lrn_naive> {
  using params = lrn_params;
  static params from_spec(const layer_spec& s) { return lrn_from_spec(s); }
  static std::vector<dims4> inputs(const params& p) { return {p.dims()}; }
  static dims4 output(const params& p) { return p.dims(); }
  static double tolerance(const params&) { return 1e-4; }
  // sliding keeps the window's squares in a ring when out is in (kcnn/lrn.hpp).
  static constexpr bool in_place_safe = std::is_same_v<Variant, variant::lrn_sliding>;
  static bool in_place_safe_for(const params& p) { return p.size <= kcnn::detail::lrn_sliding_in_place_max_size; }
  static double bytes(const params& p) { return p.min_bytes(); }
  static double flops(const params& p) { return p.flops(); }
  template <class Exec, class Ops, class Out>
  void prepare(const Exec& e, const params& p, const Ops& o, const Out& out) {
    kcnn::prepare(e, this->v, p, o.ins[0], out);
  }
  template <class Exec, class Ops, class Out>
  void run(const Exec& e, const Ops& o, const Out& out, const params& p) const {
    const auto& ins = o.ins;
    lrn(e, ins[0], out, p, this->v);
  }
  template <class HostOps>
  static std::vector<double> reference(const params& p, const HostOps& h) {
    const auto& ins = h.ins;
    return reference::lrn(p, ins[0]);
  }
};

#if defined(KCNN_HAVE_ONEDNN)
// The vendor peer: oneDNN LRN across channels (k + alpha / size * sum of squares, Caffe's form).
struct lrn_onednn : onednn::peer<lrn_kernel<variant::lrn_naive>> {
  template <class Exec, class Ops, class Out>
  void run(const Exec&, const Ops& o, const Out& out, const lrn_params& p) const {
    const auto& ins = o.ins;
    run_src_dst<typename Out::layout_tag>(p.dims(), ins[0].view().data(), out.view().data(), [&](const auto& md) {
      const dnnl::lrn_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::lrn_across_channels, md,
                                      p.size, p.alpha, p.beta, p.k);
      return std::make_shared<dnnl::lrn_forward>(dnnl::lrn_forward::primitive_desc(d, onednn::engine()));
    });
  }
};
#endif

const registrar reg([](registry& r) {
  register_op(r, {"lrn",
                  [](const layer_spec& s) -> field_error {
                    if (auto e = check_positive_nchw(s)) return e;
                    const lrn_params p = lrn_from_spec(s);
                    if (p.size < 1 || p.size % 2 == 0) return {"params", "lrn size must be odd and > 0"};
                    if (!(p.k > 0)) return {"params", "lrn k must be > 0"};
                    return {};
                  }, {}, {}, true, false, false, {"size", "alpha", "beta", "k"}});
  using namespace kcnn::layout;
  using naive = lrn_kernel<variant::lrn_naive>;
  register_variant<naive, nchw, nhwc, chwn>(r, {"lrn", space_axis::global, pattern_axis::coalesced, &kinds::naive, {}, true}, with_memory_spaces);
  fault::register_faults<naive>(r, "lrn");
  register_variant<lrn_kernel<variant::lrn_sliding>, nchw, nhwc, chwn>(r, {"lrn", space_axis::global, pattern_axis::coalesced, &sliding});
  register_variant<lrn_kernel<variant::lrn_vector>, nchw, nhwc, chwn>(r, {"lrn", space_axis::global, pattern_axis::coalesced, &kinds::vector});
  register_portable_tuning<lrn_kernel<variant::lrn_vector>, nchw, nhwc, chwn>(r, {"lrn", space_axis::global, pattern_axis::coalesced, &kinds::vector});
#if defined(KCNN_HAVE_ONEDNN)
  if (onednn::usable) register_variant<lrn_onednn, nchw, nhwc, chwn>(r, {"lrn", space_axis::global, pattern_axis::library, &kinds::onednn});
#endif
  r.add_unavailable("lrn/*/scratch", "the channel window's reuse is taken by the sliding variant, in registers");
});
}  // namespace
