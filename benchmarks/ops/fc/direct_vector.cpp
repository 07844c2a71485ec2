// fc / {nchw,nhwc} / global / regtile / direct_vector: conv2d direct_vector's register tile with
// the images as the pixels of one row (kcnn/fc.hpp), lanes along the outputs, the features
// streamed; on a host build also its portable source as tuning `portable`. The weights are packed
// once, untimed (workspace_bytes).
#include "../conv2d/conv_descriptor.hpp"

namespace {
using namespace kcnn;
using namespace kcnn::bench;

const variant_kind fc_direct_vector_kind{
    "direct_vector",
    "fc as conv2d direct_vector's register tile: images as pixels, lanes along the outputs, weights packed once as "
    "[block of 32 k][feature][32 k]"};

template <class V = variant::fc_direct_vector>
struct fc_vector : conv_call<fc_vector<V>, V, true> {
  template <class W>
  using with_variant = fc_vector<W>;
  // Traffic model: an item is 8 images x 32 outputs (the host tuning's tile; a warp of the portable
  // source's holds 8 images x 32 KV).
  template <class Layout>
  static conv_tile traffic_tile(const conv2d_params&) { return {8, 32}; }
};

const registrar reg([](registry& r) {
  using namespace kcnn::layout;
  register_variant<fc_vector<>, nchw, nhwc>(r, {"fc", space_axis::global, pattern_axis::regtile, &fc_direct_vector_kind});
  register_portable_tuning<fc_vector<>, nchw, nhwc>(r, {"fc", space_axis::global, pattern_axis::regtile, &fc_direct_vector_kind});
});
}  // namespace
