// concat along channels of two or more inputs. c is the total; params parts=a+b+... gives each
// input's channels (default: two equal halves). naive (one thread per output element; the
// baseline, also readonly and the CUDA spaces) and vector (rows per team, lanes along the
// contiguous axis).
#include "../common/fault_injection.hpp"
#include "../common/variant_kinds.hpp"

#include <kcnn/eltwise.hpp>
#include <kcnn/reference/layers.hpp>

#include <sstream>
#include <stdexcept>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

struct concat_params {
  dims4 out;
  std::vector<int> parts;
};

std::vector<int> parse_parts(const layer_spec& s, std::string& error) {
  std::vector<int> parts;
  const auto it = s.params.find("parts");
  if (it == s.params.end()) {
    if (s.c % 2 != 0) error = "c must be even for the default two equal parts (or give parts=a+b)";
    return {s.c / 2, s.c / 2};
  }
  std::stringstream ss(it->second);
  std::string item;
  long long total = 0;  // eight parts of up to 2^31 - 1 each do not fit in an int
  while (std::getline(ss, item, '+')) {
    int v = 0;
    if (!parse_int_exact(item, v) || v <= 0) {
      error = "parts: expected positive channel counts joined by '+', got '" + it->second + "'";
      return {};
    }
    parts.push_back(v);
    total += v;
  }
  if (parts.size() < 2 || parts.size() > 8) error = "parts: 2 to 8 inputs";
  else if (total != s.c) error = "parts: channels add up to " + std::to_string(total) + ", not c = " + std::to_string(s.c);
  return parts;
}

template <class Variant = variant::concat_naive>
struct concat_kernel : library_descriptor<concat_kernel, Variant, variant::concat_naive> {
  using params = concat_params;
  // The suite loader refused the spec already if its parts do not parse (the op's check).
  static params from_spec(const layer_spec& s) {
    std::string err;
    params p{dims4{s.n, s.c, s.h, s.w}, parse_parts(s, err)};
    if (!err.empty()) throw std::invalid_argument(err);
    return p;
  }
  static std::vector<dims4> inputs(const params& p) {
    std::vector<dims4> v;
    for (int c : p.parts) v.push_back({p.out.n, c, p.out.h, p.out.w});
    return v;
  }
  static dims4 output(const params& p) { return p.out; }
  static double tolerance(const params&) { return 0.0; }
  static double bytes(const params& p) { return 8.0 * double(p.out.size()); }
  static double flops(const params&) { return 0.0; }
  template <class Exec, class Ops, class Out>
  void run(const Exec& e, const Ops& o, const Out& out, const params&) const {
    concat(e, o.ins, out, this->v);
  }
  template <class HostOps>
  static std::vector<double> reference(const params& p, const HostOps& h) {
    return reference::concat(inputs(p), h.ins);
  }
};

const registrar reg([](registry& r) {
  register_op(r, {"concat",
                  [](const layer_spec& s) -> field_error {
                    if (auto e = check_positive_nchw(s)) return e;
                    std::string err;
                    parse_parts(s, err);
                    if (!err.empty()) return {"params", err};
                    return {};
                  },
                  {}, [](const layer_spec& s) { return concat_kernel<>::inputs(concat_kernel<>::from_spec(s)); },
                  false, false, false, {"parts"}});
  using namespace kcnn::layout;
  register_variant<concat_kernel<>, nchw, nhwc, chwn>(r, {"concat", space_axis::global, pattern_axis::coalesced, &kinds::naive, {}, true}, with_memory_spaces);
  register_variant<concat_kernel<variant::concat_vector>, nchw, nhwc, chwn>(r, {"concat", space_axis::global, pattern_axis::coalesced, &kinds::vector});
  register_portable_tuning<concat_kernel<variant::concat_vector>, nchw, nhwc, chwn>(r, {"concat", space_axis::global, pattern_axis::coalesced, &kinds::vector});
  fault::register_faults<concat_kernel<>>(r, "concat");
  r.add_unavailable("concat/*/scratch", "a copy: no data is reused, nothing to stage in scratch");
});
}  // namespace
