// The library defects of issue 15, part 5 (a-d; e, data in and out, is in test_api.cpp). Each
// test failed on the code before its fix. They use the explicit variant tags, which existed
// before, so the same tests ran against the old headers.
#include <kcnn/kcnn.hpp>

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace kcnn;
using exec_t = Kokkos::DefaultExecutionSpace;
exec_t exec() { return exec_t(); }

template <class L>
tensor4<float, L> make(const char* label, const dims4& d) {
  if constexpr (L::runtime_strided) return tensor4<float, L>(label, d, layout::parse_order("hcwn"));
  else return tensor4<float, L>(label, d);
}

template <class T>
std::vector<double> host_values(const T& t) {
  auto h = create_mirror_view(t);
  deep_copy(h, t);
  return to_logical(h);
}

// a. A default-constructed elu (and leaky_relu) used alpha 0: elu was relu, leaky_relu was relu.
TEST(LibraryDefects, ActivationDefaultAlphaIsTheKindsDefault) {
  const dims4 d{1, 2, 3, 4};
  tensor4<float, layout::nchw> in("in", d), out("out", d);
  fill_random(in, 7);
  const auto x = host_values(in);
  for (const activation_kind kind : {activation_kind::elu, activation_kind::leaky_relu}) {
    activation_params a;  // alpha left at its default
    a.kind = kind;
    poison(out);
    activation(exec(), in, out, a);
    Kokkos::fence();
    const auto y = host_values(out);
    int negatives = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double want = x[i] > 0 ? x[i] : kind == activation_kind::elu ? std::exp(x[i]) - 1.0 : 0.01 * x[i];
      negatives += x[i] < 0;
      EXPECT_NEAR(y[i], want, 1e-6) << activation_name(kind) << " at " << i << ", x = " << x[i];
    }
    EXPECT_GT(negatives, 0);
  }
}

// b. LRN with an even size summed size + 1 channels; even sizes are now refused (check() and
// every entry point), as Caffe and kcnn's suite loader refuse them.
TEST(LibraryDefects, LrnEvenSizeIsRefused) {
  lrn_params p;
  p.n = 1; p.c = 6; p.h = 2; p.w = 2; p.size = 4;
  tensor4<float, layout::nchw> in("in", p.dims()), out("out", p.dims());
  fill_random(in, 3);
  for (int v = 0; v < 2; ++v) {
    try {
      if (v == 0) lrn(exec(), in, out, p, variant::lrn_naive{});
      else lrn(exec(), in, out, p, variant::lrn_sliding{});
      ADD_FAILURE() << "variant " << v << ": an even LRN size was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("size"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("odd"), std::string::npos) << e.what();
    }
  }
  Kokkos::fence();
}

// c. The tiled transform between two tensors of the same layout wrote past `int others[2]` and
// crashed. Every variant, every (from, to) pair, same pairs included, against the reference.
template <class V, class From, class To>
void transform_pair(const char* v) {
  const dims4 d{3, 35, 5, 33};  // not multiples of the 32-wide tiles
  auto a = make<From>("a", d);
  auto b = make<To>("b", d);
  fill_random(a, 11);
  poison(b);
  transform(exec(), a, b, V{});
  Kokkos::fence();
  const auto want = host_values(a);
  const auto got = host_values(b);
  ASSERT_EQ(got.size(), want.size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) bad += !(got[i] == want[i]);
  EXPECT_EQ(bad, 0u) << v << " " << From::name << " -> " << To::name;
}
template <class V, class From>
void transform_from(const char* v) {
  transform_pair<V, From, layout::nchw>(v);
  transform_pair<V, From, layout::nhwc>(v);
  transform_pair<V, From, layout::chwn>(v);
  transform_pair<V, From, layout::strided>(v);
}
template <class V>
void transform_all_pairs(const char* v) {
  transform_from<V, layout::nchw>(v);
  transform_from<V, layout::nhwc>(v);
  transform_from<V, layout::chwn>(v);
  transform_from<V, layout::strided>(v);
}
TEST(LibraryDefects, TransformEveryVariantEveryLayoutPair) {
  transform_all_pairs<variant::transform_naive>("naive");
  transform_all_pairs<variant::transform_tiled>("tiled");
}

// d. Ceil-mode pooling with a window smaller than the stride produced windows starting past the
// input (pad 0): max wrote -3.4e38 and average NaN. The output size is now clipped as PyTorch
// clips it, for every pad; no output of an accepted shape is -FLT_MAX or NaN.
struct pool_shape {
  int h, w, r, s, stride, pad, p, q;  // p, q: PyTorch's output size
};
template <class L>
void pool_all_variants(const pool_params& p, const std::string& what) {
  auto in = make<L>("in", p.input_dims());
  auto out = make<L>("out", p.output_dims());
  fill_random(in, 5);
  const auto x = host_values(in);
  const auto want = reference::pool(p, [&](int n, int c, int h, int w) {
    return x[p.input_dims().logical_index(n, c, h, w)];
  });
  const int variants = L::runtime_strided ? 1 : 4;
  for (int v = 0; v < variants; ++v) {
    poison(out);
    if (v == 0) pool(exec(), in, out, p, variant::pool_naive{});
    if constexpr (!L::runtime_strided) {
      if (v == 1) pool(exec(), in, out, p, variant::pool_regtile<1, 2>{});
      if (v == 2) pool(exec(), in, out, p, variant::pool_regtile<2, 2>{});
      if (v == 3) pool(exec(), in, out, p, variant::pool_tiled{});
    }
    Kokkos::fence();
    const auto got = host_values(out);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_TRUE(std::isfinite(got[i]) && got[i] > -1e30) << what << " " << L::name << " variant " << v << " at " << i << ": " << got[i];
      ASSERT_TRUE(std::isfinite(want[i])) << what << " reference at " << i << ": " << want[i];
      ASSERT_NEAR(got[i], want[i], 1e-6) << what << " " << L::name << " variant " << v << " at " << i;
    }
  }
}
TEST(LibraryDefects, CeilPoolingNeverStartsAWindowPastTheInput) {
  const pool_shape shapes[] = {
      {5, 5, 1, 1, 3, 0, 2, 2},  // window < stride, pad 0: Caffe's ceil gave 3, the last window at 6 >= 5
      {4, 7, 1, 2, 2, 0, 2, 4},  // window < stride along h, = stride along w
      {8, 8, 2, 2, 3, 0, 3, 3},  // window < stride, the last window starts inside
      {5, 5, 2, 2, 3, 1, 2, 2},  // window < stride, pad 1: clipped before too
      {6, 6, 2, 2, 4, 1, 2, 2},  // window < stride, pad 1
      {5, 5, 2, 2, 2, 0, 3, 3},  // window = stride, pad 0
      {7, 6, 3, 3, 3, 1, 3, 3},  // window = stride, pad 1
      {32, 32, 3, 3, 2, 0, 16, 16},  // cifar10_quick pool1: Caffe's ceil, unchanged
  };
  for (const auto& sh : shapes)
    for (const pool_kind kind : {pool_kind::max, pool_kind::avg}) {
      pool_params p;
      p.n = 2; p.c = 3; p.h = sh.h; p.w = sh.w; p.r = sh.r; p.s = sh.s;
      p.stride = sh.stride; p.pad = sh.pad; p.ceil_mode = true; p.kind = kind;
      const std::string what = std::string(kind == pool_kind::max ? "max" : "avg") + " h" + std::to_string(sh.h) +
                               " w" + std::to_string(sh.w) + " r" + std::to_string(sh.r) + " s" +
                               std::to_string(sh.s) + " /" + std::to_string(sh.stride) + " pad" + std::to_string(sh.pad);
      ASSERT_EQ(p.check(), "") << what;
      EXPECT_EQ(p.p(), sh.p) << what;
      EXPECT_EQ(p.q(), sh.q) << what;
      pool_all_variants<layout::nchw>(p, what);
      pool_all_variants<layout::nhwc>(p, what);
      pool_all_variants<layout::chwn>(p, what);
      pool_all_variants<layout::strided>(p, what);
    }
}

}  // namespace
