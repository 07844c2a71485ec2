// fc / {nchw,nhwc,chwn} / constant / coalesced / direct: weights and bias by value in the
// functor (CUDA constant memory), for layers small enough (LeNet, CIFAR classifiers).
#include "conv2d_case.hpp"

namespace {
struct launch : kcnn::bench::constant_weights_launch {
  template <class Exec, class In, class Wt, class Bias, class Out>
  void operator()(const Exec& e, const In& in, const Wt&, const Bias&, const Out& out,
                  const kcnn::conv2d_params& p) const {
    kcnn::fc(e, in, *f, out, p, kcnn::variant::direct_constant{});
  }
};
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using namespace kcnn::layout;
  kcnn::bench::register_fc<launch, nchw, nhwc, chwn>(r, "constant", "coalesced", "direct");
});
}  // namespace
