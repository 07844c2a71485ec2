// fc (fully connected): the shape rule and the baseline. Input (n, c, h, w) flattened to c*h*w
// features, k outputs; output (n, k, 1, 1). Columns r, s, stride, pad and groups do not apply.
//   direct / global / coalesced (baseline): one thread per output (n, k) along the output's
//     storage order, features walked in the input's storage order; also readonly and, on CUDA
//     builds, from managed and host-pinned memory.
// Other variants: one file each in this folder.
#include "../conv2d/conv_descriptor.hpp"

#include "../common/variant_kinds.hpp"

namespace {
using namespace kcnn;
using namespace kcnn::bench;

const registrar reg([](registry& r) {
  register_op(r, {"fc",
                  [](const layer_spec& s) -> field_error {
                    const struct { const char* name; int v; } dims[] = {
                        {"n", s.n}, {"c", s.c}, {"h", s.h}, {"w", s.w}, {"k", s.k}};
                    for (const auto& d : dims)
                      if (d.v <= 0) return {d.name, "must be > 0, got " + std::to_string(d.v)};
                    if (s.groups != 1) return {"groups", "fc has no groups, got " + std::to_string(s.groups)};
                    return {};
                  },
                  [](const layer_spec& s) { return dims4{s.n, s.k, 1, 1}; }});
  using namespace kcnn::layout;
  register_variant<conv_tag<variant::fc_direct_coalesced, true>, nchw, nhwc, chwn>(
      r, {"fc", space_axis::global, pattern_axis::coalesced, &kinds::direct, {}, true}, with_memory_spaces);
});
}  // namespace
