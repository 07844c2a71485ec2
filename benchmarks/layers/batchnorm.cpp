// batchnorm, inference (params: eps, default 1e-5; relu=1 when a relu follows):
// naive (normalise, then a separate relu pass if any), fused (one pass; only with relu=1) and,
// in the constant space, folded (scale and shift folded on the host, carried by value).
#include "onednn_peer.hpp"
#include "fault_injection.hpp"
#include "tensor_case.hpp"

#include <kcnn/batchnorm.hpp>
#include <kcnn/reference/layers.hpp>

#include <memory>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

template <class Variant>
struct bn_kernel : layer_kernel_base {
  using params = batchnorm_params;
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
  static std::vector<int> vectors(const params& p) { return {p.c, p.c, p.c, p.c}; }
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
  template <class Exec, class Ins, class Vecs, class Out>
  void run(const Exec& e, const Ins& ins, const Vecs& v, const Out& out, const params& p) const {
    batchnorm(e, ins[0], v[0], v[1], v[2], v[3], out, p, Variant{});
  }
  template <class HIns, class HVecs>
  static std::vector<double> reference(const params& p, const HIns& ins, const HVecs& v) {
    return reference::batchnorm(p, ins[0], v[0], v[1], v[2], v[3]);
  }
};

// Contiguous runs without coordinates (variant rows): the scale and shift folded on the device
// each run into a 2c workspace, then one pass.
struct bn_rows_kernel : bn_kernel<variant::batchnorm_naive> {
  Kokkos::View<float*> ws;
  template <class Exec, class Vecs>
  void prepare(const Exec&, const params& p, const Vecs&) { ws = Kokkos::View<float*>("bn.scale_shift", 2 * p.c); }
  double workspace_bytes(const params& p) const { return 8.0 * p.c; }
  template <class Exec, class Ins, class Vecs, class Out>
  void run(const Exec& e, const Ins& ins, const Vecs& v, const Out& out, const params& p) const {
    batchnorm_rows(e, ins[0], v[0], v[1], v[2], v[3], ws, out, p);
  }
};

// The per-channel vectors folded into scale and shift once (untimed) and embedded in the functor.
struct bn_constant_kernel : bn_kernel<variant::batchnorm_naive> {
  using folded = batchnorm_folded<batchnorm_constant_capacity>;
  std::shared_ptr<folded> f;
  template <class Layout>
  static std::string unsupported(const params& p) {
    if (folded::fits(p)) return {};
    return "c = " + std::to_string(p.c) + " channels exceed the constant capacity of " +
           std::to_string(folded::capacity);
  }
  template <class Exec, class Vecs>
  void prepare(const Exec&, const params& p, const Vecs& v) {
    std::vector<Kokkos::View<float*, Kokkos::HostSpace>> h;
    for (const auto& d : v) h.push_back(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d));
    f = std::make_shared<folded>(folded::from_host(p, h[0], h[1], h[2], h[3]));
  }
  template <class Exec, class Ins, class Vecs, class Out>
  void run(const Exec& e, const Ins& ins, const Vecs&, const Out& out, const params& p) const {
    batchnorm(e, ins[0], *f, out, p);
  }
};

#if defined(KCNN_HAVE_ONEDNN)
// The vendor peer: oneDNN batch normalization, inference with the given statistics, scale and
// shift (and the relu fused when one follows).
struct bn_onednn : onednn::peer<bn_kernel<variant::batchnorm_naive>> {
  template <class Exec, class Ins, class Vecs, class Out>
  void run(const Exec&, const Ins& ins, const Vecs& v, const Out& out, const batchnorm_params& p) const {
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
  r.add_op({"batchnorm", check_positive_nchw, [](const layer_spec& s) { return dims4{s.n, s.c, s.h, s.w}; }, {}, true});
  register_layer_all_layouts<bn_kernel<variant::batchnorm_naive>>(r, "batchnorm", "global", "coalesced", "naive", "", 1e-5);
  fault::register_faults<bn_kernel<variant::batchnorm_naive>>(r, "batchnorm", 1e-5);
  register_layer_spaces<bn_kernel<variant::batchnorm_naive>>(r, "batchnorm", "coalesced", "naive", "", 1e-5);
  register_layer_all_layouts<bn_kernel<variant::batchnorm_fused>>(r, "batchnorm", "global", "coalesced", "fused", "", 1e-5);
  register_layer_all_layouts<bn_constant_kernel>(r, "batchnorm", "constant", "coalesced", "folded", "", 1e-5);
  register_layer_all_layouts<bn_rows_kernel>(r, "batchnorm", "global", "coalesced", "rows", "", 1e-5);
#if defined(KCNN_HAVE_ONEDNN)
  if (onednn::usable) register_layer_all_layouts<bn_onednn>(r, "batchnorm", "global", "tiled", "onednn", "", 1e-5);
#endif
});
}  // namespace
