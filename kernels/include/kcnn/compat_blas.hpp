#pragma once
// The one place where Kokkos Kernels 3.4 (Debian/Trilinos) and Kokkos Kernels >= 4 differ for
// kcnn: the GEMM-based variants call compat::gemm, never KokkosBlas::gemm directly.
#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Core.hpp>

#include <type_traits>
#include <utility>

namespace kcnn::compat {

namespace detail {
template <class Exec, class A, class B, class C, class = void>
struct gemm_takes_instance : std::false_type {};
template <class Exec, class A, class B, class C>
struct gemm_takes_instance<Exec, A, B, C,
                           std::void_t<decltype(KokkosBlas::gemm(std::declval<const Exec&>(), "N", "N", 1.0f,
                                                                 std::declval<const A&>(), std::declval<const B&>(),
                                                                 1.0f, std::declval<const C&>()))>>
    : std::true_type {};
}  // namespace detail

// KokkosBlas::gemm on the caller's execution-space instance (its stream on a GPU), where Kokkos
// Kernels has that overload (4.x). Kokkos Kernels 3.4 has none: the gemm runs on the default
// instance, so the caller's instance is fenced first and the default one after, which keeps the
// order the caller asked for whichever instance it passed.
template <class Exec, class A, class B, class C>
void gemm(const Exec& exec, const char* ta, const char* tb, float alpha, const A& a, const B& b, float beta,
          const C& c) {
  if constexpr (detail::gemm_takes_instance<Exec, A, B, C>::value) {
    KokkosBlas::gemm(exec, ta, tb, alpha, a, b, beta, c);
  } else {
    exec.fence();
    KokkosBlas::gemm(ta, tb, alpha, a, b, beta, c);
    typename C::execution_space().fence();
  }
}

}  // namespace kcnn::compat
