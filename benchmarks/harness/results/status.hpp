#pragma once
// A row's verdict, as a typed value that knows its CSV spelling and its one-line documentation
// (like the axes): behaviour is keyed on the value, never on its spelling. Names are read only
// by parse_status() (--resume, the rows of other ranks) and written only by name().
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace kcnn::bench {

enum class case_status { ok, failed_validation, skipped, error };

const char* name(case_status s);
const char* doc(case_status s);
// Every status, in documentation order.
const std::vector<case_status>& all_statuses();
std::optional<case_status> parse_status(const std::string& text);

// The statuses that make kcnn-bench exit 1: a wrong result, or a case that could not run for a
// reason other than the device's limits.
inline bool is_failure(case_status s) { return s == case_status::failed_validation || s == case_status::error; }
// Only an ok row carries times.
inline bool is_timed(case_status s) { return s == case_status::ok; }

// How many rows of each status.
class status_counts {
 public:
  void add(case_status s, unsigned long n = 1) { n_[std::size_t(s)] += n; }
  unsigned long operator[](case_status s) const { return n_[std::size_t(s)]; }
  unsigned long failures() const;

 private:
  std::array<unsigned long, 4> n_{};
};

}  // namespace kcnn::bench
