// concat along channels of two or more inputs. c is the total; params parts=a+b+... gives each
// input's channels (default: two equal halves).
#include "fault_injection.hpp"
#include "tensor_case.hpp"

#include <kcnn/eltwise.hpp>
#include <kcnn/reference/layers.hpp>

#include <sstream>

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

struct concat_kernel : layer_kernel_base {
  using params = concat_params;
  static params from_spec(const layer_spec& s) {
    std::string err;
    return {dims4{s.n, s.c, s.h, s.w}, parse_parts(s, err)};
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
  template <class Exec, class Ins, class Vecs, class Out>
  void run(const Exec& e, const Ins& ins, const Vecs&, const Out& out, const params&) const {
    concat(e, ins, out);
  }
  template <class HIns, class HVecs>
  static std::vector<double> reference(const params& p, const HIns& ins, const HVecs&) {
    return reference::for_each_element(p.out, [&](int n, int c, int h, int w) {
      std::size_t j = 0;
      while (c >= p.parts[j]) c -= p.parts[j++];
      return double(ins[j](n, c, h, w));
    });
  }
};

const registrar reg([](registry& r) {
  r.add_op({"concat",
            [](const layer_spec& s) -> field_error {
              if (auto e = check_positive_nchw(s)) return e;
              std::string err;
              parse_parts(s, err);
              if (!err.empty()) return {"params", err};
              return {};
            },
            [](const layer_spec& s) { return dims4{s.n, s.c, s.h, s.w}; },
            [](const layer_spec& s) {
              std::string err;
              std::vector<dims4> ins;
              for (int c : parse_parts(s, err)) ins.push_back({s.n, c, s.h, s.w});
              return ins;
            }});
  register_layer_all_layouts<concat_kernel>(r, "concat", "global", "coalesced", "naive", "", 0.0);
  fault::register_faults<concat_kernel>(r, "concat", 0.0);
  register_layer_spaces<concat_kernel>(r, "concat", "coalesced", "naive", "", 0.0);
  r.add_unavailable("concat/*/scratch", "a copy: no data is reused, nothing to stage in scratch");
});
}  // namespace
