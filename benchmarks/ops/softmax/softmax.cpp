// softmax over channels (classes when h = w = 1): multi_kernel (Caffe's six launches, 10
// passes over memory; the baseline, also readonly and the CUDA spaces), fused (a team per row, 2
// passes when the row fits in scratch), vector (lanes along the contiguous axis), onednn (host
// builds) and native_cuda (nchw, CUDA builds); faulty_team_race is a deliberately broken fused
// variant that only kcnn-bench-faults registers.
#include "../common/onednn_peer.hpp"
#if defined(KCNN_HAVE_NATIVE_CUDA)
#include "../../native_cuda/native_cuda.hpp"
#endif
#include "../common/fault_injection.hpp"
#include "../common/variant_kinds.hpp"

#include <kcnn/reference/layers.hpp>
#include <kcnn/softmax.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

const variant_kind multi_kernel{"multi_kernel", "Caffe's six launches (copy, max, subtract, exp, sum, divide): 10 passes "
                                                "over memory; reductions one thread per pixel, the rest naive"};
const variant_kind fused{"fused", "a team per pixel: max, sum of exponentials and divide with the channels staged in "
                                  "scratch (2 passes when they fit); team threads along the channels (coalesced in nhwc)"};
const variant_kind team_race{"faulty_team_race", "fused softmax whose team members race on one scratch word (no reduction)",
                             origin::fault};

template <class Variant>
struct softmax_kernel : library_descriptor<softmax_kernel, Variant, variant::softmax_fused> {
  using params = softmax_params;  // v: multi_kernel's per-row workspace
  static constexpr bool in_place_safe = true;  // each element read before it is written
  static params from_spec(const layer_spec& s) { return softmax_params{s.n, s.c, s.h, s.w}; }
  static std::vector<dims4> inputs(const params& p) { return {p.dims()}; }
  static dims4 output(const params& p) { return p.dims(); }
  static double tolerance(const params&) { return 1e-5; }
  static double bytes(const params& p) { return p.min_bytes(); }
  static double flops(const params& p) { return p.flops(); }
  template <class Exec, class Ops, class Out>
  void prepare(const Exec& e, const params& p, const Ops& o, const Out& out) {
    kcnn::prepare(e, this->v, p, o.ins[0], out);
  }
  double passes(const params& p) const { return softmax_passes<Kokkos::DefaultExecutionSpace>(this->v, p); }
  template <class Exec, class Ops, class Out>
  void run(const Exec& e, const Ops& o, const Out& out, const params& p) const {
    softmax(e, o.ins[0], out, p, this->v);
  }
  template <class HostOps>
  static std::vector<double> reference(const params& p, const HostOps& h) {
    const auto& ins = h.ins;
    return reference::softmax(p, ins[0]);
  }
};

#if defined(KCNN_HAVE_ONEDNN)
// The vendor peer: oneDNN softmax over axis 1 (the channels).
struct softmax_onednn : onednn::peer<softmax_kernel<variant::softmax_fused>> {
  double passes(const softmax_params&) const { return -1; }  // oneDNN's own
  template <class Exec, class Ops, class Out>
  void run(const Exec&, const Ops& o, const Out& out, const softmax_params& p) const {
    const auto& ins = o.ins;
    run_src_dst<typename Out::layout_tag>(p.dims(), ins[0].view().data(), out.view().data(), [&](const auto& md) {
      const dnnl::softmax_forward::desc d(dnnl::prop_kind::forward_inference, md, 1);
      return std::make_shared<dnnl::softmax_forward>(dnnl::softmax_forward::primitive_desc(d, onednn::engine()));
    });
  }
};
#endif

#if defined(KCNN_HAVE_NATIVE_CUDA)
// Plain CUDA (no Kokkos), nchw, with softmax vector's GPU algorithm and mapping for each shape
// (a warp per row for classifiers; 32 pixels x channel segments otherwise): the two differ by
// what the Kokkos abstraction costs, and move the same bytes.
struct softmax_native_cuda : softmax_kernel<variant::softmax_vector> {
  template <class Exec, class Ops, class Out>
  void run(const Exec& e, const Ops& o, const Out& out, const softmax_params& p) const {
    const auto& ins = o.ins;
    native_cuda::softmax_nchw(ins[0].view().data(), out.view().data(), p.n, p.c, p.h * p.w, e.cuda_stream());
  }
};
#endif

// Fault injection (kcnn-bench-faults only): the fused softmax with a race in its team
// reduction. Every team member stores its partial sum of exponentials into one scratch word
// instead of reducing them (no reduction, no atomic), so the row is divided by whichever
// member's partial landed last. It needs teams of two or more threads: not on Serial.
template <class Exec, class In, class Out>
struct softmax_team_race_functor {
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  using scratch = Kokkos::View<float*, typename Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  In in;
  Out out;
  dims4 rows;
  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    int n, z, h, w;
    Out::layout_tag::storage_coords(std::size_t(m.league_rank()), rows, n, z, h, w);
    const int C = out.dims().c;
    float mx = 0.0f;
    Kokkos::parallel_reduce(Kokkos::TeamThreadRange(m, C),
                            [&](const int c, float& lm) { lm = compat::fmax(lm, float(in(n, c, h, w))); },
                            Kokkos::Max<float>(mx));
    scratch sum(m.team_scratch(0), 1);
    float partial = 0.0f;
    for (int c = m.team_rank(); c < C; c += m.team_size()) partial += compat::exp(float(in(n, c, h, w)) - mx);
    sum(0) = partial;  // the race
    m.team_barrier();
    const float inv = 1.0f / sum(0);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, C),
                         [&](const int c) { out(n, c, h, w) = compat::exp(float(in(n, c, h, w)) - mx) * inv; });
  }
};

struct softmax_team_race : softmax_kernel<variant::softmax_fused> {
  using exec = Kokkos::DefaultExecutionSpace;
  using tensor = tensor4<float, layout::nchw, exec::memory_space>;
  using functor = softmax_team_race_functor<exec, tensor, tensor>;
  // An empty team functor: what the backend allows a team of this size needs nothing else.
  struct team_probe {
    KOKKOS_INLINE_FUNCTION void operator()(const typename functor::member&) const {}
  };
  // The largest team the backend runs, capped at a warp.
  static int team_size() {
    return std::min(32, Kokkos::TeamPolicy<exec>(1, Kokkos::AUTO).team_size_max(team_probe{}, Kokkos::ParallelForTag()));
  }
  template <class Layout>
  static std::string unsupported(const softmax_params&) {
    if (team_size() >= 2) return {};
    return "a race in a team needs two or more threads per team; this backend runs " + std::to_string(team_size());
  }
  template <class Exec, class Ops, class Out>
  void run(const Exec& e, const Ops& o, const Out& out, const softmax_params& p) const {
    const auto& ins = o.ins;
    const functor f{ins[0], out, p.rows()};
    Kokkos::TeamPolicy<Exec> policy(e, int(p.rows().size()), team_size());
    policy.set_scratch_size(0, Kokkos::PerTeam(functor::scratch::shmem_size(1)));
    Kokkos::parallel_for("kcnn::fault_softmax_team_race", policy, f);
  }
};

const registrar reg([](registry& r) {
  r.add_fault_registration([](registry& rr) {
    register_variant<softmax_team_race, layout::nchw>(rr, {"softmax", space_axis::scratch, pattern_axis::tiled, &team_race});
  });
  register_op(r, {"softmax", check_positive_nchw, {}, {}, true});
  using namespace kcnn::layout;
  register_variant<softmax_kernel<variant::softmax_multi_kernel>, nchw, nhwc, chwn>(
      r, {"softmax", space_axis::global, pattern_axis::coalesced, &multi_kernel, {}, true}, with_memory_spaces);
  fault::register_faults<softmax_kernel<variant::softmax_fused>>(r, "softmax");
  register_variant<softmax_kernel<variant::softmax_fused>, nchw, nhwc, chwn>(r, {"softmax", space_axis::scratch, pattern_axis::tiled, &fused});
  register_variant<softmax_kernel<variant::softmax_vector>, nchw, nhwc, chwn>(r, {"softmax", space_axis::global, pattern_axis::coalesced, &kinds::vector});
  register_portable_tuning<softmax_kernel<variant::softmax_vector>, nchw, nhwc, chwn>(r, {"softmax", space_axis::global, pattern_axis::coalesced, &kinds::vector});
#if defined(KCNN_HAVE_NATIVE_CUDA)
  register_variant<softmax_native_cuda, nchw>(r, {"softmax", space_axis::global, pattern_axis::coalesced, &kinds::native_cuda});
#endif
#if defined(KCNN_HAVE_ONEDNN)
  if (onednn::usable)
    register_variant<softmax_onednn, nchw, nhwc, chwn>(r, {"softmax", space_axis::global, pattern_axis::library, &kinds::onednn});
#endif
});
}  // namespace
