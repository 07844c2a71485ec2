#pragma once
// Comparison of a kernel's output with a host reference: relative L2 error
// ||out - ref|| / ||ref||, with NaN/Inf (including never-written, NaN-poisoned elements) as
// outright failures.
#include <kcnn/layout.hpp>

#include <cmath>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

namespace kcnn {

struct comparison {
  double rel_l2 = 0.0;          // ||out - ref|| / ||ref|| (absolute L2 if ||ref|| == 0)
  double max_abs_error = 0.0;
  std::size_t non_finite = 0;   // NaN or Inf in the output (unwritten elements are NaN)
  std::size_t first_bad = 0;    // logical index of the first non-finite or worst element
  std::size_t count = 0;
  bool passed = false;
  std::string message;          // empty when passed
};

// A host tensor's values in logical nchw order (the order of the references).
template <class HostTensor>
std::vector<double> to_logical(const HostTensor& t) {
  const dims4 d = t.dims();
  std::vector<double> v;
  v.reserve(d.size());
  for_each_logical(d, [&](int n, int c, int h, int w) { v.push_back(double(t(n, c, h, w))); });
  return v;
}

// The reverse: writes values given in logical nchw order into a host tensor of any layout.
template <class HostTensor>
void from_logical(const HostTensor& t, const std::vector<double>& v) {
  const dims4 d = t.dims();
  std::size_t i = 0;
  for_each_logical(d, [&](int n, int c, int h, int w) { t(n, c, h, w) = typename HostTensor::value_type(v.at(i++)); });
}

// out(n, c, h, w): host accessor of the kernel's output; ref: logical nchw order.
template <class Out>
comparison compare(const Out& out, const dims4& d, const std::vector<double>& ref,
                   double tolerance) {
  comparison r;
  r.count = d.size();
  if (ref.size() != r.count) {
    r.message = "reference has " + std::to_string(ref.size()) + " elements, output " +
                std::to_string(r.count);
    return r;
  }
  double num = 0.0, den = 0.0;
  bool have_first_bad = false;
  std::size_t i = 0;
  for (int n = 0; n < d.n; ++n)
    for (int c = 0; c < d.c; ++c)
      for (int h = 0; h < d.h; ++h)
        for (int w = 0; w < d.w; ++w, ++i) {
          const double o = double(out(n, c, h, w));
          if (!std::isfinite(o)) {
            if (!have_first_bad) r.first_bad = i;
            have_first_bad = true;
            ++r.non_finite;
            continue;
          }
          const double e = o - ref[i];
          num += e * e;
          den += ref[i] * ref[i];
          if (std::fabs(e) > r.max_abs_error) {
            r.max_abs_error = std::fabs(e);
            if (!have_first_bad) r.first_bad = i;
          }
        }
  r.rel_l2 = den > 0.0 ? std::sqrt(num / den) : std::sqrt(num);
  std::ostringstream msg;
  if (r.non_finite > 0) {
    int n, c, h, w;
    d.logical_coords(r.first_bad, n, c, h, w);
    msg << r.non_finite << " of " << r.count << " outputs are NaN/Inf or unwritten, first at (n="
        << n << ",c=" << c << ",h=" << h << ",w=" << w << ")";
  } else if (!(r.rel_l2 <= tolerance)) {
    int n, c, h, w;
    d.logical_coords(r.first_bad, n, c, h, w);
    msg.precision(3);
    msg << "relative L2 error " << r.rel_l2 << " > tolerance " << tolerance
        << "; worst element (n=" << n << ",c=" << c << ",h=" << h << ",w=" << w
        << ") off by " << r.max_abs_error;
  }
  r.message = msg.str();
  r.passed = r.message.empty();
  return r;
}

// out: a host array in logical nchw order (kcnn::copy_out).
inline comparison compare(const std::vector<float>& out, const dims4& d, const std::vector<double>& ref,
                          double tolerance) {
  if (out.size() != d.size()) {
    comparison r;
    r.count = d.size();
    r.message = "output has " + std::to_string(out.size()) + " elements, dims hold " + std::to_string(d.size());
    return r;
  }
  return compare([&](int n, int c, int h, int w) { return out[d.logical_index(n, c, h, w)]; }, d, ref, tolerance);
}

}  // namespace kcnn
