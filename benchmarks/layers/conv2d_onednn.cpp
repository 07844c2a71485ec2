// conv2d / {nchw,nhwc} / global / tiled / onednn: the vendor peer on host builds, oneDNN's
// convolution_forward (inference, direct algorithm: oneDNN picks its implementation) with the
// weights packed once into its preferred format (untimed). Needs oneDNN at configure time.
#include "conv2d_case.hpp"
#include "onednn_peer.hpp"

#if defined(KCNN_HAVE_ONEDNN)
namespace {
using namespace kcnn;
namespace onednn = kcnn::bench::onednn;

struct launch : bench::conv_launch_base {
  std::shared_ptr<dnnl::convolution_forward> prim;
  dnnl::memory weights;
  dnnl::memory::desc src, dst, bias;

  template <class Layout>
  static std::string unsupported(const conv2d_params&) {
    if (!onednn::usable) return "oneDNN runs on host backends only";
    return onednn::has_tag<Layout>() ? std::string() : "oneDNN's plain activation formats are nchw and nhwc";
  }
  std::string note() const { return onednn::note(); }

  template <class Exec, class In, class Wt, class Bias>
  void prepare(const Exec&, const conv2d_params& p, const In&, const Wt& wt, const Bias&) {
    using L = typename In::layout_tag;
    src = onednn::desc<L>(p.input_dims());
    dst = onednn::desc<L>(p.output_dims());
    bias = dnnl::memory::desc({p.k}, onednn::dt::f32, onednn::tag::a);
    const auto f = p.filter_dims();
    onednn::dims wdims = {f.n, f.c, f.h, f.w};
    if (p.groups > 1) wdims = {p.groups, f.n / p.groups, f.c, f.h, f.w};
    const dnnl::memory::desc any(wdims, onednn::dt::f32, onednn::tag::any);
    const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                            src, any, bias, dst, {p.stride, p.stride}, {p.pad, p.pad},
                                            {p.pad, p.pad});
    const dnnl::convolution_forward::primitive_desc pd(d, onednn::engine());
    weights = onednn::packed(onednn::filter_desc<L>(f, p.groups), wt.view().data(), pd.weights_desc());
    prim = std::make_shared<dnnl::convolution_forward>(pd);
  }
  template <class Exec, class In, class Wt, class Bias, class Out>
  void operator()(const Exec&, const In& in, const Wt&, const Bias& b, const Out& out, const conv2d_params&) const {
    onednn::execute(*prim, {{DNNL_ARG_SRC, onednn::wrap(src, in.view().data())},
                            {DNNL_ARG_WEIGHTS, weights},
                            {DNNL_ARG_BIAS, onednn::wrap(bias, b.data())},
                            {DNNL_ARG_DST, onednn::wrap(dst, out.view().data())}});
  }
};

const bench::registrar reg([](bench::registry& r) {
  using namespace kcnn::layout;
  if (onednn::usable) bench::register_conv2d<launch, nchw, nhwc>(r, "global", "tiled", "onednn");
});
}  // namespace
#endif
