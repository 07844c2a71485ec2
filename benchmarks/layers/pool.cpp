// pool_max and pool_avg: shape rule and variants, in nchw, nhwc and chwn.
//   naive   / global / coalesced: one thread per output along the layout (chwn: per image);
//   regtile / global / regtile / hRHwRW: RH x RW outputs per thread, shared window loads reused
//             from registers;
//   tiled   / scratch / tiled: the input tile staged in team scratch.
// Rounding: the suite's rounding column (floor, the default, or ceil with Caffe's clipping).
#include "tensor_case.hpp"

#include <kcnn/pool.hpp>
#include <kcnn/reference/pool.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

pool_params pool_from_spec(const layer_spec& s, pool_kind kind) {
  pool_params p;
  p.n = s.n; p.c = s.c; p.h = s.h; p.w = s.w; p.r = s.r; p.s = s.s;
  p.stride = s.stride; p.pad = s.pad;
  p.ceil_mode = s.rounding == "ceil";
  p.kind = kind;
  return p;
}

template <pool_kind Kind, class Variant>
struct pool_kernel : layer_kernel_base {
  using params = pool_params;
  static params from_spec(const layer_spec& s) { return pool_from_spec(s, Kind); }
  static std::vector<dims4> inputs(const params& p) { return {p.input_dims()}; }
  static dims4 output(const params& p) { return p.output_dims(); }
  static double tolerance(const params&) { return Kind == pool_kind::max ? 0.0 : 1e-5; }
  static double bytes(const params& p) { return p.min_bytes(); }
  static double flops(const params& p) { return p.flops(); }
  template <class Layout>
  static std::string unsupported(const params& p) {
    if constexpr (std::is_same_v<Variant, variant::pool_tiled>) {
      if (pool_tile<Layout>(p, scratch_limit<Kokkos::DefaultExecutionSpace>(0)).size() == 0)
        return "the pooling window does not fit in team scratch";
    }
    return {};
  }
  template <class Exec, class Ins, class Vecs, class Out>
  void run(const Exec& e, const Ins& ins, const Vecs&, const Out& out, const params& p) const {
    pool(e, ins[0], out, p, Variant{});
  }
  template <class HIns, class HVecs>
  static std::vector<double> reference(const params& p, const HIns& ins, const HVecs&) {
    return reference::pool(p, ins[0]);
  }
};

template <pool_kind Kind>
void register_pool(registry& r, const char* op) {
  r.add_op({op,
            [](const layer_spec& s) -> field_error {
              return field_error_from(pool_from_spec(s, Kind).check());
            },
            [](const layer_spec& s) { return pool_from_spec(s, Kind).output_dims(); }});
  const double tol = Kind == pool_kind::max ? 0.0 : 1e-5;
  register_layer_all_layouts<pool_kernel<Kind, variant::pool_naive>>(r, op, "global", "coalesced", "naive", "", tol);
  register_layer_spaces<pool_kernel<Kind, variant::pool_naive>>(r, op, "coalesced", "naive", "", tol);
  register_layer_all_layouts<pool_kernel<Kind, variant::pool_regtile<1, 2>>>(r, op, "global", "regtile", "regtile", "h1w2", tol);
  register_layer_all_layouts<pool_kernel<Kind, variant::pool_regtile<1, 4>>>(r, op, "global", "regtile", "regtile", "h1w4", tol);
  register_layer_all_layouts<pool_kernel<Kind, variant::pool_regtile<2, 2>>>(r, op, "global", "regtile", "regtile", "h2w2", tol);
  register_layer_all_layouts<pool_kernel<Kind, variant::pool_tiled>>(r, op, "scratch", "tiled", "tiled", "", tol);
}

const registrar reg([](registry& r) {
  register_pool<pool_kind::max>(r, "pool_max");
  register_pool<pool_kind::avg>(r, "pool_avg");
});
}  // namespace
