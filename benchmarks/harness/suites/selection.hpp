#pragma once
// Selection: which cases a run measures, from the suites, the registry and the filters.
#include "cli/options.hpp"
#include "cases/registry.hpp"
#include "suites/suite.hpp"

#include <string>
#include <vector>

namespace kcnn::bench {

struct selection {
  std::vector<planned_case> cases;
  std::vector<std::string> not_applicable;  // "key: why"
  // The --key / --key-file patterns no case of this build matched ("where: 'pattern'"): a typo, or
  // a case of another build (a CUDA-only space or peer on a host).
  std::vector<std::string> unmatched_keys;
};

// Every registered variant of every layer that passes the filters (axes, variants, keys). --quick on a network suite
// without variant, space or pattern filters is a smoke pass: each layer once with its op's
// baseline, in nchw unless --layout says otherwise (--network: every layout, for its per-layer
// plan), since the full catalogue of a real network takes hours on a host.
selection select_cases(const options& opt, const std::vector<suite>& suites);

// The suites named on the command line (`all`: every network suite), with --batch applied.
// Throws suite_error.
std::vector<suite> load_suites(const options& opt);

// The cases of `cases` whose key is not yet `ok` in the results file `resume_from`. Throws
// std::runtime_error naming the file when it cannot be read.
std::vector<planned_case> not_yet_finished(std::vector<planned_case> cases, const std::string& resume_from);

}  // namespace kcnn::bench
