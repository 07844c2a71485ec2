// conv2d: the default variant (direct_coalesced), then im2col + GEMM, a stateful variant.
#include <kcnn/kcnn.hpp>

#include <cstdio>
#include <vector>

bool example_conv2d() {
  using L = kcnn::layout::nhwc;
  const Kokkos::DefaultExecutionSpace exec;
  const auto p = kcnn::conv2d_params::make({2, 3, 8, 8}, /*k*/ 4, /*r*/ 3, /*s*/ 3, /*stride*/ 1, /*pad*/ 1);

  // Allocation, in any layout and memory space (here the default execution space's).
  kcnn::tensor4<float, L> in("in", p.input_dims()), wt("wt", p.filter_dims()), out("out", p.output_dims());
  Kokkos::View<float*> bias("bias", p.k);

  // Data in: host arrays in logical nchw order (kcnn::fill_value: a deterministic sample).
  std::vector<float> x(p.input_dims().size()), w(p.filter_dims().size()), b(p.k);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = kcnn::fill_value(1, i);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = kcnn::fill_value(2, i);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = kcnn::fill_value(3, i);
  kcnn::copy_in(in, x);
  kcnn::copy_in(wt, w);
  kcnn::copy_in(bias, b);

  // The call, then a fence before reading the result.
  kcnn::conv2d(exec, in, wt, bias, out, p);
  exec.fence();
  const std::vector<float> y = kcnn::copy_out(out);

  // Validation against the library's host reference.
  const auto ref = kcnn::reference::conv2d(p, kcnn::logical(x, p.input_dims()), kcnn::logical(w, p.filter_dims()),
                                           [&](int k) { return b[k]; });
  const auto direct = kcnn::compare(y, p.output_dims(), ref, 1e-5);

  // A stateful variant: prepare once (allocates the workspace, packs the weights), untimed.
  kcnn::variant::im2col_gemm gemm;
  kcnn::prepare(exec, gemm, p, in, wt, bias, out);
  kcnn::conv2d(exec, in, wt, bias, out, p, gemm);
  exec.fence();
  const auto lowered = kcnn::compare(kcnn::copy_out(out), p.output_dims(), ref, 1e-5);

  std::printf("conv2d: direct %s, im2col_gemm %s (workspace %.0f bytes)\n", direct.passed ? "ok" : direct.message.c_str(),
              lowered.passed ? "ok" : lowered.message.c_str(), kcnn::workspace_bytes(gemm));
  return direct.passed && lowered.passed;
}
