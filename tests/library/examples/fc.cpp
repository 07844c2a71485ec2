// Fully connected: out(n, k) = sum over (c, h, w) of in * wt + bias, weights in the input's layout.
#include <kcnn/kcnn.hpp>

#include <cstdio>
#include <vector>

bool example_fc() {
  using L = kcnn::layout::chwn;
  const Kokkos::DefaultExecutionSpace exec;
  const kcnn::fc_params p(/*n*/ 4, /*c*/ 8, /*h*/ 3, /*w*/ 3, /*k*/ 10);

  kcnn::tensor4<float, L> in("in", p.input_dims()), wt("wt", p.weight_dims()), out("out", p.output_dims());
  Kokkos::View<float*> bias("bias", p.k);
  std::vector<float> x(p.input_dims().size()), w(p.weight_dims().size()), b(p.k);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = kcnn::fill_value(1, i);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = kcnn::fill_value(2, i);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = kcnn::fill_value(3, i);
  kcnn::copy_in(in, x);
  kcnn::copy_in(wt, w);
  kcnn::copy_in(bias, b);

  kcnn::fc(exec, in, wt, bias, out, p, kcnn::variant::fc_gemm{});
  exec.fence();
  const std::vector<float> y = kcnn::copy_out(out);

  const auto ref = kcnn::reference::conv2d(p, kcnn::logical(x, p.input_dims()), kcnn::logical(w, p.weight_dims()),
                                           [&](int k) { return b[k]; });
  const auto cmp = kcnn::compare(y, p.output_dims(), ref, 1e-5);
  std::printf("fc: %s\n", cmp.passed ? "ok" : cmp.message.c_str());
  return cmp.passed;
}
