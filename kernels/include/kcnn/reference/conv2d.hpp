#pragma once
// Host references for conv2d forward with double accumulation. Accessors are callables:
// in(n, c, h, w), wt(k, c_in_group, r, s), bias(k); the result is in logical nchw order.
//
// conv2d_naive is the definition: the seven-deep loop nest, one accessor call per multiply-add.
// conv2d computes the same sums from double copies (per image and group: the im2col matrix and
// the group's filters), so that the inner loops run over contiguous memory and vectorise. It is
// much faster, which matters because every benchmarked layer is validated, VGG-16 at batch 8
// included; the tests hold the two to 1e-12 of each other on shapes covering stride, padding,
// groups, dilation, per-axis strides, asymmetric pads and fully connected windows. Only the
// summation order differs. It runs on the host cores it may use (std::thread, one (group,
// image) pair at a time per thread; `threads` sets how many): on a GPU machine the validation of large layers would otherwise eat the device's lease.
#include <kcnn/conv2d_params.hpp>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

namespace kcnn::reference {

template <class In, class Wt, class Bias>
std::vector<double> conv2d_naive(const conv2d_params& p, const In& in, const Wt& wt, const Bias& bias) {
  const int P = p.p(), Q = p.q(), cpg = p.c_per_group(), kpg = p.k_per_group();
  const int sh = p.row_stride(), sw = p.col_stride(), pt = p.pad_top(), pl = p.pad_left();
  std::vector<double> out(std::size_t(p.n) * p.k * P * Q);
  std::size_t i = 0;
  for (int n = 0; n < p.n; ++n)
    for (int k = 0; k < p.k; ++k) {
      const int g = k / kpg;
      for (int oh = 0; oh < P; ++oh)
        for (int ow = 0; ow < Q; ++ow) {
          double acc = double(bias(k));
          for (int c = 0; c < cpg; ++c)
            for (int r = 0; r < p.r; ++r) {
              const int ih = oh * sh - pt + r * p.dilation_h;
              if (ih < 0 || ih >= p.h) continue;
              for (int s = 0; s < p.s; ++s) {
                const int iw = ow * sw - pl + s * p.dilation_w;
                if (iw < 0 || iw >= p.w) continue;
                acc += double(in(n, g * cpg + c, ih, iw)) * double(wt(k, c, r, s));
              }
            }
          out[i++] = acc;
        }
    }
  return out;
}

namespace detail {
// Sum of a[i] * b[i] over n elements with eight independent partial sums (vectorisable
// without -ffast-math).
inline double dot(const double* a, const double* b, std::size_t n) {
  double part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  const std::size_t blocks = n / 8, tail = n % 8;
  for (std::size_t k = 0; k < blocks; ++k)
    for (int j = 0; j < 8; ++j) part[j] += a[8 * k + j] * b[8 * k + j];
  double acc = 0;
  for (std::size_t t = 0; t < tail; ++t) acc += a[8 * blocks + t] * b[8 * blocks + t];
  for (int j = 0; j < 8; ++j) acc += part[j];
  return acc;
}
}  // namespace detail

// The number of host threads conv2d uses by default: the cores this process may run on (its
// affinity mask on Linux: under mpirun or srun, a rank's own cores), at least 1.
inline int reference_threads() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

template <class In, class Wt, class Bias>
std::vector<double> conv2d(const conv2d_params& p, const In& in, const Wt& wt, const Bias& bias,
                           int threads = reference_threads()) {
  const int P = p.p(), Q = p.q(), cpg = p.c_per_group(), kpg = p.k_per_group();
  const int sh = p.row_stride(), sw = p.col_stride(), pt = p.pad_top(), pl = p.pad_left();
  const std::size_t PQ = std::size_t(P) * Q, CRS = std::size_t(cpg) * p.r * p.s;
  std::vector<double> out(std::size_t(p.n) * p.k * PQ);
  // Few output positions (fully connected and late layers): dot products over crs, with the
  // im2col matrix stored position-major. Otherwise: rank-1 updates over blocks of positions,
  // four filters at a time, with the matrix stored crs-major.
  const bool dot_form = PQ < 64;
  // One (group, image) pair is a unit of work with its own output block; threads take pairs in
  // turn, each with its own buffers. Every output is summed in the same order whatever the
  // thread count, so the result does not depend on it (the tests hold it bitwise).
  auto pairs_from = [&](int first_pair, int stride) {
    std::vector<double> col(CRS * PQ), w(std::size_t(kpg) * CRS);
    int loaded_group = -1;
    for (int pair = first_pair; pair < p.groups * p.n; pair += stride) {
      const int g = pair / p.n, n = pair % p.n;
      if (g != loaded_group) {
        for (int k = 0; k < kpg; ++k)
          for (int c = 0; c < cpg; ++c)
            for (int r = 0; r < p.r; ++r)
              for (int s = 0; s < p.s; ++s)
                w[std::size_t(k) * CRS + (std::size_t(c) * p.r + r) * p.s + s] = double(wt(g * kpg + k, c, r, s));
        loaded_group = g;
      }
      for (int c = 0; c < cpg; ++c)
        for (int r = 0; r < p.r; ++r)
          for (int s = 0; s < p.s; ++s) {
            const std::size_t crs = (std::size_t(c) * p.r + r) * p.s + s;
            for (int oh = 0; oh < P; ++oh) {
              const int ih = oh * sh - pt + r * p.dilation_h;
              for (int ow = 0; ow < Q; ++ow) {
                const int iw = ow * sw - pl + s * p.dilation_w;
                const double v = ih < 0 || ih >= p.h || iw < 0 || iw >= p.w
                                     ? 0.0 : double(in(n, g * cpg + c, ih, iw));
                const std::size_t pq = std::size_t(oh) * Q + ow;
                col[dot_form ? pq * CRS + crs : crs * PQ + pq] = v;
              }
            }
          }
      double* o = out.data() + (std::size_t(n) * p.k + std::size_t(g) * kpg) * PQ;
      if (dot_form) {
        for (int k = 0; k < kpg; ++k)
          for (std::size_t pq = 0; pq < PQ; ++pq)
            o[k * PQ + pq] = double(bias(g * kpg + k)) + detail::dot(&w[k * CRS], &col[pq * CRS], CRS);
        continue;
      }
      constexpr std::size_t block = 256;  // 4 x 256 accumulators: 8 KiB, stays in L1
      for (std::size_t pq0 = 0; pq0 < PQ; pq0 += block) {
        const std::size_t nb = std::min(block, PQ - pq0);
        for (int k0 = 0; k0 < kpg; k0 += 4) {
          const int nk = std::min(4, kpg - k0);
          double acc[4][block];
          for (int j = 0; j < 4; ++j)
            for (std::size_t t = 0; t < nb; ++t) acc[j][t] = 0.0;
          for (std::size_t crs = 0; crs < CRS; ++crs) {
            const double* x = &col[crs * PQ + pq0];
            double wk[4];
            for (int j = 0; j < 4; ++j) wk[j] = j < nk ? w[std::size_t(k0 + j) * CRS + crs] : 0.0;
            for (std::size_t t = 0; t < nb; ++t) {
              acc[0][t] += wk[0] * x[t];
              acc[1][t] += wk[1] * x[t];
              acc[2][t] += wk[2] * x[t];
              acc[3][t] += wk[3] * x[t];
            }
          }
          for (int j = 0; j < nk; ++j) {
            const double b = double(bias(g * kpg + k0 + j));
            for (std::size_t t = 0; t < nb; ++t) o[std::size_t(k0 + j) * PQ + pq0 + t] = b + acc[j][t];
          }
        }
      }
    }
  };
  // Each thread holds its own im2col matrix and filters: at most 4 GiB of them in all (a
  // VGG-16 conv1_2 image's matrix alone is 231 MB), and never fewer than one thread.
  const int pairs = p.groups * p.n;
  const double per_thread = double(CRS) * double(PQ + std::size_t(kpg)) * sizeof(double);
  const int by_memory = int(std::max(1.0, 4.0 * double(1ull << 30) / std::max(per_thread, 1.0)));
  const int t = std::max(1, std::min({threads, pairs, by_memory}));
  // An exception in a thread (std::bad_alloc above all) is carried to the caller, as it would
  // be from one thread, instead of ending the process.
  std::vector<std::exception_ptr> failed(static_cast<std::size_t>(t));
  auto work = [&](int first_pair) {
    try {
      pairs_from(first_pair, t);
    } catch (...) {
      failed[std::size_t(first_pair)] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  try {
    for (int i = 1; i < t; ++i) pool.emplace_back(work, i);
  } catch (...) {
    failed[0] = std::current_exception();  // no more threads: the ones started finish first
  }
  if (!failed[0]) work(0);
  for (auto& th : pool) th.join();
  for (const auto& e : failed)
    if (e) std::rethrow_exception(e);
  return out;
}

}  // namespace kcnn::reference
