// Deliberately wrong conv2d and fc variants, and one that aborts, registered only in the test
// build (kcnn-bench-faults; the other ops' broken variants come from fault_injection.hpp). The
// harness must report each wrong one as failed_validation, never time it, and exit 1; an abort
// must leave the rows finished before it readable.
#include "../benchmarks/layers/conv2d_case.hpp"

#include <kcnn/conv2d/direct_global.hpp>

#include <cstdlib>

namespace {

// Off-by-one in the halo: the input window is shifted by one row and column.
template <class In, class Wt, class Bias, class Out>
struct halo_off_by_one {
  In in; Wt wt; Bias bias; Out out; kcnn::conv2d_params p;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, k, oh, ow;
    out.storage_coords(i, n, k, oh, ow);
    kcnn::conv2d_params q = p;
    q.pad = p.pad + 1;  // the bug
    out(n, k, oh, ow) = kcnn::detail::conv2d_direct_point(in, wt, bias, q, n, k, oh, ow);
  }
};

struct launch_halo_off_by_one : kcnn::bench::conv_launch_base {
  template <class Exec, class In, class Wt, class Bias, class Out>
  void operator()(const Exec& exec, const In& in, const Wt& wt, const Bias& bias, const Out& out,
                  const kcnn::conv2d_params& p) const {
    Kokkos::parallel_for("faulty_halo", Kokkos::RangePolicy<Exec>(exec, 0, out.size()),
                         halo_off_by_one<In, Wt, Bias, Out>{in, wt, bias, out, p});
  }
};

// Leaves the last stored output element unwritten (it stays NaN-poisoned).
struct launch_unwritten : kcnn::bench::conv_launch_base {
  template <class Exec, class In, class Wt, class Bias, class Out>
  void operator()(const Exec& exec, const In& in, const Wt& wt, const Bias& bias, const Out& out,
                  const kcnn::conv2d_params& p) const {
    kcnn::detail::conv2d_direct_functor<kcnn::detail::mapping::coalesced, In, Wt, Bias, Out> f{
        in, wt, bias, out, p};
    Kokkos::parallel_for("faulty_unwritten", Kokkos::RangePolicy<Exec>(exec, 0, out.size() - 1), f);
  }
};

// A missing input channel in the reduction of a fully connected layer.
struct launch_fc_missing_channel : kcnn::bench::conv_launch_base {
  template <class Exec, class In, class Wt, class Bias, class Out>
  void operator()(const Exec& exec, const In& in, const Wt& wt, const Bias& bias, const Out& out,
                  const kcnn::conv2d_params& p) const {
    kcnn::conv2d_params q = p;
    q.c = p.c - 1;  // the bug: the last channel is never read (c stays the layout's extent)
    kcnn::detail::conv2d_direct_functor<kcnn::detail::mapping::coalesced, In, Wt, Bias, Out> f{in, wt, bias, out, q};
    Kokkos::parallel_for("faulty_fc", Kokkos::RangePolicy<Exec>(exec, 0, out.size()), f);
  }
};

// A kernel that crashes the process (std::abort), for the "a crash leaves a readable CSV" test.
struct launch_abort : kcnn::bench::conv_launch_base {
  template <class Exec, class In, class Wt, class Bias, class Out>
  void operator()(const Exec&, const In&, const Wt&, const Bias&, const Out&, const kcnn::conv2d_params&) const {
    std::abort();
  }
};

const kcnn::bench::registrar reg([](kcnn::bench::registry& r) {
  kcnn::bench::register_fc<launch_fc_missing_channel, kcnn::layout::nchw>(r, "global", "coalesced", "faulty_missing_channel");
  kcnn::bench::register_conv2d<launch_abort, kcnn::layout::nchw>(r, "global", "coalesced", "faulty_abort");
  using namespace kcnn::layout;
  kcnn::bench::register_conv2d<launch_halo_off_by_one, nchw, nhwc, chwn>(
      r, "global", "coalesced", "faulty_halo_off_by_one");
  kcnn::bench::register_conv2d<launch_unwritten, nchw, nhwc, chwn>(r, "global", "coalesced",
                                                                    "faulty_unwritten");
});

}  // namespace
