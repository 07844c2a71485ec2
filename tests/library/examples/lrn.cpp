// Local response normalisation across channels (AlexNet's: size 5, alpha 1e-4, beta 0.75, k 1)
// on a runtime-strided tensor.
#include <kcnn/kcnn.hpp>

#include <cstdio>
#include <vector>

bool example_lrn() {
  using L = kcnn::layout::strided;
  const Kokkos::DefaultExecutionSpace exec;
  const auto p = kcnn::lrn_params::make({2, 16, 5, 5});
  const auto order = kcnn::layout::parse_order("nhcw");  // physical order, slowest first

  kcnn::tensor4<float, L> in("in", p.dims(), order), out("out", p.dims(), order);
  std::vector<float> x(p.dims().size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = kcnn::fill_value(1, i);
  kcnn::copy_in(in, x);

  kcnn::lrn(exec, in, out, p);
  exec.fence();
  const std::vector<float> y = kcnn::copy_out(out);

  const auto ref = kcnn::reference::lrn(p, kcnn::logical(x, p.dims()));
  const auto cmp = kcnn::compare(y, p.dims(), ref, 1e-5);
  std::printf("lrn: %s\n", cmp.passed ? "ok" : cmp.message.c_str());
  return cmp.passed;
}
