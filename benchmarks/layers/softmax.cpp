// softmax over channels (classes when h = w = 1): multi_kernel (Caffe's six launches, 10
// passes over memory) and fused (a team per row, 2 passes when the row fits in scratch).
#include "onednn_peer.hpp"
#if defined(KCNN_HAVE_NATIVE_CUDA)
#include "../native_cuda/native_cuda.hpp"
#endif
#include "fault_injection.hpp"
#include "tensor_case.hpp"

#include <kcnn/reference/layers.hpp>
#include <kcnn/softmax.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

template <class Variant>
struct softmax_kernel : layer_kernel_base {
  using params = softmax_params;
  static constexpr bool in_place_safe = true;  // each element read before it is written
  Kokkos::View<float*> workspace;  // per-row max / sum (multi_kernel)
  static params from_spec(const layer_spec& s) { return softmax_params{s.n, s.c, s.h, s.w}; }
  static std::vector<dims4> inputs(const params& p) { return {p.dims()}; }
  static dims4 output(const params& p) { return p.dims(); }
  static double tolerance(const params&) { return 1e-5; }
  static double bytes(const params& p) { return p.min_bytes(); }
  static double flops(const params& p) { return p.flops(); }
  template <class Exec, class Vecs>
  void prepare(const Exec&, const params& p, const Vecs&) {
    if constexpr (std::is_same_v<Variant, variant::softmax_multi_kernel>)
      workspace = Kokkos::View<float*>("softmax.scale", p.rows().size());
  }
  double workspace_bytes(const params& p) const {
    return std::is_same_v<Variant, variant::softmax_multi_kernel> ? 4.0 * double(p.rows().size()) : 0.0;
  }
  // Caffe's sequence: copy (r+w), max (r), subtract (r+w), exp (r+w), sum (r), divide (r+w).
  double passes(const params& p) const {
    if (std::is_same_v<Variant, variant::softmax_multi_kernel>) return 10;
    return softmax_fused_staged<Kokkos::DefaultExecutionSpace>(p) ? 2 : 4;
  }
  template <class Exec, class Ins, class Vecs, class Out>
  void run(const Exec& e, const Ins& ins, const Vecs&, const Out& out, const params& p) const {
    if constexpr (std::is_same_v<Variant, variant::softmax_multi_kernel>)
      softmax(e, ins[0], out, workspace, p, Variant{});
    else
      softmax(e, ins[0], out, p, Variant{});
  }
  template <class HIns, class HVecs>
  static std::vector<double> reference(const params& p, const HIns& ins, const HVecs&) {
    return reference::softmax(p, ins[0]);
  }
};

#if defined(KCNN_HAVE_ONEDNN)
// The vendor peer: oneDNN softmax over axis 1 (the channels).
struct softmax_onednn : onednn::peer<softmax_kernel<variant::softmax_fused>> {
  double passes(const softmax_params&) const { return -1; }  // oneDNN's own
  template <class Exec, class Ins, class Vecs, class Out>
  void run(const Exec&, const Ins& ins, const Vecs&, const Out& out, const softmax_params& p) const {
    run_src_dst<typename Out::layout_tag>(p.dims(), ins[0].view().data(), out.view().data(), [&](const auto& md) {
      const dnnl::softmax_forward::desc d(dnnl::prop_kind::forward_inference, md, 1);
      return std::make_shared<dnnl::softmax_forward>(dnnl::softmax_forward::primitive_desc(d, onednn::engine()));
    });
  }
};
#endif

#if defined(KCNN_HAVE_NATIVE_CUDA)
// Plain CUDA (no Kokkos), nchw: one thread per row, max, sum of exp and divide straight from
// global memory (3 reads + 1 write), to measure what the Kokkos abstraction costs.
struct softmax_native_cuda : softmax_kernel<variant::softmax_fused> {
  double passes(const softmax_params&) const { return 4; }
  template <class Exec, class Ins, class Vecs, class Out>
  void run(const Exec& e, const Ins& ins, const Vecs&, const Out& out, const softmax_params& p) const {
    native_cuda::softmax_fused_nchw(ins[0].view().data(), out.view().data(), p.n, p.c, p.h * p.w, e.cuda_stream());
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
  template <class Exec, class Ins, class Vecs, class Out>
  void run(const Exec& e, const Ins& ins, const Vecs&, const Out& out, const softmax_params& p) const {
    const functor f{ins[0], out, p.rows()};
    Kokkos::TeamPolicy<Exec> policy(e, int(p.rows().size()), team_size());
    policy.set_scratch_size(0, Kokkos::PerTeam(functor::scratch::shmem_size(1)));
    Kokkos::parallel_for("kcnn::fault_softmax_team_race", policy, f);
  }
};

const registrar reg([](registry& r) {
  r.add_fault_registration([](registry& rr) {
    register_layer<softmax_team_race, layout::nchw>(rr, "softmax", "scratch", "tiled", "faulty_team_race", "", 1e-5);
  });
  r.add_op({"softmax", check_positive_nchw, [](const layer_spec& s) { return dims4{s.n, s.c, s.h, s.w}; }, {}, true});
  register_layer_all_layouts<softmax_kernel<variant::softmax_multi_kernel>>(r, "softmax", "global", "coalesced", "multi_kernel", "", 1e-5);
  fault::register_faults<softmax_kernel<variant::softmax_fused>>(r, "softmax", 1e-5);
  register_layer_all_layouts<softmax_kernel<variant::softmax_fused>>(r, "softmax", "scratch", "tiled", "fused", "", 1e-5);
  register_layer_spaces<softmax_kernel<variant::softmax_multi_kernel>>(r, "softmax", "coalesced", "multi_kernel", "", 1e-5);
#if defined(KCNN_HAVE_NATIVE_CUDA)
  register_layer<softmax_native_cuda, layout::nchw>(r, "softmax", "global", "coalesced", "native_cuda", "", 1e-5);
#endif
#if defined(KCNN_HAVE_ONEDNN)
  if (onednn::usable) register_layer_all_layouts<softmax_onednn>(r, "softmax", "global", "tiled", "onednn", "", 1e-5);
#endif
});
}  // namespace
