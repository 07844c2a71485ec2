// pool_max and pool_avg: shape rule and variants, in nchw, nhwc and chwn.
//   naive   / global / coalesced (baseline): one thread per output along the layout (chwn: per
//             image); also readonly and the CUDA spaces;
//   regtile / global / regtile / hRHwRW: RH x RW outputs per thread, shared window loads reused
//             from registers;
//   tiled   / scratch / tiled: the input tile staged in team scratch;
//   vector  / global / coalesced: rows of the output per team, lanes along the contiguous axis;
//   onednn (host builds) and native_cuda (max, nchw; CUDA builds): the peers.
// Rounding: the suite's rounding column (floor, the default, or ceil with Caffe's clipping).
#include "../common/fault_injection.hpp"
#include "../common/onednn_peer.hpp"
#include "../common/variant_kinds.hpp"
#if defined(KCNN_HAVE_NATIVE_CUDA)
#include "../../native_cuda/native_cuda.hpp"
#endif

#include <kcnn/pool.hpp>
#include <kcnn/reference/pool.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

pool_params pool_from_spec(const layer_spec& s, pool_kind kind) {
  pool_params p;
  p.n = s.n; p.c = s.c; p.h = s.h; p.w = s.w; p.r = s.r; p.s = s.s;
  p.stride = s.stride; p.pad = s.pad;
  p.stride_h = s.stride_h; p.stride_w = s.stride_w;
  p.pad_h = s.pad_h; p.pad_w = s.pad_w; p.pad_h_end = s.pad_h_end; p.pad_w_end = s.pad_w_end;
  p.ceil_mode = s.rounding == "ceil";
  p.kind = kind;
  return p;
}

template <pool_kind Kind, class Variant>
struct pool_kernel;
template <pool_kind Kind>
struct pool_of {
  template <class Variant>
  using type = pool_kernel<Kind, Variant>;
};

template <pool_kind Kind, class Variant>
struct pool_kernel : library_descriptor<pool_of<Kind>::template type, Variant, variant::pool_naive> {
  using params = pool_params;
  static params from_spec(const layer_spec& s) { return pool_from_spec(s, Kind); }
  static std::vector<dims4> inputs(const params& p) { return {p.input_dims()}; }
  static dims4 output(const params& p) { return p.output_dims(); }
  // Max pooling selects one input: exact.
  static double tolerance(const params&) { return Kind == pool_kind::max ? 0.0 : 1e-5; }
  static double bytes(const params& p) { return p.min_bytes(); }
  static double flops(const params& p) { return p.flops(); }
  template <class Layout>
  static std::string unsupported(const params& p) {
    if constexpr (std::is_same_v<Variant, variant::pool_tiled>) {
      if (pool_tile<Layout>(p, scratch_limit<Kokkos::DefaultExecutionSpace>(0)).size() == 0)
        return "the pooling window does not fit in team scratch";
    }
    return {};
  }
  template <class Exec, class Ops, class Out>
  void prepare(const Exec& e, const params& p, const Ops& o, const Out& out) {
    kcnn::prepare(e, this->v, p, o.ins[0], out);
  }
  template <class Exec, class Ops, class Out>
  void run(const Exec& e, const Ops& o, const Out& out, const params& p) const {
    pool(e, o.ins[0], out, p, this->v);
  }
  template <class HostOps>
  static std::vector<double> reference(const params& p, const HostOps& h) {
    return reference::pool(p, h.ins[0]);
  }
};

#if defined(KCNN_HAVE_ONEDNN)
// The vendor peer: oneDNN pooling, max or average counting the padding (Caffe's divisor, equal
// to oneDNN's while every window ends inside the padded input); ceil rounding as extra right
// padding.
template <pool_kind Kind>
struct pool_onednn : onednn::peer<pool_kernel<Kind, variant::pool_naive>> {
  mutable dnnl::memory::desc src, dst;
  template <class Layout>
  static std::string unsupported(const pool_params& p) {
    if (Kind == pool_kind::avg && ((p.p() - 1) * p.row_stride() + p.r > p.h + p.pad_top() + p.pad_bottom() ||
                                   (p.q() - 1) * p.col_stride() + p.s > p.w + p.pad_left() + p.pad_right()))
      return "a ceil-rounded window passes the padded input: Caffe's average divisor differs from oneDNN's";
    return onednn::peer<pool_kernel<Kind, variant::pool_naive>>::template unsupported<Layout>(p);
  }
  template <class Exec, class Ops, class Out>
  void run(const Exec&, const Ops& o, const Out& out, const pool_params& p) const {
    using L = typename Out::layout_tag;
    if (!this->prim) {
      src = onednn::desc<L>(p.input_dims());
      dst = onednn::desc<L>(p.output_dims());
      // The end padding that gives oneDNN's floor rounding this output size (ceil rounding adds some).
      const onednn::dims pr = {std::max(0, (p.p() - 1) * p.row_stride() + p.r - p.h - p.pad_top()),
                               std::max(0, (p.q() - 1) * p.col_stride() + p.s - p.w - p.pad_left())};
      const auto alg = Kind == pool_kind::max ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_include_padding;
      const dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, alg, src, dst,
                                          {p.row_stride(), p.col_stride()}, {p.r, p.s}, {p.pad_top(), p.pad_left()}, pr);
      this->prim = std::make_shared<dnnl::pooling_forward>(dnnl::pooling_forward::primitive_desc(d, onednn::engine()));
    }
    onednn::execute(*this->prim, {{DNNL_ARG_SRC, onednn::wrap(src, o.ins[0].view().data())},
                                  {DNNL_ARG_DST, onednn::wrap(dst, out.view().data())}});
  }
};
#endif

#if defined(KCNN_HAVE_NATIVE_CUDA)
// Plain CUDA (no Kokkos) max pooling in nchw, one thread per output as the naive variant: what
// the Kokkos abstraction costs.
struct pool_max_native_cuda : pool_kernel<pool_kind::max, variant::pool_naive> {
  template <class Layout>
  static std::string unsupported(const pool_params& p) {
    return p.symmetric() ? std::string() : "the plain CUDA kernel takes a square stride and a symmetric pad";
  }
  template <class Exec, class Ops, class Out>
  void run(const Exec& e, const Ops& o, const Out& out, const pool_params& p) const {
    const native_cuda::pool_shape s{p.n, p.c, p.h, p.w, p.r, p.s, p.row_stride(), p.pad_top(), p.p(), p.q()};
    native_cuda::pool_max_nchw(o.ins[0].view().data(), out.view().data(), s, e.cuda_stream());
  }
};
#endif

template <pool_kind Kind>
void add_pool(registry& r, const char* op) {
  op_info info{op, [](const layer_spec& s) { return field_error_from(pool_from_spec(s, Kind).check()); },
               [](const layer_spec& s) { return pool_from_spec(s, Kind).output_dims(); }};
  info.rounds_output = true;  // floor or ceil, from the row or the suite
  info.geometry = {"stride_h", "stride_w", "pad_h", "pad_w", "pad_h_end", "pad_w_end"};
  register_op(r, std::move(info));
  using namespace kcnn::layout;
  using naive = pool_kernel<Kind, variant::pool_naive>;
  register_variant<naive, nchw, nhwc, chwn>(r, {op, space_axis::global, pattern_axis::coalesced, &kinds::naive, {}, true}, with_memory_spaces);
  fault::register_faults<naive>(r, op);
  const variant_decl regtile{op, space_axis::global, pattern_axis::regtile, &kinds::regtile};
  auto with = [&](const char* t, const char* doc) { auto d = regtile; d.tuning = {t, doc}; return d; };
  register_variant<pool_kernel<Kind, variant::pool_regtile<1, 2>>, nchw, nhwc, chwn>(r, with("h1w2", "1 x 2 outputs per thread"));
  register_variant<pool_kernel<Kind, variant::pool_regtile<1, 4>>, nchw, nhwc, chwn>(r, with("h1w4", "1 x 4 outputs per thread"));
  register_variant<pool_kernel<Kind, variant::pool_regtile<2, 2>>, nchw, nhwc, chwn>(r, with("h2w2", "2 x 2 outputs per thread"));
  register_variant<pool_kernel<Kind, variant::pool_tiled>, nchw, nhwc, chwn>(r, {op, space_axis::scratch, pattern_axis::tiled, &kinds::tiled});
  register_variant<pool_kernel<Kind, variant::pool_vector>, nchw, nhwc, chwn>(r, {op, space_axis::global, pattern_axis::coalesced, &kinds::vector});
  register_portable_tuning<pool_kernel<Kind, variant::pool_vector>, nchw, nhwc, chwn>(r, {op, space_axis::global, pattern_axis::coalesced, &kinds::vector});
#if defined(KCNN_HAVE_NATIVE_CUDA)
  if constexpr (Kind == pool_kind::max)
    register_variant<pool_max_native_cuda, nchw>(r, {op, space_axis::global, pattern_axis::coalesced, &kinds::native_cuda});
#endif
#if defined(KCNN_HAVE_ONEDNN)
  if (onednn::usable) register_variant<pool_onednn<Kind>, nchw, nhwc, chwn>(r, {op, space_axis::global, pattern_axis::library, &kinds::onednn});
#endif
}

const registrar reg([](registry& r) {
  add_pool<pool_kind::max>(r, "pool_max");
  add_pool<pool_kind::avg>(r, "pool_avg");
});
}  // namespace
