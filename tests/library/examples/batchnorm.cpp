// Inference batch norm followed by a relu: fused, then the folded constant-memory variant.
#include <kcnn/kcnn.hpp>

#include <cstdio>
#include <vector>

bool example_batchnorm() {
  using L = kcnn::layout::nchw;
  const Kokkos::DefaultExecutionSpace exec;
  const auto p = kcnn::batchnorm_params::make({2, 8, 4, 4}, /*eps*/ 1e-5f, /*relu*/ true);

  kcnn::tensor4<float, L> in("in", p.dims()), out("out", p.dims());
  Kokkos::View<float*> mean("mean", p.c), var("var", p.c), gamma("gamma", p.c), beta("beta", p.c);
  std::vector<float> x(p.dims().size()), m(p.c), v(p.c), g(p.c), b(p.c);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = kcnn::fill_value(1, i);
  for (int c = 0; c < p.c; ++c) {
    m[c] = kcnn::fill_value(2, c);
    v[c] = 0.5f + kcnn::fill_value(3, c) * kcnn::fill_value(3, c);  // variances are positive
    g[c] = kcnn::fill_value(4, c);
    b[c] = kcnn::fill_value(5, c);
  }
  kcnn::copy_in(in, x);
  kcnn::copy_in(mean, m);
  kcnn::copy_in(var, v);
  kcnn::copy_in(gamma, g);
  kcnn::copy_in(beta, b);

  kcnn::batchnorm(exec, in, mean, var, gamma, beta, out, p, kcnn::variant::batchnorm_fused{});
  exec.fence();
  const std::vector<float> y = kcnn::copy_out(out);

  const auto vec = [](const std::vector<float>& a) { return [&a](int c) { return a[c]; }; };
  const auto ref = kcnn::reference::batchnorm(p, kcnn::logical(x, p.dims()), vec(m), vec(v), vec(g), vec(b));
  const auto fused = kcnn::compare(y, p.dims(), ref, 1e-5);

  // Folded once, untimed, into a per-channel scale and shift carried in constant memory.
  kcnn::variant::batchnorm_folded_constant folded;
  kcnn::prepare(exec, folded, p, in, mean, var, gamma, beta, out);
  kcnn::batchnorm(exec, in, mean, var, gamma, beta, out, p, folded);
  exec.fence();
  const auto constant = kcnn::compare(kcnn::copy_out(out), p.dims(), ref, 1e-5);

  std::printf("batchnorm: fused %s, folded_constant %s\n", fused.passed ? "ok" : fused.message.c_str(),
              constant.passed ? "ok" : constant.message.c_str());
  return fused.passed && constant.passed;
}
