#pragma once
// A small JSON writer for the run context: values built as a tree, then dumped with escaping and
// indentation in one place. Objects keep their insertion order.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kcnn::bench {

std::string json_escape(const std::string& s);

class json {
 public:
  json() : kind_(kind::null) {}
  json(bool b) : kind_(kind::literal), text_(b ? "true" : "false") {}
  json(int v) : kind_(kind::literal), text_(std::to_string(v)) {}
  json(long v) : kind_(kind::literal), text_(std::to_string(v)) {}
  json(long long v) : kind_(kind::literal), text_(std::to_string(v)) {}
  json(unsigned long v) : kind_(kind::literal), text_(std::to_string(v)) {}
  json(unsigned long long v) : kind_(kind::literal), text_(std::to_string(v)) {}
  json(double v);  // non-finite values are written as null
  json(const char* s) : kind_(kind::string), text_(s) {}
  json(std::string s) : kind_(kind::string), text_(std::move(s)) {}

  static json object() { json j; j.kind_ = kind::object; return j; }
  static json array() { json j; j.kind_ = kind::array; return j; }
  // Text that is already JSON (e.g. a device property queried as a number).
  static json raw(std::string text) { json j; j.kind_ = kind::literal; j.text_ = std::move(text); return j; }
  template <class T>
  static json array_of(const std::vector<T>& v) {
    json a = array();
    for (const auto& x : v) a.push(json(x));
    return a;
  }

  // Object member (replaces an existing key); returns *this for chaining.
  json& set(const std::string& key, json value);
  json& push(json value);
  // This object with the members of another object added (replacing equal keys).
  json& merge(const json& other);
  std::string dump(int indent = 2) const;

 private:
  enum class kind { null, literal, string, object, array };
  void write(std::string& out, int indent, int depth) const;
  kind kind_;
  std::string text_;
  std::vector<std::pair<std::string, json>> members_;  // arrays: empty keys
};

}  // namespace kcnn::bench
