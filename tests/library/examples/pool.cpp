// Max pooling 3x3 / 2 in Caffe's ceil mode, with read-only loads of the input.
#include <kcnn/kcnn.hpp>

#include <cstdio>
#include <vector>

bool example_pool() {
  using L = kcnn::layout::nchw;
  const Kokkos::DefaultExecutionSpace exec;
  const auto p = kcnn::pool_params::max_pool({2, 3, 32, 32}, /*r*/ 3, /*s*/ 3, /*stride*/ 2, /*pad*/ 0, /*ceil_mode*/ true);

  kcnn::tensor4<float, L> in("in", p.input_dims()), out("out", p.output_dims());  // out: 2 x 3 x 16 x 16
  std::vector<float> x(p.input_dims().size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = kcnn::fill_value(1, i);
  kcnn::copy_in(in, x);

  // Any variant wrapped in read_only<> reads its inputs through const RandomAccess handles.
  kcnn::pool(exec, in, out, p, kcnn::variant::read_only<kcnn::variant::pool_naive>{});
  exec.fence();
  const std::vector<float> y = kcnn::copy_out(out);

  const auto ref = kcnn::reference::pool(p, kcnn::logical(x, p.input_dims()));
  const auto cmp = kcnn::compare(y, p.output_dims(), ref, 0.0);  // max pooling is exact
  std::printf("pool: %s\n", cmp.passed ? "ok" : cmp.message.c_str());
  return cmp.passed;
}
