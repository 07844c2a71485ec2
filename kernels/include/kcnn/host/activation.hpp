#pragma once
// The host tuning of activation_flat (kcnn/activation.hpp): chunks of consecutive elements
// (kcnn/host/flat.hpp). The chunk's loop and its loop-invariant alpha live in one function: a
// loop of single-element functor calls vectorised with Kokkos 3's Serial backend but not with
// Kokkos 4's OpenMP one, where the store through out may alias the functor's alpha.
// Part of kcnn/activation.hpp, which includes it at its end (after the variants it specialises for),
// under KCNN_HOST_TUNING: not a header of its own.
#include <kcnn/host/flat.hpp>
#include <kcnn/tuning.hpp>

#include <cstddef>

namespace kcnn {
namespace host_tuning {

template <class Exec>
struct tuned<variant::activation_flat, Exec> {
  template <activation_kind Kind>
  static void run(const Exec& exec, const float* in, float* out, const std::size_t n, const activation_params& a,
                  const host_store_options& o) {
    const float alpha = a.alpha;
    flat_launch("kcnn::activation_flat", exec, out, n, o, [in, alpha](float* dst, const std::size_t begin, const std::size_t count) {
      const float al = alpha;
      const float* x = in + begin;
      for (std::size_t i = 0; i < count; ++i) dst[i] = kcnn::detail::activation_flat_apply<Kind>(x[i], al);
    });
  }
};

}  // namespace host_tuning
}  // namespace kcnn
