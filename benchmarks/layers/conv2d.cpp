// The conv2d op: its shape rule (used by the suite loader). Variants live in conv2d_*.cpp.
#include "conv2d_case.hpp"

namespace {
const kcnn::bench::registrar conv2d_op([](kcnn::bench::registry& r) {
  r.add_op({"conv2d",
            [](const kcnn::bench::layer_spec& s) -> kcnn::bench::field_error {
              return kcnn::bench::field_error_from(kcnn::bench::conv2d_from_spec(s).check());
            },
            [](const kcnn::bench::layer_spec& s) {
              return kcnn::bench::conv2d_from_spec(s).output_dims();
            }});
});
}  // namespace
