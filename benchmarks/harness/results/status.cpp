#include "results/status.hpp"

namespace kcnn::bench {

namespace {
struct entry {
  case_status value;
  const char* name;
  const char* doc;
};
const entry statuses[] = {
    {case_status::ok, "ok", "validated against the host reference, then timed"},
    {case_status::failed_validation, "failed_validation",
     "the output differs from the host reference beyond the tolerance (or holds a NaN or an unwritten element): not timed"},
    {case_status::skipped, "skipped",
     "not run or not timed for a reason the note gives (out of device memory, another rank's failed validation)"},
    {case_status::error, "error", "the case threw (the note has the message): not timed"},
};
const entry& find(case_status s) {
  for (const auto& e : statuses)
    if (e.value == s) return e;
  return statuses[0];  // unreachable: every enumerator has an entry
}
}  // namespace

const char* name(case_status s) { return find(s).name; }
const char* doc(case_status s) { return find(s).doc; }

const std::vector<case_status>& all_statuses() {
  static const std::vector<case_status> v = [] {
    std::vector<case_status> out;
    for (const auto& e : statuses) out.push_back(e.value);
    return out;
  }();
  return v;
}

std::optional<case_status> parse_status(const std::string& text) {
  for (const auto& e : statuses)
    if (text == e.name) return e.value;
  return std::nullopt;
}

unsigned long status_counts::failures() const {
  unsigned long n = 0;
  for (case_status s : all_statuses())
    if (is_failure(s)) n += (*this)[s];
  return n;
}

}  // namespace kcnn::bench
