// The conv2d traffic model against science.md section 2's worked example, and roofline_pct
// against hand-computed roofs.
#include "measure/ceilings.hpp"

#include <kcnn/traffic_model.hpp>

#include <gtest/gtest.h>

using namespace kcnn;

TEST(TrafficModel, Vgg16Conv31WorkedExample) {
  // N=32, C=128, 56x56, K=256, 3x3 pad 1, 128x128 tiles: M = 100352, K_g = 1152,
  // gm = 784, gn = 2, 3 output rows per tile so the halo factor is (2 + 3) / 3.
  const conv2d_params p{32, 128, 56, 56, 256, 3, 3, 1, 1, 1};
  const double l2 = 50.0 * 1024 * 1024;
  const auto t = conv2d_traffic(p, conv_tile{128, 128}, l2);
  EXPECT_DOUBLE_EQ(t.compulsory, 4.0 * (32.0 * 128 * 56 * 56 + 256.0 * 128 * 9 + 256 + 32.0 * 256 * 56 * 56));
  EXPECT_NEAR(t.compulsory / 1e6, 155.3, 0.1);                    // "155 MB compulsory"
  EXPECT_DOUBLE_EQ(t.l1_requested, 4.0 * (2.0 * 100352 * 1152 + 784.0 * 256 * 1152));
  EXPECT_NEAR(t.l1_requested / 1e9, 1.85, 0.005);                 // "1.85 GB at L1"
  EXPECT_DOUBLE_EQ(t.halo, 5.0 / 3.0);
  const double in_b = 4.0 * 32 * 128 * 56 * 56, wt_b = 4.0 * 256 * 128 * 9;
  EXPECT_DOUBLE_EQ(t.l2_reads, 2 * in_b * 5.0 / 3.0 + 784 * wt_b);
  EXPECT_NEAR(t.l2_reads / 1e9, 1.1, 0.005);                      // "1.1 GB at L2"
  // Input + filters (52.6 MB) just exceed 50 MiB: a sliver of the re-reads reaches DRAM.
  const double spill = 1.0 - l2 / (in_b + wt_b);
  EXPECT_DOUBLE_EQ(t.spill, spill);
  EXPECT_DOUBLE_EQ(t.dram, t.compulsory + spill * (t.l2_reads - in_b - wt_b));
  EXPECT_GT(t.dram, t.compulsory);
  EXPECT_LT(t.dram, 1.02 * t.compulsory);
}

TEST(TrafficModel, FitsInL2MeansCompulsoryAndTilesCutReReads) {
  const conv2d_params p{1, 64, 28, 28, 64, 3, 3, 1, 1, 1};
  const auto big = conv2d_traffic(p, conv_tile{32, 1}, 64.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(big.dram, big.compulsory);
  // With a tiny cache everything re-read reaches DRAM; larger tiles re-read less.
  const auto warp = conv2d_traffic(p, conv_tile{32, 1}, 0);
  const auto tile = conv2d_traffic(p, conv_tile{128, 32}, 0);
  EXPECT_DOUBLE_EQ(warp.spill, 1.0);
  EXPECT_GT(warp.dram, tile.dram);
  EXPECT_GT(warp.l2_reads, tile.l2_reads);
  // Extra bytes (an im2col workspace) are added as they are.
  EXPECT_DOUBLE_EQ(conv2d_traffic(p, conv_tile{32, 1}, 64.0 * 1024 * 1024, 1.0, 1000.0).dram, big.compulsory + 1000.0);
  // Stride-2 nchw requests twice the sectors; nhwc with 3 channels is inefficient, with 64 dense.
  EXPECT_DOUBLE_EQ(conv_sector_factor("nchw", conv2d_params{1, 3, 8, 8, 4, 3, 3, 2, 1, 1}), 2.0);
  EXPECT_DOUBLE_EQ(conv_sector_factor("nhwc", conv2d_params{1, 3, 8, 8, 4, 3, 3, 1, 1, 1}), 8.0 / 3.0);
  EXPECT_DOUBLE_EQ(conv_sector_factor("nhwc", p), 1.0);
}

TEST(TrafficModel, GroupsSplitTheGemm) {
  // Depthwise: each filter reads one channel; the requests are those of G tiny GEMMs.
  const conv2d_params p{1, 32, 16, 16, 32, 3, 3, 1, 1, 32};
  const auto t = conv2d_traffic(p, conv_tile{32, 1}, 0);
  const double M = 256, Kg = 1, R = 9, gm = 8, gn = 1;
  EXPECT_DOUBLE_EQ(t.l1_requested, 4.0 * 32 * (gn * M * R + gm * Kg * R));
}

TEST(Roofline, PercentOfTheAttainableRate) {
  bench::ceilings c;
  EXPECT_LT(bench::roofline_pct(c, 1e9, 1e9, 0.1), 0);  // nothing measured: no roof
  c.copy_gbps = 100;
  c.triad_gbps = 80;
  c.fma_gflops = 1000;
  c.gemm_gflops = 500;
  c.measured = true;
  EXPECT_DOUBLE_EQ(c.bandwidth_gbps(), 100);
  EXPECT_DOUBLE_EQ(c.peak_gflops(), 1000);
  // No FLOPs: achieved bandwidth over the roof (1 GB in 20 ms = 50 GB/s).
  EXPECT_DOUBLE_EQ(bench::roofline_pct(c, 1e9, 0, 0.02), 50.0);
  // Memory-bound, intensity 1: roof 100 GFLOP/s, achieved 50.
  EXPECT_DOUBLE_EQ(bench::roofline_pct(c, 1e9, 1e9, 0.02), 50.0);
  // Compute-bound, intensity 100: roof min(10000, 1000) = 1000 GFLOP/s, achieved 500.
  EXPECT_DOUBLE_EQ(bench::roofline_pct(c, 1e9, 1e11, 0.2), 50.0);
  EXPECT_LT(bench::roofline_pct(c, 1e9, 1e9, 0), 0);
}
