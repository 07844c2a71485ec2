// Runs kcnn's conv2d on the consumer's own tensors and validates it with kcnn's helpers.
#include <kcnn/kcnn.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  int rc = 1;
  {
    kcnn::conv2d_params p;
    p.n = 2; p.c = 4; p.h = 9; p.w = 9; p.k = 6; p.r = 3; p.s = 3; p.stride = 2; p.pad = 1; p.groups = 2;
    kcnn::tensor4<float, kcnn::layout::nhwc> in("in", p.input_dims()), wt("wt", p.filter_dims()),
        out("out", p.output_dims());
    Kokkos::View<float*> bias("bias", p.k);
    kcnn::fill_random(in, 1);
    kcnn::fill_random(wt, 2);
    kcnn::fill_random(bias, 3);
    kcnn::poison(out);
    kcnn::conv2d(Kokkos::DefaultExecutionSpace(), in, wt, bias, out, p,
                 kcnn::variant::direct_coalesced{});
    Kokkos::fence();
    auto in_h = kcnn::create_mirror_view(in);
    auto wt_h = kcnn::create_mirror_view(wt);
    auto out_h = kcnn::create_mirror_view(out);
    auto b_h = Kokkos::create_mirror_view(bias);
    kcnn::deep_copy(in_h, in);
    kcnn::deep_copy(wt_h, wt);
    kcnn::deep_copy(out_h, out);
    Kokkos::deep_copy(b_h, bias);
    const auto ref = kcnn::reference::conv2d(p, in_h, wt_h, [&](int k) { return b_h(k); });
    const auto cmp = kcnn::compare(out_h, p.output_dims(), ref, 1e-5);
    std::printf("consumer: rel_l2=%g %s\n", cmp.rel_l2, cmp.passed ? "ok" : cmp.message.c_str());
    rc = cmp.passed ? 0 : 1;
  }
  Kokkos::finalize();
  return rc;
}
