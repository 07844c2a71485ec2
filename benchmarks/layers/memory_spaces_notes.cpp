// What --list says about memory spaces that this build or an op does not have.
#include "../harness/memory_spaces.hpp"
#include "../harness/registry.hpp"

namespace {
const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  if (!kcnn::bench::have_cuda_spaces())
    for (const char* s : {"uvm_cold", "uvm_prefetch", "uvm_advise", "pinned"})
      r.add_unavailable(std::string("memory space ") + s, kcnn::bench::cuda_spaces_unavailable_reason());
  r.add_unavailable("batchnorm/*/scratch",
                    "one read per element: only the per-channel parameters are reused, and caches hold them");
  r.add_unavailable("lrn/*/scratch", "the channel window's reuse is taken by the sliding variant, in registers");
  r.add_unavailable("*/*/constant (other than conv2d, fc, batchnorm)",
                    "constant memory holds weights; pooling, activations, LRN, softmax, add, concat and transforms have none");
});
}  // namespace
