#include "cases/registry.hpp"

#include "cases/memory_spaces.hpp"

#include <cstring>
#include <stdexcept>

namespace kcnn::bench {

registry& registry::instance() {
  static registry r = [] {
    registry made;
    add_memory_space_notes(made);
    return made;
  }();
  return r;
}

void registry::add_op(op_info op) {
  if (find_op(op.name)) throw std::logic_error("op registered twice: " + op.name);
  ops_.push_back(std::move(op));
}

void registry::add_variant(variant_info v) {
  if (!v.variant) throw std::logic_error("variant of " + v.op + " registered without a variant kind");
  for (const auto& o : variants_) {
    if (o.op == v.op && o.layout == v.layout && o.space == v.space && o.pattern == v.pattern &&
        std::strcmp(o.variant->name, v.variant->name) == 0 && o.tuning.name == v.tuning.name)
      throw std::logic_error("variant registered twice: " + v.op + "/" + name(v.layout) + "/" + name(v.space) +
                             "/" + name(v.pattern) + "/" + v.variant->name);
    if (v.baseline && o.baseline && o.op == v.op && o.layout == v.layout)
      throw std::logic_error("two baselines for " + v.op + "/" + name(v.layout) + ": " + o.variant->name + " and " +
                             v.variant->name);
  }
  variants_.push_back(std::move(v));
}

void registry::add_unavailable(std::string what, std::string why) {
  unavailable_.emplace_back(std::move(what), std::move(why));
}

std::vector<std::pair<std::string, std::string>> registry::unavailable() const {
  auto out = unavailable_;
  // Constant memory holds weights or per-channel parameters: the ops with variants on this build
  // that register none there.
  std::string without;
  for (const auto& o : ops_) {
    bool any = false, constant = false;
    for (const auto& v : variants_)
      if (v.op == o.name) {
        any = true;
        constant |= v.space == space_axis::constant;
      }
    if (any && !constant) without += (without.empty() ? "" : ", ") + o.name;
  }
  if (!without.empty())
    out.emplace_back("memory space constant for " + without,
                     "constant memory holds weights or per-channel parameters, which these ops do not have");
  return out;
}

const op_info* registry::find_op(const std::string& name) const {
  for (const auto& o : ops_)
    if (o.name == name) return &o;
  return nullptr;
}

const op_info* registry::layout_transform_op() const {
  for (const auto& o : ops_)
    if (o.transforms_layout) return &o;
  return nullptr;
}

const variant_info* registry::baseline(const std::string& op, layout_axis layout) const {
  for (const auto& v : variants_)
    if (v.baseline && v.op == op && v.layout == layout) return &v;
  return nullptr;
}

std::string case_key(const variant_info& v, const layer_spec& s) {
  std::string k = v.op + "/" + name(v.layout) + "/" + name(v.space) + "/" + name(v.pattern) + "/" +
                  v.variant->name + "/" + s.network + "." + s.layer + "/n" + std::to_string(s.n);
  if (const std::string g = geometry_tag(s); !g.empty()) k += "/" + g;
  if (!v.tuning.empty()) k += "/" + v.tuning.name;
  return k;
}

std::string geometry_tag(const layer_spec& s) {
  const auto x = [](int a, int b) { return std::to_string(a) + "x" + std::to_string(b); };
  std::string g;
  const auto part = [&](const std::string& p) { g += (g.empty() ? "" : "_") + p; };
  if (s.row_stride() != s.stride || s.col_stride() != s.stride) part("s" + x(s.row_stride(), s.col_stride()));
  if (s.pad_top() != s.pad || s.pad_left() != s.pad || s.pad_bottom() != s.pad || s.pad_right() != s.pad)
    part("p" + x(s.pad_top(), s.pad_left()) + "+" + x(s.pad_bottom(), s.pad_right()));
  if (s.dilation_h != 1 || s.dilation_w != 1) part("d" + x(s.dilation_h, s.dilation_w));
  return g;
}


std::string reference_key(const layer_spec& s, std::uint64_t seed) {
  std::string k = s.op;
  for (int v : {s.n, s.c, s.h, s.w, s.k, s.r, s.s, s.stride, s.pad, s.groups, s.row_stride(), s.col_stride(),
                s.pad_top(), s.pad_left(), s.pad_bottom(), s.pad_right(), s.dilation_h, s.dilation_w})
    k += "," + std::to_string(v);
  k += "," + s.rounding;
  for (const auto& [key, value] : s.params) k += "," + key + "=" + value;
  return k + "/" + std::to_string(seed);
}

double param_or(const layer_spec& s, const std::string& key, double fallback) {
  const auto it = s.params.find(key);
  if (it == s.params.end()) return fallback;
  try {
    std::size_t pos = 0;
    const double v = std::stod(it->second, &pos);
    if (pos == it->second.size()) return v;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument("params: '" + key + "' is not a number: '" + it->second + "'");
}

int int_param_or(const layer_spec& s, const std::string& key, int fallback) {
  const auto it = s.params.find(key);
  if (it == s.params.end()) return fallback;
  int v = 0;
  if (!parse_int_exact(it->second, v))
    throw std::invalid_argument("params: '" + key + "' is not an integer: '" + it->second + "'");
  return v;
}

field_error field_error_from(const std::string& e) {
  if (e.empty()) return {};
  const auto colon = e.find(": ");
  if (colon == std::string::npos) return {"op", e};
  return {e.substr(0, colon), e.substr(colon + 2)};
}

field_error check_positive_nchw(const layer_spec& s) {
  const struct { const char* name; int v; } dims[] = {{"n", s.n}, {"c", s.c}, {"h", s.h}, {"w", s.w}};
  for (const auto& d : dims)
    if (d.v <= 0) return {d.name, "must be > 0, got " + std::to_string(d.v)};
  return {};
}

}  // namespace kcnn::bench
