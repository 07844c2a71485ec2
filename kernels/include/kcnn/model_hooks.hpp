#pragma once
// What the GPU execution model (a build with KCNN_GPU_MODEL; benchmarks/model/) needs to know
// while a kernel runs on the host in its CUDA launch geometry: which launch, which block, which
// CUDA thread is executing, and where a block's team scratch lies. kcnn/map.hpp calls these; in
// any other build they do not exist and map.hpp calls Kokkos directly.
//
// Threads are CUDA's: block dims (x, y, z), thread coordinates (x, y, z). A coordinate of -1
// means "every thread along that dimension": code a CUDA team runs redundantly (a team's
// prologue outside any nested range is run by all its threads, the body of a TeamThreadRange
// outside a ThreadVectorRange by all vector lanes of that thread).
#if defined(KCNN_GPU_MODEL)
#include <cstddef>

namespace kcnn::model {

struct launch_geometry {
  const char* label = "";
  long long blocks = 0;                   // gridDim.x (Kokkos' league, or the blocks of a range)
  int block_x = 1, block_y = 1, block_z = 1;  // blockDim
  std::size_t scratch_bytes = 0;          // dynamic shared memory per block
  const char* kernel = nullptr;           // typeid(functor).name(): its registers (the model's table)
};

// The executing thread; set by kcnn/map.hpp before each iteration of a mapped loop.
struct thread_coords {
  int x = -1, y = -1, z = -1;
};
// blockDim of the launch being run (set by launch_begin, recorded or not).
struct block_dims {
  int x = 1, y = 1, z = 1;
};
// Out-of-line and compiled without the trace instrumentation (benchmarks/model/recorder.cpp): the
// model's own bookkeeping is not a kernel's memory access, and a call the compiler cannot see
// into keeps it from moving a kernel's loads and stores across a change of thread.
thread_coords current_thread();
void set_thread(int x, int y, int z);
block_dims current_block_dims();

// A launch begins and ends (nothing is recorded unless a model session is open).
void launch_begin(const launch_geometry& g);
void launch_end();
// Block `block` of the current launch starts; `params` is the functor (kernel parameters or
// constant memory on CUDA) the block reads. Everything else on the host thread's stack is the
// simulated thread's registers and locals.
void block_begin(long long block, const void* params, std::size_t params_bytes);
void block_end();
// The threads the modelled GPU holds at once (SMs x threads per SM) while a model session is
// open; 0 otherwise. A kernel's launch choices that depend on the device's size read it
// (kcnn/lanes.hpp's device_concurrency), not the host's.
int device_concurrency();
// [p, p + bytes) is team scratch (shared memory) of the current block.
void scratch_region(const void* p, std::size_t bytes);
// The FLOPs a kernel's launch executes, padding included, where that is more than the work its
// case declares (an implicit GEMM's tile multiplies zeros past a layer's channels): the model's
// FMA pipe and issue bounds count the larger. Summed over the launches of the open session.
void executed_flops(double flops);

}  // namespace kcnn::model
#endif
