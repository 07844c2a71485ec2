#pragma once
// Team launch helpers: scratch limits come from the backend, never assumed; team sizes from the
// backend on a host, explicit on a GPU (kcnn/map.hpp).
#include <kcnn/lanes.hpp>
#include <kcnn/map.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>

namespace kcnn {

// Bytes of level-0 team scratch (CUDA shared memory) one team may use on this backend. The
// GPU-model build runs on a host backend but models a GPU: there, what Kokkos' CUDA backend
// gives (Kokkos_Cuda_Parallel_Team.hpp, scratch_size_max: sharedMemPerBlock, 48 KiB, less
// (1024 + 2) doubles and an int64 reserved for team reductions).
template <class Exec>
std::size_t scratch_limit(int level = 0) {
#if defined(KCNN_GPU_MODEL)
  if (level == 0) return std::size_t(48 * 1024 - (1024 + 2) * 8 - 8);
#endif
  return std::size_t(Kokkos::TeamPolicy<Exec>::scratch_size_max(level));
}

// Launches f over `league` teams with `scratch_bytes` of level-0 scratch each, one lane per
// thread. Host: the team size the backend recommends for this functor, capped at `max_team`. GPU:
// `max_team` threads (Kokkos would take team_size_recommended, which depends on the kernel's
// registers: the model cannot know them, so the GPU path does not ask).
template <class Exec, class Functor>
void launch_teams_recommended(const char* label, const Exec& exec, int league, std::size_t scratch_bytes,
                              const Functor& f, int max_team) {
  int team = max_team;
  if constexpr (host_backend<Exec>) {
    Kokkos::TeamPolicy<Exec> probe(exec, league, Kokkos::AUTO);
    probe.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes));
    team = std::max(1, std::min(probe.team_size_recommended(f, Kokkos::ParallelForTag()), max_team));
  }
  launch_teams(label, exec, league, team, 1, scratch_bytes, f);
}

// The geometry of a register-tiled team kernel (kcnn/conv2d/implicit_gemm.hpp): a team of
// side x side threads (or side / 2 x 2 side in its narrow and wide tiles), each holding a fragment, and the fewest teams a launch should have before
// it splits its reduction over more teams. GPU paths: 16 x 16 (256 threads, two teams an SM at
// 128 registers) and 264 teams (two on each of 132 SMs); host backends: a team of one thread (what
// a core runs) and no split.
template <class Exec>
struct register_tile_geometry {
  static constexpr int side = host_backend<Exec> ? 1 : 16;
  static constexpr long min_teams = host_backend<Exec> ? 1 : 264;
};

}  // namespace kcnn
