#include "registry.hpp"

#include <stdexcept>

namespace kcnn::bench {

double& device_l2_bytes() {
  static double bytes = 50.0 * 1024 * 1024;
  return bytes;
}

registry& registry::instance() {
  static registry r;
  return r;
}

void registry::add_op(op_info op) {
  if (find_op(op.name)) throw std::logic_error("op registered twice: " + op.name);
  ops_.push_back(std::move(op));
}

void registry::add_variant(variant_info v) {
  for (const auto& o : variants_)
    if (o.op == v.op && o.layout == v.layout && o.space == v.space && o.pattern == v.pattern &&
        o.variant == v.variant && o.tuning == v.tuning)
      throw std::logic_error("variant registered twice: " + v.op + "/" + v.layout + "/" +
                             v.space + "/" + v.pattern + "/" + v.variant);
  variants_.push_back(std::move(v));
}

void registry::add_unavailable(std::string what, std::string why) {
  unavailable_.emplace_back(std::move(what), std::move(why));
}

const op_info* registry::find_op(const std::string& name) const {
  for (const auto& o : ops_)
    if (o.name == name) return &o;
  return nullptr;
}

std::string case_key(const variant_info& v, const layer_spec& s) {
  std::string k = v.op + "/" + v.layout + "/" + v.space + "/" + v.pattern + "/" + v.variant + "/" +
                  s.network + "." + s.layer + "/n" + std::to_string(s.n);
  if (!v.tuning.empty()) k += "/" + v.tuning;
  return k;
}

const std::vector<std::string>& known_layouts() {
  static const std::vector<std::string> v{"nchw", "nhwc", "chwn", "strided"};
  return v;
}
const std::vector<std::string>& known_spaces() {
  static const std::vector<std::string> v{"global",   "scratch",      "constant",   "readonly",
                                          "uvm_cold", "uvm_prefetch", "uvm_advise", "pinned"};
  return v;
}
const std::vector<std::string>& known_patterns() {
  static const std::vector<std::string> v{"coalesced", "strided", "tiled", "regtile"};
  return v;
}

}  // namespace kcnn::bench
