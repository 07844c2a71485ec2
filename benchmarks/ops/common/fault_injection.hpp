#pragma once
// Fault injection for the harness's own tests: each op's baseline descriptor K run as it is, then
// one defect applied to its output, as the bugs a kernel really has would leave it. The broken
// variants are handed to registry::add_fault_registration, so only kcnn-bench-faults (the test
// build, which calls enable_faults) ever registers them; kcnn-bench never lists them.
// (The race in a team reduction is softmax's faulty_team_race, in softmax.cpp: it needs a
// backend whose teams have two or more threads.)
#include "cases/op_case.hpp"

#include <limits>

namespace kcnn::bench::fault {

// Off-by-one in an index (a halo or a loop bound): every output takes its neighbour's value
// along w (or along c when the output is a column of channels).
struct off_by_one {
  template <class Exec, class Out>
  static void apply(const Exec& e, const Out& out) {
    const dims4 d = out.dims();
    const bool along_w = d.w > 1;
    const int rows = along_w ? d.n * d.c * d.h : d.n * d.h * d.w, len = along_w ? d.w : d.c;
    Kokkos::parallel_for("kcnn::fault_off_by_one", Kokkos::RangePolicy<Exec>(e, 0, rows), KOKKOS_LAMBDA(const int i) {
      for (int j = len - 1; j > 0; --j) {
        if (along_w) {
          const int h = i % d.h, c = (i / d.h) % d.c, n = i / (d.h * d.c);
          out(n, c, h, j) = out(n, c, h, j - 1);
        } else {
          const int w = i % d.w, h = (i / d.w) % d.h, n = i / (d.w * d.h);
          out(n, j, h, w) = out(n, j - 1, h, w);
        }
      }
    });
  }
};

// A channel index bug: the last channel holds what was computed from another one (channel 0's
// value, plus one so that it differs even where both are zero, as after a relu).
struct wrong_channel {
  template <class Exec, class Out>
  static void apply(const Exec& e, const Out& out) {
    const dims4 d = out.dims();
    Kokkos::parallel_for("kcnn::fault_wrong_channel", Kokkos::RangePolicy<Exec>(e, 0, d.n * d.h * d.w),
                         KOKKOS_LAMBDA(const int i) {
                           const int n = i / (d.h * d.w), h = (i / d.w) % d.h, w = i % d.w;
                           out(n, d.c - 1, h, w) = out(n, 0, h, w) + 1.0f;
                         });
  }
};

// An output element never written: the last stored element keeps the NaN poison.
struct unwritten {
  template <class Exec, class Out>
  static void apply(const Exec& e, const Out& out) {
    auto v = out.view();
    const std::size_t last = v.span() - 1;
    const float nan = std::numeric_limits<float>::quiet_NaN();  // host-side: not callable on a device
    Kokkos::parallel_for("kcnn::fault_unwritten", Kokkos::RangePolicy<Exec>(e, 0, 1), KOKKOS_LAMBDA(const int) {
      v.data()[last] = nan;
    });
  }
};

template <class K, class Defect>
struct broken : K {
  template <class Exec, class Ops, class Out, class P>
  void run(const Exec& e, const Ops& o, const Out& out, const P& p) const {
    K::run(e, o, out, p);
    Defect::apply(e, out);
  }
};

// K with a workspace no device has (1 PiB) allocated in its untimed preparation: the harness
// must record the case `skipped` (out of memory) and go on with the next.
template <class K>
struct workspace_out_of_memory : K {
  Kokkos::View<char*, typename Kokkos::DefaultExecutionSpace::memory_space> huge;
  template <class Exec, class P, class Ops, class Out>
  void prepare(const Exec& e, const P& p, const Ops& o, const Out& out) {
    K::prepare(e, p, o, out);
    huge = decltype(huge)(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcnn::fault_huge_workspace"),
                          std::size_t(1) << 50);
  }
};

inline const variant_kind off_by_one_kind{"faulty_off_by_one", "the baseline, then every output takes its neighbour's value",
                                          origin::fault};
inline const variant_kind wrong_channel_kind{"faulty_wrong_channel", "the baseline, then the last channel holds channel 0's value + 1",
                                             origin::fault};
inline const variant_kind unwritten_kind{"faulty_unwritten", "the baseline, then the last stored element keeps its NaN poison",
                                         origin::fault};
inline const variant_kind out_of_memory_kind{"faulty_out_of_memory", "the baseline with a 1 PiB workspace allocated untimed",
                                             origin::fault};

// The broken versions of an op's baseline descriptor K, kept aside until enable_faults():
// faulty_off_by_one (nchw), faulty_wrong_channel (nhwc), faulty_unwritten (chwn) and
// faulty_out_of_memory (nchw).
template <class K>
void register_faults(registry& r, const std::string& op) {
  r.add_fault_registration([op](registry& rr) {
    register_variant<broken<K, off_by_one>, layout::nchw>(rr, {op, space_axis::global, pattern_axis::coalesced, &off_by_one_kind});
    register_variant<broken<K, wrong_channel>, layout::nhwc>(rr, {op, space_axis::global, pattern_axis::coalesced, &wrong_channel_kind});
    register_variant<broken<K, unwritten>, layout::chwn>(rr, {op, space_axis::global, pattern_axis::coalesced, &unwritten_kind});
    register_variant<workspace_out_of_memory<K>, layout::nchw>(rr, {op, space_axis::global, pattern_axis::coalesced, &out_of_memory_kind});
  });
}

}  // namespace kcnn::bench::fault
