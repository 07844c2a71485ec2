// Layout transform nchw -> nhwc through 32 x 32 tiles in team scratch.
#include <kcnn/kcnn.hpp>

#include <cstdio>
#include <vector>

bool example_transform() {
  const Kokkos::DefaultExecutionSpace exec;
  const kcnn::dims4 d{2, 40, 6, 36};

  kcnn::tensor4<float, kcnn::layout::nchw> in("in", d);
  kcnn::tensor4<float, kcnn::layout::nhwc> out("out", d);
  std::vector<float> x(d.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = kcnn::fill_value(1, i);
  kcnn::copy_in(in, x);

  kcnn::transform(exec, in, out, kcnn::variant::transform_tiled{});
  exec.fence();
  const std::vector<float> y = kcnn::copy_out(out);  // logical order: equal to x

  const auto ref = kcnn::reference::transform(d, kcnn::logical(x, d));
  const auto cmp = kcnn::compare(y, d, ref, 0.0);
  std::printf("transform: %s\n", cmp.passed ? "ok" : cmp.message.c_str());
  return cmp.passed;
}
