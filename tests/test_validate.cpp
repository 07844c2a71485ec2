// compare(): relative L2 error, NaN/unwritten detection, tolerance.
#include <kcnn/validate.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace kcnn;

namespace {
struct vec_accessor {
  const std::vector<double>* v;
  dims4 d;
  double operator()(int n, int c, int h, int w) const { return (*v)[d.logical_index(n, c, h, w)]; }
};
}  // namespace

TEST(Validate, ExactMatchPasses) {
  const dims4 d{1, 2, 2, 2};
  std::vector<double> ref = {1, 2, 3, 4, 5, 6, 7, 8};
  const auto r = compare(vec_accessor{&ref, d}, d, ref, 0.0);
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.rel_l2, 0.0);
}

TEST(Validate, RelativeL2ErrorIsComputedAndJudged) {
  const dims4 d{1, 1, 1, 2};
  std::vector<double> ref = {3, 4};  // ||ref|| = 5
  std::vector<double> out = {3, 4.05};
  const auto r = compare(vec_accessor{&out, d}, d, ref, 1e-4);
  EXPECT_NEAR(r.rel_l2, 0.01, 1e-12);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.message.find("relative L2 error"), std::string::npos);
  EXPECT_TRUE(compare(vec_accessor{&out, d}, d, ref, 0.02).passed);
}

TEST(Validate, NanOrUnwrittenFailsWhateverTheTolerance) {
  const dims4 d{1, 1, 2, 2};
  std::vector<double> ref = {1, 2, 3, 4};
  std::vector<double> out = {1, 2, std::numeric_limits<double>::quiet_NaN(), 4};
  const auto r = compare(vec_accessor{&out, d}, d, ref, 1e9);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.non_finite, 1u);
  EXPECT_NE(r.message.find("(n=0,c=0,h=1,w=0)"), std::string::npos) << r.message;
  out[2] = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(compare(vec_accessor{&out, d}, d, ref, 1e9).passed);
}
