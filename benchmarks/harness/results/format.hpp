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

}  // namespace kcnn::bench
