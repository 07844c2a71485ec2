// Fills are seeded, never zero, and layout-independent; poison is NaN.
#include <kcnn/fill.hpp>

#include <gtest/gtest.h>

#include <cmath>

using namespace kcnn;

namespace {
const dims4 d{3, 4, 5, 6};

template <class L>
tensor4<float, L, Kokkos::HostSpace> filled(std::uint64_t seed) {
  tensor4<float, L> t("t", d);
  fill_random(t, seed);
  auto h = create_mirror_view(t);
  deep_copy(h, t);
  return tensor4<float, L, Kokkos::HostSpace>(h);
}
}  // namespace

TEST(Fill, NeverZeroAndBounded) {
  auto t = filled<layout::nchw>(7);
  int negatives = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    int n, c, h, w;
    d.logical_coords(i, n, c, h, w);
    const float v = t(n, c, h, w);
    ASSERT_GE(std::fabs(v), 0.125f);
    ASSERT_LE(std::fabs(v), 1.0f);
    negatives += v < 0;
  }
  // Signs are mixed (a fill of one sign would hide cancellation errors).
  EXPECT_GT(negatives, int(d.size()) / 4);
  EXPECT_LT(negatives, int(3 * d.size()) / 4);
}

TEST(Fill, SameSeedSameValuesOtherSeedOtherValues) {
  auto a = filled<layout::nchw>(11), b = filled<layout::nchw>(11), c = filled<layout::nchw>(12);
  int same = 0;
  for (int n = 0; n < d.n; ++n)
    for (int ch = 0; ch < d.c; ++ch)
      for (int h = 0; h < d.h; ++h)
        for (int w = 0; w < d.w; ++w) {
          ASSERT_EQ(a(n, ch, h, w), b(n, ch, h, w));
          same += a(n, ch, h, w) == c(n, ch, h, w);
        }
  EXPECT_LT(same, 5);
  // The value is the documented function of (seed, logical index).
  EXPECT_EQ(a(1, 2, 3, 4), fill_value(11, d.logical_index(1, 2, 3, 4)));
}

TEST(Fill, SameLogicalTensorInEveryLayout) {
  auto a = filled<layout::nchw>(5);
  auto b = filled<layout::nhwc>(5);
  auto c = filled<layout::chwn>(5);
  for (int n = 0; n < d.n; ++n)
    for (int ch = 0; ch < d.c; ++ch)
      for (int h = 0; h < d.h; ++h)
        for (int w = 0; w < d.w; ++w) {
          ASSERT_EQ(a(n, ch, h, w), b(n, ch, h, w));
          ASSERT_EQ(a(n, ch, h, w), c(n, ch, h, w));
        }
}

TEST(Fill, PoisonIsNaN) {
  tensor4<float, layout::nhwc> t("t", d);
  fill_random(t, 1);
  poison(t);
  auto h = create_mirror_view(t);
  deep_copy(h, t);
  EXPECT_TRUE(std::isnan(h(0, 0, 0, 0)));
  EXPECT_TRUE(std::isnan(h(2, 3, 4, 5)));
}
