#pragma once
// Single-precision exp, log, pow, tanh and sigmoid that vectorise.
//
// The library's scalar math (std::exp through Kokkos) is an opaque call per element: a host
// compiler cannot vectorise a loop that makes it, so an elementwise kernel with a
// transcendental runs at the speed of the call, not of memory. These are branch-free
// polynomial forms (Cephes' single-precision coefficients; tanh a rational form) that GCC and
// Clang vectorise on a host; on a GPU they map to the fast hardware instructions (__expf,
// __logf, __fdividef: ex2.approx, lg2.approx, rcp.approx). Accuracy, checked by the library's
// tests against double precision:
//   exp (host): relative error <= 2e-7 on [-87.3, 88]; arguments are clamped to that range, so
//     exp of a very negative argument is about 2^-126 (never 0) and of a large one about 1.7e38;
//   log (host): absolute error <= 2e-7 for arguments in [2^-126, 2^127];
//   tanh: relative error <= 3e-7 on a host (a rational function, below; on a GPU its division
//     is __fdividef's, 2 ulp more);
//   sigmoid: relative error <= 1e-6; on a GPU, __expf's 2 + 1.2|x| ulp.
// Every kcnn tolerance (relative L2 error 1e-5 for these ops) holds with margin.
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>

namespace kcnn::vmath {

namespace detail {
KOKKOS_FORCEINLINE_FUNCTION float select(bool c, float a, float b) { return c ? a : b; }
#if !(defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__))
// Bit casts the vectoriser sees through (a memcpy through memory defeats GCC's).
#if defined(__has_builtin)
#if __has_builtin(__builtin_bit_cast)
#define KCNN_HAVE_BUILTIN_BIT_CAST 1
#endif
#endif
inline float from_bits(std::int32_t i) {
#if defined(KCNN_HAVE_BUILTIN_BIT_CAST)
  return __builtin_bit_cast(float, i);
#else
  float f;
  std::memcpy(&f, &i, sizeof f);
  return f;
#endif
}
inline std::int32_t to_bits(float f) {
#if defined(KCNN_HAVE_BUILTIN_BIT_CAST)
  return __builtin_bit_cast(std::int32_t, f);
#else
  std::int32_t i;
  std::memcpy(&i, &f, sizeof i);
  return i;
#endif
}
#endif
}  // namespace detail

// e^x.
KOKKOS_INLINE_FUNCTION float exp(float x) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __expf(x);
#else
  // x = n ln2 + r, |r| <= ln2 / 2; e^r by a degree-6 polynomial; 2^n built in the exponent bits.
  x = detail::select(x > 88.0f, 88.0f, x);  // n <= 127: 2^n stays a normal float
  x = detail::select(x < -87.3365447505531f, -87.3365447505531f, x);
  // Round to nearest without a library call: adding 1.5 * 2^23 pushes the fraction out.
  const float magic = 12582912.0f;
  const float fn = (x * 1.44269504088896341f + magic) - magic;
  const float r = (x - fn * 0.693359375f) + fn * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = p * (r * r) + r + 1.0f;
  return er * detail::from_bits((std::int32_t(fn) + 127) << 23);
#endif
}

// Natural logarithm of a positive, normal x (what LRN's power needs: its base is >= k > 0).
KOKKOS_INLINE_FUNCTION float log(float x) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __logf(x);
#else
  // x = m 2^e with m in [sqrt(1/2), sqrt(2)); log(m) = f - f^2 / 2 + f^3 P(f), f = m - 1.
  const std::int32_t bits = detail::to_bits(x);
  float e = float(((bits >> 23) & 0xff) - 126);
  float m = detail::from_bits((bits & 0x007fffff) | 0x3f000000);  // [0.5, 1)
  const bool small = m < 0.707106781186547524f;
  e = detail::select(small, e - 1.0f, e);
  m = detail::select(small, m + m - 1.0f, m - 1.0f);
  const float z = m * m;
  float p = 7.0376836292e-2f;
  p = p * m - 1.1514610310e-1f;
  p = p * m + 1.1676998740e-1f;
  p = p * m - 1.2420140846e-1f;
  p = p * m + 1.4249322787e-1f;
  p = p * m - 1.6668057665e-1f;
  p = p * m + 2.0000714765e-1f;
  p = p * m - 2.4999993993e-1f;
  p = p * m + 3.3333331174e-1f;
  float y = p * m * z;
  y += e * -2.12194440e-4f;
  y += -0.5f * z;
  return (m + y) + e * 0.693359375f;
#endif
}

// base^exponent for base > 0 (normal).
KOKKOS_INLINE_FUNCTION float pow(float base, float exponent) { return vmath::exp(exponent * vmath::log(base)); }

// base^-3/4 for base > 0: LRN's power in AlexNet, GoogLeNet and their family (beta = 0.75),
// as 1 / (sqrt(b) sqrt(sqrt(b))): two square roots and a division against pow's log and exp,
// the way oneDNN specialises it. A host compiler vectorises std::sqrt only without errno
// (-fno-math-errno, which kcnn's own build sets; __NO_MATH_ERRNO__ then defined); with errno the
// host takes pow. GPU: rsqrtf and sqrtf.
KOKKOS_INLINE_FUNCTION float pow_minus_three_quarters(float base) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  const float r = rsqrtf(base);  // b^-1/2
  return r * sqrtf(r);           // b^-1/2 b^-1/4
#elif defined(__NO_MATH_ERRNO__)
  const float s = std::sqrt(base);
  return 1.0f / (s * std::sqrt(s));
#else
  return vmath::pow(base, -0.75f);  // std::sqrt with errno would be a call per element
#endif
}

// 1 / (1 + e^-x).
KOKKOS_INLINE_FUNCTION float sigmoid(float x) { return 1.0f / (1.0f + vmath::exp(-x)); }

// tanh x: the odd rational minimax form x P(x^2) / Q(x^2), degrees 13 and 6, on x clamped to
// +-7.9053, the end of the fit (tanh there is 1 - 2.7e-7: +-1 is within the error bound from
// there on); the coefficients are Eigen's (its generic fast tanh; XLA and ONNX Runtime's MLAS
// use the same). Odd, so small arguments keep their relative
// accuracy (1 - 2 / (e^2x + 1) cancels there). 11 FMAs and a division: cheaper than the exp
// form it replaced, whose exp, odd polynomial near 0 and blend cost more than the division.
KOKKOS_INLINE_FUNCTION float tanh(float x) {
  constexpr float saturate = 7.90531110763549805f;
  x = detail::select(x > saturate, saturate, x);
  x = detail::select(x < -saturate, -saturate, x);
  const float z = x * x;
  float p = -2.76076847742355e-16f;
  p = p * z + 2.00018790482477e-13f;
  p = p * z - 8.60467152213735e-11f;
  p = p * z + 5.12229709037114e-08f;
  p = p * z + 1.48572235717979e-05f;
  p = p * z + 6.37261928875436e-04f;
  p = p * z + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * z + 1.18534705686654e-04f;
  q = q * z + 2.26843463243900e-03f;
  q = q * z + 4.89352518554385e-03f;  // q >= 4.9e-3: __fdividef's range
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  const float r = __fdividef(x * p, q);
#else
  const float r = x * p / q;
#endif
  // Exactly +-1 from the clamp on, whatever the rounding of the last operations (without FMA
  // contraction r is 1 - 2^-24 there).
  return detail::select(x >= saturate, 1.0f, detail::select(x <= -saturate, -1.0f, r));
}

}  // namespace kcnn::vmath
