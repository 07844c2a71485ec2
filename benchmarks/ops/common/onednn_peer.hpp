#pragma once
// oneDNN as the vendor peer of host builds (variant `onednn`): the same layers, run through the
// same harness (same fill, validation against the same reference, same timing, same row).
// Primitives are created once per case, untimed (prepare); a timed run is one execute on the
// case's own buffers. oneDNN's thread count is set to the Kokkos backend's concurrency (1 on a
// Serial Kokkos) and the row's note says so. Compiled only when configure found oneDNN
// (KCNN_HAVE_ONEDNN) and registered only when the default execution space is a host space.
#if defined(KCNN_HAVE_ONEDNN)
#include "cases/op_case.hpp"

#include <kcnn/compat.hpp>
#include <kcnn/lanes.hpp>
#include <kcnn/layout.hpp>
#include <kcnn/tensor.hpp>

#include <array>
#include <memory>

#include <Kokkos_Core.hpp>
#include <dnnl.hpp>

#include <string>
#include <type_traits>
#include <unordered_map>

#if defined(KCNN_ONEDNN_OMP)
extern "C" void omp_set_num_threads(int);  // libgomp, oneDNN's threading runtime on Debian
#endif

namespace kcnn::bench::onednn {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;
using dims = dnnl::memory::dims;

// Host builds only: oneDNN's CPU engine reads the case's buffers directly.
inline constexpr bool usable = host_backend<Kokkos::DefaultExecutionSpace>;

inline int threads() { return compat::concurrency(Kokkos::DefaultExecutionSpace()); }

inline dnnl::engine& engine() {
#ifdef KCNN_ONEDNN_OMP
  // oneDNN's OpenMP runtime: the same thread count as the Kokkos backend.
  static const bool set = (omp_set_num_threads(threads()), true);
  (void)set;
#endif
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}
inline dnnl::stream& stream() {
  static dnnl::stream s(engine());
  return s;
}

inline std::string note() {
  const auto v = dnnl::version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + ", " + std::to_string(threads()) + " thread" + (threads() == 1 ? "" : "s");
}

// The layouts the peer runs in: oneDNN's plain activation formats, nchw and nhwc.
template <class Layout>
constexpr bool has_tag() {
  return std::is_same_v<Layout, layout::nchw> || std::is_same_v<Layout, layout::nhwc>;
}
inline dims dims_of(const dims4& d) { return {d.n, d.c, d.h, d.w}; }

// The strides of logical axis (n, c, h, w) in a kcnn fixed-order layout.
template <class Layout>
dims strides_of(const dims4& d) {
  auto at = [&](int n, int c, int h, int w) { return dnnl::memory::dim(Layout::offset(d, n, c, h, w)); };
  return {at(1, 0, 0, 0), at(0, 1, 0, 0), at(0, 0, 1, 0), at(0, 0, 0, 1)};
}

// A plain oneDNN descriptor of a kcnn tensor (logical n, c, h, w; kcnn's physical strides).
template <class Layout>
dnnl::memory::desc desc(const dims4& d) {
  return dnnl::memory::desc(dims_of(d), dt::f32, strides_of<Layout>(d));
}

// Filters (k, c/groups, r, s) stored in the activations' layout order, as oneDNN's grouped
// (g, k/g, c/g, r, s) or plain (k, c, r, s) weights.
template <class Layout>
dnnl::memory::desc filter_desc(const dims4& f, int groups) {
  const dims st = strides_of<Layout>(f);
  if (groups == 1) return dnnl::memory::desc(dims_of(f), dt::f32, st);
  const dnnl::memory::dim kg = f.n / groups;
  return dnnl::memory::desc({groups, kg, f.c, f.h, f.w}, dt::f32, {kg * st[0], st[0], st[1], st[2], st[3]});
}

// Copies a user buffer into a new memory of the primitive's preferred format (untimed weight
// packing, as frameworks do once per model).
inline dnnl::memory packed(const dnnl::memory::desc& user, const float* p, const dnnl::memory::desc& want) {
  dnnl::memory src(user, engine(), const_cast<float*>(p));
  dnnl::memory dst(want, engine());
  dnnl::reorder(src, dst).execute(stream(), src, dst);
  stream().wait();
  return dst;
}

// A memory object over a case buffer (no copy).
inline dnnl::memory wrap(const dnnl::memory::desc& md, const float* p) {
  return dnnl::memory(md, engine(), const_cast<float*>(p));
}

// Runs a primitive and waits (the harness fences Kokkos; oneDNN's stream is separate).
inline void execute(dnnl::primitive& prim, const std::unordered_map<int, dnnl::memory>& args) {
  prim.execute(stream(), args);
  stream().wait();
}

// What every peer of a tensor op shares: its kernel descriptor K (shapes, bytes, reference),
// the primitive made by the first (validation) run, the layouts, the note.
template <class K>
struct peer : K {
  mutable std::shared_ptr<dnnl::primitive> prim;
  template <class Layout, class Params>
  static std::string unsupported(const Params&) {
    if (!usable) return "oneDNN runs on host backends only";
    return has_tag<Layout>() ? std::string() : "oneDNN's plain activation formats are nchw and nhwc";
  }
  std::string note() const { return onednn::note(); }
  // Runs prim (made by make(md) on first use) with one source and one destination of shape d.
  template <class Layout, class Make>
  void run_src_dst(const dims4& d, const float* src, float* dst, const Make& make) const {
    const auto md = desc<Layout>(d);
    if (!prim) prim = make(md);
    execute(*prim, {{DNNL_ARG_SRC, wrap(md, src)}, {DNNL_ARG_DST, wrap(md, dst)}});
  }
};

}  // namespace kcnn::bench::onednn
#endif
