// Concatenation of two tensors along channels.
#include <kcnn/kcnn.hpp>

#include <cstdio>
#include <vector>

bool example_concat() {
  using T = kcnn::tensor4<float, kcnn::layout::nhwc>;
  const Kokkos::DefaultExecutionSpace exec;
  const kcnn::dims4 d0{2, 3, 4, 4}, d1{2, 5, 4, 4}, dout{2, 8, 4, 4};

  const std::vector<T> parts{T("part0", d0), T("part1", d1)};
  T out("out", dout);
  std::vector<float> x0(d0.size()), x1(d1.size());
  for (std::size_t i = 0; i < x0.size(); ++i) x0[i] = kcnn::fill_value(1, i);
  for (std::size_t i = 0; i < x1.size(); ++i) x1[i] = kcnn::fill_value(2, i);
  kcnn::copy_in(parts[0], x0);
  kcnn::copy_in(parts[1], x1);

  kcnn::concat(exec, parts, out);
  exec.fence();
  const std::vector<float> y = kcnn::copy_out(out);

  const auto ref = kcnn::reference::concat({d0, d1}, std::vector{kcnn::logical(x0, d0), kcnn::logical(x1, d1)});
  const auto cmp = kcnn::compare(y, dout, ref, 0.0);
  std::printf("concat: %s\n", cmp.passed ? "ok" : cmp.message.c_str());
  return cmp.passed;
}
