// conv2d / {nchw,nhwc,chwn} / readonly / coalesced / direct: the coalesced direct kernel with
// inputs, weights and bias as const MemoryTraits<RandomAccess> views (CUDA: the read-only /
// texture cache path, ld.global.nc).
#include "conv2d_case.hpp"

#include <kcnn/conv2d/direct_global.hpp>

namespace {
struct launch : kcnn::bench::conv_launch_base {
  template <class Exec, class In, class Wt, class Bias, class Out>
  void operator()(const Exec& e, const In& in, const Wt& wt, const Bias& b, const Out& out,
                  const kcnn::conv2d_params& p) const {
    using ra = Kokkos::MemoryTraits<Kokkos::RandomAccess>;
    using mem = typename Out::memory_space;
    using L = typename Out::layout_tag;
    const kcnn::tensor4<const float, L, mem, ra> in_ro(in), wt_ro(wt);
    const Kokkos::View<const float*, mem, ra> b_ro = b;
    kcnn::conv2d(e, in_ro, wt_ro, b_ro, out, p, kcnn::variant::direct_coalesced{});
  }
};
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using namespace kcnn::layout;
  kcnn::bench::register_conv2d<launch, nchw, nhwc, chwn>(r, "readonly", "coalesced", "direct");
});
}  // namespace
