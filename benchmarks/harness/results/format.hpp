#pragma once
// The one number formatter of the harness's tables and notes.
#include <iomanip>
#include <sstream>
#include <string>

namespace kcnn::bench {

// v with `prec` digits after the point.
inline std::string fixed(double v, int prec) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(prec) << v;
  return o.str();
}

// A value as given, without trailing zeros (400, 6.5, 6.51): for keys made from options.
inline std::string shortest(double v) {
  std::ostringstream o;
  o << std::setprecision(12) << v;
  return o.str();
}

}  // namespace kcnn::bench
