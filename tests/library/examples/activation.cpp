// elu with its default alpha (1), in place.
#include <kcnn/kcnn.hpp>

#include <cstdio>
#include <vector>

bool example_activation() {
  using L = kcnn::layout::nhwc;
  const Kokkos::DefaultExecutionSpace exec;
  const kcnn::dims4 d{2, 16, 4, 4};
  const auto a = kcnn::activation_params::elu();  // elu(0.5f) for another alpha

  kcnn::tensor4<float, L> t("t", d);
  std::vector<float> x(d.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = kcnn::fill_value(1, i);
  kcnn::copy_in(t, x);

  kcnn::activation(exec, t, t, a);  // the same tensor twice: in place
  exec.fence();
  const std::vector<float> y = kcnn::copy_out(t);

  const auto ref = kcnn::reference::activation(a, d, kcnn::logical(x, d));
  const auto cmp = kcnn::compare(y, d, ref, 1e-6);
  std::printf("activation: %s\n", cmp.passed ? "ok" : cmp.message.c_str());
  return cmp.passed;
}
