#pragma once
// kcnn's host tuning of the flat forms (activation_flat, add_flat): an item is a chunk of
// flat_chunk consecutive elements, one loop the compiler vectorises with its loop invariants in
// registers; an output of at least the variant's streaming threshold is computed a block at a
// time into a buffer in L1 and stored non-temporally (host_store_options, kcnn/tuning.hpp).
#include <kcnn/host/rows.hpp>
#include <kcnn/host/streaming.hpp>
#include <kcnn/map.hpp>
#include <kcnn/tuning.hpp>

#include <cstddef>

namespace kcnn {
namespace host_tuning {

namespace detail {
// compute(dst, begin, count) writes dst[0, count) for the elements [begin, begin + count).
template <class Compute>
struct flat_chunk_functor {
  Compute compute;
  float* out;
  std::size_t n;
  bool stream;
  void operator()(const std::size_t item) const {
    const std::size_t begin = item * flat_chunk;
    const std::size_t count = n - begin < flat_chunk ? n - begin : flat_chunk;
    if (stream) {
      stream_chunk(out + begin, count,
                   [&](float* buffer, const std::size_t o, const std::size_t length) { compute(buffer, begin + o, length); });
      return;
    }
    compute(out + begin, begin, count);
  }
};
}  // namespace detail

// Launches compute over out's n elements in chunks, streamed when the output reaches the
// threshold (then fenced on every thread before it returns).
template <class Exec, class Compute>
void flat_launch(const char* label, const Exec& exec, float* out, const std::size_t n, const host_store_options& o,
                 const Compute& compute) {
  const bool stream = streams_output(o, n * sizeof(float));
  launch_range(label, exec, (n + flat_chunk - 1) / flat_chunk, detail::flat_chunk_functor<Compute>{compute, out, n, stream});
  if (stream) stream_fence_threads(exec);
}

}  // namespace host_tuning
}  // namespace kcnn
