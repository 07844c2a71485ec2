// transform: the same logical tensor from the key's layout to another (tuning to_<layout>),
// for every ordered pair of nchw, nhwc, chwn: naive (one thread per output element) and tiled
// (32 x 32 transpose through padded team scratch). Exact.
#include "onednn_peer.hpp"
#include "fault_injection.hpp"
#include "tensor_case.hpp"

#include <kcnn/reference/layers.hpp>
#include <kcnn/transform.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

template <class Variant>
struct transform_kernel : layer_kernel_base {
  using params = dims4;
  static params from_spec(const layer_spec& s) { return {s.n, s.c, s.h, s.w}; }
  static std::vector<dims4> inputs(const params& d) { return {d}; }
  static dims4 output(const params& d) { return d; }
  static double tolerance(const params&) { return 0.0; }
  static double bytes(const params& d) { return 8.0 * double(d.size()); }
  static double flops(const params&) { return 0.0; }
  template <class Exec, class Ins, class Vecs, class Out>
  void run(const Exec& e, const Ins& ins, const Vecs&, const Out& out, const params&) const {
    transform(e, ins[0], out, Variant{});
  }
  template <class HIns, class HVecs>
  static std::vector<double> reference(const params& d, const HIns& ins, const HVecs&) {
    return reference::for_each_element(d, [&](int n, int c, int h, int w) { return double(ins[0](n, c, h, w)); });
  }
};

#if defined(KCNN_HAVE_ONEDNN)
// The vendor peer: a oneDNN reorder between the two formats.
struct transform_onednn : onednn::peer<transform_kernel<variant::transform_naive>> {
  template <class Exec, class Ins, class Vecs, class Out>
  void run(const Exec&, const Ins& ins, const Vecs&, const Out& out, const dims4& d) const {
    using In = typename std::decay_t<decltype(ins[0])>::layout_tag;
    const auto from = onednn::desc<In>(d), to = onednn::desc<typename Out::layout_tag>(d);
    if (!prim) prim = std::make_shared<dnnl::reorder>(dnnl::reorder::primitive_desc(onednn::engine(), from, onednn::engine(), to));
    onednn::execute(*prim, {{DNNL_ARG_FROM, onednn::wrap(from, ins[0].view().data())},
                            {DNNL_ARG_TO, onednn::wrap(to, out.view().data())}});
  }
};
#endif

template <class From, class To>
void register_pair(registry& r) {
  const std::string to = std::string("to_") + To::name;
  register_layer<transform_kernel<variant::transform_naive>, From, To>(r, "transform", "global", "coalesced", "naive", to, 0.0);
  register_layer<transform_kernel<variant::transform_tiled>, From, To>(r, "transform", "scratch", "tiled", "tiled", to, 0.0);
  register_layer<readonly_kernel<transform_kernel<variant::transform_naive>>, From, To>(r, "transform", "readonly", "coalesced", "naive", to, 0.0);
#if defined(KCNN_HAVE_ONEDNN)
  // oneDNN's plain activation formats: the reorders between nchw and nhwc.
  if constexpr (onednn::has_tag<From>() && onednn::has_tag<To>())
    if (onednn::usable) register_layer<transform_onednn, From, To>(r, "transform", "global", "tiled", "onednn", to, 0.0);
#endif
}

const registrar reg([](registry& r) {
  r.add_op({"transform", check_positive_nchw, [](const layer_spec& s) { return dims4{s.n, s.c, s.h, s.w}; }});
  using namespace kcnn::layout;
  register_pair<nchw, nhwc>(r);
  fault::register_faults<transform_kernel<variant::transform_naive>>(r, "transform", 0.0);
  register_pair<nchw, chwn>(r);
  register_pair<nhwc, nchw>(r);
  register_pair<nhwc, chwn>(r);
  register_pair<chwn, nchw>(r);
  register_pair<chwn, nhwc>(r);
});
}  // namespace
