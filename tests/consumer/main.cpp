// An outside project using the installed kcnn kernels (find_package(kcnn), target kcnn::kernels)
// and nothing but <kcnn/kcnn.hpp>: every op's entry point, with its default variant, a stateful
// variant where the op has one (kcnn::prepare) and the read-only form (variant::read_only<>), in
// every layout (nchw, nhwc, chwn and runtime-strided where the variant supports it), each result
// compared with the library's host reference. Exits non-zero on any mismatch.
#include <kcnn/kcnn.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using exec_t = Kokkos::DefaultExecutionSpace;
int failures = 0, checks = 0;

template <class L>
kcnn::tensor4<float, L> alloc(const char* label, const kcnn::dims4& d) {
  if constexpr (L::runtime_strided) return kcnn::tensor4<float, L>(label, d, kcnn::layout::parse_order("hwcn"));
  else return kcnn::tensor4<float, L>(label, d);
}

std::vector<float> sample(std::size_t n, std::uint64_t seed) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = kcnn::fill_value(seed, i);
  return v;
}

// Poisons out, runs the op, and compares out with the reference.
template <class Out, class Launch>
void check(const std::string& what, const Out& out, const std::vector<double>& ref, double tol, const Launch& launch) {
  ++checks;
  kcnn::poison(out);
  try {
    launch();
    exec_t().fence();
    const auto cmp = kcnn::compare(kcnn::copy_out(out), out.dims(), ref, tol);
    if (!cmp.passed) {
      ++failures;
      std::printf("FAIL %s [%s]: %s\n", what.c_str(), Out::layout_tag::name, cmp.message.c_str());
    }
  } catch (const std::exception& e) {
    ++failures;
    std::printf("FAIL %s [%s]: threw %s\n", what.c_str(), Out::layout_tag::name, e.what());
  }
}

template <class L>
void every_op() {
  namespace v = kcnn::variant;
  const exec_t exec;
  constexpr bool fixed = !L::runtime_strided;

  {  // conv2d
    const auto p = kcnn::conv2d_params::make({2, 4, 7, 7}, 6, 3, 3, 2, 1, 2);
    auto in = alloc<L>("in", p.input_dims()), wt = alloc<L>("wt", p.filter_dims()), out = alloc<L>("out", p.output_dims());
    Kokkos::View<float*> bias("bias", p.k);
    const auto x = sample(in.size(), 1), w = sample(wt.size(), 2), b = sample(p.k, 3);
    kcnn::copy_in(in, x);
    kcnn::copy_in(wt, w);
    kcnn::copy_in(bias, b);
    const auto ref = kcnn::reference::conv2d(p, kcnn::logical(x, p.input_dims()), kcnn::logical(w, p.filter_dims()),
                                             [&](int k) { return b[k]; });
    check("conv2d default", out, ref, 1e-5, [&] { kcnn::conv2d(exec, in, wt, bias, out, p); });
    check("conv2d read_only", out, ref, 1e-5, [&] { kcnn::conv2d(exec, in, wt, bias, out, p, v::read_only<v::direct_coalesced>{}); });
    v::im2col_gemm gemm;
    kcnn::prepare(exec, gemm, p, in, wt, bias, out);
    check("conv2d im2col_gemm", out, ref, 1e-5, [&] { kcnn::conv2d(exec, in, wt, bias, out, p, gemm); });
    v::read_only<v::direct_constant> constant;
    kcnn::prepare(exec, constant, p, in, wt, bias, out);
    check("conv2d read_only<direct_constant>", out, ref, 1e-5, [&] { kcnn::conv2d(exec, in, wt, bias, out, p, constant); });
  }
  if constexpr (fixed) {  // conv2d implicit_gemm (compile-time layouts) and direct_vector (nhwc)
    // Grouped and ragged (k per group 13, 19 output columns: partial lane and pixel blocks),
    // strided and padded, 1x1, depthwise with 20 channels (a partial lane block), 5x5.
    const kcnn::conv2d_params shapes[] = {
        kcnn::conv2d_params::make({2, 6, 9, 19}, 26, 3, 3, 1, 1, 2), kcnn::conv2d_params::make({1, 5, 11, 23}, 17, 3, 3, 2, 1, 1),
        kcnn::conv2d_params::make({2, 9, 4, 5}, 33, 1, 1, 1, 0, 1), kcnn::conv2d_params::make({2, 20, 10, 12}, 20, 3, 3, 1, 1, 20),
        kcnn::conv2d_params::make({1, 3, 12, 12}, 8, 5, 5, 1, 2, 1),
        // Depthwise with whole blocks of 48 channels (the host's 3-vector tile): 7 output
        // columns (a partial block of 4 pixels), and strided.
        kcnn::conv2d_params::make({1, 48, 6, 7}, 48, 3, 3, 1, 1, 48), kcnn::conv2d_params::make({2, 96, 9, 9}, 96, 3, 3, 2, 1, 96),
        // Per-axis geometry (issue 32): TensorFlow "SAME" stride 2 (end pad only), Inception v3's
        // 1 x 7 padded 0 x 3, SSD-style dilation on wide rows, a dilated depthwise layer (the
        // host's sliding rows), ResNeXt-like groups of 4 (the host's grouped lanes), one input
        // channel (the merged (s, c) loop).
        kcnn::conv2d_params::make({1, 8, 12, 12}, 16, 3, 3, 2, 0, 1).with_geometry(2, 2, 0, 0, 1, 1),
        kcnn::conv2d_params::make({1, 8, 9, 20}, 12, 1, 7, 1, 0, 1).with_geometry(1, 1, 0, 3, 0, 3),
        kcnn::conv2d_params::make({1, 8, 15, 30}, 32, 3, 3, 1, 0, 1).with_geometry(1, 1, 3, 3, 3, 3, 3, 3),
        kcnn::conv2d_params::make({1, 64, 8, 26}, 64, 3, 3, 1, 0, 64).with_geometry(1, 1, 2, 2, 2, 2, 2, 2),
        kcnn::conv2d_params::make({1, 64, 8, 26}, 64, 5, 5, 1, 2, 64),
        kcnn::conv2d_params::make({2, 64, 9, 19}, 64, 3, 3, 1, 1, 16),
        kcnn::conv2d_params::make({1, 1, 10, 40}, 32, 3, 3, 1, 0, 1)};
    int seed = 40;
    for (const auto& p : shapes) {
      auto in = alloc<L>("in", p.input_dims()), wt = alloc<L>("wt", p.filter_dims()), out = alloc<L>("out", p.output_dims());
      Kokkos::View<float*> bias("bias", p.k);
      const auto x = sample(in.size(), seed++), w = sample(wt.size(), seed++), b = sample(p.k, seed++);
      kcnn::copy_in(in, x);
      kcnn::copy_in(wt, w);
      kcnn::copy_in(bias, b);
      const auto ref = kcnn::reference::conv2d(p, kcnn::logical(x, p.input_dims()), kcnn::logical(w, p.filter_dims()),
                                               [&](int k) { return b[k]; });
      const std::string shape = " k" + std::to_string(p.k) + " g" + std::to_string(p.groups);
      v::implicit_gemm ig;
      kcnn::prepare(exec, ig, p, in, wt, bias, out);
      check("conv2d implicit_gemm" + shape, out, ref, 1e-5, [&] { kcnn::conv2d(exec, in, wt, bias, out, p, ig); });
      if constexpr (std::is_same_v<L, kcnn::layout::nhwc>) {
        v::direct_vector dv;
        kcnn::prepare(exec, dv, p, in, wt, bias, out);
        check("conv2d direct_vector" + shape, out, ref, 1e-5, [&] { kcnn::conv2d(exec, in, wt, bias, out, p, dv); });
      }
    }
  }
  {  // fc
    const kcnn::fc_params p(3, 4, 3, 2, 5);
    auto in = alloc<L>("in", p.input_dims()), wt = alloc<L>("wt", p.weight_dims()), out = alloc<L>("out", p.output_dims());
    Kokkos::View<float*> bias("bias", p.k);
    const auto x = sample(in.size(), 4), w = sample(wt.size(), 5), b = sample(p.k, 6);
    kcnn::copy_in(in, x);
    kcnn::copy_in(wt, w);
    kcnn::copy_in(bias, b);
    const auto ref = kcnn::reference::conv2d(p, kcnn::logical(x, p.input_dims()), kcnn::logical(w, p.weight_dims()),
                                             [&](int k) { return b[k]; });
    check("fc default", out, ref, 1e-5, [&] { kcnn::fc(exec, in, wt, bias, out, p); });
    check("fc read_only", out, ref, 1e-5, [&] { kcnn::fc(exec, in, wt, bias, out, p, v::read_only<v::fc_direct_coalesced>{}); });
    v::fc_direct_constant constant;
    kcnn::prepare(exec, constant, p, in, wt, bias, out);
    check("fc fc_direct_constant", out, ref, 1e-5, [&] { kcnn::fc(exec, in, wt, bias, out, p, constant); });
    if constexpr (fixed) {
      v::fc_implicit_gemm ig;
      kcnn::prepare(exec, ig, p, in, wt, bias, out);
      check("fc fc_implicit_gemm", out, ref, 1e-5, [&] { kcnn::fc(exec, in, wt, bias, out, p, ig); });
    }
  }
  if constexpr (std::is_same_v<L, kcnn::layout::nchw> || std::is_same_v<L, kcnn::layout::nhwc>) {  // fc_direct_vector
    // 11 images (a full and a partial block of 8), 37 outputs (a full and a partial block of 32).
    const kcnn::fc_params p(11, 5, 3, 2, 37);
    auto in = alloc<L>("in", p.input_dims()), wt = alloc<L>("wt", p.weight_dims()), out = alloc<L>("out", p.output_dims());
    Kokkos::View<float*> bias("bias", p.k);
    const auto x = sample(in.size(), 7), w = sample(wt.size(), 8), b = sample(p.k, 9);
    kcnn::copy_in(in, x);
    kcnn::copy_in(wt, w);
    kcnn::copy_in(bias, b);
    const auto ref = kcnn::reference::conv2d(p, kcnn::logical(x, p.input_dims()), kcnn::logical(w, p.weight_dims()),
                                             [&](int k) { return b[k]; });
    v::fc_direct_vector dv;
    kcnn::prepare(exec, dv, p, in, wt, bias, out);
    check("fc fc_direct_vector", out, ref, 1e-5, [&] { kcnn::fc(exec, in, wt, bias, out, p, dv); });
  }
  {  // pool: max in ceil mode, average with padding
    const auto pm = kcnn::pool_params::max_pool({2, 3, 9, 8}, 3, 3, 2, 0, true);
    const auto pa = kcnn::pool_params::avg_pool({2, 3, 9, 8}, 3, 2, 2, 1);
    auto in = alloc<L>("in", pm.input_dims()), om = alloc<L>("om", pm.output_dims()), oa = alloc<L>("oa", pa.output_dims());
    const auto x = sample(in.size(), 7);
    kcnn::copy_in(in, x);
    const auto rm = kcnn::reference::pool(pm, kcnn::logical(x, pm.input_dims()));
    const auto ra = kcnn::reference::pool(pa, kcnn::logical(x, pa.input_dims()));
    check("pool max default", om, rm, 0.0, [&] { kcnn::pool(exec, in, om, pm); });
    check("pool avg read_only", oa, ra, 1e-6, [&] { kcnn::pool(exec, in, oa, pa, v::read_only<v::pool_naive>{}); });
  }
  {  // activation: elu with the default alpha, in place; leaky relu read-only
    const kcnn::dims4 d{2, 5, 3, 4};
    auto t = alloc<L>("t", d), out = alloc<L>("out", d);
    const auto x = sample(d.size(), 8);
    const auto elu = kcnn::activation_params::make(kcnn::activation_kind::elu);
    const auto leaky = kcnn::activation_params::leaky_relu(0.1f);
    check("activation elu default in place", t, kcnn::reference::activation(elu, d, kcnn::logical(x, d)), 1e-6, [&] {
      kcnn::copy_in(t, x);
      kcnn::activation(exec, t, t, elu);
    });
    kcnn::copy_in(t, x);
    check("activation leaky read_only", out, kcnn::reference::activation(leaky, d, kcnn::logical(x, d)), 1e-6,
          [&] { kcnn::activation(exec, t, out, leaky, v::read_only<v::activation_naive>{}); });
  }
  {  // lrn
    const auto p = kcnn::lrn_params::make({2, 7, 3, 3}, 3, 0.5f, 0.75f, 2.0f);
    auto in = alloc<L>("in", p.dims()), out = alloc<L>("out", p.dims());
    const auto x = sample(in.size(), 9);
    kcnn::copy_in(in, x);
    const auto ref = kcnn::reference::lrn(p, kcnn::logical(x, p.dims()));
    check("lrn default", out, ref, 1e-5, [&] { kcnn::lrn(exec, in, out, p); });
    check("lrn read_only", out, ref, 1e-5, [&] { kcnn::lrn(exec, in, out, p, v::read_only<v::lrn_naive>{}); });
  }
  {  // batchnorm
    const auto p = kcnn::batchnorm_params::make({2, 6, 3, 3}, 1e-5f, true);
    auto in = alloc<L>("in", p.dims()), out = alloc<L>("out", p.dims());
    Kokkos::View<float*> mean("mean", p.c), var("var", p.c), gamma("gamma", p.c), beta("beta", p.c);
    const auto x = sample(in.size(), 10), m = sample(p.c, 11), g = sample(p.c, 12), b = sample(p.c, 13);
    std::vector<float> s = sample(p.c, 14);
    for (auto& e : s) e = 0.25f + e * e;
    kcnn::copy_in(in, x);
    kcnn::copy_in(mean, m);
    kcnn::copy_in(var, s);
    kcnn::copy_in(gamma, g);
    kcnn::copy_in(beta, b);
    const auto at = [](const std::vector<float>& a) { return [&a](int c) { return a[c]; }; };
    const auto ref = kcnn::reference::batchnorm(p, kcnn::logical(x, p.dims()), at(m), at(s), at(g), at(b));
    check("batchnorm default", out, ref, 1e-5, [&] { kcnn::batchnorm(exec, in, mean, var, gamma, beta, out, p); });
    check("batchnorm read_only", out, ref, 1e-5,
          [&] { kcnn::batchnorm(exec, in, mean, var, gamma, beta, out, p, v::read_only<v::batchnorm_fused>{}); });
    v::batchnorm_folded_constant folded;
    kcnn::prepare(exec, folded, p, in, mean, var, gamma, beta, out);
    check("batchnorm folded_constant", out, ref, 1e-5,
          [&] { kcnn::batchnorm(exec, in, mean, var, gamma, beta, out, p, folded); });
    if constexpr (fixed) {
      v::batchnorm_vector vec;
      kcnn::prepare(exec, vec, p, in, mean, var, gamma, beta, out);
      check("batchnorm vector", out, ref, 1e-5, [&] { kcnn::batchnorm(exec, in, mean, var, gamma, beta, out, p, vec); });
    }
  }
  if constexpr (fixed) {  // softmax (its variants need a compile-time layout)
    const auto p = kcnn::softmax_params::make({2, 9, 2, 3});
    auto in = alloc<L>("in", p.dims()), out = alloc<L>("out", p.dims());
    const auto x = sample(in.size(), 15);
    kcnn::copy_in(in, x);
    const auto ref = kcnn::reference::softmax(p, kcnn::logical(x, p.dims()));
    check("softmax default", out, ref, 1e-5, [&] { kcnn::softmax(exec, in, out, p); });
    check("softmax read_only", out, ref, 1e-5, [&] { kcnn::softmax(exec, in, out, p, v::read_only<v::softmax_fused>{}); });
    v::softmax_multi_kernel multi;
    kcnn::prepare(exec, multi, p, in, out);
    check("softmax multi_kernel", out, ref, 1e-5, [&] { kcnn::softmax(exec, in, out, p, multi); });
  }
  {  // add, concat, transform (from nchw into this layout)
    const kcnn::dims4 d{2, 3, 4, 5}, d2{2, 2, 4, 5}, dc{2, 5, 4, 5};
    auto a = alloc<L>("a", d), b = alloc<L>("b", d), out = alloc<L>("out", d), part = alloc<L>("part", d2),
         cat = alloc<L>("cat", dc);
    kcnn::tensor4<float, kcnn::layout::nchw> src("src", d);
    const auto xa = sample(d.size(), 16), xb = sample(d.size(), 17), xp = sample(d2.size(), 18);
    kcnn::copy_in(a, xa);
    kcnn::copy_in(b, xb);
    kcnn::copy_in(part, xp);
    kcnn::copy_in(src, xa);
    const auto sum = kcnn::reference::add(d, kcnn::logical(xa, d), kcnn::logical(xb, d));
    check("add default", out, sum, 1e-6, [&] { kcnn::add(exec, a, b, out); });
    check("add read_only", out, sum, 1e-6, [&] { kcnn::add(exec, a, b, out, v::read_only<v::add_naive>{}); });
    const auto joined = kcnn::reference::concat({d, d2}, std::vector{kcnn::logical(xa, d), kcnn::logical(xp, d2)});
    using T = decltype(a);
    check("concat default", cat, joined, 0.0, [&] { kcnn::concat(exec, std::vector<T>{a, part}, cat); });
    check("concat read_only", cat, joined, 0.0,
          [&] { kcnn::concat(exec, std::vector<T>{a, part}, cat, v::read_only<v::concat_naive>{}); });
    const auto same = kcnn::reference::transform(d, kcnn::logical(xa, d));
    check("transform default", out, same, 0.0, [&] { kcnn::transform(exec, src, out); });
    check("transform tiled", out, same, 0.0, [&] { kcnn::transform(exec, src, out, v::transform_tiled{}); });
    check("transform read_only", out, same, 0.0, [&] { kcnn::transform(exec, a, out, v::read_only<v::transform_tiled>{}); });
  }
  if constexpr (fixed) {  // the vector variants, on runs long enough for full host lane blocks and a ragged end
    const kcnn::dims4 d{19, 37, 7, 35};
    auto in = alloc<L>("in", d), out = alloc<L>("out", d), b = alloc<L>("b", d);
    kcnn::tensor4<float, kcnn::layout::nchw> src("src", d);
    const auto x = sample(d.size(), 19), y = sample(d.size(), 20);
    kcnn::copy_in(in, x);
    kcnn::copy_in(b, y);
    kcnn::copy_in(src, x);
    const auto lx = kcnn::logical(x, d);
    const auto lp = kcnn::lrn_params::make(d, 5, 0.5f, 0.75f, 2.0f);
    check("lrn vector", out, kcnn::reference::lrn(lp, lx), 1e-5, [&] { kcnn::lrn(exec, in, out, lp, v::lrn_vector{}); });
    const auto sp = kcnn::softmax_params::make(d);
    check("softmax vector", out, kcnn::reference::softmax(sp, lx), 1e-5,
          [&] { kcnn::softmax(exec, in, out, sp, v::softmax_vector{}); });
    check("add vector", out, kcnn::reference::add(d, lx, kcnn::logical(y, d)), 1e-6,
          [&] { kcnn::add(exec, in, b, out, v::add_vector{}); });
    check("transform vector", out, kcnn::reference::transform(d, lx), 0.0,
          [&] { kcnn::transform(exec, src, out, v::transform_vector{}); });
    const kcnn::dims4 d2{19, 20, 7, 35}, dc{19, 57, 7, 35};
    auto part = alloc<L>("part", d2), cat = alloc<L>("cat", dc);
    const auto xp = sample(d2.size(), 21);
    kcnn::copy_in(part, xp);
    using T = decltype(in);
    check("concat vector", cat, kcnn::reference::concat({d, d2}, std::vector{lx, kcnn::logical(xp, d2)}), 0.0,
          [&] { kcnn::concat(exec, std::vector<T>{in, part}, cat, v::concat_vector{}); });
    const auto bp = kcnn::batchnorm_params::make(d, 1e-5f, true);
    Kokkos::View<float*> mean("mean", d.c), var("var", d.c), gamma("gamma", d.c), beta("beta", d.c);
    const auto m = sample(d.c, 22), g = sample(d.c, 23), be = sample(d.c, 24);
    std::vector<float> s = sample(d.c, 25);
    for (auto& e : s) e = 0.25f + e * e;
    kcnn::copy_in(mean, m);
    kcnn::copy_in(var, s);
    kcnn::copy_in(gamma, g);
    kcnn::copy_in(beta, be);
    const auto at = [](const std::vector<float>& a) { return [&a](int c) { return a[c]; }; };
    v::batchnorm_vector bv;
    kcnn::prepare(exec, bv, bp, in, mean, var, gamma, beta, out);
    check("batchnorm vector", out, kcnn::reference::batchnorm(bp, lx, at(m), at(s), at(g), at(be)), 1e-5,
          [&] { kcnn::batchnorm(exec, in, mean, var, gamma, beta, out, bp, bv); });
    for (const bool ceil_mode : {false, true}) {
      for (const auto kind : {kcnn::pool_kind::max, kcnn::pool_kind::avg}) {
        const auto pp = kcnn::pool_params::make(kind, d, 3, 3, 2, 1, ceil_mode);
        auto po = alloc<L>("po", pp.output_dims());
        check(kind == kcnn::pool_kind::max ? "pool max vector" : "pool avg vector", po, kcnn::reference::pool(pp, lx), 1e-6,
              [&] { kcnn::pool(exec, in, po, pp, v::pool_vector{}); });
        // The portable source on any backend (kcnn/tuning.hpp), composed with the read-only form.
        check(kind == kcnn::pool_kind::max ? "pool max vector portable" : "pool avg vector portable", po,
              kcnn::reference::pool(pp, lx), 1e-6,
              [&] { kcnn::pool(exec, in, po, pp, v::read_only<v::portable<v::pool_vector>>{}); });
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  every_op<kcnn::layout::nchw>();
  every_op<kcnn::layout::nhwc>();
  every_op<kcnn::layout::chwn>();
  every_op<kcnn::layout::strided>();
  Kokkos::finalize();
  std::printf("consumer: %d checks, %d failed\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
