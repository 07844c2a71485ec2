// The fc op (fully connected): its shape rule. Input (n, c, h, w) flattened to c*h*w features,
// k outputs; output (n, k, 1, 1). Columns r, s, stride, pad and groups do not apply.
#include "conv2d_case.hpp"

namespace {
const kcnn::bench::registrar fc_op([](kcnn::bench::registry& r) {
  r.add_op({"fc",
            [](const kcnn::bench::layer_spec& s) -> kcnn::bench::field_error {
              const struct { const char* name; int v; } dims[] = {
                  {"n", s.n}, {"c", s.c}, {"h", s.h}, {"w", s.w}, {"k", s.k}};
              for (const auto& d : dims)
                if (d.v <= 0) return {d.name, "must be > 0, got " + std::to_string(d.v)};
              if (s.groups != 1) return {"groups", "fc has no groups, got " + std::to_string(s.groups)};
              return {};
            },
            [](const kcnn::bench::layer_spec& s) { return kcnn::dims4{s.n, s.k, 1, 1}; }});
});
}  // namespace
