// Softmax over 10 classes: the default (fused), then Caffe's multi-kernel with its workspace.
#include <kcnn/kcnn.hpp>

#include <cstdio>
#include <vector>

bool example_softmax() {
  using L = kcnn::layout::nchw;
  const Kokkos::DefaultExecutionSpace exec;
  const auto p = kcnn::softmax_params::classes(/*n*/ 8, /*c*/ 10);

  kcnn::tensor4<float, L> in("in", p.dims()), out("out", p.dims());
  std::vector<float> x(p.dims().size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 4.0f * kcnn::fill_value(1, i);
  kcnn::copy_in(in, x);

  kcnn::softmax(exec, in, out, p);
  exec.fence();
  const auto ref = kcnn::reference::softmax(p, kcnn::logical(x, p.dims()));
  const auto fused = kcnn::compare(kcnn::copy_out(out), p.dims(), ref, 1e-5);

  kcnn::variant::softmax_multi_kernel multi;
  kcnn::prepare(exec, multi, p, in, out);  // allocates one float per row
  kcnn::softmax(exec, in, out, p, multi);
  exec.fence();
  const auto caffe = kcnn::compare(kcnn::copy_out(out), p.dims(), ref, 1e-5);

  std::printf("softmax: fused %s, multi_kernel %s\n", fused.passed ? "ok" : fused.message.c_str(),
              caffe.passed ? "ok" : caffe.message.c_str());
  return fused.passed && caffe.passed;
}
