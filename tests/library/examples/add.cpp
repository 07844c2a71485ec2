// Residual add, operands in different layouts.
#include <kcnn/kcnn.hpp>

#include <cstdio>
#include <vector>

bool example_add() {
  const Kokkos::DefaultExecutionSpace exec;
  const kcnn::dims4 d{2, 8, 4, 4};

  kcnn::tensor4<float, kcnn::layout::nhwc> a("a", d), out("out", d);
  kcnn::tensor4<float, kcnn::layout::chwn> b("b", d);
  std::vector<float> x(d.size()), z(d.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = kcnn::fill_value(1, i);
  for (std::size_t i = 0; i < z.size(); ++i) z[i] = kcnn::fill_value(2, i);
  kcnn::copy_in(a, x);
  kcnn::copy_in(b, z);

  kcnn::add(exec, a, b, out);
  exec.fence();
  const std::vector<float> y = kcnn::copy_out(out);

  const auto ref = kcnn::reference::add(d, kcnn::logical(x, d), kcnn::logical(z, d));
  const auto cmp = kcnn::compare(y, d, ref, 1e-6);  // float sums vs the double reference
  std::printf("add: %s\n", cmp.passed ? "ok" : cmp.message.c_str());
  return cmp.passed;
}
