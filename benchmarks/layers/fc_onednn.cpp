// fc / {nchw,nhwc} / global / tiled / onednn: the vendor peer on host builds, oneDNN's
// inner_product_forward (inference) with the weights packed once into its preferred format
// (untimed). Needs oneDNN at configure time.
#include "conv2d_case.hpp"
#include "onednn_peer.hpp"

#if defined(KCNN_HAVE_ONEDNN)
namespace {
using namespace kcnn;
namespace onednn = kcnn::bench::onednn;

struct launch : bench::conv_launch_base {
  std::shared_ptr<dnnl::inner_product_forward> prim;
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
    // The output (n, k, 1, 1) is the same memory as an (n, k) matrix in nchw and in nhwc.
    dst = dnnl::memory::desc({p.n, p.k}, onednn::dt::f32, onednn::tag::nc);
    bias = dnnl::memory::desc({p.k}, onednn::dt::f32, onednn::tag::a);
    const auto f = p.filter_dims();
    const dnnl::memory::desc any({f.n, f.c, f.h, f.w}, onednn::dt::f32, onednn::tag::any);
    const dnnl::inner_product_forward::desc d(dnnl::prop_kind::forward_inference, src, any, bias, dst);
    const dnnl::inner_product_forward::primitive_desc pd(d, onednn::engine());
    weights = onednn::packed(onednn::filter_desc<L>(f, 1), wt.view().data(), pd.weights_desc());
    prim = std::make_shared<dnnl::inner_product_forward>(pd);
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
  if (onednn::usable) bench::register_fc<launch, nchw, nhwc>(r, "global", "tiled", "onednn");
});
}  // namespace
#endif
