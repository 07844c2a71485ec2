#include "results/json.hpp"

#include <cstdio>
#include <sstream>

namespace kcnn::bench {

std::string json_escape(const std::string& s) {
  std::string o;
  for (const unsigned char ch : s) {
    switch (ch) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      case '\t': o += "\\t"; break;
      default:
        if (ch < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          o += buf;
        } else {
          o += char(ch);
        }
    }
  }
  return o;
}

json::json(double v) : kind_(kind::literal) {
  if (!std::isfinite(v)) {
    kind_ = kind::null;
    return;
  }
  std::ostringstream o;
  o.precision(6);
  o << v;
  text_ = o.str();
}

json& json::set(const std::string& key, json value) {
  for (auto& m : members_)
    if (m.first == key) {
      m.second = std::move(value);
      return *this;
    }
  members_.emplace_back(key, std::move(value));
  return *this;
}

json& json::merge(const json& other) {
  for (const auto& m : other.members_) set(m.first, m.second);
  return *this;
}

json& json::push(json value) {
  members_.emplace_back(std::string(), std::move(value));
  return *this;
}

std::string json::dump(int indent) const {
  std::string out;
  write(out, indent, 0);
  return out + "\n";
}

void json::write(std::string& out, int indent, int depth) const {
  switch (kind_) {
    case kind::null: out += "null"; return;
    case kind::literal: out += text_; return;
    case kind::string: out += "\"" + json_escape(text_) + "\""; return;
    case kind::object:
    case kind::array: {
      const bool obj = kind_ == kind::object;
      out += obj ? "{" : "[";
      if (members_.empty()) {
        out += obj ? "}" : "]";
        return;
      }
      const std::string pad(std::size_t(indent * (depth + 1)), ' ');
      for (std::size_t i = 0; i < members_.size(); ++i) {
        out += i ? ",\n" : "\n";
        out += pad;
        if (obj) out += "\"" + json_escape(members_[i].first) + "\": ";
        members_[i].second.write(out, indent, depth + 1);
      }
      out += "\n" + std::string(std::size_t(indent * depth), ' ') + (obj ? "}" : "]");
      return;
    }
  }
}

}  // namespace kcnn::bench
