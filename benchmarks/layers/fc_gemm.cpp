// fc / {nchw,nhwc,chwn} / global / tiled / gemm_kk: one KokkosBlas::gemm (the library path).
#include "conv2d_case.hpp"

namespace {
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using namespace kcnn::layout;
  using launch = kcnn::bench::fc_tag_launch<kcnn::variant::fc_gemm>;
  kcnn::bench::register_fc<launch, nchw, nhwc, chwn>(r, "global", "tiled", "gemm_kk");
});
}  // namespace
