// The GPU execution model against answers known by hand (gpu-model build only): kernels written
// with kcnn's mapping layer, run on Serial in their CUDA geometry, their traced accesses counted.
#include <gpu_model.hpp>
#include "../implicit_gemm_check.hpp"
#include <kcnn/conv2d.hpp>
#include <kcnn/eltwise.hpp>
#include <kcnn/fc.hpp>
#include <kcnn/fill.hpp>
#include <kcnn/map.hpp>
#include <kcnn/reference/conv2d.hpp>
#include <kcnn/softmax.hpp>
#include <kcnn/validate.hpp>

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <typeinfo>
#include <fstream>
#include <string>
#include <vector>

namespace {

using exec = Kokkos::Serial;
using model_device = kcnn::model::device_description;

const model_device& h100() {
  static const auto devices = kcnn::model::load_devices(kcnn::model::default_devices_file());
  return kcnn::model::find_device(devices, "h100_sxm");
}

// A device with a 1 MiB L2 (and 4 SMs), so that tensors a few times its size stay small.
model_device small_l2() {
  model_device d = h100();
  d.name = "small_l2";
  d.sms = 4;
  d.l2_bytes = 1 << 20;
  return d;
}

kcnn::model::trace_limits everything() {
  kcnn::model::trace_limits t;
  t.max_accesses_per_launch = std::size_t(1) << 30;
  return t;
}

TEST(GpuModel, CoalescedFloatCopyIsFourSectorsPerRequest) {
  const std::size_t n = 1 << 14;
  Kokkos::View<float*> a("a", n), b("b", n);
  kcnn::model::session s(h100(), everything());
  kcnn::launch_range("copy", exec(), n, KOKKOS_LAMBDA(const std::size_t i) { b(i) = a(i); });
  const auto c = s.finish(0);
  ASSERT_EQ(c.launches.size(), 1u);
  EXPECT_EQ(c.launches[0].blocks, long(n / kcnn::gpu_range_block));
  EXPECT_EQ(c.launches[0].threads_per_block, kcnn::gpu_range_block);
  EXPECT_DOUBLE_EQ(c.ld_requests, double(n / 32));
  EXPECT_DOUBLE_EQ(c.ld_sectors / c.ld_requests, 4.0);
  EXPECT_DOUBLE_EQ(c.st_requests, double(n / 32));
  EXPECT_DOUBLE_EQ(c.st_sectors / c.st_requests, 4.0);
}

// One element per thread: a warp has one load in flight, so each wave of resident warps waits
// one DRAM latency (Little's law: what held kcnn's copy and relu to a third of the H200's
// bandwidth). The same copy with 4 elements per thread has 4 in flight, in a quarter of the waves.
TEST(GpuModel, OneElementPerThreadHasOneLoadInFlightPerWarp) {
  const std::size_t wave = std::size_t(h100().sms) * std::size_t(h100().max_threads_per_sm);
  const std::size_t n = 3 * wave;
  Kokkos::View<float*> a("a", n), b("b", n);
  const auto one = [&] {
    kcnn::model::session s(h100(), everything());
    kcnn::launch_range("copy", exec(), n, KOKKOS_LAMBDA(const std::size_t i) { b(i) = a(i); });
    return s.finish(0);
  }();
  const std::size_t q = n / 4;
  const auto four = [&] {
    kcnn::model::session s(h100(), everything());
    kcnn::launch_range("copy4", exec(), q, KOKKOS_LAMBDA(const std::size_t i) {
      const float x0 = a(i), x1 = a(i + q), x2 = a(i + 2 * q), x3 = a(i + 3 * q);
      b(i) = x0, b(i + q) = x1, b(i + 2 * q) = x2, b(i + 3 * q) = x3;
    });
    return s.finish(0);
  }();
  const auto& f1 = one.launches.at(0);
  const auto& f4 = four.launches.at(0);
  EXPECT_DOUBLE_EQ(f1.max_warp_loads, 1.0);
  EXPECT_DOUBLE_EQ(f1.loads_in_flight, 1.0);
  EXPECT_DOUBLE_EQ(f4.max_warp_loads, 4.0);
  EXPECT_DOUBLE_EQ(f4.loads_in_flight, 4.0);
  // Every load misses both caches (nothing is read twice): three waves of one DRAM latency, and
  // one wave (3/4 of the GPU's warps) of four loads, four in flight.
  EXPECT_NEAR(f1.t_latency, 3 * h100().mem_latency_s, 1e-3 * h100().mem_latency_s);
  EXPECT_NEAR(f4.t_latency, 1 * h100().mem_latency_s, 1e-3 * h100().mem_latency_s);
  EXPECT_DOUBLE_EQ(one.dram_bytes, four.dram_bytes);
}

TEST(GpuModel, StrideThirtyTwoFloatReadIsThirtyTwoSectorsPerRequest) {
  const std::size_t n = 1 << 12;
  Kokkos::View<float*> a("a", n * 32), b("b", n);
  kcnn::model::session s(h100(), everything());
  kcnn::launch_range("strided", exec(), n, KOKKOS_LAMBDA(const std::size_t i) { b(i) = a(i * 32); });
  const auto c = s.finish(0);
  EXPECT_DOUBLE_EQ(c.ld_requests, double(n / 32));
  EXPECT_DOUBLE_EQ(c.ld_sectors / c.ld_requests, 32.0);
  EXPECT_DOUBLE_EQ(c.st_sectors / c.st_requests, 4.0);  // the store stays coalesced
}

// A 32 x 32 tile through team scratch: written by rows (thread y, lane x: word y * pitch + x),
// read by columns (word x * pitch + y). Block (32, 32): warp y is thread row y.
struct scratch_transpose {
  using scratch = Kokkos::View<float*, exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  Kokkos::View<float*> in, out;
  int pitch;
  template <class Member>
  void operator()(const Member& m) const {
    const auto tile = kcnn::team_scratch<scratch>(m, std::size_t(32 * pitch));
    kcnn::team_rows(m, 32, [&](const int y) {
      kcnn::vector_lanes(m, 0, 32, [&](const int x) { tile(y * pitch + x) = in(y * 32 + x); });
    });
    kcnn::team_barrier(m);
    kcnn::team_rows(m, 32, [&](const int y) {
      kcnn::vector_lanes(m, 0, 32, [&](const int x) { out(y * 32 + x) = tile(x * pitch + y); });
    });
  }
};

kcnn::model::case_figures transpose_figures(int pitch) {
  Kokkos::View<float*> in("in", 1024), out("out", 1024);
  Kokkos::parallel_for(Kokkos::RangePolicy<exec>(0, 1024), KOKKOS_LAMBDA(const int i) { in(i) = float(i); });
  kcnn::model::session s(h100(), everything());
  kcnn::launch_teams("transpose", exec(), 1, 32, 32, scratch_transpose::scratch::shmem_size(32 * pitch),
                     scratch_transpose{in, out, pitch});
  auto c = s.finish(0);
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  for (int y = 0; y < 32; ++y)
    for (int x = 0; x < 32; ++x) EXPECT_EQ(h(y * 32 + x), float(x * 32 + y)) << "the transpose itself is wrong";
  return c;
}

TEST(GpuModel, ScratchTransposeHasThirtyTwoWayConflictsAtPitchThirtyTwoAndNoneAtThirtyThree) {
  const auto c32 = transpose_figures(32);
  ASSERT_EQ(c32.launches.size(), 1u);
  EXPECT_EQ(c32.launches[0].threads_per_block, 1024);
  EXPECT_DOUBLE_EQ(c32.smem_requests, 64.0);            // 32 warps write, 32 read
  EXPECT_DOUBLE_EQ(c32.smem_wavefronts, 32.0 + 32 * 32);  // writes conflict-free, reads 32-way
  const auto c33 = transpose_figures(33);
  EXPECT_DOUBLE_EQ(c33.smem_requests, 64.0);
  EXPECT_DOUBLE_EQ(c33.smem_wavefronts, 64.0);  // every request one wavefront
  EXPECT_DOUBLE_EQ(c33.ld_sectors / c33.ld_requests, 4.0);
  EXPECT_DOUBLE_EQ(c33.st_sectors / c33.st_requests, 4.0);
}

// Values carried in the functor: constant memory on CUDA (kcnn/constant.hpp).
struct constant_read {
  float w[64];
  float* out;
  bool divergent;
  void operator()(const std::size_t i) const { out[i] = divergent ? w[i % 32] : w[i / 32]; }
};

kcnn::model::case_figures constant_figures(bool divergent, std::size_t n) {
  Kokkos::View<float*> out("out", n);
  constant_read f{};
  for (int k = 0; k < 64; ++k) f.w[k] = float(k);
  f.out = out.data();
  f.divergent = divergent;
  kcnn::model::session s(h100(), everything());
  kcnn::launch_range("constant", exec(), n, f);
  return s.finish(0);
}

TEST(GpuModel, ConstantReadsSerialiseOverDistinctAddresses) {
  const std::size_t n = 256, warps = n / 32;
  // Every other constant request (the flag, the output pointer) is warp-uniform: one address.
  const auto uniform = constant_figures(false, n);
  EXPECT_GT(uniform.const_requests, 0);
  EXPECT_DOUBLE_EQ(uniform.const_words, uniform.const_requests);
  const auto divergent = constant_figures(true, n);
  EXPECT_DOUBLE_EQ(divergent.const_requests, uniform.const_requests);
  EXPECT_DOUBLE_EQ(divergent.const_words - divergent.const_requests, 31.0 * double(warps));  // one 32-address read per warp
}

TEST(GpuModel, StreamingFourTimesTheL2MovesItsCompulsoryBytesFromDram) {
  const model_device d = small_l2();
  const std::size_t n = std::size_t(d.l2_bytes) / sizeof(float) * 2;  // in + out = 4x the L2
  Kokkos::View<float*> a("a", n), b("b", n);
  kcnn::model::session s(d, everything());
  kcnn::launch_range("stream", exec(), n, KOKKOS_LAMBDA(const std::size_t i) { b(i) = 2.0f * a(i); });
  const auto c = s.finish(0);
  const double compulsory = 2.0 * double(n) * sizeof(float);
  EXPECT_NEAR(c.dram_bytes, compulsory, 0.02 * compulsory);
  EXPECT_NEAR(c.launches[0].dram_read_bytes, compulsory / 2, 0.01 * compulsory);
}

TEST(GpuModel, TheL2KeepsWhatFitsAndLosesWhatDoesNot) {
  const model_device d = small_l2();
  const auto second_pass_dram = [&](std::size_t bytes) {
    const std::size_t n = bytes / sizeof(float);
    Kokkos::View<float*> a("a", n), sum("sum", n / 32);
    kcnn::model::session s(d, everything());
    for (int pass = 0; pass < 2; ++pass)  // two launches read the same tensor
      kcnn::launch_range("read", exec(), n / 32, KOKKOS_LAMBDA(const std::size_t i) {
        float t = 0;
        for (int k = 0; k < 32; ++k) t += a(i + (n / 32) * std::size_t(k));
        sum(i) = t;
      });
    const auto c = s.finish(0);
    return c.launches[1].dram_read_bytes;
  };
  EXPECT_EQ(second_pass_dram(std::size_t(d.l2_bytes) / 4), 0.0);  // a quarter of the L2: all hits
  const double big = 4 * d.l2_bytes;
  EXPECT_NEAR(second_pass_dram(std::size_t(big)), big, 0.05 * big);  // 4x the L2: LRU loses it all
}

TEST(GpuModel, TracingASampleOfTheBlocksKeepsThePerRequestFigures) {
  const std::size_t n = 1 << 16;
  Kokkos::View<float*> a("a", n * 2), b("b", n);
  const auto run = [&](kcnn::model::trace_limits limits) {
    kcnn::model::session s(h100(), limits);
    kcnn::launch_range("half_strided", exec(), n, KOKKOS_LAMBDA(const std::size_t i) { b(i) = a(2 * i); });
    return s.finish(0);
  };
  const auto all = run(everything());
  kcnn::model::trace_limits few;
  few.max_accesses_per_launch = 1 << 12;
  const auto sample = run(few);
  EXPECT_EQ(all.traced_blocks, all.blocks);
  EXPECT_LT(sample.traced_blocks, sample.blocks);
  EXPECT_DOUBLE_EQ(sample.ld_sectors / sample.ld_requests, all.ld_sectors / all.ld_requests);
  EXPECT_DOUBLE_EQ(sample.ld_sectors / sample.ld_requests, 8.0);
  EXPECT_DOUBLE_EQ(sample.ld_requests, all.ld_requests);  // scaled to all blocks
}

TEST(GpuModel, TracingASampleCountsWhatEveryBlockSharesOnce) {
  // Every block reads the same 64 KiB table and its own part of a stream: a sample's DRAM bytes,
  // extrapolated from its last blocks, match the full trace's (the table read once, not per block).
  const std::size_t n = 1 << 18, table = 1 << 14;
  Kokkos::View<float*> a("a", n), w("w", table), b("b", n);
  const auto run = [&](kcnn::model::trace_limits limits) {
    kcnn::model::session s(h100(), limits);
    kcnn::launch_range("shared_table", exec(), n, KOKKOS_LAMBDA(const std::size_t i) {
      float t = a(i);
      for (std::size_t k = 0; k < 8; ++k) t += w((i * 8 + k) % table);
      b(i) = t;
    });
    return s.finish(0);
  };
  const auto all = run(everything());
  kcnn::model::trace_limits few;
  few.max_accesses_per_launch = 1 << 16;
  const auto sample = run(few);
  ASSERT_LT(sample.traced_blocks, sample.blocks / 4);
  const double compulsory = double(2 * n + table) * sizeof(float);
  EXPECT_NEAR(all.dram_bytes, compulsory, 0.02 * compulsory);
  EXPECT_NEAR(sample.dram_bytes, all.dram_bytes, 0.05 * all.dram_bytes);
}

TEST(GpuModel, ASampleOfPlanesThatReReadOneInputReadsItFromDramOnce) {
  // Each of `planes` output planes reads the whole input (a convolution's output channels in nchw):
  // the traced blocks all lie in the first plane, where every read is a first one, and the
  // extrapolation alone charges every untraced block that rate. Given the read operands' size
  // (they fit in the L2), the untraced blocks' reads are capped: the input comes from DRAM once.
  const std::size_t pixels = 1 << 14, planes = 32;
  Kokkos::View<float*> in("in", pixels), out("out", pixels * planes);
  const auto run = [&](kcnn::model::trace_limits limits, double read_bytes) {
    kcnn::model::session s(h100(), limits);
    kcnn::launch_range("planes", exec(), pixels * planes,
                       KOKKOS_LAMBDA(const std::size_t i) { out(i) = 2.0f * in(i % pixels); });
    return s.finish(0, read_bytes);
  };
  const double input = double(pixels) * sizeof(float);
  const auto all = run(everything(), input);
  kcnn::model::trace_limits few;
  few.max_accesses_per_launch = 1 << 13;
  const auto uncapped = run(few, 0);
  const auto capped = run(few, input);
  ASSERT_LT(capped.traced_blocks * std::int64_t(kcnn::gpu_range_block), std::int64_t(pixels));  // all in plane 0
  EXPECT_FALSE(all.dram_reads_capped);  // every block traced: nothing extrapolated
  EXPECT_NEAR(all.launches.at(0).dram_read_bytes, input, 1e-9 * input);
  EXPECT_FALSE(uncapped.dram_reads_capped);
  EXPECT_GT(uncapped.launches.at(0).dram_read_bytes, 10 * input);  // the flaw the cap answers
  EXPECT_TRUE(capped.dram_reads_capped);
  EXPECT_NEAR(capped.launches.at(0).dram_read_bytes, input, 1e-9 * input);
  // The writes and the per-request figures are the sample's either way.
  EXPECT_DOUBLE_EQ(capped.st_sectors, uncapped.st_sectors);
  EXPECT_DOUBLE_EQ(capped.launches.at(0).dram_write_bytes, uncapped.launches.at(0).dram_write_bytes);
  // Operands over half the L2 are not capped: the model's L2 might not keep them.
  model_device small = small_l2();
  kcnn::model::session s(small, few);
  kcnn::launch_range("planes", exec(), pixels * planes,
                     KOKKOS_LAMBDA(const std::size_t i) { out(i) = 2.0f * in(i % pixels); });
  EXPECT_FALSE(s.finish(0, 0.6 * small.l2_bytes).dram_reads_capped);
}

TEST(GpuModel, MdRangeRankFourRightPutsIndexThreeOnThreadIdxZ) {
  // Kokkos' CUDA rank-4 tile {1, 1, 4, 32}: blockDim (1, 4, 32); (ow, k) in the tile is thread
  // (0, ow, k), linear id ow + 4 k: a warp is 4 ow x 8 k, not 32 adjacent k.
  using kcnn::model::detail::md_thread;
  const std::array<long, 4> tile{1, 1, 4, 32};
  const auto g = kcnn::model::detail::md_block<4>(tile);
  EXPECT_EQ(g.block_x, 1);
  EXPECT_EQ(g.block_y, 4);
  EXPECT_EQ(g.block_z, 32);
  const auto t = md_thread<4, Kokkos::Iterate::Right>(tile, {0, 0, 3, 7});
  EXPECT_EQ(t.x + g.block_x * (t.y + g.block_y * t.z), 3 + 4 * 7);
  // Rank 4 Right with t0 * t1 > 1: index 1 is the fast part of threadIdx.x.
  const std::array<long, 4> wide{2, 16, 1, 1};
  EXPECT_EQ((md_thread<4, Kokkos::Iterate::Right>(wide, {1, 5, 0, 0}).x), 5 + 16 * 1);
  EXPECT_EQ((md_thread<4, Kokkos::Iterate::Left>(wide, {1, 5, 0, 0}).x), 1 + 2 * 5);
}

// The model counts a warp's loads in flight as the program locations of one iteration's loads. A
// loop the host compiler unrolls or interleaves holds several copies of its load, and how many
// depends on the target (-march=native: with AVX-512, Clang 14 made the walks below 32): the walks
// whose count a test states keep their loop rolled.
#if defined(__clang__)
#define KCNN_ROLLED_LOOP _Pragma("clang loop unroll(disable) interleave(disable) vectorize(disable)")
#elif defined(__GNUC__)
#define KCNN_ROLLED_LOOP _Pragma("GCC unroll 1")
#else
#define KCNN_ROLLED_LOOP
#endif

TEST(GpuModel, ALeagueOfOneIsBoundByOneWarpsLatency) {
  // One warp walking 1000 rows of 32 floats: 1000 requests, one at a time in a single block.
  const std::size_t rows = 1000;
  Kokkos::View<float*> a("a", rows * 32), out("out", 32);
  kcnn::model::session s(h100(), everything());
  kcnn::launch_teams("league_of_one", exec(), 1, 1, 32, 0, KOKKOS_LAMBDA(const Kokkos::TeamPolicy<exec>::member_type& m) {
    kcnn::vector_lanes(m, 0, 32, [&](const int x) {
      float t = 0;
      KCNN_ROLLED_LOOP
      for (std::size_t r = 0; r < rows; ++r) t += a(r * 32 + std::size_t(x));
      out(x) = t;
    });
  });
  const auto c = s.finish(0);
  EXPECT_EQ(c.launches[0].blocks, 1);
  EXPECT_DOUBLE_EQ(c.ld_requests, double(rows));
  EXPECT_EQ(c.bound, "latency");
  EXPECT_GT(c.time_s, double(rows) / h100().mlp_per_warp * h100().l2_latency_s);
}

TEST(GpuModel, LoadsInFlightAreTheLoadsOfOneIteration) {
  // One warp, 100 iterations of 8 independent loads (8 program locations): 8 in flight; the
  // same walk with one load per iteration: the device's mlp_per_warp at least, fewer than 8. The
  // walks' loops stay rolled (KCNN_ROLLED_LOOP), so that the count is the source's, not the
  // host compiler's unrolling.
  const std::size_t iters = 100;
  Kokkos::View<float*> a("a", iters * 8 * 32), out("out", 32);
  const auto run = [&](const bool eight) {
    kcnn::model::session s(h100(), everything());
    kcnn::launch_teams("iterations", exec(), 1, 1, 32, 0, KOKKOS_LAMBDA(const Kokkos::TeamPolicy<exec>::member_type& m) {
      kcnn::vector_lanes(m, 0, 32, [&](const int x) {
        float t[8] = {};
        KCNN_ROLLED_LOOP
        for (std::size_t r = 0; r < iters; ++r) {
          if (eight) {
            for (int v = 0; v < 8; ++v) t[v] += a((r * 8 + std::size_t(v)) * 32 + std::size_t(x));
          } else {
            t[0] += a(r * 32 + std::size_t(x));
          }
        }
        out(x) = t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
      });
    });
    return s.finish(0);
  };
  const auto eight = run(true), one = run(false);
  EXPECT_DOUBLE_EQ(eight.ld_requests, double(iters * 8));
  EXPECT_DOUBLE_EQ(eight.launches[0].loads_in_flight, 8.0);
  EXPECT_DOUBLE_EQ(one.ld_requests, double(iters));
  EXPECT_GE(one.launches[0].loads_in_flight, double(h100().mlp_per_warp));
  EXPECT_LT(one.launches[0].loads_in_flight, 8.0);
}

TEST(GpuModel, ABatchWaitsWhereTheCachesServedItsOwnLoads) {
  // One warp sweeps 8 iterations of 4 independent loads over 4 KiB it has never read (every
  // batch reaches DRAM), then sweeps the same 4 KiB again (every batch hits L1: 32 lines, too few
  // for the L1's hashed sets to evict one, wherever the allocation lies). Model version 5 takes
  // each batch's wait from the replay: 8 DRAM latencies and 8 L1 latencies. Version 4 mixed the
  // launch's shares into every batch (half its sectors from L1: a batch of 4 is all-L1 one time in
  // 16) and charged the second sweep nearly a DRAM latency per batch.
  const std::size_t iters = 8;
  Kokkos::View<float*> a("a", iters * 4 * 32), out("out", 32);
  kcnn::model::session s(h100(), everything());
  kcnn::launch_teams("two_sweeps", exec(), 1, 1, 32, 0, KOKKOS_LAMBDA(const Kokkos::TeamPolicy<exec>::member_type& m) {
    kcnn::vector_lanes(m, 0, 32, [&](const int x) {
      float t[4] = {}, u[4] = {};
      KCNN_ROLLED_LOOP
      for (std::size_t r = 0; r < iters; ++r)
        for (int v = 0; v < 4; ++v) t[v] += a((r * 4 + std::size_t(v)) * 32 + std::size_t(x));
      KCNN_ROLLED_LOOP
      for (std::size_t r = 0; r < iters; ++r)
        for (int v = 0; v < 4; ++v) u[v] += a((r * 4 + std::size_t(v)) * 32 + std::size_t(x));
      out(x) = t[0] + t[1] + t[2] + t[3] + u[0] + u[1] + u[2] + u[3];
    });
  });
  const auto c = s.finish(0);
  const auto& f = c.launches[0];
  const model_device d = h100();
  EXPECT_DOUBLE_EQ(c.ld_requests, double(2 * iters * 4));
  EXPECT_DOUBLE_EQ(f.l1_hit_sectors, double(iters * 4 * 4));  // the second sweep, 4 sectors a request
  EXPECT_DOUBLE_EQ(f.loads_in_flight, 4.0);
  EXPECT_DOUBLE_EQ(f.load_chain_loads, double(2 * iters * 4));
  EXPECT_NEAR(f.t_latency, double(iters) * (d.mem_latency_s + d.l1_latency_s), 1e-3 * d.mem_latency_s);
  // Batches of 8 (what a wider unrolling would give): 4 in each sweep.
  EXPECT_NEAR(f.load_chain_s[8], 4 * d.mem_latency_s + 4 * d.l1_latency_s, 1e-6 * d.mem_latency_s);
}

TEST(GpuModel, LoadsExecutedOnceAreInFlightWithTheirStretchBetweenStores) {
  // One warp: 24 loads written out (24 program locations, each executed once) before a store,
  // then an edge loop of 6 iterations of one load. The 24 are in flight together (version 5);
  // version 4 counted only the loop's repeats and gave the warp mlp_per_warp.
  Kokkos::View<float*> a("a", 30 * 32), out("out", 64);
  kcnn::model::session s(h100(), everything());
  kcnn::launch_teams("written_out", exec(), 1, 1, 32, 0, KOKKOS_LAMBDA(const Kokkos::TeamPolicy<exec>::member_type& m) {
    kcnn::vector_lanes(m, 0, 32, [&](const int x) {
      float v[24];
      kcnn::unrolled<24>([&](auto k) { v[decltype(k)::value] = a(std::size_t(decltype(k)::value) * 32 + std::size_t(x)); });
      float t = 0;
      for (int k = 0; k < 24; ++k) t += v[k];
      out(std::size_t(x)) = t;
      float e = 0;
      KCNN_ROLLED_LOOP
      for (std::size_t r = 24; r < 30; ++r) e += a(r * 32 + std::size_t(x));
      out(32 + std::size_t(x)) = e;
    });
  });
  const auto c = s.finish(0);
  const auto& f = c.launches[0];
  EXPECT_DOUBLE_EQ(c.ld_requests, 30.0);
  EXPECT_DOUBLE_EQ(f.first_loads, 25.0);  // the 24, and the loop's first
  EXPECT_DOUBLE_EQ(f.loads_per_iteration[24], 24.0);
  EXPECT_DOUBLE_EQ(f.loads_per_iteration[6], 1.0);
  EXPECT_DOUBLE_EQ(f.loads_per_iteration[1], 5.0);
  EXPECT_DOUBLE_EQ(f.loads_in_flight, 24.0);
}

// The launch named `label` among a case's launches (the test fails when there is none).
const kcnn::model::launch_figures& launch_named(const kcnn::model::case_figures& c, const std::string& label) {
  for (const auto& f : c.launches)
    if (f.label == label) return f;
  ADD_FAILURE() << "no launch " << label;
  return c.launches.front();
}

TEST(GpuModelKernels, DirectVectorWarpsAreAdjacentChannelsWithFourFmasPerLoad) {
  // 256 output channels: KV = 8, PX = 8. Each warp's weight loads and output stores are 32
  // adjacent floats (4 sectors), its input loads one address (1 sector): at most 4 sectors per
  // request, and 8 x 8 FMAs per 8 + 8 load requests (bias loads aside). With the shipped register
  // table (ptxas: over 128 registers a thread for the 8 x 8 accumulators), fewer blocks of 128
  // threads are resident per SM than the 16 threads alone allow: what the table's registers give.
  using T4 = kcnn::tensor4<float, kcnn::layout::nhwc>;
  const auto p = kcnn::conv2d_params::make({16, 64, 14, 14}, 256, 3, 3, 1, 1);
  T4 in("in", p.input_dims()), out("out", p.output_dims());
  kcnn::tensor4<float, kcnn::layout::nchw> wt("wt", p.filter_dims());
  Kokkos::View<float*> bias("bias", p.k);
  kcnn::fill_random(in, 1);
  kcnn::fill_random(wt, 2);
  kcnn::variant::direct_vector v;
  kcnn::prepare(exec(), v, p, in, wt, bias, out);
  const auto table = kcnn::model::register_table::load(kcnn::model::default_registers_file());
  kcnn::model::session s(h100(), everything(), &table);
  kcnn::conv2d(exec(), in, wt, bias, out, p, v);
  const auto c = s.finish(p.flops());
  const auto& f = launch_named(c, "kcnn::conv2d_direct_vector");
  ASSERT_GT(f.registers, 128) << f.kernel;
  EXPECT_EQ(f.registers, table.registers(f.kernel));
  EXPECT_EQ(f.resident_blocks_per_sm, 65536 / ((f.registers * 32 + 255) / 256 * 256) / 4);
  EXPECT_LE(f.ld_sectors / f.ld_requests, 4.0);
  EXPECT_DOUBLE_EQ(f.st_sectors / f.st_requests, 4.0);
  const double fmas_per_request = p.flops() / 2 / (f.ld_requests * 32);
  EXPECT_GT(fmas_per_request, 3.95);
  EXPECT_LE(fmas_per_request, 4.0);
}

// Runs variant v (conv2d or fc) on layer p, operands in layout L filled so that every output is
// known in closed form (tests/implicit_gemm_check.hpp), under a model session; checks the outputs.
template <class L, class V>
kcnn::model::case_figures model_closed_form(const kcnn::conv2d_params& p, V v) {
  constexpr bool fc = std::is_same_v<typename V::op, kcnn::ops::fc>;
  kcnn::tensor4<float, L> in("in", p.input_dims()), out("out", p.output_dims()),
      wt("wt", fc ? kcnn::fc_params(p).weight_dims() : p.filter_dims());
  Kokkos::View<float*> bias("bias", p.k);
  kcnn_test::fill_closed_form(in, wt, bias);
  kcnn::prepare(exec(), v, p, in, wt, bias, out);
  kcnn::model::session s(h100(), everything());
  if constexpr (fc) kcnn::fc(exec(), in, wt, bias, out, p, v);
  else kcnn::conv2d(exec(), in, wt, bias, out, p, v);
  const auto c = s.finish(p.flops());
  EXPECT_EQ(kcnn_test::closed_form_mismatch(p, out), "");
  return c;
}

// implicit_gemm on its GPU path: 16 x 16 threads, a 128 x 128 tile. On a layer of 128 output
// channels (one tile along them) a step costs a thread one 16-byte weight load, one 16-byte input
// load (nhwc, 64 channels), one table load and 32 16-byte shared loads for its 512 FMAs: more than 8
// FMAs per load instruction (the issue's target), at most 0.1 byte of L2 traffic per FMA, and no
// shared request beyond what its 16-byte width needs (4 wavefronts for 32 distinct 16-byte words).
TEST(GpuModelKernels, ImplicitGemmFeedsEightFmasPerLoadFromScratch) {
  const kcnn::conv2d_params p{2, 64, 28, 28, 128, 3, 3, 1, 1, 1};
  const auto c = model_closed_form<kcnn::layout::nhwc>(p, kcnn::variant::implicit_gemm{});
  const auto& f = launch_named(c, "kcnn::conv2d_implicit_gemm");
  EXPECT_EQ(f.threads_per_block, 256);
  const double fmas_per_thread_load = p.flops() / 2 / 32 / (f.ld_requests + f.smem_requests);
  EXPECT_GT(fmas_per_thread_load, 8.0);
  EXPECT_LE(f.l2_bytes / (p.flops() / 2), 0.1);
  EXPECT_LE(f.smem_wavefronts / f.smem_requests, 4.0);
  EXPECT_LE(f.ld_sectors / f.ld_requests, 16.0);
}

// nhwc with a channel count no multiple of 4 (a stem: 3 channels, 7 x 7, stride 2, pad 3) takes
// the 4-byte gather on the GPU path: a thread's slot is 4 consecutive K indices of one pixel, which
// here span two filter taps, each with its own table entry; every output exact. Per step (147 K
// indices padded to 19 steps of 8) a warp issues one 16-byte weight load and four table loads, and
// at most four input loads (none where the whole warp's taps fall in the padding or its pixels past
// the last of the 288). 96 output channels: the square tile.
TEST(GpuModelKernels, ImplicitGemmGathersOddChannelCountsFourKIndicesOfAPixel) {
  const kcnn::conv2d_params p{2, 3, 23, 23, 96, 7, 7, 2, 3, 1};
  const auto c = model_closed_form<kcnn::layout::nhwc>(p, kcnn::variant::implicit_gemm{});
  const auto& f = launch_named(c, "kcnn::conv2d_implicit_gemm");
  EXPECT_EQ(f.threads_per_block, 256);
  EXPECT_EQ(f.blocks, 3);  // one tile of channels (96 of 128) x 3 of pixels, K not split
  const double warp_steps = 3 * 8 * 19.0;
  EXPECT_GT(f.ld_requests, warp_steps * (1 + 4));
  EXPECT_LE(f.ld_requests, warp_steps * (1 + 4 + 4));
}

TEST(GpuModelKernels, ImplicitGemmSplitsALongReductionAndSumsItExactly) {
  // 136 channels over 390 pixels: narrow tiles (64 x 256: 3 x 2 multiply 3/4 of what 2 x 4 square
  // ones would), the last of 8 channels and 134 pixels: 6 tiles, too few for the GPU, so K (576 =
  // 64 x 3 x 3) is split in two segments of at least 256 K indices; and fc6-like: one square tile,
  // 2304 features (288 steps) split in 9. Both outputs exact.
  const auto c = model_closed_form<kcnn::layout::nchw>(kcnn::conv2d_params{2, 64, 15, 13, 136, 3, 3, 1, 1, 1},
                                                       kcnn::variant::implicit_gemm{});
  ASSERT_EQ(c.launches.size(), 2u);
  EXPECT_EQ(launch_named(c, "kcnn::conv2d_implicit_gemm").blocks, 2 * 6);
  const auto cf = model_closed_form<kcnn::layout::nhwc>(kcnn::fc_params(4, 256, 3, 3, 40), kcnn::variant::fc_implicit_gemm{});
  ASSERT_EQ(cf.launches.size(), 2u);
  EXPECT_EQ(launch_named(cf, "kcnn::fc_implicit_gemm").blocks, 2304 / 8 / 32);
}

// A layer takes the tile that multiplies the fewest zeros. A group of 64 output channels over many
// pixels takes the narrow tile: 64 channels x 256 pixels, 8 x 32 threads, K steps of 4. ResNet-50's
// 64-channel 3 x 3 layer at a small size: every output exact in each layout; 800 pixels in 4
// tiles, K (576) split in 2 segments (4 tiles are too few). The
// kernel declares what its tiles multiply: 64 channels x 1024 pixels x 576, no channel padding
// (the square tile would multiply 128 channels, half of them zeros), and the model's FMA bound
// counts it. Per step a thread's 16 16-byte shared loads read, per warp, 4 or 8 distinct chunks:
// one wavefront each where the square tile's pixel operands take two. Then the other geometries on
// the narrow tile, exact: groups of 32 with stride 2 and dilation 2, and a depthwise layer. A layer
// of few pixels and many channels takes the wide tile, 256 channels x 64 pixels (32 x 8 threads, K
// steps of 8, 4-byte input loads in every layout): a 7 x 7 layer of 512 channels at batch 1 (49
// pixels, 512 channels in 2 tiles, K = 576 split in 2) and an fc layer of 300 outputs at batch 48,
// exact, each multiplying 64 pixels where a square tile would multiply 128.
TEST(GpuModelKernels, ImplicitGemmTakesTheTileThatMultipliesTheFewestZeros) {
  const kcnn::conv2d_params p{2, 64, 20, 20, 64, 3, 3, 1, 1, 1};
  // The launch's threads, blocks, declared work and shared wavefronts; its L2 bytes.
  const auto check = [](const kcnn::model::case_figures& c, int blocks, double executed) {
    const auto& f = launch_named(c, "kcnn::conv2d_implicit_gemm");
    EXPECT_EQ(f.threads_per_block, 256);
    EXPECT_EQ(f.blocks, blocks);
    EXPECT_DOUBLE_EQ(c.executed_flops, executed);
    EXPECT_LE(f.smem_wavefronts / f.smem_requests, 1.25);
    return f.l2_bytes;
  };
  for (const auto& c : {model_closed_form<kcnn::layout::nchw>(p, kcnn::variant::implicit_gemm{}),
                        model_closed_form<kcnn::layout::nhwc>(p, kcnn::variant::implicit_gemm{}),
                        model_closed_form<kcnn::layout::chwn>(p, kcnn::variant::implicit_gemm{})})
    EXPECT_LE(check(c, 4 * 2, 2.0 * 64 * 1024 * 576) / (p.flops() / 2), 0.1);
  kcnn::conv2d_params grouped{3, 16, 17, 15, 64, 3, 3, 2, 2, 2};
  grouped.dilation_h = grouped.dilation_w = 2;
  const kcnn::conv2d_params depthwise{2, 24, 9, 11, 24, 3, 3, 1, 1, 24};
  for (const auto& q : {grouped, depthwise}) {
    model_closed_form<kcnn::layout::nchw>(q, kcnn::variant::implicit_gemm{});
    model_closed_form<kcnn::layout::nhwc>(q, kcnn::variant::implicit_gemm{});
    model_closed_form<kcnn::layout::chwn>(q, kcnn::variant::implicit_gemm{});
  }
  const kcnn::conv2d_params last{1, 64, 7, 7, 512, 3, 3, 1, 1, 1};
  for (const auto& c : {model_closed_form<kcnn::layout::nchw>(last, kcnn::variant::implicit_gemm{}),
                        model_closed_form<kcnn::layout::nhwc>(last, kcnn::variant::implicit_gemm{}),
                        model_closed_form<kcnn::layout::chwn>(last, kcnn::variant::implicit_gemm{})})
    check(c, 2 * 2, 2.0 * 512 * 64 * 576);
  const kcnn::fc_params fc(48, 64, 2, 2, 300);
  for (const auto& c : {model_closed_form<kcnn::layout::nchw>(fc, kcnn::variant::fc_implicit_gemm{}),
                        model_closed_form<kcnn::layout::nhwc>(fc, kcnn::variant::fc_implicit_gemm{})})
    EXPECT_DOUBLE_EQ(c.executed_flops, 2.0 * 512 * 64 * 256);
}

// implicit_gemm's GPU path on random operands in layout L, under a model session on device d;
// checks the outputs against the host reference.
template <class L>
kcnn::model::case_figures model_random(const kcnn::conv2d_params& p, const model_device& d) {
  static const auto table = kcnn::model::register_table::load(kcnn::model::default_registers_file());
  kcnn::tensor4<float, L> in("in", p.input_dims()), wt("wt", p.filter_dims()), out("out", p.output_dims());
  Kokkos::View<float*> bias("bias", p.k);
  kcnn::fill_random(in, 1);
  kcnn::fill_random(wt, 2, 0.3f);
  kcnn::fill_random(bias, 3);
  kcnn::variant::implicit_gemm v;
  kcnn::prepare(exec(), v, p, in, wt, bias, out);
  kcnn::model::session s(d, everything(), &table);  // two teams an SM, as ptxas gives them
  kcnn::conv2d(exec(), in, wt, bias, out, p, v);
  const auto c = s.finish(p.flops());
  const auto ref = kcnn::reference::conv2d(p, in, wt, [&](int k) { return bias(k); });
  const auto cmp = kcnn::compare(out, p.output_dims(), ref, 1e-5);
  EXPECT_TRUE(cmp.passed) << L::name << ": " << cmp.message;
  return c;
}

// On a GPU path a sliding window's K runs in blocks of the step's channels at one tap
// (implicit_gemm_kappa_block): a group's last block shorter (11 channels: blocks of 4, 4 and 3 in
// the narrow tile's steps, 8 and 3 in the square tile's), every output still the reference's. And
// what the order is for: on a device with the H200's loaded DRAM latency, ResNet-50's 64-channel
// 3 x 3 layer (at batch 2, 28 x 28) in nchw and chwn waits for DRAM at few enough steps that the
// latency bound stays under the issue bound (4 SMs, two teams each: 1.75 waves). In the filter's
// order (c, r, s) every third K index is a tap (r, 0) reaching new input rows, nearly every step
// of 4 waits for DRAM, and the latency bound is
// 1.7-1.8x the issue bound (checked by taking block 1 on the GPU path: this test then fails).
TEST(GpuModelKernels, ImplicitGemmWalksASlidingWindowsKInBlocksOfTheStepsChannels) {
  for (const int k : {40, 136}) {  // narrow tile (K steps of 4), square tile (8)
    const kcnn::conv2d_params p{2, 22, 9, 9, k, 3, 3, 1, 1, 2};
    model_random<kcnn::layout::nchw>(p, h100());
    model_random<kcnn::layout::chwn>(p, h100());
    model_random<kcnn::layout::nhwc>(p, h100());
  }
  model_device d = h100();  // 4 SMs, two teams each: the layer's 14 blocks are 1.75 waves
  d.sms = 4;
  d.mem_latency_s = 1.3e-6;
  const kcnn::conv2d_params layer{2, 64, 28, 28, 64, 3, 3, 1, 1, 1};
  for (const auto& c : {model_random<kcnn::layout::nchw>(layer, d), model_random<kcnn::layout::chwn>(layer, d)}) {
    const auto& f = launch_named(c, "kcnn::conv2d_implicit_gemm");
    EXPECT_LT(f.t_latency, c.t_issue) << f.kernel;
  }
}

TEST(GpuModelKernels, SoftmaxOfAChwnClassifierFillsMoreThanOneBlockAndReadsOnce) {
  // 64 images x 1000 classes in chwn: one row of 64 pixels. Two teams of 32 pixels x 16
  // channel segments; DRAM sees the tensor read once and written once.
  using T4 = kcnn::tensor4<float, kcnn::layout::chwn>;
  const auto p = kcnn::softmax_params::classes(64, 1000);
  T4 in("in", p.dims()), out("out", p.dims());
  kcnn::fill_random(in, 3);
  kcnn::model::session s(h100(), everything());
  kcnn::softmax(exec(), in, out, p, kcnn::variant::softmax_vector{});
  const auto c = s.finish(p.flops());
  ASSERT_EQ(c.launches.size(), 1u);
  EXPECT_EQ(c.launches[0].blocks, 2);
  EXPECT_EQ(c.launches[0].threads_per_block, 32 * 16);
  EXPECT_LE(c.ld_sectors / c.ld_requests, 4.0);
  EXPECT_NEAR(c.dram_bytes / p.min_bytes(), 1.0, 0.02);
}

// The portable row walk (kcnn/lanes.hpp) gives each lane a batch of lane_batch_size elements of
// its row, all loaded before the first store: add_vector's warps keep 2 x 4 loads in flight where
// the one-element-per-thread add_naive keeps 2, in the same coalesced requests (4 sectors each).
// nchw rows of 64 floats: 16 lanes of one batch each, two rows per warp. 2^19 elements: two waves
// of an H100's resident threads for add_naive, one (a quarter of the threads) for add_vector, so
// add_naive waits two DRAM latencies and add_vector one.
TEST(GpuModelKernels, ThePortableRowWalkKeepsABatchOfLoadsInFlight) {
  using T4 = kcnn::tensor4<float, kcnn::layout::nchw>;
  const kcnn::dims4 d{2, 64, 64, 64};
  T4 a("a", d), b("b", d), out("out", d);
  kcnn::fill_random(a, 1);
  kcnn::fill_random(b, 2);
  const auto run = [&](const auto& v) {
    kcnn::model::session s(h100(), everything());
    kcnn::add(exec(), a, b, out, v);
    return s.finish(0);
  };
  const auto batched = run(kcnn::variant::add_vector{}), naive = run(kcnn::variant::add_naive{});
  ASSERT_EQ(batched.launches.size(), 1u);
  EXPECT_EQ(batched.launches[0].threads_per_block, 256);
  EXPECT_DOUBLE_EQ(batched.launches[0].loads_in_flight, 2.0 * kcnn::lane_batch_size);
  EXPECT_DOUBLE_EQ(naive.launches[0].loads_in_flight, 2.0);
  EXPECT_DOUBLE_EQ(batched.ld_sectors / batched.ld_requests, 4.0);
  EXPECT_DOUBLE_EQ(batched.st_sectors / batched.st_requests, 4.0);
  EXPECT_DOUBLE_EQ(batched.ld_requests, double(2 * d.size() / 32));
  EXPECT_NEAR(naive.launches[0].t_latency / batched.launches[0].t_latency, 2.0, 0.1);
}

// concat_vector's nhwc row, a pixel's channels as one run whose elements are loaded from the
// inputs that hold them: on pixels that start on 16 bytes and channel counts of 4s (an Inception
// module's 64 + 64 + 96 + 32) in 16-byte chunks (kcnn::chunks_in_batches). 64 chunks give 32
// lanes of 2 chunks, a pixel a warp: each request is 32 chunks of one or two inputs' pixels,
// 512 bytes of whole sectors, and a warp keeps chunk_batch_size loads (32 bytes a lane) in
// flight: 49 blocks of 8 pixels, below one wave, one DRAM round trip for the whole launch, not
// one per input. One input of 95 channels (and one of 33) takes the element walk, 4 bytes a lane,
// batches of 4 in two round trips of 32 lanes: at least 3 times the requests.
TEST(GpuModelKernels, ConcatOfAlignedPixelsMovesWholeSectorsInChunks) {
  using T4 = kcnn::tensor4<float, kcnn::layout::nhwc>;
  const auto run = [&](const std::vector<int>& parts) {
    std::vector<T4> in;
    int c = 0;
    for (const int k : parts) {
      in.emplace_back("in", kcnn::dims4{2, k, 14, 14});
      kcnn::fill_random(in.back(), 7 + c);
      c += k;
    }
    T4 out("out", kcnn::dims4{2, c, 14, 14});
    kcnn::model::session s(h100(), everything());
    kcnn::concat(exec(), in, out, kcnn::variant::concat_vector{});
    return s.finish(0);
  };
  const auto chunked = run({64, 64, 96, 32}), element = run({64, 64, 95, 33});
  const double bytes = 2.0 * 14 * 14 * 256 * 4, latency = h100().mem_latency_s;
  ASSERT_EQ(chunked.launches.size(), 1u);
  EXPECT_EQ(chunked.launches[0].threads_per_block, 256);
  EXPECT_EQ(chunked.launches[0].blocks, 2 * 14 * 14 / 8);
  EXPECT_DOUBLE_EQ(chunked.ld_requests, bytes / 512);
  EXPECT_DOUBLE_EQ(chunked.ld_sectors / chunked.ld_requests, 16.0);
  EXPECT_DOUBLE_EQ(chunked.st_sectors / chunked.st_requests, 16.0);
  EXPECT_DOUBLE_EQ(chunked.launches[0].loads_in_flight, double(kcnn::chunk_batch_size));
  EXPECT_NEAR(chunked.launches[0].t_latency, latency, 1e-3 * latency);
  EXPECT_NEAR(chunked.dram_bytes / (2 * bytes), 1.0, 0.02);
  ASSERT_EQ(element.launches.size(), 1u);
  EXPECT_GT(element.ld_requests, 3.0 * chunked.ld_requests);
  EXPECT_DOUBLE_EQ(element.launches[0].loads_in_flight, double(kcnn::lane_batch_size));
  EXPECT_NEAR(element.launches[0].t_latency, 2 * latency, 0.05 * latency);  // two round trips
}

TEST(GpuModel, TheWarpsOfABlockShareL1) {
  // One block of two warps, each reading the same 32 KiB once: the warps progress together, so
  // the second warp's loads hit what the first brought into L1 and the L2 serves 32 KiB.
  const std::size_t n = 8192;
  Kokkos::View<float*> a("a", n), out("out", 64);
  kcnn::model::session s(h100(), everything());
  kcnn::launch_teams("two_warps", exec(), 1, 2, 32, 0, KOKKOS_LAMBDA(const Kokkos::TeamPolicy<exec>::member_type& m) {
    kcnn::team_rows(m, 2, [&](const int y) {
      kcnn::vector_lanes(m, 32, [&](const int x) {
        float t = 0;
        for (std::size_t i = 0; i < n; i += 32) t += a(i + std::size_t(x));
        out(std::size_t(y) * 32 + std::size_t(x)) = t;
      });
    });
  });
  const auto c = s.finish(0);
  EXPECT_DOUBLE_EQ(c.ld_requests, double(2 * n / 32));
  EXPECT_DOUBLE_EQ(c.l2_bytes, double(n * sizeof(float)) + 64 * sizeof(float));  // loads once, plus the stores
}

TEST(GpuModel, DeviceFileErrorsNameTheFileLineAndField) {
  const std::string path = ::testing::TempDir() + "kcnn_devices_bad.csv";
  std::ifstream good(kcnn::model::default_devices_file());
  std::string header, line, first;
  while (std::getline(good, line))
    if (!line.empty() && line[0] != '#') {
      if (header.empty()) header = line;
      else if (first.empty()) first = line;
    }
  std::ofstream(path) << "# comment\n" << header << "\n" << first.replace(first.find(",132,"), 5, ",-1,") << "\n";
  try {
    kcnn::model::load_devices(path);
    FAIL() << "a negative SM count was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":3: field 'sms'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(kcnn::model::find_device(kcnn::model::load_devices(kcnn::model::default_devices_file()), "b200"),
               std::invalid_argument);
  std::remove(path.c_str());
}

TEST(GpuModel, RegisterFileErrorsNameTheFileLineAndField) {
  const std::string path = ::testing::TempDir() + "kcnn_registers_bad.csv";
  std::ofstream(path) << "# comment\nkernel,registers,source\n\"kcnn::a<1>\",40,ptxas\nkcnn::b,300,ptxas\n";
  try {
    kcnn::model::register_table::load(path);
    FAIL() << "300 registers were accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":4: field 'registers'"), std::string::npos) << e.what();
  }
  std::ofstream(path) << "kernel,registers,source\n\"kcnn::a<1>\",40,ptxas\n";
  EXPECT_EQ(kcnn::model::register_table::load(path).registers("kcnn::a<1>"), 40);
  EXPECT_THROW(kcnn::model::register_table::load(path + ".missing"), std::invalid_argument);
  std::remove(path.c_str());
  // The shipped table loads, and keys a kernel as kernel_key does a functor type of this build.
  const auto shipped = kcnn::model::register_table::load(kcnn::model::default_registers_file());
  EXPECT_GT(shipped.size(), 0u);
  EXPECT_EQ(kcnn::model::kernel_key(typeid(Kokkos::View<float*, Kokkos::HostSpace>).name()), "Kokkos::View<float*>");
}

// A named functor (a lambda has no name the register table could hold): each thread walks its
// column of rows, one load per iteration.
struct column_walk {
  Kokkos::View<float*> a, out;
  std::size_t rows, threads;
  void operator()(const std::size_t i) const {
    float t = 0;
    for (std::size_t r = 0; r < rows; ++r) t += a(r * threads + i);
    out(i) = t;
  }
};

// Registers bound the resident blocks: at 255 registers a thread a warp holds 8192 of an SM's
// 65536, so 8 warps (two blocks of 128 threads) are resident, against 16 blocks by threads alone;
// the launch then takes 8 times the waves, and its latency bound grows with them.
TEST(GpuModel, RegistersBoundTheResidentBlocks) {
  const std::size_t threads = std::size_t(h100().sms) * 2048, rows = 4;
  Kokkos::View<float*> a("a", rows * threads), out("out", threads);
  const auto run = [&](const kcnn::model::register_table* t) {
    kcnn::model::session s(h100(), everything(), t);
    kcnn::launch_range("walk", exec(), threads, column_walk{a, out, rows, threads});
    return s.finish(0);
  };
  kcnn::model::register_table heavy;
  heavy.add(kcnn::model::kernel_key(typeid(column_walk).name()), 255);
  const auto unbounded = run(nullptr), bound = run(&heavy);
  EXPECT_EQ(unbounded.launches[0].registers, 0);
  EXPECT_EQ(unbounded.launches[0].resident_blocks_per_sm, 16);
  EXPECT_EQ(bound.launches[0].registers, 255);
  EXPECT_EQ(bound.launches[0].resident_blocks_per_sm, 2);
  EXPECT_DOUBLE_EQ(bound.launches[0].waves, 8 * unbounded.launches[0].waves);
  EXPECT_GT(bound.launches[0].t_latency, 7 * unbounded.launches[0].t_latency);
  EXPECT_DOUBLE_EQ(bound.dram_bytes, unbounded.dram_bytes);
}

// The bounds of model version 4 on a launch given by hand: a batch of loads waits for the slowest
// of them, the load/store pipe takes one warp instruction per SM per clock, and a case's FMAs and
// memory instructions share the schedulers' issue.
TEST(GpuModel, ABatchWaitsForItsSlowestLoadAndThePipesAreCountedApart) {
  const model_device d = h100();
  kcnn::model::launch_figures f;
  f.blocks = d.sms;  // one block per SM
  f.threads_per_block = 128;
  f.resident_blocks_per_sm = 1;
  f.ld_requests = 16.0 * 4 * 100 * d.sms;  // 4 warps x 100 iterations of 16 loads per block
  f.max_warp_loads = 1600;
  f.loads_per_iteration[16] = f.ld_requests;
  f.l1_hit_sectors = 0.9 * f.ld_requests, f.l2_load_hit_sectors = 0.1 * f.ld_requests;
  kcnn::model::case_figures c;
  c.launches = {f};
  c.flops = 2.0 * 32 * 64 / 16 * f.ld_requests;  // 64 FMAs a warp per 16 loads
  kcnn::model::predict(d, c);
  const auto& g = c.launches[0];
  EXPECT_DOUBLE_EQ(g.loads_in_flight, 16.0);
  // 90 % of the sectors hit L1, but a batch of 16 is all-L1 only 0.9^16 = 18.5 % of the time.
  const double all_l1 = std::pow(0.9, 16);
  EXPECT_NEAR(g.batch_latency_s, all_l1 * d.l1_latency_s + (1 - all_l1) * d.l2_latency_s, 1e-15);
  EXPECT_NEAR(g.t_latency, 100 * g.batch_latency_s, 1e-12);
  // A batch of one load waits the mean latency (model version 3's rule for every batch).
  kcnn::model::case_figures one = c;
  one.launches[0].loads_per_iteration = {};
  one.launches[0].loads_per_iteration[1] = f.ld_requests;
  one.launches[0].storing_iterations = f.ld_requests;  // no mlp_per_warp floor
  kcnn::model::predict(d, one);
  EXPECT_NEAR(one.launches[0].batch_latency_s, 0.9 * d.l1_latency_s + 0.1 * d.l2_latency_s, 1e-15);
  // LD/ST pipe: 6400 requests per SM at one per clock; FMAs: 25600 warp instructions per SM at 4
  // per clock, with the loads 32000 through the schedulers.
  EXPECT_NEAR(g.t_lsu, 6400 / d.clock_hz, 1e-12);
  EXPECT_NEAR(c.t_fp32, 25600 / 4 / d.clock_hz, 1e-9);
  EXPECT_NEAR(c.t_issue, (25600 + 6400) / 4 / d.clock_hz, 1e-9);
  EXPECT_GT(c.t_issue, c.t_fp32);
}

// Version 6: FLOPs a case's kernels declare they execute (a tile multiplying zeros) count in the FMA
// pipe and the schedulers' issue when they are more than the case's; fewer change nothing.
TEST(GpuModel, DeclaredExecutedFlopsCountInTheFmaAndIssueBounds) {
  const model_device d = h100();
  kcnn::model::launch_figures f;
  f.blocks = d.sms;
  f.threads_per_block = 128;
  f.resident_blocks_per_sm = 1;
  f.ld_requests = 6400.0 * d.sms;
  f.max_warp_loads = 1600;
  f.loads_per_iteration[16] = f.ld_requests;
  f.l1_hit_sectors = f.ld_requests;
  kcnn::model::case_figures c;
  c.launches = {f};
  c.flops = 2.0 * 32 * 25600 * d.sms;  // 25600 FMA warp instructions per SM
  c.executed_flops = 2 * c.flops;
  kcnn::model::predict(d, c);
  EXPECT_NEAR(c.t_fp32, 2 * 25600 / 4 / d.clock_hz, 1e-9);
  EXPECT_NEAR(c.t_issue, (2 * 25600 + 6400) / 4 / d.clock_hz, 1e-9);
  EXPECT_EQ(c.bound, "issue");
  c.executed_flops = c.flops / 2;
  kcnn::model::predict(d, c);
  EXPECT_NEAR(c.t_fp32, 25600 / 4 / d.clock_hz, 1e-9);
  EXPECT_NEAR(c.t_issue, (25600 + 6400) / 4 / d.clock_hz, 1e-9);
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
