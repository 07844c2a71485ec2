#pragma once
// The host tuning of add_flat (kcnn/eltwise.hpp): chunks of consecutive elements
// (kcnn/host/flat.hpp). add_vector and concat_vector take kcnn/host/rows.hpp's walk.
// Part of kcnn/eltwise.hpp, which includes it at its end (after the variants it specialises for),
// under KCNN_HOST_TUNING: not a header of its own.
#include <kcnn/host/flat.hpp>
#include <kcnn/tuning.hpp>

#include <cstddef>

namespace kcnn {
namespace host_tuning {

template <class Exec>
struct tuned<variant::add_flat, Exec> {
  static void run(const Exec& exec, const float* a, const float* b, float* out, const std::size_t n,
                  const host_store_options& o) {
    flat_launch("kcnn::add_flat", exec, out, n, o, [a, b](float* dst, const std::size_t begin, const std::size_t count) {
      const float* x = a + begin;
      const float* y = b + begin;
      for (std::size_t i = 0; i < count; ++i) dst[i] = x[i] + y[i];
    });
  }
};

}  // namespace host_tuning
}  // namespace kcnn
