#pragma once
// kcnn's one mapping layer: every kernel launch and every nested parallel loop of kcnn goes
// through these names, never through Kokkos::parallel_for directly.
//
// In a normal build each is the Kokkos construct it names. In the GPU-model build
// (KCNN_GPU_MODEL, preset gpu-model) the kernels take their GPU code paths (host_backend is
// false) on the Serial backend, and these names run each launch in the geometry a CUDA build
// would give it, telling the model (kcnn/model_hooks.hpp) which CUDA block and thread executes
// each iteration. The rules are those of Kokkos' CUDA backend (Kokkos 4.x sources, cited per
// rule; docs/gpu-model.md):
//  * TeamPolicy(league, team, vector): one block per league rank, blockDim = (vector, team, 1)
//    (Kokkos_Cuda_Parallel_Team.hpp, ParallelFor<TeamPolicy>: `dim3 block(m_vector_size,
//    m_team_size, 1)`; grid = league).
//  * TeamThreadRange(m, b, e): thread y runs i = b + threadIdx.y, stepping blockDim.y
//    (Kokkos_Cuda_Team.hpp, parallel_for(TeamThreadRangeBoundariesStruct)).
//  * ThreadVectorRange(m, b, e): lane x runs i = b + threadIdx.x, stepping blockDim.x
//    (Kokkos_Cuda_Team.hpp, parallel_for(ThreadVectorRangeBoundariesStruct)).
//  * RangePolicy(0, n): blockDim = (1, block, 1), i = blockIdx.x * blockDim.y + threadIdx.y
//    (Kokkos_Cuda_Parallel_Range.hpp). Kokkos picks the block from the kernel's registers
//    (Kokkos_Cuda_BlockSize_Deduction.hpp: the smallest block of at least 128 threads at the
//    highest occupancy); a host cannot know them, so the model takes kcnn::gpu_range_block = 128,
//    what that rule gives a kernel of at most 32 registers, stated in the model's context.
//  * MDRangePolicy: see launch_mdrange.
// Code a team runs outside any nested range is run by all its threads on a GPU; the model
// counts it for all of them.
#include <kcnn/model_hooks.hpp>
#include <kcnn/tuning.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <type_traits>
#if defined(KCNN_GPU_MODEL)
#include <typeinfo>
#endif

namespace kcnn {

// Threads per block the model assumes for a RangePolicy launch (see above).
inline constexpr int gpu_range_block = 128;

// Every launch here carries Kokkos' light-weight hint. Without it Kokkos' CUDA backend launches a
// driver (functor + policy) of 512 bytes or more from constant memory, copying it there and
// waiting on the host for the previous kernel first (Kokkos_Cuda_KernelLaunch.hpp,
// DeduceCudaLaunchMechanism; CudaTraits::ConstantMemoryUseThreshold); with it a driver under
// KernelArgumentLimit (4 KiB) is passed as kernel arguments. Only the constant-memory variants
// ask for constant memory (launch_range_policy, kcnn/constant.hpp). No effect on host backends.
using light_weight = Kokkos::Experimental::WorkItemProperty::HintLightWeight_t;
// A functor this large would leave the kernel arguments for global memory (the driver adds the
// policy, a few hundred bytes): refused at compile time.
inline constexpr std::size_t launch_functor_limit = 3584;

#if defined(KCNN_GPU_MODEL)
namespace model::detail {
// Runs a team functor on one Serial team while the model sees the CUDA block.
template <class F>
struct team_block {
  F f;
  template <class Member>
  void operator()(const Member& m) const {
    block_begin(m.league_rank(), &f, sizeof(F));
    set_thread(-1, -1, -1);
    f(m);
    block_end();
  }
};
// Runs the iterations of one CUDA block of a RangePolicy launch, thread by thread.
template <class F>
struct range_block {
  F f;
  std::size_t n;
  void operator()(const std::size_t b) const {
    block_begin((long long)b, &f, sizeof(F));
    const std::size_t first = b * std::size_t(gpu_range_block);
    for (int t = 0; t < gpu_range_block && first + std::size_t(t) < n; ++t) {
      set_thread(0, t, 0);
      f(first + std::size_t(t));
    }
    block_end();
  }
};
}  // namespace model::detail
#endif

// Launches f(member) over `league` teams of `team` threads of `vector` lanes with
// `scratch_bytes` of level-0 team scratch per team. The geometry is the caller's, explicit.
// Traits: Kokkos policy traits a kernel states (Kokkos::LaunchBounds<threads, blocks per SM>).
template <class... Traits, class Exec, class F>
void launch_teams(const char* label, const Exec& exec, int league, int team, int vector, std::size_t scratch_bytes,
                  const F& f) {
  if (league <= 0) return;
#if defined(KCNN_GPU_MODEL)
  model::launch_begin(model::launch_geometry{label, league, vector, team, 1, scratch_bytes, typeid(F).name()});
  Kokkos::TeamPolicy<Exec> policy(exec, league, 1, 1);
  if (scratch_bytes > 0) policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes));
  Kokkos::parallel_for(label, policy, model::detail::team_block<F>{f});
  model::launch_end();
#else
  static_assert(sizeof(F) <= launch_functor_limit, "kcnn::launch_teams: functor too large for kernel arguments");
  // A team is what the backend holds: a host backend's teams are at most its threads (a GPU
  // geometry run on a host, the portable paths, keeps its league and lanes).
  if constexpr (host_backend<Exec>)
    team = std::max(1, std::min(team, Kokkos::TeamPolicy<Exec>(exec, league, 1, vector).team_size_max(f, Kokkos::ParallelForTag())));
  Kokkos::TeamPolicy<Exec, light_weight, Traits...> policy(exec, league, team, vector);
  if (scratch_bytes > 0) policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes));
  Kokkos::parallel_for(label, policy, f);
#endif
}

// Launches f(i) for i in [0, n).
template <class Exec, class F>
void launch_range(const char* label, const Exec& exec, std::size_t n, const F& f) {
  if (n == 0) return;
#if defined(KCNN_GPU_MODEL)
  const std::size_t blocks = (n + gpu_range_block - 1) / gpu_range_block;
  model::launch_begin(model::launch_geometry{label, (long long)blocks, 1, gpu_range_block, 1, 0, typeid(F).name()});
  Kokkos::parallel_for(label, Kokkos::RangePolicy<Exec>(exec, 0, blocks), model::detail::range_block<F>{f, n});
  model::launch_end();
#else
  static_assert(sizeof(F) <= launch_functor_limit, "kcnn::launch_range: functor too large for kernel arguments");
  Kokkos::parallel_for(label, Kokkos::RangePolicy<Exec, light_weight>(exec, 0, n), f);
#endif
}

// As launch_range, with a policy that asks Kokkos for constant memory on CUDA (kcnn/constant.hpp).
template <class Exec, class F, class Policy>
void launch_range_policy(const char* label, const Policy& policy, std::size_t n, const F& f) {
#if defined(KCNN_GPU_MODEL)
  (void)policy;
  launch_range(label, Exec{}, n, f);
#else
  (void)n;
  Kokkos::parallel_for(label, policy, f);
#endif
}

// Launches f(i0, ..., i{R-1}) over [lower, upper) in tiles of `tile` (Kokkos::MDRangePolicy
// with Iterate::Right inside and between tiles for Right, Left for Left). CUDA
// (Kokkos_Cuda_Parallel_MDRange.hpp, KokkosExp_IterateTileGPU.hpp): rank 2 gives
// blockDim = (t0, t1, 1), rank 3 (t0, t1, t2), rank 4 (t0 * t1, t2, t3) with index 0 the faster
// part of threadIdx.x; threadIdx.x runs along index 0 whatever the iteration order; tiles are
// laid over the blocks of the grid the same way (see model_md_block in the model build).
template <int R, Kokkos::Iterate Order, class Exec, class F>
void launch_mdrange(const char* label, const Exec& exec, const std::array<long, R>& lower,
                    const std::array<long, R>& upper, const std::array<long, R>& tile, const F& f);

#if defined(KCNN_GPU_MODEL)
namespace model::detail {
// f(i) for i in [begin, end), iteration i run by the thread whose coordinate along Dim (0: x,
// the vector lanes; 1: y, the team's threads) is (i - begin) mod blockDim: Kokkos' CUDA loops
// `for (i = begin + threadIdx; i < end; i += blockDim)`. The other coordinates stay the caller's.
template <int Dim, class F>
void along(int begin, int end, const F& f) {
  const block_dims b = current_block_dims();
  const int width = Dim == 0 ? b.x : b.y;
  const thread_coords outer = current_thread();
  for (int i = begin; i < end; ++i) {
    const int t = (i - begin) % width;
    set_thread(Dim == 0 ? t : outer.x, Dim == 1 ? t : outer.y, outer.z);
    f(i);
  }
  set_thread(outer.x, outer.y, outer.z);
}
// The reduction of f(i, acc) over [0, n) along Dim into `result`: a Kokkos reducer or a float (a sum).
template <int Dim, class F, class Result>
void reduce_along(int n, const F& f, Result&& result) {
  using R = std::remove_reference_t<Result>;
  if constexpr (std::is_arithmetic_v<R>) {
    R acc = R(0);
    along<Dim>(0, n, [&](const int i) { f(i, acc); });
    result = acc;
  } else {
    typename R::value_type acc;
    result.init(acc);
    along<Dim>(0, n, [&](const int i) { f(i, acc); });
    result.reference() = acc;
  }
}
}  // namespace model::detail
#endif

// f(i) for i in [begin, end) over the threads of a team (TeamThreadRange).
template <class Member, class F>
KOKKOS_INLINE_FUNCTION void team_rows(const Member& m, int begin, int end, const F& f) {
#if defined(KCNN_GPU_MODEL)
  (void)m;
  model::detail::along<1>(begin, end, f);
#else
  Kokkos::parallel_for(Kokkos::TeamThreadRange(m, begin, end), f);
#endif
}
template <class Member, class F>
KOKKOS_INLINE_FUNCTION void team_rows(const Member& m, int n, const F& f) {
  team_rows(m, 0, n, f);
}

// f(i) for i in [begin, end) over the vector lanes of the calling team thread (ThreadVectorRange).
template <class Member, class F>
KOKKOS_INLINE_FUNCTION void vector_lanes(const Member& m, int begin, int end, const F& f) {
#if defined(KCNN_GPU_MODEL)
  (void)m;
  model::detail::along<0>(begin, end, f);
#else
  Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, begin, end), f);
#endif
}

template <class Member, class F>
KOKKOS_INLINE_FUNCTION void vector_lanes(const Member& m, int n, const F& f) {
  vector_lanes(m, 0, n, f);
}

// The reduction of f(i, acc) over [0, n) by the threads of a team (TeamThreadRange), into
// `result`: a Kokkos reducer (Kokkos::Max<float>(x)) or a float (a sum).
template <class Member, class F, class Result>
KOKKOS_INLINE_FUNCTION void team_rows_reduce(const Member& m, int n, const F& f, Result&& result) {
#if defined(KCNN_GPU_MODEL)
  (void)m;
  model::detail::reduce_along<1>(n, f, result);
#else
  Kokkos::parallel_reduce(Kokkos::TeamThreadRange(m, n), f, result);
#endif
}

// The reduction of f(i, acc) over [0, n) by the vector lanes of the calling thread.
template <class Member, class F, class Result>
KOKKOS_INLINE_FUNCTION void vector_lanes_reduce(const Member& m, int n, const F& f, Result&& result) {
#if defined(KCNN_GPU_MODEL)
  (void)m;
  model::detail::reduce_along<0>(n, f, result);
#else
  Kokkos::parallel_reduce(Kokkos::ThreadVectorRange(m, n), f, result);
#endif
}

// A team barrier. The model runs each nested range to completion before the next statement,
// which is what the barrier guarantees, so there it has nothing to do.
template <class Member>
KOKKOS_INLINE_FUNCTION void team_barrier(const Member& m) {
#if defined(KCNN_GPU_MODEL)
  (void)m;
#else
  m.team_barrier();
#endif
}

// Per-thread state of a team that lives across its barriers: on a GPU each thread's registers
// (a register tile's accumulators, loads prefetched for the next step). each_team_thread(m, st, f)
// runs f(t, state of thread t) on every thread t of the team: on a backend, the calling thread
// with its own state; in the GPU-model build, which runs a team on one host thread, every thread
// of the modelled block in turn, each with its own state (MaxTeam bounds the block; the states
// live on the host stack, where the model counts them as registers).
template <class State, int MaxTeam>
struct team_thread_state {
#if defined(KCNN_GPU_MODEL)
  State s[MaxTeam];
#else
  State s[1];
#endif
};
template <class Member, class State, int MaxTeam, class F>
KOKKOS_INLINE_FUNCTION void each_team_thread(const Member& m, team_thread_state<State, MaxTeam>& st, const F& f) {
#if defined(KCNN_GPU_MODEL)
  (void)m;
  const model::block_dims b = model::current_block_dims();
  const model::thread_coords outer = model::current_thread();
  for (int t = 0; t < b.y && t < MaxTeam; ++t) {
    model::set_thread(0, t, 0);
    f(t, st.s[t]);
  }
  model::set_thread(outer.x, outer.y, outer.z);
#else
  f(m.team_rank(), st.s[0]);
#endif
}

// A level-0 team scratch View (shared memory on CUDA) of the given extents.
template <class ScratchView, class Member, class... Extents>
KOKKOS_INLINE_FUNCTION ScratchView team_scratch(const Member& m, Extents... extents) {
  ScratchView v(m.team_scratch(0), extents...);
#if defined(KCNN_GPU_MODEL)
  model::scratch_region(v.data(), v.span() * sizeof(typename ScratchView::value_type));
#endif
  return v;
}

#if defined(KCNN_GPU_MODEL)
namespace model::detail {
// The CUDA block dims of an MDRange tile and the thread of an index within its tile
// (KokkosExp_IterateTileGPU.hpp: rank 2 (t0, t1), rank 3 (t0, t1, t2), rank 4 (t0 * t1, t2, t3)).
template <int R>
launch_geometry md_block(const std::array<long, R>& tile) {
  launch_geometry g;
  if constexpr (R == 2) g.block_x = int(tile[0]), g.block_y = int(tile[1]);
  else if constexpr (R == 3) g.block_x = int(tile[0]), g.block_y = int(tile[1]), g.block_z = int(tile[2]);
  else g.block_x = int(tile[0] * tile[1]), g.block_y = int(tile[2]), g.block_z = int(tile[3]);
  return g;
}
template <int R, Kokkos::Iterate Order>
thread_coords md_thread(const std::array<long, R>& tile, const std::array<long, R>& in_tile) {
  if constexpr (R == 2) return {int(in_tile[0]), int(in_tile[1]), 0};
  else if constexpr (R == 3) return {int(in_tile[0]), int(in_tile[1]), int(in_tile[2])};
  else if constexpr (Order == Kokkos::Iterate::Right)
    return {int(in_tile[1] + tile[1] * in_tile[0]), int(in_tile[2]), int(in_tile[3])};  // IT:426-445
  else return {int(in_tile[0] + tile[0] * in_tile[1]), int(in_tile[2]), int(in_tile[3])};  // IT:353-362
}
// The order in which a block's linear id (blockIdx.x + gridDim.x * (blockIdx.y + ...)) walks the
// tile coordinates: index 0 fastest, except rank 4 with Iterate::Right, whose blockIdx.x takes
// tile 1 fastest (IT:426-445).
template <int R, Kokkos::Iterate Order>
constexpr std::array<int, R> md_block_order() {
  std::array<int, R> o{};
  for (int d = 0; d < R; ++d) o[d] = d;
  if constexpr (R == 4 && Order == Kokkos::Iterate::Right) o[0] = 1, o[1] = 0;
  return o;
}
template <int R, Kokkos::Iterate Order, class F>
struct md_block_runner {
  F f;
  std::array<long, R> lower, upper, tile, tiles;
  void operator()(const std::size_t b) const {
    block_begin((long long)b, &f, sizeof(F));
    std::array<long, R> base{};
    std::size_t rest = b;
    for (const int d : md_block_order<R, Order>()) {
      base[d] = lower[d] + long(rest % std::size_t(tiles[d])) * tile[d];
      rest /= std::size_t(tiles[d]);
    }
    std::size_t per_tile = 1;
    for (int d = 0; d < R; ++d) per_tile *= std::size_t(tile[d]);
    for (std::size_t k = 0; k < per_tile; ++k) {
      std::array<long, R> in{}, idx{};
      std::size_t r2 = k;
      bool inside = true;
      for (int d = 0; d < R; ++d) {
        in[d] = long(r2 % std::size_t(tile[d]));
        r2 /= std::size_t(tile[d]);
        idx[d] = base[d] + in[d];
        inside = inside && idx[d] < upper[d];
      }
      if (!inside) continue;
      const thread_coords c = md_thread<R, Order>(tile, in);
      set_thread(c.x, c.y, c.z);
      if constexpr (R == 2) f(idx[0], idx[1]);
      else if constexpr (R == 3) f(idx[0], idx[1], idx[2]);
      else f(idx[0], idx[1], idx[2], idx[3]);
    }
    block_end();
  }
};
}  // namespace model::detail
#endif

template <int R, Kokkos::Iterate Order, class Exec, class F>
void launch_mdrange(const char* label, const Exec& exec, const std::array<long, R>& lower,
                    const std::array<long, R>& upper, const std::array<long, R>& tile, const F& f) {
  static_assert(R >= 2 && R <= 4, "kcnn::launch_mdrange: ranks 2 to 4");
  for (int d = 0; d < R; ++d)
    if (upper[d] <= lower[d]) return;
#if defined(KCNN_GPU_MODEL)
  std::array<long, R> tiles{};
  std::size_t blocks = 1;
  for (int d = 0; d < R; ++d) {
    tiles[d] = (upper[d] - lower[d] + tile[d] - 1) / tile[d];
    blocks *= std::size_t(tiles[d]);
  }
  model::launch_geometry g = model::detail::md_block<R>(tile);
  g.label = label;
  g.blocks = (long long)blocks;
  g.kernel = typeid(F).name();
  model::launch_begin(g);
  Kokkos::parallel_for(label, Kokkos::RangePolicy<Exec>(exec, 0, blocks),
                       model::detail::md_block_runner<R, Order, F>{f, lower, upper, tile, tiles});
  model::launch_end();
#else
  static_assert(sizeof(F) <= launch_functor_limit, "kcnn::launch_mdrange: functor too large for kernel arguments");
  using policy = Kokkos::MDRangePolicy<Exec, Kokkos::Rank<R, Order, Order>, light_weight>;
  using index = typename policy::index_type;
  Kokkos::Array<index, R> lo, hi, ti;
  for (int d = 0; d < R; ++d) lo[d] = index(lower[d]), hi[d] = index(upper[d]), ti[d] = index(tile[d]);
  if constexpr (R == 2)
    Kokkos::parallel_for(label, policy(exec, {lo[0], lo[1]}, {hi[0], hi[1]}, {ti[0], ti[1]}), f);
  else if constexpr (R == 3)
    Kokkos::parallel_for(label, policy(exec, {lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}, {ti[0], ti[1], ti[2]}), f);
  else
    Kokkos::parallel_for(label,
                         policy(exec, {lo[0], lo[1], lo[2], lo[3]}, {hi[0], hi[1], hi[2], hi[3]},
                                {ti[0], ti[1], ti[2], ti[3]}),
                         f);
#endif
}

}  // namespace kcnn
