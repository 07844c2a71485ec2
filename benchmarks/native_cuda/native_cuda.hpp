#pragma once
#if !defined(__CUDACC__) && !defined(__host__)
#define __host__
#define __device__
#endif
// Native CUDA (no Kokkos) versions of three kcnn kernels, to measure what the Kokkos abstraction
// costs, each the same algorithm and thread mapping as the kcnn variant it is compared with, all
// in nchw: direct conv2d = direct_coalesced (a thread per output in storage order), max pooling =
// pool naive (the same), softmax over the channels = softmax vector's GPU mappings in nchw (a
// warp per row, lanes along the channels, when h * w = 1; otherwise blocks of 32 pixels x channel
// segments meeting in shared memory; exp as __expf as kcnn::vmath does on a GPU). No __restrict__, and the block size the occupancy calculator gives,
// as Kokkos' RangePolicy does. Host-callable launchers; the stream is a cudaStream_t.
// Self-contained (no Kokkos, no kcnn headers) so that plain nvcc compiles it in any build.
namespace kcnn::native_cuda {

// Shapes as plain integers (the variant files convert kcnn's parameter structs).
struct conv_shape {
  int n, c, h, w, k, r, s, stride, pad, groups;
  __host__ __device__ int p() const { return (h + 2 * pad - r) / stride + 1; }
  __host__ __device__ int q() const { return (w + 2 * pad - s) / stride + 1; }
};
struct pool_shape {
  int n, c, h, w, r, s, stride, pad, p, q;  // p, q: output size as kcnn computed it (floor or ceil)
};

void conv2d_direct_nchw(const float* in, const float* wt, const float* bias, float* out, const conv_shape& p,
                        void* stream);
void pool_max_nchw(const float* in, float* out, const pool_shape& p, void* stream);
// Softmax over c of an (n, c, hw) tensor, with softmax vector's GPU mapping for that shape.
void softmax_nchw(const float* in, float* out, int n, int c, int hw, void* stream);

}  // namespace kcnn::native_cuda
