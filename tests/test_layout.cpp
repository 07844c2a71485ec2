// Indexing of every layout against hand-computed storage offsets.
#include <kcnn/tensor.hpp>

#include <gtest/gtest.h>

using namespace kcnn;

namespace {
// dims: n=2, c=3, h=4, w=5
const dims4 d{2, 3, 4, 5};

template <class T>
std::ptrdiff_t offset(const T& t, int n, int c, int h, int w) {
  return &t(n, c, h, w) - t.view().data();
}
}  // namespace

TEST(Layout, NchwOffsets) {
  tensor4<float, layout::nchw, Kokkos::HostSpace> t("t", d);
  EXPECT_EQ(offset(t, 0, 0, 0, 1), 1);
  EXPECT_EQ(offset(t, 0, 0, 1, 0), 5);
  EXPECT_EQ(offset(t, 0, 1, 0, 0), 20);
  EXPECT_EQ(offset(t, 1, 0, 0, 0), 60);
  // (1,2,3,4) = 1*60 + 2*20 + 3*5 + 4
  EXPECT_EQ(offset(t, 1, 2, 3, 4), 119);
}

TEST(Layout, NhwcOffsets) {
  tensor4<float, layout::nhwc, Kokkos::HostSpace> t("t", d);
  EXPECT_EQ(offset(t, 0, 1, 0, 0), 1);   // c fastest
  EXPECT_EQ(offset(t, 0, 0, 0, 1), 3);   // then w (stride c)
  EXPECT_EQ(offset(t, 0, 0, 1, 0), 15);  // then h (stride w*c)
  EXPECT_EQ(offset(t, 1, 0, 0, 0), 60);
  // (1,2,3,4) = 1*60 + 3*15 + 4*3 + 2
  EXPECT_EQ(offset(t, 1, 2, 3, 4), 119);
  EXPECT_EQ(offset(t, 0, 2, 1, 1), 15 + 3 + 2);
}

TEST(Layout, ChwnOffsets) {
  tensor4<float, layout::chwn, Kokkos::HostSpace> t("t", d);
  EXPECT_EQ(offset(t, 1, 0, 0, 0), 1);   // n fastest
  EXPECT_EQ(offset(t, 0, 0, 0, 1), 2);   // w stride n
  EXPECT_EQ(offset(t, 0, 0, 1, 0), 10);  // h stride w*n
  EXPECT_EQ(offset(t, 0, 1, 0, 0), 40);  // c stride h*w*n
  // (1,2,3,4) = 2*40 + 3*10 + 4*2 + 1
  EXPECT_EQ(offset(t, 1, 2, 3, 4), 119);
  EXPECT_EQ(offset(t, 1, 1, 0, 2), 40 + 4 + 1);
}

TEST(Layout, StridedReproducesEveryFixedOrder) {
  // A runtime-strided tensor with a given order matches the compile-time layout's offsets.
  tensor4<float, layout::nhwc, Kokkos::HostSpace> fixed("f", d);
  tensor4<float, layout::strided, Kokkos::HostSpace> rt("s", d, layout::parse_order("nhwc"));
  tensor4<float, layout::chwn, Kokkos::HostSpace> fixed2("f2", d);
  tensor4<float, layout::strided, Kokkos::HostSpace> rt2("s2", d, layout::parse_order("chwn"));
  for (int n = 0; n < d.n; ++n)
    for (int c = 0; c < d.c; ++c)
      for (int h = 0; h < d.h; ++h)
        for (int w = 0; w < d.w; ++w) {
          ASSERT_EQ(offset(rt, n, c, h, w), offset(fixed, n, c, h, w));
          ASSERT_EQ(offset(rt2, n, c, h, w), offset(fixed2, n, c, h, w));
        }
  // An order no fixed layout has: w slowest, n fastest -> (n,c,h,w) = n + 2*c + 6*h + 24*w.
  tensor4<float, layout::strided, Kokkos::HostSpace> odd("o", d, layout::parse_order("whcn"));
  EXPECT_EQ(offset(odd, 1, 2, 3, 4), 1 + 2 * 2 + 3 * 6 + 4 * 24);
}

TEST(Layout, ParseOrderRejectsNonPermutations) {
  EXPECT_THROW(layout::parse_order("nchn"), std::invalid_argument);
  EXPECT_THROW(layout::parse_order("nch"), std::invalid_argument);
  EXPECT_THROW(layout::parse_order("nchx"), std::invalid_argument);
}

template <class L>
void check_storage_coords() {
  // Thread i of a coalesced mapping must land on storage address i.
  tensor4<float, L, Kokkos::HostSpace> t("t", d);
  for (std::size_t i = 0; i < d.size(); ++i) {
    int n, c, h, w;
    L::storage_coords(i, d, n, c, h, w);
    ASSERT_EQ(offset(t, n, c, h, w), std::ptrdiff_t(i)) << L::name << " i=" << i;
  }
}

TEST(Layout, StorageCoordsFollowMemoryOrder) {
  check_storage_coords<layout::nchw>();
  check_storage_coords<layout::nhwc>();
  check_storage_coords<layout::chwn>();
}

TEST(Layout, LogicalIndexRoundTrip) {
  for (std::size_t i = 0; i < d.size(); ++i) {
    int n, c, h, w;
    d.logical_coords(i, n, c, h, w);
    ASSERT_EQ(d.logical_index(n, c, h, w), i);
  }
  EXPECT_EQ(d.logical_index(1, 2, 3, 4), 119u);
}

TEST(Layout, MirrorKeepsLayoutAndData) {
  tensor4<float, layout::chwn> dev("dev", d);
  auto h = create_mirror_view(dev);
  h(1, 2, 3, 4) = 42.0f;
  deep_copy(dev, h);
  auto h2 = create_mirror_view(dev);
  deep_copy(h2, dev);
  EXPECT_EQ(h2(1, 2, 3, 4), 42.0f);
  EXPECT_EQ(h2.dims(), d);
}
