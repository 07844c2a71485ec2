// fc / {nchw,nhwc,chwn} / global / library / gemm_kk: one KokkosBlas::gemm (the library path).
#include "../conv2d/conv_descriptor.hpp"

#include "../common/variant_kinds.hpp"

namespace {
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using namespace kcnn::bench;
  using namespace kcnn::layout;
  register_variant<conv_tag<kcnn::variant::fc_gemm, true>, nchw, nhwc, chwn>(
      r, {"fc", space_axis::global, pattern_axis::library, &kinds::gemm_kk});
});
}  // namespace
