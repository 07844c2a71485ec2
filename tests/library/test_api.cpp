// The library's API contract: data in and out (defect e of issue 15), params checks, argument
// checks of every entry point (std::invalid_argument naming the op, the operand and the
// mismatch), stateful variants and kcnn::prepare, and variant::read_only.
#include <kcnn/kcnn.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace kcnn;
using exec_t = Kokkos::DefaultExecutionSpace;
exec_t exec() { return exec_t(); }
using T4 = tensor4<float, layout::nhwc>;
using vec = Kokkos::View<float*>;

std::vector<float> iota(std::size_t n, float scale = 0.01f) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * float(int(i % 97) - 48);
  return v;
}

// Expects f to throw E whose message contains every one of `words`.
template <class E = std::invalid_argument>
void expect_throw(const std::function<void()>& f, const std::vector<std::string>& words) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning '" << words.front() << "'";
  } catch (const E& e) {
    for (const auto& w : words) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << "'" << w << "' not in: " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

// e. Data in and out in logical nchw order, every layout (runtime-strided included), through the
// host mirror when the tensor is on a device.
template <class L>
void round_trip() {
  const dims4 d{2, 3, 4, 5};
  tensor4<float, L> t = [&] {
    if constexpr (L::runtime_strided) return tensor4<float, L>("t", d, layout::parse_order("wnch"));
    else return tensor4<float, L>("t", d);
  }();
  const auto x = iota(d.size());
  copy_in(t, x);
  // The element (n, c, h, w) is where the layout puts it.
  auto h = create_mirror_view(t);
  deep_copy(h, t);
  EXPECT_EQ(h(1, 2, 3, 4), x[d.logical_index(1, 2, 3, 4)]) << L::name;
  EXPECT_EQ(h(0, 1, 2, 0), x[d.logical_index(0, 1, 2, 0)]) << L::name;
  EXPECT_EQ(copy_out(t), x) << L::name;
  std::vector<double> back(d.size());
  copy_out(t, back.data(), back.size());
  EXPECT_EQ(back[17], double(x[17]));
  expect_throw([&] { copy_in(t, x.data(), x.size() - 1); }, {"copy_in", "119", "120"});
  expect_throw([&] { copy_out(t, back.data(), back.size() + 1); }, {"copy_out", "121"});
}
TEST(LibraryData, CopyInCopyOutEveryLayout) {
  round_trip<layout::nchw>();
  round_trip<layout::nhwc>();
  round_trip<layout::chwn>();
  round_trip<layout::strided>();
  vec b("b", 7);
  const auto x = iota(7);
  copy_in(b, x);
  EXPECT_EQ(copy_out(b), x);
  expect_throw([&] { copy_in(b, iota(6)); }, {"copy_in", "6", "7"});
  // to_logical / from_logical still work on host tensors.
  auto h = create_mirror_view(T4("t", {1, 2, 1, 1}));
  from_logical(h, {1.0, 2.0});
  EXPECT_EQ(to_logical(h), (std::vector<double>{1.0, 2.0}));
}

TEST(LibraryParams, EveryParamsStructHasACheckNamingTheField) {
  EXPECT_EQ(conv2d_params::make({1, 4, 5, 5}, 2, 3, 3).check(), "");
  EXPECT_NE(conv2d_params::make({1, 4, 5, 5}, 2, 3, 3, 1, 0, 3).check().find("groups"), std::string::npos);
  EXPECT_EQ(fc_params(2, 3, 4, 4, 5).check(), "");
  EXPECT_NE(fc_params(conv2d_params::make({1, 4, 5, 5}, 2, 3, 3)).check().find("r: must equal h"), std::string::npos);
  EXPECT_EQ(pool_params::max_pool({1, 1, 4, 4}, 2, 2, 2).check(), "");
  EXPECT_NE(pool_params::max_pool({1, 1, 4, 4}, 2, 2, 2, 2).check().find("pad"), std::string::npos);
  EXPECT_NE(pool_params::avg_pool({1, 1, 4, 4}, 2, 2, 0).check().find("stride"), std::string::npos);
  EXPECT_EQ(activation_params::elu().check(), "");
  activation_params bad = activation_params::leaky_relu(INFINITY);
  EXPECT_NE(bad.check().find("alpha"), std::string::npos);
  bad.kind = activation_kind(42);
  EXPECT_NE(bad.check().find("kind"), std::string::npos);
  EXPECT_EQ(lrn_params::make({1, 8, 2, 2}).check(), "");
  EXPECT_NE(lrn_params::make({1, 8, 2, 2}, 4).check().find("size: must be odd"), std::string::npos);
  EXPECT_NE(lrn_params::make({1, 8, 2, 2}, 5, 1e-4f, 0.75f, 0.0f).check().find("k:"), std::string::npos);
  EXPECT_NE(lrn_params::make({1, 0, 2, 2}).check().find("c:"), std::string::npos);
  EXPECT_EQ(batchnorm_params::make({1, 8, 2, 2}).check(), "");
  EXPECT_NE(batchnorm_params::make({1, 8, 2, 2}, 0.0f).check().find("eps"), std::string::npos);
  EXPECT_NE(batchnorm_params::make({1, 8, -2, 2}).check().find("h:"), std::string::npos);
  EXPECT_EQ(softmax_params::classes(4, 10).check(), "");
  EXPECT_NE(softmax_params::classes(4, 0).check().find("c:"), std::string::npos);
  // Defaults applied by the library.
  EXPECT_FLOAT_EQ(activation_params::make(activation_kind::elu).effective_alpha(), 1.0f);
  EXPECT_FLOAT_EQ(activation_params::make(activation_kind::leaky_relu).effective_alpha(), 0.01f);
  EXPECT_FLOAT_EQ(activation_params::elu(0.5f).effective_alpha(), 0.5f);
  EXPECT_EQ(lrn_params{}.size, 5);
  EXPECT_FLOAT_EQ(batchnorm_params{}.eps, 1e-5f);
}

// Every entry point checks its params and every operand before launching.
TEST(LibraryChecks, EveryEntryPointRefusesMismatchedOperands) {
  const auto cp = conv2d_params::make({1, 4, 6, 6}, 8, 3, 3, 1, 1);
  T4 in("in", cp.input_dims()), wt("wt", cp.filter_dims()), out("out", cp.output_dims());
  T4 narrow("narrow", {1, 4, 6, 5});
  vec bias("bias", 8), short_bias("short", 7);
  // conv2d
  expect_throw([&] { conv2d(exec(), narrow, wt, bias, out, cp); }, {"kcnn::conv2d", "'in'", "w=5", "w=6"});
  expect_throw([&] { conv2d(exec(), in, in, bias, out, cp); }, {"kcnn::conv2d", "'wt'"});
  expect_throw([&] { conv2d(exec(), in, wt, short_bias, out, cp); }, {"kcnn::conv2d", "'bias'", "length 7", "8"});
  expect_throw([&] { conv2d(exec(), in, wt, bias, in, cp); }, {"kcnn::conv2d", "'out'"});
  auto bad_cp = cp;
  bad_cp.stride = 0;
  expect_throw([&] { conv2d(exec(), in, wt, bias, out, bad_cp); }, {"kcnn::conv2d", "invalid params", "stride"});
  expect_throw([&] { conv2d(exec(), in, wt, bias, out, cp, variant::gemm_pointwise{}); }, {"gemm_pointwise", "1x1"});
  // A tensor wrapped around a View whose extents disagree with its dims.
  T4 lying(T4::view_type("lying", 1, 6, 6, 3), cp.input_dims());
  expect_throw([&] { conv2d(exec(), lying, wt, bias, out, cp); }, {"kcnn::conv2d", "'in'", "extent"});
  // fc
  const fc_params fp(2, 3, 2, 2, 5);
  T4 fin("fin", fp.input_dims()), fwt("fwt", fp.weight_dims()), fout("fout", fp.output_dims());
  vec fb("fb", 5);
  expect_throw([&] { fc(exec(), fin, fin, fb, fout, fp); }, {"kcnn::fc", "'wt'"});
  expect_throw([&] { fc(exec(), fin, fwt, bias, fout, fp); }, {"kcnn::fc", "'bias'"});
  expect_throw([&] { fc(exec(), fin, fwt, fb, fin, fp); }, {"kcnn::fc", "'out'", "(n=2, c=5, h=1, w=1)"});
  expect_throw([&] { fc(exec(), in, wt, bias, out, fc_params(cp)); }, {"kcnn::fc", "r: must equal h"});
  // pool
  const auto pp = pool_params::max_pool(cp.input_dims(), 2, 2, 2);
  T4 pout("pout", pp.output_dims());
  expect_throw([&] { pool(exec(), narrow, pout, pp); }, {"kcnn::pool", "'in'"});
  expect_throw([&] { pool(exec(), in, in, pp); }, {"kcnn::pool", "'out'", "h=3"});
  // activation
  expect_throw([&] { activation(exec(), in, narrow, activation_params::relu()); }, {"kcnn::activation", "'in'"});
  expect_throw([&] { activation(exec(), in, in, activation_params::elu(INFINITY)); }, {"kcnn::activation", "alpha"});
  // lrn: the defect of issue 15, LRN looping over out but clipping with p.c
  const auto lp = lrn_params::make(cp.input_dims());
  T4 more_channels("more", {1, 5, 6, 6});
  expect_throw([&] { lrn(exec(), in, more_channels, lp); }, {"kcnn::lrn", "'out'", "c=5", "c=4"});
  expect_throw([&] { lrn(exec(), more_channels, in, lp, variant::lrn_sliding{}); }, {"kcnn::lrn", "'in'"});
  // batchnorm: every vector's length
  const auto bp = batchnorm_params::make(cp.input_dims());
  vec c4("c4", 4);
  expect_throw([&] { batchnorm(exec(), in, c4, c4, c4, bias, in, bp); }, {"kcnn::batchnorm", "'beta'", "length 8", "4"});
  expect_throw([&] { batchnorm(exec(), in, c4, bias, c4, c4, in, bp, variant::batchnorm_fused{}); }, {"'var'"});
  expect_throw([&] { batchnorm(exec(), in, c4, c4, c4, c4, narrow, bp); }, {"kcnn::batchnorm", "'out'"});
  // softmax
  const auto sp = softmax_params::make(cp.input_dims());
  expect_throw([&] { softmax(exec(), in, narrow, sp); }, {"kcnn::softmax", "'out'"});
  expect_throw([&] { softmax(exec(), narrow, in, sp); }, {"kcnn::softmax", "'in'"});
  // add
  expect_throw([&] { add(exec(), in, narrow, in); }, {"kcnn::add", "'b'"});
  expect_throw([&] { add(exec(), in, in, narrow); }, {"kcnn::add"});
  // concat: every part checked before anything runs
  T4 part("part", {1, 3, 6, 6}), big("big", {1, 7, 6, 6});
  expect_throw([&] { concat(exec(), std::vector<T4>{in, narrow}, big); }, {"kcnn::concat", "'inputs[1]'", "w=5"});
  expect_throw([&] { concat(exec(), std::vector<T4>{in, in}, big); }, {"kcnn::concat", "sum to 8", "c = 7"});
  expect_throw([&] { concat(exec(), std::vector<T4>{}, big); }, {"kcnn::concat", "no inputs"});
  // transform
  tensor4<float, layout::nchw> t_nchw("t", {1, 4, 6, 5});
  expect_throw([&] { transform(exec(), in, t_nchw); }, {"kcnn::transform"});
  Kokkos::fence();
}

// Stateful variants: an unprepared one throws std::logic_error naming kcnn::prepare; prepared
// for other params, std::invalid_argument; prepare is a no-op for stateless variants.
TEST(LibraryPrepare, StatefulVariantsNeedPrepareAndReportTheirWorkspace) {
  const auto cp = conv2d_params::make({2, 3, 5, 5}, 4, 3, 3, 1, 1);
  T4 in("in", cp.input_dims()), wt("wt", cp.filter_dims()), out("out", cp.output_dims());
  vec bias("bias", 4);
  fill_random(in, 1);
  fill_random(wt, 2);
  fill_random(bias, 3);
  variant::im2col_gemm ig;
  expect_throw<std::logic_error>([&] { conv2d(exec(), in, wt, bias, out, cp, ig); }, {"im2col_gemm", "kcnn::prepare"});
  EXPECT_EQ(workspace_bytes(ig), 0.0);
  prepare(exec(), ig, cp, in, wt, bias, out);
  EXPECT_GT(workspace_bytes(ig), 0.0);
  conv2d(exec(), in, wt, bias, out, cp, ig);
  auto other = cp;
  other.pad = 0;
  T4 out2("out2", other.output_dims());
  expect_throw([&] { conv2d(exec(), in, wt, bias, out2, other, ig); }, {"im2col_gemm", "other params"});
  variant::direct_constant dc;
  expect_throw<std::logic_error>([&] { conv2d(exec(), in, wt, bias, out, cp, dc); }, {"direct_constant", "kcnn::prepare"});
  variant::softmax_multi_kernel sm;
  const auto sp = softmax_params::make(cp.output_dims());
  expect_throw<std::logic_error>([&] { softmax(exec(), out, out2.dims() == out.dims() ? out2 : out, sp, sm); }, {"softmax_multi_kernel"});
  variant::batchnorm_vector br;
  variant::batchnorm_folded_constant bf;
  const auto bp = batchnorm_params::make(cp.output_dims());
  expect_throw<std::logic_error>([&] { batchnorm(exec(), out, bias, bias, bias, bias, out, bp, br); }, {"batchnorm_vector"});
  expect_throw<std::logic_error>([&] { batchnorm(exec(), out, bias, bias, bias, bias, out, bp, bf); }, {"batchnorm_folded_constant"});
  // Too many weights for constant memory: refused by prepare.
  const auto big = conv2d_params::make({1, 64, 3, 3}, 64, 3, 3);
  T4 bin("bin", big.input_dims()), bwt("bwt", big.filter_dims()), bout("bout", big.output_dims());
  vec bb("bb", 64);
  expect_throw([&] { prepare(exec(), dc, big, bin, bwt, bb, bout); }, {"direct_constant", "exceed the constant capacity"});
  // fc_direct_vector packs the weights in the input's feature order: a run with an input in
  // another layout is refused.
  const fc_params fp(2, 3, 2, 2, 5);
  T4 fin("fin", fp.input_dims()), fwt("fwt", fp.weight_dims()), fout("fout", fp.output_dims());
  tensor4<float, layout::nchw> fin_nchw("fin_nchw", fp.input_dims());
  vec fb("fb", 5);
  variant::fc_direct_vector fv;
  expect_throw<std::logic_error>([&] { fc(exec(), fin, fwt, fb, fout, fp, fv); }, {"fc_direct_vector", "kcnn::prepare"});
  prepare(exec(), fv, fp, fin, fwt, fb, fout);
  EXPECT_GT(workspace_bytes(fv), 0.0);
  fc(exec(), fin, fwt, fb, fout, fp, fv);
  expect_throw([&] { fc(exec(), fin_nchw, fwt, fb, fout, fp, fv); }, {"fc_direct_vector", "another layout", "nchw"});
  // Stateless: prepare does nothing, workspace 0.
  variant::direct_coalesced plain;
  prepare(exec(), plain, cp, in, wt, bias, out);
  EXPECT_EQ(workspace_bytes(plain), 0.0);
  Kokkos::fence();
}

// variant::read_only<V> works for every op and refuses an input aliasing the output.
TEST(LibraryReadOnly, RefusesInPlace) {
  const dims4 d{1, 4, 3, 3};
  T4 t("t", d), u("u", d);
  fill_random(t, 1);
  activation(exec(), t, t, activation_params::relu());  // in place is fine without read_only
  expect_throw([&] { activation(exec(), t, t, activation_params::relu(), variant::read_only<variant::activation_naive>{}); },
               {"kcnn::activation", "read_only", "aliases"});
  activation(exec(), t, u, activation_params::relu(), variant::read_only<variant::activation_naive>{});
  const auto sp = softmax_params::make(d);
  variant::read_only<variant::softmax_multi_kernel> sm;
  prepare(exec(), sm, sp, t, u);
  EXPECT_GT(workspace_bytes(sm), 0.0);
  softmax(exec(), t, u, sp, sm);
  Kokkos::fence();
  const auto y = copy_out(u);
  double sum = 0;
  for (int c = 0; c < 4; ++c) sum += y[d.logical_index(0, c, 1, 1)];
  EXPECT_NEAR(sum, 1.0, 1e-6);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Listing (CTest's discovery at build time) needs no device: nothing is initialised.
  if (::testing::GTEST_FLAG(list_tests)) return RUN_ALL_TESTS();
  Kokkos::initialize(argc, argv);
  const int rc = RUN_ALL_TESTS();
  Kokkos::finalize();
  return rc;
}
