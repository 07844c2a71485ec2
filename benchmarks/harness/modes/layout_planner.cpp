#include "modes/layout_planner.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <map>
#include <utility>

namespace kcnn::bench {

namespace {

void check_problem(const layout_plan_problem& p) {
  const std::size_t L = p.inputs.size();
  const int K = p.layouts;
  if (K < 1 || K > 8) throw std::invalid_argument("layout plan: 1 to 8 layouts, not " + std::to_string(K));
  if (L == 0) throw std::invalid_argument("layout plan: no layer");
  if (p.layer_cost.size() != L) throw std::invalid_argument("layout plan: layer_cost has " + std::to_string(p.layer_cost.size()) + " rows for " + std::to_string(L) + " layers");
  if (p.transform_cost.size() != L + 1) throw std::invalid_argument("layout plan: transform_cost needs a row per layer and one for the network input");
  for (std::size_t i = 0; i < L; ++i) {
    if (p.layer_cost[i].size() != std::size_t(K)) throw std::invalid_argument("layout plan: layer " + std::to_string(i) + ": a cost per layout");
    for (double c : p.layer_cost[i])
      if (std::isnan(c) || c < 0) throw std::invalid_argument("layout plan: layer " + std::to_string(i) + ": a cost is negative or NaN");
    if (p.inputs[i].empty()) throw std::invalid_argument("layout plan: layer " + std::to_string(i) + " reads nothing");
    for (int t : p.inputs[i])
      if (t < -1 || t >= int(i)) throw std::invalid_argument("layout plan: layer " + std::to_string(i) + " reads " + std::to_string(t) + ", not an earlier layer or the input (-1)");
  }
  for (const auto& t : p.transform_cost) {
    if (t.size() != std::size_t(K)) throw std::invalid_argument("layout plan: transform_cost: a KxK table per tensor");
    for (const auto& row : t) {
      if (row.size() != std::size_t(K)) throw std::invalid_argument("layout plan: transform_cost: a KxK table per tensor");
      for (double c : row)
        if (std::isnan(c) || c < 0) throw std::invalid_argument("layout plan: a transform cost is negative or NaN");
    }
  }
}

// A live tensor's part of a state: its layout (low 4 bits) and the layouts it was converted to.
using code = unsigned short;
code make_code(int layout, unsigned mask) { return code(unsigned(layout) | (mask << 4)); }
int code_layout(code c) { return c & 0xF; }
unsigned code_mask(code c) { return unsigned(c) >> 4; }

struct node {
  std::basic_string<code> key;  // codes of the live tensors, in their order
  double cost = 0;
  int parent = -1;              // index in the previous layer's nodes
  int choice = -1;              // this layer's layout
};

}  // namespace

double layout_plan_cost(const layout_plan_problem& p, const std::vector<int>& layout, int* transforms) {
  check_problem(p);
  if (layout.size() != p.inputs.size()) throw std::invalid_argument("layout plan: an assignment needs a layout per layer");
  double cost = 0;
  std::set<std::pair<int, int>> converted;  // (tensor, layout)
  for (std::size_t i = 0; i < layout.size(); ++i) {
    const int k = layout[i];
    if (k < 0 || k >= p.layouts) throw std::invalid_argument("layout plan: layout " + std::to_string(k) + " out of range");
    cost += p.layer_cost[i][std::size_t(k)];
    for (int t : p.inputs[i]) {
      const int own = layout[std::size_t(t < 0 ? 0 : t)];
      if (own != k && converted.insert({t, k}).second) cost += p.transform_cost[std::size_t(t + 1)][std::size_t(own)][std::size_t(k)];
    }
  }
  if (transforms) *transforms = int(converted.size());
  return cost;
}

layout_plan_solution optimal_layout_plan(const layout_plan_problem& p, std::size_t max_states) {
  check_problem(p);
  const int L = int(p.inputs.size());
  const int K = p.layouts;
  std::vector<int> last_use(std::size_t(L) + 1, -1);  // [tensor + 1]
  for (int i = 0; i < L; ++i)
    for (int t : p.inputs[std::size_t(i)]) last_use[std::size_t(t + 1)] = std::max(last_use[std::size_t(t + 1)], i);

  layout_plan_solution sol;
  for (const auto& row : p.layer_cost) sol.lower_bound += *std::min_element(row.begin(), row.end());

  std::vector<std::vector<node>> layers;
  std::vector<node> cur{node{}};
  std::vector<int> live;  // tensors in the frontier, in key order
  for (int i = 0; i < L; ++i) {
    std::vector<int> candidates = live;
    if (i == 0) candidates.push_back(-1);  // the input takes the first layer's layout
    candidates.push_back(i);
    std::vector<int> live_after;
    for (int t : candidates)
      if (last_use[std::size_t(t + 1)] > i) live_after.push_back(t);

    std::map<std::basic_string<code>, std::size_t> index;
    std::vector<node> next;
    for (std::size_t si = 0; si < cur.size(); ++si) {
      for (int k = 0; k < K; ++k) {
        const double own_cost = p.layer_cost[std::size_t(i)][std::size_t(k)];
        if (!std::isfinite(own_cost)) continue;
        // The state's codes by tensor, plus the input's (layer 0) and this layer's output.
        std::vector<std::pair<int, code>> codes;
        for (std::size_t j = 0; j < live.size(); ++j) codes.push_back({live[j], cur[si].key[j]});
        if (i == 0) codes.push_back({-1, make_code(k, 0)});
        auto code_of = [&](int t) -> code& {
          for (auto& c : codes)
            if (c.first == t) return c.second;
          throw std::logic_error("layout plan: tensor " + std::to_string(t) + " is not live");
        };
        double add = own_cost;
        for (int t : p.inputs[std::size_t(i)]) {
          code& c = code_of(t);
          const int own = code_layout(c);
          const unsigned bit = 1u << unsigned(k);
          if (own != k && !(code_mask(c) & bit)) {
            add += p.transform_cost[std::size_t(t + 1)][std::size_t(own)][std::size_t(k)];
            c = make_code(own, code_mask(c) | bit);
          }
        }
        codes.push_back({i, make_code(k, 0)});
        std::basic_string<code> key;
        for (int t : live_after) key.push_back(code_of(t));
        const double total = cur[si].cost + add;
        auto [it, fresh] = index.try_emplace(key, next.size());
        if (fresh) next.push_back(node{key, total, int(si), k});
        else if (total < next[it->second].cost) next[it->second] = node{key, total, int(si), k};
      }
    }
    if (next.empty()) throw std::runtime_error("layout plan: layer " + std::to_string(i) + " has no possible layout");
    sol.peak_states = std::max(sol.peak_states, next.size());
    if (next.size() > max_states) {
      std::nth_element(next.begin(), next.begin() + std::ptrdiff_t(max_states), next.end(),
                       [](const node& a, const node& b) { return a.cost < b.cost; });
      next.resize(max_states);
      sol.exact = false;
    }
    layers.push_back(cur);
    cur = std::move(next);
    live = std::move(live_after);
  }
  // The last layer's output has no reader: one state per choice path; take the cheapest.
  std::size_t best = 0;
  for (std::size_t s = 1; s < cur.size(); ++s)
    if (cur[s].cost < cur[best].cost) best = s;
  sol.cost = cur[best].cost;
  sol.layout.assign(std::size_t(L), -1);
  int at = int(best);
  for (int i = L - 1; i >= 0; --i) {
    const node& n = (i == L - 1) ? cur[std::size_t(at)] : layers[std::size_t(i + 1)][std::size_t(at)];
    sol.layout[std::size_t(i)] = n.choice;
    at = n.parent;
  }
  layout_plan_cost(p, sol.layout, &sol.transforms);
  return sol;
}

}  // namespace kcnn::bench
