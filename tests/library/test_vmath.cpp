// kcnn/vmath.hpp against double precision over each function's range (host build: the
// polynomial forms; a CUDA build runs __expf and __logf on the device, not tested here).
#include <kcnn/vmath.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {

// Every n-th float in [lo, hi] plus the ends.
template <class F>
void sweep(float lo, float hi, int n, const F& f) {
  for (int i = 0; i <= n; ++i) f(lo + (hi - lo) * float(i) / float(n));
}

TEST(Vmath, ExpRelativeErrorOnItsRange) {
  double worst = 0;
  sweep(-87.0f, 88.0f, 200000, [&](float x) {
    const double ref = std::exp(double(x));
    worst = std::max(worst, std::abs(double(kcnn::vmath::exp(x)) - ref) / ref);
  });
  EXPECT_LT(worst, 3e-7);
  EXPECT_EQ(kcnn::vmath::exp(0.0f), 1.0f);
  // Clamped, never 0 or infinity.
  EXPECT_GT(kcnn::vmath::exp(-1000.0f), 0.0f);
  EXPECT_TRUE(std::isfinite(kcnn::vmath::exp(1000.0f)));
}

TEST(Vmath, LogAbsoluteError) {
  double worst = 0;
  for (float x = 1e-37f; x < 1e37f; x *= 1.0137f) worst = std::max(worst, std::abs(double(kcnn::vmath::log(x)) - std::log(double(x))));
  sweep(0.5f, 2.0f, 100000, [&](float x) { worst = std::max(worst, std::abs(double(kcnn::vmath::log(x)) - std::log(double(x)))); });
  EXPECT_LT(worst, 3e-7 * 88);  // |log x| <= 88: a relative 3e-7 of the largest
  EXPECT_EQ(kcnn::vmath::log(1.0f), 0.0f);
  const float near1 = 1.0f + 1e-6f;  // 1 + 2^-20: no cancellation near 1
  EXPECT_NEAR(kcnn::vmath::log(near1), std::log(double(near1)), 1e-12);
}

TEST(Vmath, PowAsLrnUsesIt) {
  double worst = 0;
  for (float b = 1.0f; b < 1e6f; b *= 1.001f) {
    const double ref = std::pow(double(b), -0.75);
    worst = std::max(worst, std::abs(double(kcnn::vmath::pow(b, -0.75f)) - ref) / ref);
  }
  EXPECT_LT(worst, 2e-6);
}

TEST(Vmath, ThreeQuarterPowerRelativeError) {
  double worst = 0;
#if defined(__NO_MATH_ERRNO__)
  const float top = 1e12f;  // square roots: exact to half an ulp each
#else
  const float top = 1e6f;  // pow's range (PowAsLrnUsesIt)
#endif
  for (float b = 1e-6f; b < top; b *= 1.001f) {
    const double ref = std::pow(double(b), -0.75);
    worst = std::max(worst, std::abs(double(kcnn::vmath::pow_minus_three_quarters(b)) - ref) / ref);
  }
  EXPECT_LT(worst, 2e-6);
  EXPECT_EQ(kcnn::vmath::pow_minus_three_quarters(1.0f), 1.0f);
  EXPECT_NEAR(kcnn::vmath::pow_minus_three_quarters(16.0f), 0.125, 1e-7);  // 16^-3/4 = 2^-3
}

TEST(Vmath, TanhAndSigmoidRelativeError) {
  double worst_tanh = 0, worst_sigmoid = 0;
  sweep(-20.0f, 20.0f, 400001, [&](float x) {
    const double t = std::tanh(double(x)), s = 1.0 / (1.0 + std::exp(-double(x)));
    if (x != 0.0f) worst_tanh = std::max(worst_tanh, std::abs(double(kcnn::vmath::tanh(x)) - t) / std::abs(t));
    worst_sigmoid = std::max(worst_sigmoid, std::abs(double(kcnn::vmath::sigmoid(x)) - s) / s);
  });
  EXPECT_LT(worst_tanh, 5e-7);  // 2.9e-7 measured (the rational form)
  EXPECT_LT(worst_sigmoid, 1e-6);
  // Near 0 tanh is x to within a few ulp (odd: no cancellation, as 1 - 2 / (e^2x + 1) would have).
  EXPECT_NEAR(kcnn::vmath::tanh(1e-5f), 1e-5f, 1e-12);
  EXPECT_EQ(kcnn::vmath::tanh(30.0f), 1.0f);
  EXPECT_EQ(kcnn::vmath::tanh(-30.0f), -1.0f);
}

}  // namespace
