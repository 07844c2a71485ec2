// Native CUDA kernels (see native_cuda.hpp). Plain CUDA C++: no Kokkos, no library.
#include "native_cuda.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace kcnn::native_cuda {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// No __restrict__: a Kokkos View promises no absence of aliasing either, and the comparison is
// about the abstraction, not about what the compiler may assume.
__global__ void conv2d_direct_nchw_kernel(const float* in, const float* wt, const float* bias, float* out,
                                          conv_shape p, long long total) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int P = p.p(), Q = p.q(), cpg = p.c / p.groups;
  const int ow = int(i % Q), oh = int((i / Q) % P), k = int((i / ((long long)P * Q)) % p.k);
  const int n = int(i / ((long long)P * Q * p.k));
  const int c0 = (k / (p.k / p.groups)) * cpg;
  float acc = bias[k];
  for (int c = 0; c < cpg; ++c)
    for (int r = 0; r < p.r; ++r) {
      const int ih = oh * p.stride - p.pad + r;
      if (ih < 0 || ih >= p.h) continue;
      for (int s = 0; s < p.s; ++s) {
        const int iw = ow * p.stride - p.pad + s;
        if (iw < 0 || iw >= p.w) continue;
        acc += in[((long long)(n * p.c + c0 + c) * p.h + ih) * p.w + iw] * wt[((long long)(k * cpg + c) * p.r + r) * p.s + s];
      }
    }
  out[i] = acc;
}

__global__ void pool_max_nchw_kernel(const float* in, float* out, pool_shape p, long long total) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int P = p.p, Q = p.q;
  const int pw = int(i % Q), ph = int((i / Q) % P);
  const long long nc = i / ((long long)P * Q);
  const int h0 = max(ph * p.stride - p.pad, 0), w0 = max(pw * p.stride - p.pad, 0);
  const int h1 = min(ph * p.stride - p.pad + p.r, p.h), w1 = min(pw * p.stride - p.pad + p.s, p.w);
  float m = -INFINITY;
  for (int h = h0; h < h1; ++h)
    for (int w = w0; w < w1; ++w) m = fmaxf(m, in[(nc * p.h + h) * p.w + w]);
  out[i] = m;
}

__global__ void softmax_pixel_rows_nchw_kernel(const float* in, float* out, int n, int c, int hw) {
  const long long row = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (row >= (long long)n * hw) return;
  const long long base = (row / hw) * (long long)c * hw + row % hw;  // consecutive rows: consecutive pixels
  float m = -INFINITY;
  for (int j = 0; j < c; ++j) m = fmaxf(m, in[base + (long long)j * hw]);
  float sum = 0.f;
  for (int j = 0; j < c; ++j) sum += __expf(in[base + (long long)j * hw] - m);
  const float inv = 1.f / sum;
  for (int j = 0; j < c; ++j) out[base + (long long)j * hw] = __expf(in[base + (long long)j * hw] - m) * inv;
}

// The block size the CUDA occupancy calculator gives the kernel, as Kokkos chooses one for a
// RangePolicy (cuda_get_opt_block_size: the largest block at the best occupancy), not a fixed 256.
template <class Kernel>
int block_for(Kernel k) {
  int min_grid = 0, block = 0;
  check(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, k, 0, 0), "cudaOccupancyMaxPotentialBlockSize");
  return block;
}
unsigned grid(long long total, int block) { return unsigned((total + block - 1) / block); }

}  // namespace

void conv2d_direct_nchw(const float* in, const float* wt, const float* bias, float* out, const conv_shape& p,
                        void* stream) {
  const long long total = (long long)p.n * p.k * p.p() * p.q();
  static const int block = block_for(conv2d_direct_nchw_kernel);
  conv2d_direct_nchw_kernel<<<grid(total, block), block, 0, static_cast<cudaStream_t>(stream)>>>(in, wt, bias, out, p,
                                                                                                total);
  check(cudaGetLastError(), "native conv2d launch");
}

void pool_max_nchw(const float* in, float* out, const pool_shape& p, void* stream) {
  const long long total = (long long)p.n * p.c * p.p * p.q;
  static const int block = block_for(pool_max_nchw_kernel);
  pool_max_nchw_kernel<<<grid(total, block), block, 0, static_cast<cudaStream_t>(stream)>>>(in, out, p, total);
  check(cudaGetLastError(), "native pool launch");
}

void softmax_pixel_rows_nchw(const float* in, float* out, int n, int c, int hw, void* stream) {
  const long long rows = (long long)n * hw;
  static const int block = block_for(softmax_pixel_rows_nchw_kernel);
  softmax_pixel_rows_nchw_kernel<<<grid(rows, block), block, 0, static_cast<cudaStream_t>(stream)>>>(in, out, n, c,
                                                                                                    hw);
  check(cudaGetLastError(), "native softmax launch");
}

}  // namespace kcnn::native_cuda
