// The optimal layout plan (modes/layout_planner.hpp): hand-checked costs, then the dynamic
// program against brute force over every assignment of small random networks with joins.
#include "modes/layout_planner.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using kcnn::bench::layout_plan_cost;
using kcnn::bench::layout_plan_problem;
using kcnn::bench::optimal_layout_plan;

namespace {

const double inf = std::numeric_limits<double>::infinity();

// K layouts, every transform of every tensor costing `x`.
layout_plan_problem problem(int K, std::vector<std::vector<int>> inputs, std::vector<std::vector<double>> cost, double x) {
  layout_plan_problem p;
  p.layouts = K;
  p.inputs = std::move(inputs);
  p.layer_cost = std::move(cost);
  p.transform_cost.assign(p.inputs.size() + 1, std::vector<std::vector<double>>(std::size_t(K), std::vector<double>(std::size_t(K), x)));
  return p;
}

double brute_force(const layout_plan_problem& p, std::vector<int>* best_layout = nullptr) {
  const std::size_t L = p.inputs.size();
  std::vector<int> a(L, 0);
  double best = inf;
  while (true) {
    const double c = layout_plan_cost(p, a);
    if (c < best) {
      best = c;
      if (best_layout) *best_layout = a;
    }
    std::size_t i = 0;
    while (i < L && ++a[i] == p.layouts) a[i++] = 0;
    if (i == L) break;
  }
  return best;
}

}  // namespace

TEST(LayoutPlanner, AChainPaysForTheTransformsTheGreedyChoiceIgnores) {
  // Layer 0 is fastest in layout 0, layers 1 and 2 in layout 1 by 1 each; a transform costs 5.
  // Greedy: 1 + 2 + 2 + one transform = 10. Optimal: everything in layout 1: 3 + 2 + 2 = 7
  // (or everything in 0: 1 + 3 + 3 = 7); with a transform of 1 the mixed plan (1 + 2 + 2 + 1 = 6) wins.
  auto p = problem(2, {{-1}, {0}, {1}}, {{1, 3}, {3, 2}, {3, 2}}, 5);
  int transforms = -1;
  EXPECT_DOUBLE_EQ(layout_plan_cost(p, {0, 1, 1}, &transforms), 10);
  EXPECT_EQ(transforms, 1);
  auto s = optimal_layout_plan(p);
  EXPECT_DOUBLE_EQ(s.cost, 7);
  EXPECT_EQ(s.transforms, 0);
  EXPECT_TRUE(s.exact);
  EXPECT_DOUBLE_EQ(s.lower_bound, 5);
  p = problem(2, {{-1}, {0}, {1}}, {{1, 3}, {3, 2}, {3, 2}}, 1);
  s = optimal_layout_plan(p);
  EXPECT_DOUBLE_EQ(s.cost, 6);
  EXPECT_EQ(s.layout, (std::vector<int>{0, 1, 1}));
  EXPECT_EQ(s.transforms, 1);
}

TEST(LayoutPlanner, AConvertedTensorIsSharedByItsConsumersInThatLayout) {
  // Layer 0 (layout 0 only) feeds layers 1 and 2, both cheaper in layout 1 by 3 each; the
  // conversion of layer 0's output costs 4, paid once for both: 0 + 1 + 1 + 4 = 6, against 8 in
  // layout 0 (and 10 if each consumer paid its own).
  auto p = problem(2, {{-1}, {0}, {0}, {1, 2}}, {{0, inf}, {4, 1}, {4, 1}, {1, 1}}, 4);
  const auto s = optimal_layout_plan(p);
  EXPECT_DOUBLE_EQ(s.cost, 7);  // + the join (1) in layout 1, reading both branches as they are
  EXPECT_EQ(s.layout, (std::vector<int>{0, 1, 1, 1}));
  EXPECT_EQ(s.transforms, 1);
  int transforms = 0;
  EXPECT_DOUBLE_EQ(layout_plan_cost(p, {0, 0, 0, 0}, &transforms), 9);
  EXPECT_EQ(transforms, 0);
}

TEST(LayoutPlanner, TheNetworkInputTakesTheFirstLayersLayoutAndOthersConvertIt) {
  // A second reader of the input (a skip from the input) in another layout converts it.
  layout_plan_problem p = problem(2, {{-1}, {0}, {-1, 1}}, {{1, 1}, {1, 1}, {inf, 1}}, 1);
  p.transform_cost[0][0][1] = 10;  // converting the input
  p.transform_cost[0][1][0] = 10;
  const auto s = optimal_layout_plan(p);
  EXPECT_DOUBLE_EQ(s.cost, 3);     // all in layout 1: the input is uploaded in it
  EXPECT_EQ(s.layout, (std::vector<int>{1, 1, 1}));
  EXPECT_DOUBLE_EQ(layout_plan_cost(p, {0, 0, 1}), 14);  // + the input (10) and layer 1's output (1) converted
}

TEST(LayoutPlanner, MatchesBruteForceOnRandomNetworksWithJoins) {
  std::mt19937_64 rng(20261126);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int joins = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int K = 2 + int(rng() % 2);
    const int L = 2 + int(rng() % 6);
    layout_plan_problem p;
    p.layouts = K;
    for (int i = 0; i < L; ++i) {
      std::vector<int> in{i - 1};
      // A second input from any earlier tensor (a residual add or a concat), a third rarely.
      for (int extra = 0; extra < 2; ++extra)
        if (i > 0 && u(rng) < (extra ? 0.1 : 0.35)) {
          in.push_back(int(rng() % std::uint64_t(i + 1)) - 1);
          ++joins;
        }
      p.inputs.push_back(in);
      std::vector<double> cost;
      for (int k = 0; k < K; ++k) cost.push_back(u(rng) < 0.1 ? inf : 10 * u(rng));
      if (std::isinf(*std::min_element(cost.begin(), cost.end()))) cost[0] = 1;
      p.layer_cost.push_back(cost);
    }
    for (int t = 0; t <= L; ++t) {
      std::vector<std::vector<double>> x(static_cast<std::size_t>(K), std::vector<double>(static_cast<std::size_t>(K)));
      for (auto& row : x)
        for (auto& c : row) c = 6 * u(rng);
      p.transform_cost.push_back(x);
    }
    std::vector<int> brute_layout;
    const double brute = brute_force(p, &brute_layout);
    const auto s = optimal_layout_plan(p);
    ASSERT_TRUE(s.exact);
    ASSERT_NEAR(s.cost, brute, 1e-9) << "trial " << trial;
    ASSERT_NEAR(layout_plan_cost(p, s.layout), s.cost, 1e-9) << "trial " << trial << ": the plan costs what it says";
    ASSERT_LE(s.lower_bound, s.cost + 1e-9);
    for (int k = 0; k < K; ++k) ASSERT_LE(s.cost, layout_plan_cost(p, std::vector<int>(std::size_t(L), k)) + 1e-9);
    // A beam of one state is a feasible plan, no better than the optimum, and says it is not exact
    // when it had to prune.
    const auto beam = optimal_layout_plan(p, 1);
    ASSERT_GE(beam.cost, s.cost - 1e-9);
    ASSERT_NEAR(layout_plan_cost(p, beam.layout), beam.cost, 1e-9);
    if (beam.peak_states > 1) ASSERT_FALSE(beam.exact);
  }
  EXPECT_GT(joins, 100) << "the random networks have joins";
}

TEST(LayoutPlanner, InconsistentProblemsAreRefused) {
  auto p = problem(2, {{-1}, {1}}, {{1, 1}, {1, 1}}, 1);  // layer 1 reads itself
  EXPECT_THROW(optimal_layout_plan(p), std::invalid_argument);
  p = problem(2, {{-1}, {0}}, {{1, 1}, {1}}, 1);
  EXPECT_THROW(optimal_layout_plan(p), std::invalid_argument);
  p = problem(2, {{-1}, {0}}, {{1, 1}, {1, 1}}, -1);
  EXPECT_THROW(optimal_layout_plan(p), std::invalid_argument);
  p = problem(2, {{-1}, {0}}, {{inf, inf}, {1, 1}}, 1);
  EXPECT_THROW(optimal_layout_plan(p), std::runtime_error);
}
