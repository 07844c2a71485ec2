// softmax over channels (classes when h = w = 1): multi_kernel (Caffe's six launches, 10
// passes over memory) and fused (a team per row, 2 passes when the row fits in scratch).
#include "tensor_case.hpp"

#include <kcnn/reference/layers.hpp>
#include <kcnn/softmax.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

template <class Variant>
struct softmax_kernel : layer_kernel_base {
  using params = softmax_params;
  static constexpr bool in_place_safe = true;  // each element read before it is written
  Kokkos::View<float*> workspace;  // per-row max / sum (multi_kernel)
  static params from_spec(const layer_spec& s) { return softmax_params{s.n, s.c, s.h, s.w}; }
  static std::vector<dims4> inputs(const params& p) { return {p.dims()}; }
  static dims4 output(const params& p) { return p.dims(); }
  static double tolerance(const params&) { return 1e-5; }
  static double bytes(const params& p) { return p.min_bytes(); }
  static double flops(const params& p) { return p.flops(); }
  template <class Exec, class Vecs>
  void prepare(const Exec&, const params& p, const Vecs&) {
    if constexpr (std::is_same_v<Variant, variant::softmax_multi_kernel>)
      workspace = Kokkos::View<float*>("softmax.scale", p.rows().size());
  }
  double workspace_bytes(const params& p) const {
    return std::is_same_v<Variant, variant::softmax_multi_kernel> ? 4.0 * double(p.rows().size()) : 0.0;
  }
  // Caffe's sequence: copy (r+w), max (r), subtract (r+w), exp (r+w), sum (r), divide (r+w).
  double passes(const params& p) const {
    if (std::is_same_v<Variant, variant::softmax_multi_kernel>) return 10;
    return softmax_fused_staged<Kokkos::DefaultExecutionSpace>(p) ? 2 : 4;
  }
  template <class Exec, class Ins, class Vecs, class Out>
  void run(const Exec& e, const Ins& ins, const Vecs&, const Out& out, const params& p) const {
    if constexpr (std::is_same_v<Variant, variant::softmax_multi_kernel>)
      softmax(e, ins[0], out, workspace, p, Variant{});
    else
      softmax(e, ins[0], out, p, Variant{});
  }
  template <class HIns, class HVecs>
  static std::vector<double> reference(const params& p, const HIns& ins, const HVecs&) {
    return reference::softmax(p, ins[0]);
  }
};

const registrar reg([](registry& r) {
  r.add_op({"softmax", check_positive_nchw, [](const layer_spec& s) { return dims4{s.n, s.c, s.h, s.w}; }, {}, true});
  register_layer_all_layouts<softmax_kernel<variant::softmax_multi_kernel>>(r, "softmax", "global", "coalesced", "multi_kernel", "", 1e-5);
  register_layer_all_layouts<softmax_kernel<variant::softmax_fused>>(r, "softmax", "scratch", "tiled", "fused", "", 1e-5);
  register_layer_spaces<softmax_kernel<variant::softmax_multi_kernel>>(r, "softmax", "coalesced", "multi_kernel", "", 1e-5);
});
}  // namespace
