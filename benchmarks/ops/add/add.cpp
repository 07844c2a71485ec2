// add: residual sum of two tensors of the same shape, one thread per element.
#include "../common/fault_injection.hpp"
#include "../common/variant_kinds.hpp"

#include <kcnn/eltwise.hpp>
#include <kcnn/reference/layers.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

struct add_kernel : descriptor_defaults {
  using reference_family = add_kernel;
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
    const auto& ins = o.ins;
    add(e, ins[0], ins[1], out);
  }
  template <class HostOps>
  static std::vector<double> reference(const params& d, const HostOps& h) {
    const auto& ins = h.ins;
    return reference::for_each_element(d, [&](int n, int c, int h, int w) {
      return double(ins[0](n, c, h, w)) + double(ins[1](n, c, h, w));
    });
  }
};

const registrar reg([](registry& r) {
  register_op(r, {"add", check_positive_nchw, {},
                  [](const layer_spec& s) { return std::vector<dims4>(2, dims4{s.n, s.c, s.h, s.w}); }, true});
  using namespace kcnn::layout;
  register_variant<add_kernel, nchw, nhwc, chwn>(r, {"add", space_axis::global, pattern_axis::coalesced, &kinds::naive, {}, true}, with_memory_spaces);
  fault::register_faults<add_kernel>(r, "add");
  r.add_unavailable("add/*/scratch", "elementwise: no data is reused, nothing to stage in scratch");
});
}  // namespace
