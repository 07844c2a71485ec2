// conv2d / nchw / global / coalesced / native_cuda: the direct one-thread-per-output kernel
// written in plain CUDA (benchmarks/native_cuda/), same mapping as direct_coalesced in nchw, on
// the case's Kokkos-allocated buffers and Kokkos' stream: the difference between the two is
// what the Kokkos abstraction costs. CUDA builds only.
#include "conv_descriptor.hpp"

#include "../common/variant_kinds.hpp"

#if defined(KCNN_HAVE_NATIVE_CUDA)
#include "../../native_cuda/native_cuda.hpp"

namespace {
using namespace kcnn;

struct native_conv : bench::conv_descriptor<native_conv, false> {
  template <class Layout>
  static std::string unsupported(const conv2d_params& p) {
    return p.symmetric() ? std::string() : "the plain CUDA kernel takes a square stride, a symmetric pad and no dilation";
  }
  template <class Exec, class Ops, class Out>
  void run(const Exec& e, const Ops& o, const Out& out, const conv2d_params& p) const {
    const auto& in = o.ins[0];
    const auto& wt = o.weights[0];
    const auto& b = o.vecs[0];
    const native_cuda::conv_shape s{p.n, p.c, p.h, p.w, p.k, p.r, p.s, p.row_stride(), p.pad_top(), p.groups};
    native_cuda::conv2d_direct_nchw(in.view().data(), wt.view().data(), b.data(), out.view().data(), s,
                                    e.cuda_stream());
  }
};

const bench::registrar reg([](bench::registry& r) {
  bench::register_variant<native_conv, layout::nchw>(
      r, {"conv2d", bench::space_axis::global, bench::pattern_axis::coalesced, &bench::kinds::native_cuda});
});
}  // namespace
#endif
