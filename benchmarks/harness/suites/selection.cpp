#include "suites/selection.hpp"

#include "results/results.hpp"

#include <algorithm>
#include <regex>
#include <set>

namespace kcnn::bench {

std::vector<suite> load_suites(const options& opt) {
  std::vector<suite> suites;
  for (const auto& name : opt.suites) {
    if (name == "all") {
      for (auto& su : all_network_suites()) suites.push_back(std::move(su));
    } else {
      suites.push_back(load_suite(resolve_suite(name)));
    }
  }
  for (auto& su : suites)
    if (opt.batch > 0) set_batch(su, opt.batch);
  return suites;
}

selection select_cases(const options& opt, const std::vector<suite>& suites) {
  const bool baseline_only = opt.quick && opt.variants.empty() && opt.spaces.empty() && opt.patterns.empty();
  const std::vector<layout_axis> quick_layouts =
      opt.layouts.empty() && !opt.network ? std::vector<layout_axis>{layout_axis::nchw} : opt.layouts;
  selection sel;
  std::vector<bool> key_used(opt.keys.size(), false);
  for (const auto& su : suites)
    for (const auto& spec : su.layers) {
      const bool smoke = baseline_only && su.kind == suite_kind::network;
      for (const auto& v : registry::instance().variants()) {
        if (smoke && !v.baseline) continue;
        if (v.op != spec.op || !matches(opt.ops, v.op) || !matches(smoke ? quick_layouts : opt.layouts, v.layout) ||
            !matches(opt.spaces, v.space) || !matches(opt.patterns, v.pattern) || !matches(opt.variants, v.variant))
          continue;
        const std::string key = case_key(v, spec);
        if (!opt.keys.empty()) {  // a case any pattern matches; each pattern's use noted
          bool selected = false;
          for (std::size_t i = 0; i < opt.keys.size(); ++i)
            if (std::regex_search(key, opt.keys[i].re)) selected = key_used[i] = true;
          if (!selected) continue;
        }
        const std::string why = v.unsupported ? v.unsupported(spec) : std::string();
        if (!why.empty()) sel.not_applicable.push_back(key + ": " + why);
        else sel.cases.push_back({&v, spec, key});
      }
    }
  for (std::size_t i = 0; i < opt.keys.size(); ++i)
    if (!key_used[i]) sel.unmatched_keys.push_back(opt.keys[i].where + ": '" + opt.keys[i].text + "'");
  return sel;
}

std::vector<planned_case> not_yet_finished(std::vector<planned_case> cases, const std::string& resume_from) {
  std::set<std::string> done;
  for (auto& k : finished_keys(resume_from)) done.insert(k);
  cases.erase(std::remove_if(cases.begin(), cases.end(), [&](const planned_case& c) { return done.count(c.key) > 0; }),
              cases.end());
  return cases;
}

}  // namespace kcnn::bench
