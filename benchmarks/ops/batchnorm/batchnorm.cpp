// batchnorm, inference (params: eps, default 1e-5; relu=1 when a relu follows):
// naive (normalise, then a separate relu pass if any), fused (one pass; only with relu=1),
// vector (rows per team, lanes along the contiguous axis, scale and shift prepared once), in the
// constant space folded (scale and shift folded on the host, carried by value), and onednn
// (host builds).
#include "../common/onednn_peer.hpp"
#include "../common/fault_injection.hpp"
#include "../common/variant_kinds.hpp"

#include <kcnn/batchnorm.hpp>
#include <kcnn/reference/layers.hpp>

#include <memory>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

const variant_kind fused{"fused", "normalisation and the following relu in one pass (only with relu=1); threads as naive"};
const variant_kind folded{"folded", "scale and shift folded on the host once, carried by value in the functor; threads "
                                    "as naive"};

template <class Variant>
struct bn_kernel : library_descriptor<bn_kernel, Variant, variant::batchnorm_naive> {
  using params = batchnorm_params;  // v: vector's workspace, folded_constant's folded vectors
  static constexpr bool in_place_safe = true;  // each element read before it is written
  static params from_spec(const layer_spec& s) {
    params p;
    p.n = s.n; p.c = s.c; p.h = s.h; p.w = s.w;
    p.eps = float(param_or(s, "eps", 1e-5));
    p.relu = param_or(s, "relu", 0) != 0;
    return p;
  }
  static std::vector<dims4> inputs(const params& p) { return {p.dims()}; }
  static dims4 output(const params& p) { return p.dims(); }
  // mean, variance, gamma, beta
  static std::vector<vector_spec> vectors(const params& p) { return {{p.c, 100}, {p.c, 101}, {p.c, 102}, {p.c, 103}}; }
  static float vector_value(int j, float raw) { return j == 1 ? 0.25f + raw * raw : raw; }
  static double tolerance(const params&) { return 1e-5; }
  static double bytes(const params& p) { return p.min_bytes(); }
  static double flops(const params& p) { return p.flops(); }
  template <class Layout>
  static std::string unsupported(const params& p) {
    if (std::is_same_v<Variant, variant::batchnorm_fused> && !p.relu)
      return "nothing to fuse: no relu follows (params relu=1)";
    return {};
  }
  template <class Exec, class Ops, class Out>
  void prepare(const Exec& e, const params& p, const Ops& o, const Out& out) {
    const auto& x = o.vecs;
    kcnn::prepare(e, this->v, p, o.ins[0], x[0], x[1], x[2], x[3], out);
  }
  template <class Exec, class Ops, class Out>
  void run(const Exec& e, const Ops& o, const Out& out, const params& p) const {
    const auto& x = o.vecs;
    batchnorm(e, o.ins[0], x[0], x[1], x[2], x[3], out, p, this->v);
  }
  template <class HostOps>
  static std::vector<double> reference(const params& p, const HostOps& h) {
    const auto& x = h.vecs;
    return reference::batchnorm(p, h.ins[0], x[0], x[1], x[2], x[3]);
  }
};

// The constant space: the per-channel vectors folded into scale and shift once (untimed) and
// embedded in the functor, for layers whose channels fit the capacity.
struct bn_constant_kernel : bn_kernel<variant::batchnorm_folded_constant> {
  template <class Layout>
  static std::string unsupported(const params& p) {
    using folded = variant::batchnorm_folded_constant::folded;
    if (folded::fits(p)) return {};
    return "c = " + std::to_string(p.c) + " channels exceed the constant capacity of " + std::to_string(folded::capacity);
  }
  // The folded vectors travel with every launch (constant memory), not in a device workspace.
  double workspace_bytes(const params&) const { return 0.0; }
};
using bn_vector_kernel = bn_kernel<variant::batchnorm_vector>;

#if defined(KCNN_HAVE_ONEDNN)
// The vendor peer: oneDNN batch normalization, inference with the given statistics, scale and
// shift (and the relu fused when one follows).
struct bn_onednn : onednn::peer<bn_kernel<variant::batchnorm_naive>> {
  template <class Exec, class Ops, class Out>
  void run(const Exec&, const Ops& o, const Out& out, const batchnorm_params& p) const {
    const auto& ins = o.ins;
    const auto& v = o.vecs;
    const auto md = onednn::desc<typename Out::layout_tag>(p.dims());
    const dnnl::memory::desc vec({p.c}, onednn::dt::f32, onednn::tag::a);
    if (!prim) {
      auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
                   dnnl::normalization_flags::use_shift;
      if (p.relu) flags = flags | dnnl::normalization_flags::fuse_norm_relu;
      const dnnl::batch_normalization_forward::desc d(dnnl::prop_kind::forward_inference, md, p.eps, flags);
      prim = std::make_shared<dnnl::batch_normalization_forward>(
          dnnl::batch_normalization_forward::primitive_desc(d, onednn::engine()));
    }
    onednn::execute(*prim, {{DNNL_ARG_SRC, onednn::wrap(md, ins[0].view().data())},
                            {DNNL_ARG_MEAN, onednn::wrap(vec, v[0].data())},
                            {DNNL_ARG_VARIANCE, onednn::wrap(vec, v[1].data())},
                            {DNNL_ARG_SCALE, onednn::wrap(vec, v[2].data())},
                            {DNNL_ARG_SHIFT, onednn::wrap(vec, v[3].data())},
                            {DNNL_ARG_DST, onednn::wrap(md, out.view().data())}});
  }
};
#endif

const registrar reg([](registry& r) {
  register_op(r, {"batchnorm", check_positive_nchw, {}, {}, true, false, false, {"eps", "relu"}});
  using namespace kcnn::layout;
  using naive = bn_kernel<variant::batchnorm_naive>;
  register_variant<naive, nchw, nhwc, chwn>(r, {"batchnorm", space_axis::global, pattern_axis::coalesced, &kinds::naive, {}, true}, with_memory_spaces);
  fault::register_faults<naive>(r, "batchnorm");
  register_variant<bn_kernel<variant::batchnorm_fused>, nchw, nhwc, chwn>(r, {"batchnorm", space_axis::global, pattern_axis::coalesced, &fused});
  register_variant<bn_constant_kernel, nchw, nhwc, chwn>(r, {"batchnorm", space_axis::constant, pattern_axis::coalesced, &folded});
  register_variant<bn_vector_kernel, nchw, nhwc, chwn>(r, {"batchnorm", space_axis::global, pattern_axis::coalesced, &kinds::vector});
  register_portable_tuning<bn_vector_kernel, nchw, nhwc, chwn>(r, {"batchnorm", space_axis::global, pattern_axis::coalesced, &kinds::vector});
#if defined(KCNN_HAVE_ONEDNN)
  if (onednn::usable)
    register_variant<bn_onednn, nchw, nhwc, chwn>(r, {"batchnorm", space_axis::global, pattern_axis::library, &kinds::onednn});
#endif
  r.add_unavailable("batchnorm/*/scratch",
                    "one read per element: only the per-channel parameters are reused, and caches hold them");
});
}  // namespace
