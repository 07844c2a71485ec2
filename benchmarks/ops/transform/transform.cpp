// transform: the same logical tensor from the key's layout to another (tuning to_<layout>),
// for every ordered pair of nchw, nhwc, chwn: naive (one thread per output element; also
// readonly), tiled (32 x 32 transpose through padded team scratch), vector (rows per team, lanes
// along the contiguous axis) and onednn (a reorder, host builds). Exact.
#include "../common/onednn_peer.hpp"
#include "../common/fault_injection.hpp"
#include "../common/variant_kinds.hpp"

#include <kcnn/reference/layers.hpp>
#include <kcnn/transform.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

template <class Variant>
struct transform_kernel : library_descriptor<transform_kernel, Variant, variant::transform_naive> {
  using params = dims4;
  static params from_spec(const layer_spec& s) { return {s.n, s.c, s.h, s.w}; }
  static std::vector<dims4> inputs(const params& d) { return {d}; }
  static dims4 output(const params& d) { return d; }
  static double tolerance(const params&) { return 0.0; }
  static double bytes(const params& d) { return 8.0 * double(d.size()); }
  static double flops(const params&) { return 0.0; }
  template <class Exec, class Ops, class Out>
  void run(const Exec& e, const Ops& o, const Out& out, const params&) const {
    const auto& ins = o.ins;
    transform(e, ins[0], out, this->v);
  }
  template <class HostOps>
  static std::vector<double> reference(const params& d, const HostOps& h) {
    return reference::transform(d, h.ins[0]);
  }
};

#if defined(KCNN_HAVE_ONEDNN)
// The vendor peer: a oneDNN reorder between the two formats.
struct transform_onednn : onednn::peer<transform_kernel<variant::transform_naive>> {
  template <class Exec, class Ops, class Out>
  void run(const Exec&, const Ops& o, const Out& out, const dims4& d) const {
    const auto& ins = o.ins;
    using In = typename std::decay_t<decltype(ins[0])>::layout_tag;
    const auto from = onednn::desc<In>(d), to = onednn::desc<typename Out::layout_tag>(d);
    if (!prim) prim = std::make_shared<dnnl::reorder>(dnnl::reorder::primitive_desc(onednn::engine(), from, onednn::engine(), to));
    onednn::execute(*prim, {{DNNL_ARG_FROM, onednn::wrap(from, ins[0].view().data())},
                            {DNNL_ARG_TO, onednn::wrap(to, out.view().data())}});
  }
};
#endif

template <class From, class To>
void add_transform_pair(registry& r) {
  const tuning to{std::string("to_") + To::name, std::string("the output in ") + To::name};
  using pair = layout_pair<From, To>;
  register_variant<transform_kernel<variant::transform_naive>, pair>(r, {"transform", space_axis::global, pattern_axis::coalesced, &kinds::naive, to});
  register_variant<transform_kernel<variant::transform_tiled>, pair>(r, {"transform", space_axis::scratch, pattern_axis::tiled, &kinds::tiled, to});
  if constexpr (!From::runtime_strided && !To::runtime_strided) {
    register_variant<transform_kernel<variant::transform_vector>, pair>(r, {"transform", space_axis::scratch, pattern_axis::tiled, &kinds::vector, to});
    register_portable_tuning<transform_kernel<variant::transform_vector>, pair>(r, {"transform", space_axis::scratch, pattern_axis::tiled, &kinds::vector, to});
  }
  register_variant<transform_kernel<variant::read_only<variant::transform_naive>>, pair>(r, {"transform", space_axis::readonly, pattern_axis::coalesced, &kinds::naive, to});
#if defined(KCNN_HAVE_ONEDNN)
  // oneDNN's plain activation formats: the reorders between nchw and nhwc.
  if constexpr (onednn::has_tag<From>() && onednn::has_tag<To>())
    if (onednn::usable) register_variant<transform_onednn, pair>(r, {"transform", space_axis::global, pattern_axis::library, &kinds::onednn, to});
#endif
}

const registrar reg([](registry& r) {
  op_info info{"transform", check_positive_nchw};
  info.transforms_layout = true;
  register_op(r, std::move(info));
  using namespace kcnn::layout;
  add_transform_pair<nchw, nhwc>(r);
  fault::register_faults<transform_kernel<variant::transform_naive>>(r, "transform");
  add_transform_pair<nchw, chwn>(r);
  add_transform_pair<nhwc, nchw>(r);
  add_transform_pair<nhwc, chwn>(r);
  add_transform_pair<chwn, nchw>(r);
  add_transform_pair<chwn, nhwc>(r);
});
}  // namespace
