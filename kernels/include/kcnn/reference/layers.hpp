#pragma once
// Host references (double) for the memory-bound layers. Accessors are callables
// in(n, c, h, w) and vec(c); results are in logical nchw order. kcnn::logical(host_vector, dims)
// turns a host array in logical nchw order (kcnn::copy_out) into such an accessor.
#include <kcnn/activation.hpp>
#include <kcnn/batchnorm.hpp>
#include <kcnn/lrn.hpp>
#include <kcnn/softmax.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace kcnn::reference {

template <class F>
std::vector<double> for_each_element(const dims4& d, const F& f) {
  std::vector<double> out;
  out.reserve(d.size());
  for_each_logical(d, [&](int n, int c, int h, int w) { out.push_back(f(n, c, h, w)); });
  return out;
}

template <class In>
std::vector<double> activation(const activation_params& a, const dims4& d, const In& in) {
  return for_each_element(d, [&](int n, int c, int h, int w) {
    const double x = in(n, c, h, w), al = a.effective_alpha();
    switch (a.kind) {
      case activation_kind::relu: return std::max(x, 0.0);
      case activation_kind::leaky_relu: return x > 0 ? x : al * x;
      case activation_kind::sigmoid: return 1.0 / (1.0 + std::exp(-x));
      case activation_kind::tanh: return std::tanh(x);
      case activation_kind::elu: return x > 0 ? x : al * (std::exp(x) - 1.0);
      case activation_kind::relu6: return std::min(std::max(x, 0.0), 6.0);
      case activation_kind::swish: return x / (1.0 + std::exp(-x));
    }
    return x;
  });
}

template <class In>
std::vector<double> lrn(const lrn_params& p, const In& in) {
  return for_each_element(p.dims(), [&](int n, int c, int h, int w) {
    double sum = 0;
    for (int cc = std::max(0, c - p.size / 2); cc <= std::min(p.c - 1, c + p.size / 2); ++cc)
      sum += double(in(n, cc, h, w)) * double(in(n, cc, h, w));
    return double(in(n, c, h, w)) * std::pow(double(p.k) + double(p.alpha) / p.size * sum, -double(p.beta));
  });
}

template <class In, class Vec>
std::vector<double> batchnorm(const batchnorm_params& p, const In& in, const Vec& mean, const Vec& var,
                              const Vec& gamma, const Vec& beta) {
  return for_each_element(p.dims(), [&](int n, int c, int h, int w) {
    const double y = (double(in(n, c, h, w)) - mean(c)) / std::sqrt(double(var(c)) + double(p.eps)) *
                         double(gamma(c)) + double(beta(c));
    return p.relu ? std::max(y, 0.0) : y;
  });
}

template <class In>
std::vector<double> softmax(const softmax_params& p, const In& in) {
  std::vector<double> out(p.dims().size());
  for (int n = 0; n < p.n; ++n)
    for (int h = 0; h < p.h; ++h)
      for (int w = 0; w < p.w; ++w) {
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < p.c; ++c) mx = std::max(mx, double(in(n, c, h, w)));
        for (int c = 0; c < p.c; ++c) sum += std::exp(double(in(n, c, h, w)) - mx);
        for (int c = 0; c < p.c; ++c)
          out[p.dims().logical_index(n, c, h, w)] = std::exp(double(in(n, c, h, w)) - mx) / sum;
      }
  return out;
}

// a + b.
template <class A, class B>
std::vector<double> add(const dims4& d, const A& a, const B& b) {
  return for_each_element(d, [&](int n, int c, int h, int w) { return double(a(n, c, h, w)) + double(b(n, c, h, w)); });
}

// The inputs (accessors) of dims parts[i] concatenated along channels.
template <class In>
std::vector<double> concat(const std::vector<dims4>& parts, const std::vector<In>& inputs) {
  dims4 d = parts.at(0);
  d.c = 0;
  for (const auto& p : parts) d.c += p.c;
  return for_each_element(d, [&](int n, int c, int h, int w) {
    std::size_t i = 0;
    while (c >= parts[i].c) c -= parts[i++].c;
    return double(inputs.at(i)(n, c, h, w));
  });
}

// A layout transform does not change the logical tensor: the reference is its input.
template <class In>
std::vector<double> transform(const dims4& d, const In& in) {
  return for_each_element(d, [&](int n, int c, int h, int w) { return double(in(n, c, h, w)); });
}

}  // namespace kcnn::reference
