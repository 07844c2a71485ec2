#pragma once
// Launching functors that carry their parameters by value ("constant memory").
//
// On CUDA a functor between 512 B and 32 KiB launched with the HintHeavyWeight property is
// copied to __constant__ memory and its members are read with ld.const: one broadcast per warp
// when all lanes read the same word, serialised when they do not. On host backends the values
// simply travel inside the functor.
#include <Kokkos_Core.hpp>

#include <cstddef>

namespace kcnn {

// The functor must stay under 32 KiB (CUDA's limit for a constant-memory launch).
template <class Exec, class Functor>
void parallel_for_constant(const char* label, const Exec& exec, std::size_t n, const Functor& f) {
  static_assert(sizeof(Functor) < 32768, "constant functor must stay under 32 KiB");
  Kokkos::parallel_for(label,
                       Kokkos::Experimental::require(Kokkos::RangePolicy<Exec>(exec, 0, n),
                                                     Kokkos::Experimental::WorkItemProperty::HintHeavyWeight),
                       f);
}

}  // namespace kcnn
