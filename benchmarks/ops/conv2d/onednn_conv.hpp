#pragma once
// conv2d and fc / {nchw,nhwc} / global / library / onednn: the vendor peers on host builds,
// oneDNN's convolution_forward (inference, direct algorithm: oneDNN picks its implementation)
// and inner_product_forward, with the weights packed once into the primitive's preferred format
// (untimed, as frameworks do once per model). Needs oneDNN at configure time.
#include "conv_descriptor.hpp"

#include "../common/onednn_peer.hpp"
#include "../common/variant_kinds.hpp"

#if defined(KCNN_HAVE_ONEDNN)
namespace kcnn::bench {

template <bool FullyConnected>
struct onednn_conv : conv_descriptor<onednn_conv<FullyConnected>, FullyConnected> {
  using primitive = std::conditional_t<FullyConnected, dnnl::inner_product_forward, dnnl::convolution_forward>;
  std::shared_ptr<primitive> prim;
  dnnl::memory packed_weights;  // the primitive's preferred format, packed once
  dnnl::memory::desc src, dst, bias;

  template <class Layout>
  static std::string unsupported(const conv2d_params&) {
    if (!onednn::usable) return "oneDNN runs on host backends only";
    return onednn::has_tag<Layout>() ? std::string() : "oneDNN's plain activation formats are nchw and nhwc";
  }
  std::string note() const { return onednn::note(); }

  template <class Exec, class Ops, class Out>
  void prepare(const Exec&, const conv2d_params& p, const Ops& o, const Out&) {
    using L = typename decltype(o.ins)::value_type::layout_tag;
    const auto& wt = o.weights[0];
    src = onednn::desc<L>(p.input_dims());
    bias = dnnl::memory::desc({p.k}, onednn::dt::f32, onednn::tag::a);
    const auto f = p.filter_dims();
    onednn::dims wdims = {f.n, f.c, f.h, f.w};
    if (p.groups > 1) wdims = {p.groups, f.n / p.groups, f.c, f.h, f.w};
    const dnnl::memory::desc any(wdims, onednn::dt::f32, onednn::tag::any);
    typename primitive::primitive_desc pd;
    if constexpr (FullyConnected) {
      // The output (n, k, 1, 1) is the same memory as an (n, k) matrix in nchw and in nhwc.
      dst = dnnl::memory::desc({p.n, p.k}, onednn::dt::f32, onednn::tag::nc);
      const typename primitive::desc d(dnnl::prop_kind::forward_inference, src, any, bias, dst);
      pd = typename primitive::primitive_desc(d, onednn::engine());
    } else {
      dst = onednn::desc<L>(p.output_dims());
      const typename primitive::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
                                       any, bias, dst, {p.row_stride(), p.col_stride()},
                                       // oneDNN counts dilation from 0 (no gap between taps)
                                       {p.dilation_h - 1, p.dilation_w - 1}, {p.pad_top(), p.pad_left()},
                                       {p.pad_bottom(), p.pad_right()});
      pd = typename primitive::primitive_desc(d, onednn::engine());
    }
    packed_weights = onednn::packed(onednn::filter_desc<L>(f, p.groups), wt.view().data(), pd.weights_desc());
    prim = std::make_shared<primitive>(pd);
  }
  template <class Exec, class Ops, class Out>
  void run(const Exec&, const Ops& o, const Out& out, const conv2d_params&) const {
    const auto& in = o.ins[0];
    const auto& b = o.vecs[0];
    onednn::execute(*prim, {{DNNL_ARG_SRC, onednn::wrap(src, in.view().data())},
                            {DNNL_ARG_WEIGHTS, packed_weights},
                            {DNNL_ARG_BIAS, onednn::wrap(bias, b.data())},
                            {DNNL_ARG_DST, onednn::wrap(dst, out.view().data())}});
  }
};

}  // namespace kcnn::bench
#endif
