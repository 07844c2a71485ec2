// The portable lane mapping (kcnn/lanes.hpp), the code a GPU runs, run here on the host: its walks
// give every element of a run of any length to exactly one lane batch (or, where a walk may repeat
// a run's last elements, at least one and nothing outside the run), and every memory-bound variant's
// portable source (variant::portable) computes what its naive variant computes, at every run length
// 1..257 in every compile-time layout, at misaligned starts, in place where the op allows it.
#include <kcnn/activation.hpp>
#include <kcnn/batchnorm.hpp>
#include <kcnn/eltwise.hpp>
#include <kcnn/lanes.hpp>
#include <kcnn/lrn.hpp>
#include <kcnn/pool.hpp>
#include <kcnn/softmax.hpp>
#include <kcnn/transform.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace kcnn;

namespace {
using counts_view = Kokkos::View<int*, Kokkos::HostSpace>;
using host_exec = Kokkos::DefaultHostExecutionSpace;

// One row of `len` elements (nhwc: the channels of one pixel), walked by for_lanes<1, Overlap, B>
// from `begin` (B: the body's row_batch, as LRN's); each element visited adds one to its count.
template <bool Overlap, int B>
struct counting_row {
  static constexpr int row_batch = B;
  counts_view counts;
  int begin;
  bool skip_repeats = false;  // count only the elements kcnn::lane_repeats does not mark
  KOKKOS_INLINE_FUNCTION void row(const Kokkos::TeamPolicy<host_exec>::member_type& m, const coords4&) const {
    for_lanes<1, Overlap, B>(m, begin, int(counts.extent(0)), [&](const int i, auto width) {
      for_each_lane(width, [&](const int l) {
        if (!skip_repeats || !lane_repeats(width, l)) Kokkos::atomic_add(&counts(i + lane_offset(width, l)), 1);
      });
    });
  }
};

template <bool Overlap, int B = lane_batch_size>
std::vector<int> count_row(const int len, const int begin, const bool skip_repeats = false) {
  counts_view counts("counts", std::size_t(len));
  for_each_row<layout::nhwc, -1, tunings::portable>("count", host_exec(), dims4{1, len, 1, 1}, len,
                                                    counting_row<Overlap, B>{counts, begin, skip_repeats});
  Kokkos::fence();
  return std::vector<int>(counts.data(), counts.data() + len);
}

struct counting_span {
  counts_view counts;
  plane_geometry g;
  template <class Count>
  KOKKOS_INLINE_FUNCTION void span(int o, std::size_t i, const Count count) const {
    for_each_lane(count, [&](const int l) {
      Kokkos::atomic_add(&counts(g.offset(o, 0, i + std::size_t(lane_offset(count, l)))), 1);
    });
  }
};
}  // namespace

// for_lanes: batches of lane_batch_size (or a body's row_batch, reduce_batch_size) elements a
// slot count apart, the rest one by one (every element once), or a last batch repeating the run's
// last element (every element at least once, none outside the run); from a start inside the run too.
template <int B>
void check_for_lanes_cover() {
  for (int len = 0; len <= 257; ++len)
    for (const int begin : {0, 1, 3}) {
      const std::vector<int> once = count_row<false, B>(len, begin);
      const std::vector<int> overlap = count_row<true, B>(len, begin);
      const std::vector<int> unique = count_row<true, B>(len, begin, true);
      for (int i = 0; i < len; ++i) {
        // Leaving out what lane_repeats marks leaves every element exactly once.
        ASSERT_EQ(unique[std::size_t(i)], i < begin ? 0 : 1) << "B " << B << " len " << len << " begin " << begin << " i " << i;
        ASSERT_EQ(once[std::size_t(i)], i < begin ? 0 : 1) << "B " << B << " len " << len << " begin " << begin << " i " << i;
        if (i < begin) ASSERT_EQ(overlap[std::size_t(i)], 0) << "B " << B << " len " << len << " begin " << begin << " i " << i;
        else ASSERT_GE(overlap[std::size_t(i)], 1) << "B " << B << " len " << len << " begin " << begin << " i " << i;
      }
    }
}
TEST(PortableLanes, ForLanesCoverEveryElementOfEveryLength) {
  check_for_lanes_cover<lane_batch_size>();
  check_for_lanes_cover<reduce_batch_size>();
  // The lanes a row takes: a power of two covering its batches, at most a warp. AlexNet's LRN
  // over 96 channels: 24 batches of 4 on 32 lanes, or 12 of 8 on 16 (two rows a warp).
  EXPECT_EQ(lanes_for_run(96), 32);
  EXPECT_EQ(lanes_for_run(96, reduce_batch_size), 16);
  EXPECT_EQ(lanes_for_run(256, reduce_batch_size), 32);
  EXPECT_EQ(lanes_for_run(7, reduce_batch_size), 1);
  EXPECT_EQ(lanes_for_run(9, reduce_batch_size), 2);
  // An Overlap walk's slots: whole sectors of floats past 8 (96 channels in batches of 8: 16).
  EXPECT_EQ(overlap_slots(96, reduce_batch_size), 16);
  EXPECT_EQ(overlap_slots(64, reduce_batch_size), 8);
  EXPECT_EQ(overlap_slots(55, lane_batch_size), 16);
  EXPECT_EQ(overlap_slots(7, lane_batch_size), 2);
  EXPECT_EQ(overlap_slots(256, lane_batch_size), 64);
  EXPECT_EQ((detail::lane_batch_of<counting_row<true, reduce_batch_size>>()), reduce_batch_size);
  EXPECT_EQ(detail::lane_batch_of<counting_span>(), lane_batch_size);
}

// lanes_reduce: the batched sum and max over [0, len) of every length, exact on small integers.
TEST(PortableLanes, LanesReduceSumsAndMaximaOfEveryLength) {
  for (int len = 0; len <= 257; ++len) {
    Kokkos::View<float[2], Kokkos::HostSpace> result("result");
    launch_teams("reduce", host_exec(), 1, 1, 32, 0, KOKKOS_LAMBDA(const Kokkos::TeamPolicy<host_exec>::member_type& m) {
      const float sum = lanes_reduce<1, sum_op>(m, len, [&](const int i) { return float(i + 1); });
      const float mx = lanes_reduce<1, max_op>(m, len, [&](const int i) { return float((i * 37) % 101); });
      Kokkos::single(Kokkos::PerTeam(m), [&]() { result(0) = sum, result(1) = mx; });
    });
    Kokkos::fence();
    float expect_max = max_op::identity;
    for (int i = 0; i < len; ++i) expect_max = std::max(expect_max, float((i * 37) % 101));
    EXPECT_EQ(result(0), float(len * (len + 1) / 2)) << len;
    EXPECT_EQ(result(1), expect_max) << len;
  }
}

// for_each_span: a batch per lane, 1,024 elements per team; plane lengths around every boundary.
TEST(PortableLanes, SpansCoverEveryElementOnceOrMore) {
  for (const std::size_t length : {1u, 3u, 4u, 5u, 31u, 127u, 128u, 129u, 1023u, 1024u, 1025u, 2100u}) {
    plane_geometry g{3, 1, length};
    counts_view counts("counts", 3 * length);
    for_each_span<tunings::portable>("spans", host_exec(), g, counting_span{counts, g});
    Kokkos::fence();
    for (std::size_t e = 0; e < 3 * length; ++e) ASSERT_GE(counts(e), 1) << "length " << length << " element " << e;
  }
}

// chunks_in_batches: every chunk of a run of any length once, on any lane count; each chunk's four
// values moved whole (load then store).
TEST(PortableLanes, ChunkWalksTakeEveryChunkOnce) {
  for (const int lanes : {1, 4, 32})
    for (int chunks = 0; chunks <= 70; ++chunks) {
      Kokkos::View<int*, Kokkos::HostSpace> seen("seen", 4 * 71);
      launch_teams("chunks", host_exec(), 1, 1, lanes, 0, KOKKOS_LAMBDA(const Kokkos::TeamPolicy<host_exec>::member_type& m) {
        chunks_in_batches(
            m, chunks, [&](const int i) { return chunk16<int>{{4 * i, 4 * i + 1, 4 * i + 2, 4 * i + 3}}; },
            [&](const int i, const chunk16<int>& v) {
              for (int k = 0; k < 4; ++k) Kokkos::atomic_add(&seen(4 * i + k), v.v[k] + 1);
            });
      });
      Kokkos::fence();
      for (int e = 0; e < 4 * 71; ++e)
        ASSERT_EQ(seen(e), e < 4 * chunks ? e + 1 : 0) << chunks << " chunks on " << lanes << " lanes, element " << e;
    }
  EXPECT_EQ(chunk_batch_size * 16, reduce_batch_size * 4);  // a chunk batch's bytes: a reduction's
}

// team_rows_in_batches (the transposes' read phase), reduce_in_batches and copy_in_batches.
TEST(PortableLanes, BatchedTileReadAndLaneLoopsTakeEveryElementOnce) {
  for (const int rows : {0, 1, 3, 4, 5, 8, 31, 32, 33})
    for (const int lanes : {1, 7, 32}) {
      Kokkos::View<int**, Kokkos::HostSpace> tile("tile", 33, 32);
      launch_teams("tile", host_exec(), 1, 8, 32, 0, KOKKOS_LAMBDA(const Kokkos::TeamPolicy<host_exec>::member_type& m) {
        team_rows_in_batches(
            m, rows, lanes, [&](const int r, const int i) { return float(r * 100 + i); },
            [&](const int r, const int i, const float v) { Kokkos::atomic_add(&tile(r, i), int(v) + 1); });
      });
      Kokkos::fence();
      for (int r = 0; r < 33; ++r)
        for (int i = 0; i < 32; ++i)
          ASSERT_EQ(tile(r, i), r < rows && i < lanes ? r * 100 + i + 1 : 0) << rows << " x " << lanes << " at " << r << ", " << i;
    }
  for (int begin = 0; begin < 3; ++begin)
    for (int end = begin; end <= 40; ++end) {
      float expect = 0.0f;
      for (int i = begin; i < end; ++i) expect += float(i);
      EXPECT_EQ(reduce_in_batches<sum_op>(begin, end, [](const int i) { return float(i); }), expect);
      EXPECT_EQ(reduce_in_batches<max_op>(begin, end, [](const int i) { return float((i * 7) % 11); }),
                end > begin ? [&] {
                  float m = max_op::identity;
                  for (int i = begin; i < end; ++i) m = std::max(m, float((i * 7) % 11));
                  return m;
                }()
                            : max_op::identity);
      std::vector<int> seen(41, 0);
      copy_in_batches(begin, end, [](const int i) { return float(i); }, [&](const int i, const float v) { seen[std::size_t(i)] += int(v) + 1; });
      for (int i = 0; i < 41; ++i) ASSERT_EQ(seen[std::size_t(i)], i >= begin && i < end ? i + 1 : 0) << begin << ".." << end;
    }
}

namespace {
// A tensor of layout L over storage whose first element is `offset` floats past an allocation
// (a misaligned start for offset 1: no 16-byte alignment), filled with f.
template <class L>
using unmanaged = tensor4<float, L, Kokkos::MemoryUnmanaged>;

template <class L, class F>
unmanaged<L> placed(std::vector<float>& storage, const dims4& d, const std::size_t offset, const F& f) {
  storage.assign(d.size() + offset + 4, -77.0f);
  unmanaged<L> t(typename unmanaged<L>::view_type(storage.data() + offset, L::make(d)), d);
  for (int n = 0; n < d.n; ++n)
    for (int c = 0; c < d.c; ++c)
      for (int y = 0; y < d.h; ++y)
        for (int x = 0; x < d.w; ++x) t(n, c, y, x) = float(f(n, c, y, x));
  return t;
}
template <class T>
std::vector<double> values(const T& t) {
  Kokkos::fence();
  std::vector<double> v;
  const dims4 d = t.dims();
  for (int n = 0; n < d.n; ++n)
    for (int c = 0; c < d.c; ++c)
      for (int y = 0; y < d.h; ++y)
        for (int x = 0; x < d.w; ++x) v.push_back(t(n, c, y, x));
  return v;
}
void expect_close(const std::vector<double>& got, const std::vector<double>& want, const double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i]))) << what << " at " << i;
}

// Dims whose run (L's contiguous axis) has `len` elements, the other axes small.
template <class L>
dims4 run_dims(const int len) {
  constexpr axis run = run_axis<L>;
  return dims4{run == axis::n ? len : 2, run == axis::c ? len : 3, 2, run == axis::w ? len : 3};
}
const auto va = [](int n, int c, int y, int x) { return float((n * 31 + c * 7 + y * 5 + x * 3) % 17) * 0.25f - 2.0f; };
const auto vb = [](int n, int c, int y, int x) { return float((n * 11 + c * 13 + y * 3 + x) % 9) * 0.5f; };

template <class L>
void check_layout(const int len, const std::size_t offset) {
  const dims4 d = run_dims<L>(len);
  const std::string at = std::string(L::name) + " run " + std::to_string(len) + " offset " + std::to_string(offset);
  std::vector<float> sa, sb, sx, sy;
  const auto a = placed<L>(sa, d, offset, va), b = placed<L>(sb, d, offset, vb);
  const auto x = placed<L>(sx, d, offset, [](int, int, int, int) { return 0.0; });
  const auto y = placed<L>(sy, d, offset, [](int, int, int, int) { return 0.0; });

  kcnn::add(host_exec(), a, b, x, variant::add_naive{});
  kcnn::add(host_exec(), a, b, y, variant::portable<variant::add_vector>{});
  expect_close(values(y), values(x), 0.0, "add_vector " + at);
  std::vector<float> sz;
  const auto z = placed<L>(sz, d, offset, va);  // in place: out is the first operand
  kcnn::add(host_exec(), z, b, z, variant::portable<variant::add_vector>{});
  expect_close(values(z), values(x), 0.0, "add_vector in place " + at);
  EXPECT_EQ(sz.back(), -77.0f) << "add_vector wrote past the tensor " << at;

  const dims4 part{d.n, 1, d.h, d.w}, rest{d.n, d.c - 1, d.h, d.w};
  if (rest.c > 0) {
    std::vector<float> s1, s2;
    const std::vector<unmanaged<L>> parts{placed<L>(s1, part, offset, va), placed<L>(s2, rest, offset, vb)};
    kcnn::concat(host_exec(), parts, x, variant::concat_naive{});
    kcnn::concat(host_exec(), parts, y, variant::portable<variant::concat_vector>{});
    expect_close(values(y), values(x), 0.0, "concat_vector " + at);
  }

  batchnorm_params bp = batchnorm_params::make(d, 1e-3f, true);
  Kokkos::View<float*, Kokkos::HostSpace> mean("mean", std::size_t(d.c)), var("var", std::size_t(d.c)), gamma("gamma", std::size_t(d.c)),
      beta("beta", std::size_t(d.c));
  Kokkos::parallel_for(
      "params", Kokkos::RangePolicy<host_exec>(0, d.c), KOKKOS_LAMBDA(const int c) {
        mean(c) = 0.1f * float(c % 5), var(c) = 1.0f + 0.5f * float(c % 3), gamma(c) = 0.5f + 0.25f * float(c % 4),
        beta(c) = float(c % 7) - 3.0f;
      });
  kcnn::batchnorm(host_exec(), a, mean, var, gamma, beta, x, bp, variant::batchnorm_naive{});
  variant::portable<variant::batchnorm_vector> bn;
  kcnn::prepare(host_exec(), bn, bp, a, mean, var, gamma, beta, y);
  kcnn::batchnorm(host_exec(), a, mean, var, gamma, beta, y, bp, bn);
  expect_close(values(y), values(x), 1e-6, "batchnorm_vector " + at);

  for (const pool_kind k : {pool_kind::max, pool_kind::avg})
    for (const int r : {2, 3}) {
      pool_params p;
      p.n = d.n, p.c = d.c, p.h = d.h + 3, p.w = d.w + 3, p.r = r, p.s = r, p.stride = 2, p.pad = r == 3 ? 1 : 0;
      p.kind = k;
      std::vector<float> si, so1, so2;
      const auto in = placed<L>(si, p.input_dims(), offset, va);
      const auto o1 = placed<L>(so1, p.output_dims(), offset, [](int, int, int, int) { return 0.0; });
      const auto o2 = placed<L>(so2, p.output_dims(), offset, [](int, int, int, int) { return 0.0; });
      kcnn::pool(host_exec(), in, o1, p, variant::pool_naive{});
      kcnn::pool(host_exec(), in, o2, p, variant::portable<variant::pool_vector>{});
      expect_close(values(o2), values(o1), k == pool_kind::max ? 0.0 : 1e-6,
                   "pool_vector " + std::to_string(r) + "x" + std::to_string(r) + " " + at);
    }

  const lrn_params lp = lrn_params::make(d, 5, 1e-2f, 0.75f, 1.0f);
  kcnn::lrn(host_exec(), a, x, lp, variant::lrn_naive{});
  kcnn::lrn(host_exec(), a, y, lp, variant::portable<variant::lrn_vector>{});
  expect_close(values(y), values(x), 1e-5, "lrn_vector " + at);

  const softmax_params sp = softmax_params::make(d);
  kcnn::softmax(host_exec(), a, x, sp, variant::softmax_fused{});
  kcnn::softmax(host_exec(), a, y, sp, variant::portable<variant::softmax_vector>{});
  expect_close(values(y), values(x), 1e-5, "softmax_vector " + at);

  const auto to = [&](auto lt) {
    using LO = decltype(lt);
    std::vector<float> s1, s2;
    const auto t1 = placed<LO>(s1, d, offset, [](int, int, int, int) { return 0.0; });
    const auto t2 = placed<LO>(s2, d, offset, [](int, int, int, int) { return 0.0; });
    kcnn::transform(host_exec(), a, t1, variant::transform_naive{});
    kcnn::transform(host_exec(), a, t2, variant::portable<variant::transform_vector>{});
    expect_close(values(t2), values(t1), 0.0, std::string("transform_vector to ") + LO::name + " " + at);
  };
  to(layout::nchw{});
  to(layout::nhwc{});
  to(layout::chwn{});
}
}  // namespace

// Each memory-bound variant's portable source against its naive variant (an independent
// formulation: one thread per element, coordinates per element) at run lengths 1..257 (every
// tail of a lane batch, runs shorter and longer than a warp), 16-byte aligned and misaligned.
// On the host backend, whatever the build's default execution space: the same source a GPU runs.
TEST(PortableLanes, MemoryBoundVariantsMatchTheNaiveOnesAtEveryRunLength) {
  for (int len = 1; len <= 257; ++len)
    for (const std::size_t offset : {std::size_t(0), std::size_t(1)}) {
      if (offset == 1 && len % 16 != 1 && len > 20) continue;  // misaligned: short runs and a spread of long ones
      check_layout<layout::nchw>(len, offset);
      check_layout<layout::nhwc>(len, offset);
      check_layout<layout::chwn>(len, offset);
    }
}

namespace {
// storage16: the test means the 16-byte form; offsets that keep 16 bytes must start every
// tensor on 16 bytes (the allocator's alignment), or the case would test only the element walk.
// A tensor that hands out values, not references, as CUDA's read-only handles do (their loads go
// through __ldg): concat_vector's nhwc row then loads through lane_ptr's proxy.
template <class L>
struct by_value : unmanaged<L> {
  using reference_type = float;
  by_value() = default;
  explicit by_value(const unmanaged<L>& t) : unmanaged<L>(t) {}
  KOKKOS_FORCEINLINE_FUNCTION float operator()(int n, int c, int h, int w) const { return unmanaged<L>::operator()(n, c, h, w); }
};

template <class L, class In = unmanaged<L>>
void check_concat(const std::vector<int>& channels, const std::size_t offset, const bool storage16 = false) {
  const int n = 6, h = 3, w = 5;  // chwn's run (n) takes a lane batch and a tail
  int total = 0;
  for (const int c : channels) total += c;
  std::vector<std::vector<float>> storage(channels.size());
  std::vector<In> parts;
  int first = 0;
  for (std::size_t k = 0; k < channels.size(); ++k) {
    // Input k's element (n, c, y, x) holds a value naming its output channel first + c.
    const int f = first;
    parts.push_back(In(placed<L>(storage[k], dims4{n, channels[k], h, w}, offset,
                                 [f](int i, int c, int y, int x) { return double(1000 * (f + c) + 100 * i + 10 * y + x); })));
    first += channels[k];
  }
  std::vector<float> so;
  const auto out = placed<L>(so, dims4{n, total, h, w}, offset, [](int, int, int, int) { return -1.0; });
  if (storage16 && offset % 4 == 0) {
    ASSERT_TRUE(detail::aligned16(out)) << "the output's storage starts off 16 bytes";
    for (const auto& t : parts) ASSERT_TRUE(detail::aligned16(t)) << "an input's storage starts off 16 bytes";
  }
  if constexpr (std::is_same_v<In, unmanaged<L>>) kcnn::concat(host_exec(), parts, out, variant::portable<variant::concat_vector>{});
  else variant::concat_vector{}.run_tuned<tunings::portable>(host_exec(), parts, out, no_params{});  // not a tensor4: past the API's checks
  Kokkos::fence();
  const std::string at = std::string(L::name) + " " + std::to_string(channels.size()) + " inputs, offset " + std::to_string(offset);
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < total; ++c)
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          ASSERT_EQ(out(i, c, y, x), float(1000 * c + 100 * i + 10 * y + x)) << at << " at (" << i << ", " << c << ", " << y << ", " << x << ")";
  EXPECT_EQ(so.back(), -77.0f) << "concat_vector wrote past the output " << at;
}
}  // namespace

// concat_vector's portable form takes up to eight inputs per launch: any count of inputs (one, a
// launch's worth, one more, several launches) of uneven channels lands each input's channels at
// its offset, hand-checked element by element.
TEST(PortableLanes, ConcatPlacesEveryInputInLaunchesOfEight) {
  const std::vector<std::vector<int>> counts{
      {7}, {1, 2, 3}, {4, 1, 4, 1, 4, 1, 4, 1}, {3, 1, 2, 5, 1, 1, 2, 3, 9}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2}};
  for (const auto& channels : counts)
    for (const std::size_t offset : {std::size_t(0), std::size_t(1)}) {
      check_concat<layout::nchw>(channels, offset);
      check_concat<layout::nhwc>(channels, offset);
      check_concat<layout::chwn>(channels, offset);
    }
}

// nhwc's three sources of a pixel's channels: 16-byte chunks (every input's and the output's
// pixels on 16 bytes, multiples of four channels: kcnn::chunks_in_batches), the pointer walk
// element by element where chunks are refused (a start 4 or 8 bytes off 16, one input of an odd
// count), and inputs that hand out values (lane_ptr's proxy, as CUDA's read-only handles); a
// second launch whose slab starts at channel 60 (nine inputs).
TEST(PortableLanes, ConcatMovesAlignedPixelsInChunks) {
  const std::vector<std::vector<int>> counts{{4, 8},       {32, 64, 96, 32}, {12, 4, 4, 20, 8, 4, 4, 4, 16},
                                             {8, 3, 4},    {4},              {128, 4}};
  for (const auto& channels : counts)
    for (const std::size_t offset : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(4)}) {
      check_concat<layout::nhwc>(channels, offset, true);
      check_concat<layout::nhwc, by_value<layout::nhwc>>(channels, offset);
    }
}

namespace {
template <class L>
void check_pool_geometry(const pool_params& p, const std::string& what) {
  std::vector<float> si, so1, so2;
  const auto in = placed<L>(si, p.input_dims(), 0, va);
  const auto o1 = placed<L>(so1, p.output_dims(), 0, [](int, int, int, int) { return 0.0; });
  const auto o2 = placed<L>(so2, p.output_dims(), 0, [](int, int, int, int) { return 0.0; });
  kcnn::pool(host_exec(), in, o1, p, variant::pool_naive{});
  kcnn::pool(host_exec(), in, o2, p, variant::portable<variant::pool_vector>{});
  expect_close(values(o2), values(o1), p.kind == pool_kind::max ? 0.0 : 1e-6, std::string("pool_vector ") + L::name + " " + what);
  EXPECT_EQ(so2.back(), -77.0f) << "pool_vector wrote past the output " << L::name << " " << what;
}
}  // namespace

// pool_vector's portable form in nhwc and chwn takes groups of output rows per lane, their
// windows' union loaded once: every geometry against the naive kernel, output heights 1 to 7
// (groups with a missing last row), windows written out and windows past the written-out size,
// strides larger than the window (rows between the windows read by neither), asymmetric pads.
TEST(PortableLanes, PoolVectorTakesEveryWindowGeometry) {
  struct geometry {
    int r, s, sh, sw, pt, pl, pb, pr;
    bool ceil;
  };
  const geometry gs[] = {{3, 3, 2, 2, 1, 1, 1, 1, false}, {3, 3, 2, 2, 0, 0, 1, 1, false}, {2, 2, 2, 2, 0, 0, 0, 0, false},
                         {3, 3, 1, 1, 1, 1, 1, 1, false}, {3, 3, 2, 2, 0, 0, 0, 0, true},  {1, 1, 2, 2, 0, 0, 0, 0, false},
                         {2, 2, 3, 3, 0, 0, 0, 0, false}, {5, 5, 1, 1, 2, 2, 2, 2, false}, {3, 2, 1, 2, 1, 0, 1, 0, false},
                         {7, 7, 1, 1, 0, 0, 0, 0, false}, {3, 3, 2, 2, 1, 1, 1, 1, true},  {2, 2, 2, 2, 0, 0, 1, 1, true}};
  for (const geometry& g : gs)
    for (const int h : {1, 2, 3, 7, 8, 13})
      for (const pool_kind k : {pool_kind::max, pool_kind::avg}) {
        if (h + g.pt + g.pb < g.r) continue;
        pool_params p = pool_params::make(k, dims4{2, 5, h, 9}, g.r, g.s, 1, 0, g.ceil).with_geometry(g.sh, g.sw, g.pt, g.pl, g.pb, g.pr);
        if (p.p() < 1 || p.q() < 1) continue;
        const std::string what = std::to_string(g.r) + "x" + std::to_string(g.s) + "/" + std::to_string(g.sh) + "," +
                                 std::to_string(g.sw) + " h " + std::to_string(h) + (k == pool_kind::max ? " max" : " avg");
        check_pool_geometry<layout::nchw>(p, what);
        check_pool_geometry<layout::nhwc>(p, what);
        check_pool_geometry<layout::chwn>(p, what);
      }
}

namespace {
template <class L>
void check_pool_column(const pool_params& p, const int rows_per_lane, const std::string& what) {
  std::vector<float> si, so1, so2;
  const auto in = placed<L>(si, p.input_dims(), 0, va);
  // Outputs prefilled with a value no window yields (va's are in [-2, 2]): one left unwritten fails.
  const auto o1 = placed<L>(so1, p.output_dims(), 0, [](int, int, int, int) { return -99.0; });
  const auto o2 = placed<L>(so2, p.output_dims(), 0, [](int, int, int, int) { return -99.0; });
  kcnn::pool(host_exec(), in, o1, p, variant::pool_naive{});
  variant::portable<variant::pool_vector> v;
  v.rows_per_lane = rows_per_lane;
  kcnn::pool(host_exec(), in, o2, p, v);
  const std::string at = std::string("pool_vector ") + L::name + " " + what + ", rows per lane " + std::to_string(rows_per_lane);
  expect_close(values(o2), values(o1), p.kind == pool_kind::max ? 0.0 : 1e-6, at);
  EXPECT_EQ(so2.back(), -77.0f) << "pool_vector wrote past the output " << at;
}
}  // namespace

// pool_vector's portable 3 x 3 / 2 form in nhwc and chwn walks a column of output rows per lane,
// the rows two windows share kept in registers and the padding read from clamped addresses:
// against the naive kernel for every group size (automatic, 1, a size that divides no height,
// 8, more rows than the output has), groups that end at the last row or past it, pads at the
// top and bottom (symmetric, SAME's end-only, ceil mode's clipped last window), column strides
// other than the row stride, channel and image counts that end in a partial lane batch.
TEST(PortableLanes, PoolVectorWalksColumnsOf3x3Stride2Windows) {
  struct geometry {
    int sw, pt, pl, pb, pr;
    bool ceil;
  };
  const geometry gs[] = {{2, 0, 0, 0, 0, false}, {2, 1, 1, 1, 1, false}, {2, 0, 0, 1, 1, false},
                         {2, 0, 0, 0, 0, true},  {1, 1, 0, 1, 2, false}, {3, 2, 2, 0, 0, true}};
  for (const geometry& g : gs)
    for (const int h : {3, 4, 9, 16, 23, 38})
      for (const int rows : {0, 1, 3, 8, 64})
        for (const pool_kind k : {pool_kind::max, pool_kind::avg}) {
          const int nc = 5 + h % 4;  // 5..8 images and channels: full and partial lane batches
          pool_params p = pool_params::make(k, dims4{nc, nc + 1, h, 11}, 3, 3, 2, 0, g.ceil).with_geometry(2, g.sw, g.pt, g.pl, g.pb, g.pr);
          if (!p.check().empty()) continue;
          const std::string what = "3x3/2," + std::to_string(g.sw) + " pads " + std::to_string(g.pt) + std::to_string(g.pl) +
                                   std::to_string(g.pb) + std::to_string(g.pr) + (g.ceil ? " ceil" : "") + " h " + std::to_string(h) +
                                   (k == pool_kind::max ? " max" : " avg");
          check_pool_column<layout::nhwc>(p, rows, what);
          check_pool_column<layout::chwn>(p, rows, what);
        }
}

// rows_per_lane outside 0..64 is refused, naming the field, on the portable path and the host
// tuning's alike.
TEST(PortableLanes, PoolVectorRefusesABadRowsPerLane) {
  const pool_params p = pool_params::max_pool(dims4{1, 4, 9, 9}, 3, 3, 2);
  std::vector<float> si, so;
  const auto in = placed<layout::nhwc>(si, p.input_dims(), 0, va);
  const auto out = placed<layout::nhwc>(so, p.output_dims(), 0, [](int, int, int, int) { return 0.0; });
  const auto refused = [&](const auto& v, const char* path) {
    try {
      kcnn::pool(host_exec(), in, out, p, v);
      ADD_FAILURE() << "rows_per_lane " << v.rows_per_lane << " accepted (" << path << ")";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("rows_per_lane"), std::string::npos) << e.what();
    }
  };
  for (const int bad : {-1, 65}) {
    variant::portable<variant::pool_vector> portable;
    portable.rows_per_lane = bad;
    refused(portable, "portable");
    variant::pool_vector tuned;
    tuned.rows_per_lane = bad;
    refused(tuned, "default tuning");
  }
}
