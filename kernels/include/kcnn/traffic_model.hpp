#pragma once
// Analytic traffic model of conv2d at the L1-requested, L2 and DRAM levels, in the spirit of
// DeLTA (Lym et al., ISPASS'19; docs/traffic_model.md has the derivation and its limits).
//
// The convolution is viewed as a GEMM per group: M = N P Q output positions, K/groups filters,
// a reduction of (C/groups) R S. A tile (one CUDA block / Kokkos team, or for one-thread-per-
// output kernels the 32 threads of a warp) covers bm positions x bn filters and reads its whole
// input window and filter slice once; tiles do not share what they read except through caches.
#include <kcnn/conv2d_params.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

namespace kcnn {

struct conv_tile {
  int bm = 32;  // output positions (n, p, q) per tile
  int bn = 1;   // filters per tile
};

struct conv_traffic {
  double compulsory = 0;    // every input, filter, bias read once, every output written once
  double l1_requested = 0;  // bytes the tiles request, times the layout's sector inefficiency
  double l2_reads = 0;      // input re-read by every filter tile (with its halo), filters by every position tile
  double dram = 0;          // predicted DRAM bytes
  double halo = 1;          // input rows read per output row covered: ((r - 1) U + R) / (r U), U the row stride
  double spill = 0;         // share of the L2 re-reads that miss to DRAM (0: operands fit in L2)
};

// The layout's sector inefficiency for requests: lanes along q read with the stride (nchw);
// along c (nhwc) or n (chwn) they are dense once that dimension fills a 32-byte sector.
inline double conv_sector_factor(const char* layout, const conv2d_params& p) {
  const std::string l = layout;
  if (l == "nhwc") return p.c_per_group() >= 8 ? 1.0 : 8.0 / p.c_per_group();
  if (l == "chwn") return p.n >= 8 ? 1.0 : 8.0 / p.n;
  return double(p.col_stride());
}

// extra_dram: bytes a variant moves beyond the model's operands (e.g. an im2col workspace
// written and read back). l2_bytes: the device's L2 (a host's last-level cache).
inline conv_traffic conv2d_traffic(const conv2d_params& p, conv_tile t, double l2_bytes,
                                   double sector_factor = 1.0, double extra_dram = 0.0,
                                   double elem_bytes = 4.0) {
  conv_traffic r;
  const int G = p.groups, P = p.p(), Q = p.q();
  const double M = double(p.n) * P * Q, Kg = double(p.k_per_group()), R = double(p.c_per_group()) * p.r * p.s;
  const double bm = std::max(1, t.bm), bn = std::max(1, t.bn);
  const double gm = std::ceil(M / bm), gn = std::ceil(Kg / std::min(bn, Kg));
  const double in_b = elem_bytes * double(p.input_dims().size());
  const double wt_b = elem_bytes * double(p.filter_dims().size());
  r.compulsory = p.min_bytes(std::size_t(elem_bytes));
  r.l1_requested = elem_bytes * G * (gn * M * R + gm * Kg * R) * sector_factor;
  // A tile of bm positions spans rows = ceil(bm / Q) output rows, which need (rows - 1) U + R
  // input rows (R the dilated window's height): the halo factor on the input it reads.
  const double rows = std::ceil(bm / double(Q));
  r.halo = ((rows - 1) * p.row_stride() + p.window_h()) / (rows * p.row_stride());
  r.l2_reads = gn * in_b * r.halo + gm * wt_b;
  // Compulsory when input and filters stay in L2; otherwise the share that does not fit is
  // re-fetched by every tile that reads it.
  const double operands = in_b + wt_b;
  r.spill = l2_bytes > 0 ? std::clamp(1.0 - l2_bytes / operands, 0.0, 1.0) : 1.0;
  r.dram = r.compulsory + r.spill * std::max(0.0, r.l2_reads - operands) + extra_dram;
  return r;
}

}  // namespace kcnn
