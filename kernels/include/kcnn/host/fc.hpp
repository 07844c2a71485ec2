#pragma once
// The host tuning of fc direct_vector (kcnn/fc.hpp): conv2d direct_vector's host tile
// (kcnn/host/conv2d_direct_vector.hpp) over the images as the pixels of one row, on the portable
// source's packing. A tile is one output block over all images: its weight block, B x features,
// reused from cache by the image blocks, a thread keeping its own block (one item per tile dealt
// round-robin made two threads share blocks).
// Part of kcnn/fc.hpp, which includes it at its end (after the variants it specialises for),
// under KCNN_HOST_TUNING: not a header of its own.
#include <kcnn/host/conv2d_direct_vector.hpp>
#include <kcnn/map.hpp>
#include <kcnn/tuning.hpp>

#include <Kokkos_Core.hpp>

namespace kcnn {
namespace host_tuning {

template <class Exec>
struct tuned<variant::fc_direct_vector, Exec> {
  template <class Bias>
  static void run(const Exec& exec, const kcnn::detail::fc_direct_vector_state<Exec>& s, const float* x, const Bias& bias,
                  float* y) {
    using namespace detail;
    constexpr int W = conv_vector_lanes, KV = conv_vector_vectors, PX = conv_vector_pixels;
    const conv2d_params r = s.row();
    const int kblocks = (r.k + W * KV - 1) / (W * KV), nblocks = (r.w + PX - 1) / PX;
    using inner = conv_vector_nhwc_functor<W, KV, PX, Bias>;
    static_assert(KV * W <= conv_vector_pad, "fc's tile reads one block of packed weights (wblock left 0)");
    const inner f{x, s.packed(), s.zeros(), bias, y, r, s.kpad(), kblocks, false, 0};
    launch_mdrange<2, Kokkos::Iterate::Right>("kcnn::fc_direct_vector", exec, {0, 0}, {kblocks, nblocks}, {1, nblocks},
                                              [f](const int kb, const int nb) { f(0, 0, nb, kb); });
  }
};

}  // namespace host_tuning
}  // namespace kcnn
