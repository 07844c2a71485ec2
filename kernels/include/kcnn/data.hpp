#pragma once
// Getting data in and out of kcnn tensors and vectors, whatever their layout (nchw, nhwc, chwn,
// runtime-strided) and memory space (host or device):
//
//   kcnn::copy_in(t, host_ptr, count)    host array in logical nchw order -> tensor
//   kcnn::copy_in(t, std::vector<U>)
//   std::vector<float> v = kcnn::copy_out(t)   tensor -> host array in logical nchw order
//   kcnn::copy_out(t, host_ptr, count)
//   and the same for rank-1 Views (bias, per-channel vectors).
//
// Logical nchw order: element (n, c, h, w) at ((n * C + c) * H + h) * W + w. Each call fences
// (kernels launched before it have finished), handles the host mirror and the copy, and returns
// when the data is in place. count must equal the tensor's size: std::invalid_argument otherwise.
#include <kcnn/layout.hpp>
#include <kcnn/tensor.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace kcnn {

namespace detail {
inline void check_count(const char* fn, std::size_t count, std::size_t size) {
  if (count != size)
    throw std::invalid_argument(std::string("kcnn::") + fn + ": the host array has " + std::to_string(count) +
                                " elements, the destination/source holds " + std::to_string(size));
}
}  // namespace detail

template <class T, class L, class... P, class U>
void copy_in(const tensor4<T, L, P...>& t, const U* logical_nchw, std::size_t count) {
  static_assert(!std::is_const_v<T>, "kcnn::copy_in: the tensor is const");
  detail::check_count("copy_in", count, t.size());
  if (count > 0 && logical_nchw == nullptr) throw std::invalid_argument("kcnn::copy_in: null host array");
  Kokkos::fence();  // kernels still reading or writing t
  auto h = Kokkos::create_mirror_view(t.view());  // t's own View when it is host-accessible
  const dims4 d = t.dims();
  std::size_t i = 0;
  for_each_logical(d, [&](int n, int c, int y, int x) { L::at(h, n, c, y, x) = T(logical_nchw[i++]); });
  Kokkos::deep_copy(t.view(), h);  // a no-op when h is t's View; fences
}
template <class T, class L, class... P, class U>
void copy_in(const tensor4<T, L, P...>& t, const std::vector<U>& logical_nchw) {
  copy_in(t, logical_nchw.data(), logical_nchw.size());
}

template <class T, class L, class... P, class U>
void copy_out(const tensor4<T, L, P...>& t, U* logical_nchw, std::size_t count) {
  detail::check_count("copy_out", count, t.size());
  if (count > 0 && logical_nchw == nullptr) throw std::invalid_argument("kcnn::copy_out: null host array");
  Kokkos::fence();  // kernels still writing t
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.view());
  const dims4 d = t.dims();
  std::size_t i = 0;
  for_each_logical(d, [&](int n, int c, int y, int x) { logical_nchw[i++] = U(L::at(h, n, c, y, x)); });
}
template <class T, class L, class... P>
std::vector<float> copy_out(const tensor4<T, L, P...>& t) {
  std::vector<float> v(t.size());
  copy_out(t, v.data(), v.size());
  return v;
}

// Rank-1 Views (bias, per-channel vectors).
template <class T, class... P, class U>
void copy_in(const Kokkos::View<T*, P...>& v, const U* data, std::size_t count) {
  static_assert(!std::is_const_v<T>, "kcnn::copy_in: the View is const");
  detail::check_count("copy_in", count, v.extent(0));
  if (count > 0 && data == nullptr) throw std::invalid_argument("kcnn::copy_in: null host array");
  Kokkos::fence();
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < count; ++i) h(i) = T(data[i]);
  Kokkos::deep_copy(v, h);
}
template <class T, class... P, class U>
void copy_in(const Kokkos::View<T*, P...>& v, const std::vector<U>& data) {
  copy_in(v, data.data(), data.size());
}
template <class T, class... P, class U>
void copy_out(const Kokkos::View<T*, P...>& v, U* data, std::size_t count) {
  detail::check_count("copy_out", count, v.extent(0));
  if (count > 0 && data == nullptr) throw std::invalid_argument("kcnn::copy_out: null host array");
  Kokkos::fence();
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  for (std::size_t i = 0; i < count; ++i) data[i] = U(h(i));
}
template <class T, class... P>
std::vector<float> copy_out(const Kokkos::View<T*, P...>& v) {
  std::vector<float> r(v.extent(0));
  copy_out(v, r.data(), r.size());
  return r;
}

// A host array in logical nchw order seen as an accessor a(n, c, h, w), for the references
// (kcnn::reference::*) and kcnn::compare.
template <class U>
struct logical_accessor {
  const U* data;
  dims4 d;
  double operator()(int n, int c, int h, int w) const { return double(data[d.logical_index(n, c, h, w)]); }
};
template <class U>
logical_accessor<U> logical(const std::vector<U>& v, const dims4& d) {
  if (v.size() != d.size())
    throw std::invalid_argument("kcnn::logical: the array has " + std::to_string(v.size()) + " elements, dims hold " +
                                std::to_string(d.size()));
  return logical_accessor<U>{v.data(), d};
}

}  // namespace kcnn
