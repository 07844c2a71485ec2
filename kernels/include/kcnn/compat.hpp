#pragma once
// The one place where Kokkos 3.4 (Debian/Trilinos) and Kokkos >= 4 differ for kcnn.
// Everything else in kcnn calls these names and never tests KOKKOS_VERSION itself.
#include <Kokkos_Core.hpp>

#include <cmath>
#include <string>

namespace kcnn::compat {

#if KOKKOS_VERSION >= 40000
inline constexpr bool kokkos4 = true;
#else
inline constexpr bool kokkos4 = false;
#endif

template <class T>
KOKKOS_INLINE_FUNCTION T fabs(T x) {
#if KOKKOS_VERSION >= 40000
  return Kokkos::abs(x);
#else
  return Kokkos::Experimental::fabs(x);
#endif
}

template <class T>
KOKKOS_INLINE_FUNCTION T fmax(T a, T b) {
#if KOKKOS_VERSION >= 40000
  return Kokkos::fmax(a, b);
#else
  return Kokkos::Experimental::fmax(a, b);
#endif
}

template <class T>
KOKKOS_INLINE_FUNCTION T exp(T x) {
#if KOKKOS_VERSION >= 40000
  return Kokkos::exp(x);
#else
  return Kokkos::Experimental::exp(x);
#endif
}

template <class T>
KOKKOS_INLINE_FUNCTION T tanh(T x) {
#if KOKKOS_VERSION >= 40000
  return Kokkos::tanh(x);
#else
  return Kokkos::Experimental::tanh(x);
#endif
}

// A fused multiply-add where the hardware has one: device compilers contract a * b + c by
// default, host compilers in ISO mode do not (GCC -std=c++17 sets -ffp-contract=off).
KOKKOS_INLINE_FUNCTION float fma(float a, float b, float c) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) || !defined(__FMA__)
  return a * b + c;
#else
  return std::fma(a, b, c);
#endif
}

template <class T>
KOKKOS_INLINE_FUNCTION T sqrt(T x) {
#if KOKKOS_VERSION >= 40000
  return Kokkos::sqrt(x);
#else
  return Kokkos::Experimental::sqrt(x);
#endif
}

template <class T>
KOKKOS_INLINE_FUNCTION T pow(T x, T y) {
#if KOKKOS_VERSION >= 40000
  return Kokkos::pow(x, y);
#else
  return Kokkos::Experimental::pow(x, y);
#endif
}

template <class T>
KOKKOS_INLINE_FUNCTION bool isnan(T x) {
#if KOKKOS_VERSION >= 40000
  return Kokkos::isnan(x);
#else
  return x != x;
#endif
}

template <class T>
KOKKOS_INLINE_FUNCTION T quiet_nan() {
#if KOKKOS_VERSION >= 40000
  return Kokkos::Experimental::quiet_NaN<T>::value;
#else
  return T(NAN);
#endif
}

// Labelled fences exist from Kokkos 3.5 on.
inline void fence(const char* label) {
#if KOKKOS_VERSION >= 30500
  Kokkos::fence(label);
#else
  (void)label;
  Kokkos::fence();
#endif
}

template <class ExecSpace>
int concurrency(const ExecSpace& exec) {
#if KOKKOS_VERSION >= 40000
  return exec.concurrency();
#else
  (void)exec;
  return ExecSpace::concurrency();
#endif
}

inline std::string version_string() {
  const int v = KOKKOS_VERSION;
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." +
         std::to_string(v % 100);
}

}  // namespace kcnn::compat
