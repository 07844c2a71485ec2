#pragma once
// Launching functors that carry their parameters by value ("constant memory").
//
// On CUDA, Kokkos launches a HintHeavyWeight kernel through __constant__ memory when its *driver*
// (Kokkos::Impl::ParallelFor<Functor, Policy, Cuda>: the functor plus the policy) is under 32 KiB,
// and through global memory otherwise (Kokkos_Cuda_KernelLaunch.hpp, DeduceCudaLaunchMechanism).
// Members are then read with ld.const: one broadcast per warp when all lanes read the same word,
// serialised when they do not. Each such launch waits on the host for the previous constant
// launch to finish, then copies the driver to the symbol: the upload is part of every launch.
// On host backends the values simply travel inside the functor.
#include <kcnn/map.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace kcnn {

namespace detail {
template <class Exec>
using constant_policy = decltype(Kokkos::Experimental::require(
    std::declval<Kokkos::RangePolicy<Exec>>(), Kokkos::Experimental::WorkItemProperty::HintHeavyWeight));
}  // namespace detail

// True when Kokkos will launch Functor over Exec through constant memory (always true off CUDA,
// where "constant" means by value in the functor). Asked of Kokkos itself, not of the functor's
// size, so a capacity change that pushed the driver over the limit fails to compile instead of
// silently becoming a global-memory launch.
template <class Exec, class Functor>
constexpr bool launches_from_constant_memory() {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<Exec, Kokkos::Cuda>) {
    using driver = Kokkos::Impl::ParallelFor<Functor, detail::constant_policy<Exec>, Kokkos::Cuda>;
    return Kokkos::Impl::DeduceCudaLaunchMechanism<driver>::launch_mechanism ==
           Kokkos::Impl::Experimental::CudaLaunchMechanism::ConstantMemory;
  }
#endif
  return sizeof(Functor) < 32768;
}

template <class Exec, class Functor>
void parallel_for_constant(const char* label, const Exec& exec, std::size_t n, const Functor& f) {
  static_assert(launches_from_constant_memory<Exec, Functor>(),
                "kcnn: Kokkos would not launch this functor from constant memory (its driver is 32 KiB or more)");
  launch_range_policy<Exec>(label,
                            Kokkos::Experimental::require(Kokkos::RangePolicy<Exec>(exec, 0, n),
                                                          Kokkos::Experimental::WorkItemProperty::HintHeavyWeight),
                            n, f);
}

}  // namespace kcnn
