// conv2d / nchw / global / coalesced / native_cuda: the direct one-thread-per-output kernel
// written in plain CUDA (benchmarks/native_cuda/), same mapping as direct_coalesced in nchw, on
// the case's Kokkos-allocated buffers and Kokkos' stream: the difference between the two is
// what the Kokkos abstraction costs. CUDA builds only.
#include "conv2d_case.hpp"

#if defined(KCNN_HAVE_NATIVE_CUDA)
#include "../native_cuda/native_cuda.hpp"

namespace {
using namespace kcnn;

struct launch : bench::conv_launch_base {
  template <class Exec, class In, class Wt, class Bias, class Out>
  void operator()(const Exec& e, const In& in, const Wt& wt, const Bias& b, const Out& out,
                  const conv2d_params& p) const {
    const native_cuda::conv_shape s{p.n, p.c, p.h, p.w, p.k, p.r, p.s, p.stride, p.pad, p.groups};
    native_cuda::conv2d_direct_nchw(in.view().data(), wt.view().data(), b.data(), out.view().data(), s,
                                    e.cuda_stream());
  }
};

const bench::registrar reg([](bench::registry& r) {
  bench::register_conv2d<launch, layout::nchw>(r, "global", "coalesced", "native_cuda");
});
}  // namespace
#endif
