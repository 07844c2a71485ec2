#pragma once
// The conv2d entry point, shared by every conv2d variant header:
//   kcnn::conv2d(exec, in, wt, bias, out, params, variant = variant::direct_coalesced{})
// in: p.input_dims(), wt: p.filter_dims() = (k, c/groups, r, s), bias: length k,
// out: p.output_dims(). Checks params and every operand (std::invalid_argument) before launching.
#include <kcnn/api.hpp>
#include <kcnn/conv2d_params.hpp>

namespace kcnn {

namespace variant {
struct direct_coalesced;
}  // namespace variant

namespace detail {
template <class Exec, class In, class Wt, class Bias, class Out>
void conv2d_check(const In& in, const Wt& wt, const Bias& bias, const Out& out, const conv2d_params& p) {
  const checker<Exec> check{"conv2d"};
  check.params(p.check());
  check.tensor("in", in, p.input_dims());
  check.tensor("wt", wt, p.filter_dims());
  check.vector("bias", bias, std::size_t(p.k));
  check.tensor("out", out, p.output_dims());
}
}  // namespace detail

// out = conv2d(in, wt) + bias. The operands may be in any layouts and memory spaces the
// execution space can access (some variants need compile-time layouts: a static_assert says
// so), const, and carry memory traits. Throws std::invalid_argument on invalid params, operand
// dims or a shape the variant does not support; std::logic_error when a stateful variant was
// not prepared (kcnn::prepare).
template <class Exec, class In, class Wt, class Bias, class Out, class V = variant::direct_coalesced>
void conv2d(const Exec& exec, const In& in, const Wt& wt, const Bias& bias, const Out& out, const conv2d_params& p,
            const V& v = V{}) {
  static_assert(detail::is_variant_of<V, ops::conv2d>, "kcnn::conv2d: not a conv2d variant (kcnn::variant::direct_*, "
                                                        "im2col_gemm, gemm_pointwise, or read_only<> of one)");
  detail::conv2d_check<Exec>(in, wt, bias, out, p);
  v.run(exec, in, wt, bias, out, p);
}

}  // namespace kcnn
