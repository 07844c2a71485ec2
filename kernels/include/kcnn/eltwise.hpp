#pragma once
// Residual add (out = a + b) and concatenation along channels, one thread per output element
// in the output's storage order.
#include <kcnn/layout.hpp>

#include <Kokkos_Core.hpp>

#include <stdexcept>
#include <vector>

namespace kcnn {

namespace detail {
template <class A, class B, class Out>
struct add_functor {
  A a;
  B b;
  Out out;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, c, h, w;
    out.storage_coords(i, n, c, h, w);
    out(n, c, h, w) = a(n, c, h, w) + b(n, c, h, w);
  }
};

inline constexpr int concat_max_inputs = 8;

template <class In, class Out>
struct concat_functor {
  Kokkos::Array<In, concat_max_inputs> in;
  Kokkos::Array<int, concat_max_inputs + 1> offset;  // first output channel of each input
  int count;
  Out out;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, c, h, w;
    out.storage_coords(i, n, c, h, w);
    int j = 0;
    while (j + 1 < count && c >= offset[j + 1]) ++j;
    out(n, c, h, w) = in[j](n, c - offset[j], h, w);
  }
};
}  // namespace detail

template <class Exec, class A, class B, class Out>
void add(const Exec& exec, const A& a, const B& b, const Out& out) {
  Kokkos::parallel_for("kcnn::add", Kokkos::RangePolicy<Exec>(exec, 0, out.size()),
                       detail::add_functor<A, B, Out>{a, b, out});
}

// inputs: up to 8 tensors with equal n, h, w; out has the sum of their channels.
template <class Exec, class In, class Out>
void concat(const Exec& exec, const std::vector<In>& inputs, const Out& out) {
  if (inputs.empty() || inputs.size() > std::size_t(detail::concat_max_inputs))
    throw std::invalid_argument("concat: 1 to 8 inputs");
  detail::concat_functor<In, Out> f;
  f.count = int(inputs.size());
  int off = 0;
  for (int j = 0; j < f.count; ++j) {
    f.in[j] = inputs[j];
    f.offset[j] = off;
    off += inputs[j].dims().c;
  }
  f.offset[f.count] = off;
  f.out = out;
  Kokkos::parallel_for("kcnn::concat", Kokkos::RangePolicy<Exec>(exec, 0, out.size()), f);
}

}  // namespace kcnn
