#pragma once
// The optimal layout plan of a forward pass (--network's plan `optimal`): each layer gets one of K
// layouts so that the sum of the layers' costs in their layouts and of the layout transforms that
// the choice causes is minimal.
//
// The cost model is the forward pass's (forward_pass.cpp): a layer's output tensor has the layer's
// layout; the network input has the first layer's layout (it is uploaded in it); a consumer in
// another layout reads a converted copy, made once per (tensor, layout) and shared by every consumer
// that wants that layout. So a tensor read in layouts {a, b} besides its own pays two transforms,
// not one per consumer: the cost of a tensor depends on the set of its consumers' layouts.
//
// The method is a dynamic program over the layers in order whose state is the frontier: for every
// tensor already produced and still to be read, its layout and the set of layouts it has been
// converted to. Layer i's choice of layout adds its own cost and the transforms its inputs need
// that the state has not paid yet. On a chain the frontier is one tensor, and the program is the
// classic one over (layer, layout); on a network with joins (a residual block holds the identity
// and the branch) it is exact as long as the number of frontier states stays under `max_states`
// (K x 2^K per live tensor: 24 for K = 3, so a few live tensors). Past that cap the states are
// pruned to the cheapest `max_states` (a beam): the plan is then not proven optimal, and the
// result says so and gives a proven lower bound (every layer at its cheapest layout, no transform)
// to measure the gap against.
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace kcnn::bench {

struct layout_plan_problem {
  int layouts = 0;                                   // K
  std::vector<std::vector<int>> inputs;              // per layer: producing layers, -1 = the network input
  std::vector<std::vector<double>> layer_cost;       // [layer][layout]; infinity: not possible
  // [producer + 1][from][to]: converting producer's output (row 0: the network input), >= 0.
  std::vector<std::vector<std::vector<double>>> transform_cost;
};

struct layout_plan_solution {
  std::vector<int> layout;   // per layer
  double cost = std::numeric_limits<double>::infinity();
  int transforms = 0;        // conversions the plan makes
  bool exact = true;         // false: the frontier outgrew max_states and was pruned
  double lower_bound = 0;    // sum of each layer's cheapest layout (always <= the optimum)
  std::size_t peak_states = 0;
};

// The cost and the number of transforms of a given assignment under the model above (infinity if
// a layer's layout is not possible). Throws std::invalid_argument on an inconsistent problem.
double layout_plan_cost(const layout_plan_problem& p, const std::vector<int>& layout, int* transforms = nullptr);

// The minimal-cost assignment (see above). Throws std::invalid_argument on an inconsistent problem
// (inputs not earlier layers, cost tables of the wrong size, negative transform costs, more than 8
// layouts) and std::runtime_error when no assignment has a finite cost.
layout_plan_solution optimal_layout_plan(const layout_plan_problem& p, std::size_t max_states = 1u << 16);

}  // namespace kcnn::bench
