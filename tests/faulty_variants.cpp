// Deliberately wrong conv2d and fc variants, and one that aborts, registered only in the test
// build (kcnn-bench-faults; the other ops' broken variants come from fault_injection.hpp). The
// harness must report each wrong one as failed_validation, never time it, and exit 1; an abort
// must leave the rows finished before it readable.
#include "../benchmarks/ops/conv2d/conv_descriptor.hpp"

#include <kcnn/conv2d/direct_global.hpp>

#include <cstdlib>
#include <stdexcept>

namespace {

using kcnn::bench::conv_descriptor;

// kcnn's coalesced direct kernel on a case's operands, over the first `count` outputs in storage
// order, with params q: each fault below is a wrong q or a short count.
template <class Exec, class Ops, class Out>
void direct_with(const Exec& exec, const Ops& o, const Out& out, const kcnn::conv2d_params& q, std::size_t count,
                 const char* label) {
  using In = std::decay_t<decltype(o.ins[0])>;
  using Wt = std::decay_t<decltype(o.weights[0])>;
  using Bias = std::decay_t<decltype(o.vecs[0])>;
  const kcnn::detail::conv2d_direct_functor<kcnn::detail::mapping::coalesced, In, Wt, Bias, Out> f{
      o.ins[0], o.weights[0], o.vecs[0], out, q};
  Kokkos::parallel_for(label, Kokkos::RangePolicy<Exec>(exec, 0, count), f);
}

// Off-by-one in the halo: the input window is shifted by one row and column.
struct launch_halo_off_by_one : conv_descriptor<launch_halo_off_by_one, false> {
  template <class Exec, class Ops, class Out>
  void run(const Exec& exec, const Ops& o, const Out& out, const kcnn::conv2d_params& p) const {
    kcnn::conv2d_params q = p;
    q.pad = p.pad + 1;  // the bug
    direct_with(exec, o, out, q, out.size(), "faulty_halo");
  }
};

// Leaves the last stored output element unwritten (it stays NaN-poisoned).
struct launch_unwritten : conv_descriptor<launch_unwritten, false> {
  template <class Exec, class Ops, class Out>
  void run(const Exec& exec, const Ops& o, const Out& out, const kcnn::conv2d_params& p) const {
    direct_with(exec, o, out, p, out.size() - 1, "faulty_unwritten");  // the bug
  }
};

// A peer's search in prepare computes the right output (as cuDNN's and cuBLASLt's do), and its run
// writes nothing: the case must poison the output again after prepare, or this validates. It
// also declares run_sampler, and its prepare throws without one (the row would then be an error,
// not failed_validation): the case hands the run's sampler over before prepare.
struct launch_written_only_in_prepare : conv_descriptor<launch_written_only_in_prepare, false> {
  const kcnn::bench::sampler* run_sampler = nullptr;
  template <class Exec, class Ops, class Out>
  void prepare(const Exec& exec, const kcnn::conv2d_params& p, const Ops& o, const Out& out) {
    if (!run_sampler) throw std::logic_error("faulty_written_only_in_prepare: no run_sampler before prepare");
    direct_with(exec, o, out, p, out.size(), "faulty_prepare_search");
  }
  template <class Exec, class Ops, class Out>
  void run(const Exec&, const Ops&, const Out&, const kcnn::conv2d_params&) const {}  // the bug
};

// A missing input channel in the reduction of a fully connected layer.
struct launch_fc_missing_channel : conv_descriptor<launch_fc_missing_channel, true> {
  template <class Exec, class Ops, class Out>
  void run(const Exec& exec, const Ops& o, const Out& out, const kcnn::conv2d_params& p) const {
    kcnn::conv2d_params q = p;
    q.c = p.c - 1;  // the bug: the last channel is never read (c stays the layout's extent)
    direct_with(exec, o, out, q, out.size(), "faulty_fc");
  }
};

// A kernel that crashes the process (std::abort), for the "a crash leaves a readable CSV" test.
struct launch_abort : conv_descriptor<launch_abort, false> {
  template <class Exec, class Ops, class Out>
  void run(const Exec&, const Ops&, const Out&, const kcnn::conv2d_params&) const {
    std::abort();
  }
};

using kcnn::bench::origin;
using kcnn::bench::variant_kind;
const variant_kind missing_channel{"faulty_missing_channel", "fc whose reduction skips the last input channel", origin::fault};
const variant_kind aborts{"faulty_abort", "a kernel that aborts the process", origin::fault};
const variant_kind halo{"faulty_halo_off_by_one", "conv2d whose input window is shifted by one row and column", origin::fault};
const variant_kind unwritten{"faulty_unwritten", "conv2d that leaves the last stored output unwritten", origin::fault};
const variant_kind written_in_prepare{"faulty_written_only_in_prepare",
                                      "conv2d whose output is computed by its prepare only, never by its run", origin::fault};

const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  using namespace kcnn::bench;
  using namespace kcnn::layout;
  register_variant<launch_fc_missing_channel, nchw>(r, {"fc", space_axis::global, pattern_axis::coalesced, &missing_channel});
  register_variant<launch_abort, nchw>(r, {"conv2d", space_axis::global, pattern_axis::coalesced, &aborts});
  register_variant<launch_halo_off_by_one, nchw, nhwc, chwn>(r, {"conv2d", space_axis::global, pattern_axis::coalesced, &halo});
  register_variant<launch_unwritten, nchw, nhwc, chwn>(r, {"conv2d", space_axis::global, pattern_axis::coalesced, &unwritten});
  register_variant<launch_written_only_in_prepare, nchw>(
      r, {"conv2d", space_axis::global, pattern_axis::coalesced, &written_in_prepare});
});

}  // namespace
