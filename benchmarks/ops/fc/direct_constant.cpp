// fc / {nchw,nhwc,chwn} / constant / coalesced / direct: weights and bias by value in the
// functor (CUDA constant memory), for layers small enough (LeNet, CIFAR classifiers).
#include "../conv2d/conv_descriptor.hpp"

#include "../common/variant_kinds.hpp"

namespace {
using namespace kcnn;
using namespace kcnn::bench;

using constant_fc = constant_weights<variant::fc_direct_constant, true>;

const registrar reg([](registry& r) {
  using namespace kcnn::layout;
  register_variant<constant_fc, nchw, nhwc, chwn>(r, {"fc", space_axis::constant, pattern_axis::coalesced, &kinds::direct});
});
}  // namespace
