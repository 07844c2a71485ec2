#pragma once
// Team launch helpers: scratch limits and team sizes come from the backend, never assumed.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>

namespace kcnn {

// Bytes of level-0 team scratch (CUDA shared memory) one team may use on this backend.
template <class Exec>
std::size_t scratch_limit(int level = 0) {
  return std::size_t(Kokkos::TeamPolicy<Exec>::scratch_size_max(level));
}

// A team policy of `league` teams with `scratch_bytes` of level-0 scratch each, and the
// largest team size the backend recommends for this functor, capped at `max_team`.
template <class Exec, class Functor>
Kokkos::TeamPolicy<Exec> make_team_policy(const Exec& exec, int league, std::size_t scratch_bytes,
                                          const Functor& f, int max_team) {
  Kokkos::TeamPolicy<Exec> probe(exec, league, Kokkos::AUTO);
  probe.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes));
  const int recommended = probe.team_size_recommended(f, Kokkos::ParallelForTag());
  const int team = std::max(1, std::min(recommended, max_team));
  Kokkos::TeamPolicy<Exec> policy(exec, league, team);
  policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes));
  return policy;
}

}  // namespace kcnn
