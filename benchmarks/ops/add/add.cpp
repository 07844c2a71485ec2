// add: residual sum of two tensors of the same shape: naive (one thread per element; the
// baseline, also readonly and the CUDA spaces), vector (rows of the storage per team, lanes
// along the contiguous axis) and flat (the storages as one run).
#include "../common/fault_injection.hpp"
#include "../common/variant_kinds.hpp"

#include <kcnn/eltwise.hpp>
#include <kcnn/reference/layers.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

template <class Variant = variant::add_naive>
struct add_kernel : library_descriptor<add_kernel, Variant, variant::add_naive> {
  using params = dims4;
  static constexpr bool in_place_safe = true;  // out(i) = a(i) + b(i): each element read before it is written
  static params from_spec(const layer_spec& s) { return {s.n, s.c, s.h, s.w}; }
  static std::vector<dims4> inputs(const params& d) { return {d, d}; }
  static dims4 output(const params& d) { return d; }
  static double tolerance(const params&) { return 1e-5; }
  static double bytes(const params& d) { return 12.0 * double(d.size()); }
  static double flops(const params& d) { return double(d.size()); }
  template <class Exec, class Ops, class Out>
  void run(const Exec& e, const Ops& o, const Out& out, const params&) const {
    add(e, o.ins[0], o.ins[1], out, this->v);
  }
  template <class HostOps>
  static std::vector<double> reference(const params& d, const HostOps& h) {
    return reference::add(d, h.ins[0], h.ins[1]);
  }
};

const registrar reg([](registry& r) {
  register_op(r, {"add", check_positive_nchw, {},
                  [](const layer_spec& s) { return std::vector<dims4>(2, dims4{s.n, s.c, s.h, s.w}); }, true});
  using namespace kcnn::layout;
  register_variant<add_kernel<>, nchw, nhwc, chwn>(r, {"add", space_axis::global, pattern_axis::coalesced, &kinds::naive, {}, true}, with_memory_spaces);
  register_variant<add_kernel<variant::add_vector>, nchw, nhwc, chwn>(r, {"add", space_axis::global, pattern_axis::coalesced, &kinds::vector});
  register_portable_tuning<add_kernel<variant::add_vector>, nchw, nhwc, chwn>(r, {"add", space_axis::global, pattern_axis::coalesced, &kinds::vector});
  register_variant<add_kernel<variant::add_flat>, nchw, nhwc, chwn>(r, {"add", space_axis::global, pattern_axis::coalesced, &kinds::flat});
  register_portable_tuning<add_kernel<variant::add_flat>, nchw, nhwc, chwn>(r, {"add", space_axis::global, pattern_axis::coalesced, &kinds::flat});
  fault::register_faults<add_kernel<>>(r, "add");
  r.add_unavailable("add/*/scratch", "elementwise: no data is reused, nothing to stage in scratch");
});
}  // namespace
