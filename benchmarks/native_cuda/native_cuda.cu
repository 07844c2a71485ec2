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

// softmax_vector's GPU mappings in nchw. Channels contiguous (h * w = 1, classifiers): a warp
// per row (8 rows per block of 32 x 8), lanes along the channels, three sweeps (max; exp, store
// and sum; scale), the reductions across the warp by shuffles as Kokkos' ThreadVectorRange
// reduction does.
__device__ float warp_max(float v) {
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__global__ void softmax_rows_nchw_kernel(const float* in, float* out, int n, int c) {
  const int row = blockIdx.x * blockDim.y + threadIdx.y;
  if (row >= n) return;  // a whole warp: the shuffles below see all 32 lanes
  const float* x = in + (long long)row * c;
  float* y = out + (long long)row * c;
  float m = -INFINITY;
  for (int j = threadIdx.x; j < c; j += 32) m = fmaxf(m, x[j]);
  m = warp_max(m);
  float sum = 0.f;
  for (int j = threadIdx.x; j < c; j += 32) {
    const float e = __expf(x[j] - m);
    y[j] = e;
    sum += e;
  }
  const float inv = 1.f / warp_sum(sum);
  for (int j = threadIdx.x; j < c; j += 32) y[j] *= inv;
}
// Channels strided (h * w > 1): a block of 32 consecutive pixels (threadIdx.x) x `segments`
// channel segments (threadIdx.y); each thread reduces its segment (max, then sum of exp), the
// segments meet in shared memory, and each thread writes its segment (kcnn's
// softmax_split_channels_functor).
__global__ void softmax_split_channels_nchw_kernel(const float* in, float* out, int n, int c, int hw) {
  extern __shared__ float partial[];  // [2][segments][32]
  const int segments = blockDim.y, y = threadIdx.y, x = threadIdx.x;
  float* mx = partial;
  float* sm = partial + segments * 32;
  const long long pixel = blockIdx.x * 32LL + x;
  const bool live = pixel < (long long)n * hw;
  const long long base = live ? (pixel / hw) * (long long)c * hw + pixel % hw : 0;
  const int seg = (c + segments - 1) / segments, c0 = y * seg, c1 = min(c0 + seg, c);
  float a = -INFINITY, b = 0.f;
  if (live) {
    for (int j = c0; j < c1; ++j) a = fmaxf(a, in[base + (long long)j * hw]);
    for (int j = c0; j < c1; ++j) b += __expf(in[base + (long long)j * hw] - a);
  }
  mx[y * 32 + x] = a;
  sm[y * 32 + x] = b;
  __syncthreads();
  if (!live) return;
  a = -INFINITY;
  b = 0.f;
  for (int t = 0; t < segments; ++t) a = fmaxf(a, mx[t * 32 + x]);
  for (int t = 0; t < segments; ++t) b += sm[t * 32 + x] * __expf(mx[t * 32 + x] - a);
  const float inv = 1.f / b;
  for (int j = c0; j < c1; ++j) out[base + (long long)j * hw] = __expf(in[base + (long long)j * hw] - a) * inv;
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

void softmax_nchw(const float* in, float* out, int n, int c, int hw, void* stream) {
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  if (hw == 1) {
    softmax_rows_nchw_kernel<<<grid(n, 8), dim3(32, 8), 0, st>>>(in, out, n, c);
  } else {
    const int segments = c / 32 < 1 ? 1 : c / 32 > 16 ? 16 : c / 32;  // softmax_split_segments
    const long long pixels = (long long)n * hw;
    softmax_split_channels_nchw_kernel<<<grid(pixels, 32), dim3(32, segments), 2 * segments * 32 * sizeof(float), st>>>(
        in, out, n, c, hw);
  }
  check(cudaGetLastError(), "native softmax launch");
}

}  // namespace kcnn::native_cuda
