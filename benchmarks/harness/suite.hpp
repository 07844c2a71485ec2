#pragma once
// Suite files: CSV layer tables (format in suites/README.md).
#include "registry.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace kcnn::bench {

// A malformed suite: the message names file, line and field.
struct suite_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct suite {
  std::string name;  // file stem, e.g. "smoke"
  std::string path;
  std::vector<layer_spec> layers;
};

// Loads and checks a suite file. Output shapes are computed by each op's registered shape
// rule. Throws suite_error on the first problem.
suite load_suite(const std::string& path);

// Resolves a suite name ("smoke") or path to a file: a path that exists is used as is;
// a name is looked up as <dir>/<name>.csv in $KCNN_SUITES_DIR, ./suites, the source tree's
// suites/ and the installed share/kcnn/suites.
std::string resolve_suite(const std::string& name_or_path);

// All suite names found by resolve_suite's search path (for messages).
std::vector<std::string> available_suites();

}  // namespace kcnn::bench
