#pragma once
// Residual add (out = a + b), one thread per output element in the output's storage order, and
// concatenation along channels.
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

// Copies one input into its slab of the output channels, walking the slab in the output's
// storage order so that the writes are coalesced.
template <class In, class Out>
struct concat_slab_functor {
  In in;
  Out out;
  int offset;  // first output channel of this input
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, c, h, w;
    Out::layout_tag::storage_coords(i, in.dims(), n, c, h, w);
    out(n, offset + c, h, w) = in(n, c, h, w);
  }
};
}  // namespace detail

template <class Exec, class A, class B, class Out>
void add(const Exec& exec, const A& a, const B& b, const Out& out) {
  Kokkos::parallel_for("kcnn::add", Kokkos::RangePolicy<Exec>(exec, 0, out.size()),
                       detail::add_functor<A, B, Out>{a, b, out});
}

// inputs: tensors with equal n, h, w; out has the sum of their channels. One launch per input
// (each copies its own channel slab), as Caffe's concat layer does.
template <class Exec, class In, class Out>
void concat(const Exec& exec, const std::vector<In>& inputs, const Out& out) {
  int offset = 0;
  for (const auto& in : inputs) {
    if (in.dims().n != out.dims().n || in.dims().h != out.dims().h || in.dims().w != out.dims().w ||
        offset + in.dims().c > out.dims().c)
      throw std::invalid_argument("concat: input shapes do not match the output");
    Kokkos::parallel_for("kcnn::concat", Kokkos::RangePolicy<Exec>(exec, 0, in.size()),
                         detail::concat_slab_functor<In, Out>{in, out, offset});
    offset += in.dims().c;
  }
  if (offset != out.dims().c) throw std::invalid_argument("concat: inputs do not fill the output channels");
}

}  // namespace kcnn
