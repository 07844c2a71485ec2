#pragma once
// Sizing of the UVM oversubscription study (CUDA builds run it; the arithmetic is host code so
// that it is tested everywhere).
//
// The study shrinks the device on purpose: a ballast allocation takes all free device memory
// except a budget B, then a chain of layers keeps (layers + 1) activations alive whose total is
// `ratio` x B. Managed memory therefore never exceeds what the device has free (total <= free),
// yet the chain's activations exceed the memory left to them by the chosen ratio.
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace kcnn::bench {

struct oversubscription_plan {
  double budget_bytes = 0;    // device memory left to the chain
  double ballast_bytes = 0;   // device memory taken away from it
  int layers = 0;             // chain length: layers + 1 activations stay alive
  double activation_bytes = 0;
  double total_bytes() const { return (layers + 1) * activation_bytes; }
};

// free_bytes: queried free device memory; budget_fraction: share of it left to the chain (0, 1];
// cap_bytes: upper bound on the budget (0: none); ratio: activations / budget (> 1 oversubscribes);
// activation_bytes: one activation tensor. Throws std::invalid_argument naming the field.
inline oversubscription_plan plan_oversubscription(double free_bytes, double budget_fraction,
                                                   double cap_bytes, double ratio,
                                                   double activation_bytes) {
  if (!(budget_fraction > 0 && budget_fraction <= 1))
    throw std::invalid_argument("budget: must be in (0, 1], got " + std::to_string(budget_fraction));
  if (!(ratio > 0)) throw std::invalid_argument("ratio: must be > 0, got " + std::to_string(ratio));
  oversubscription_plan p;
  p.activation_bytes = activation_bytes;
  p.budget_bytes = budget_fraction * free_bytes;
  if (cap_bytes > 0 && p.budget_bytes > cap_bytes) p.budget_bytes = cap_bytes;
  // The activations (ratio x budget) must fit in what is free, or managed memory would exceed
  // the device: the ballast shrinks to make room, never below zero.
  const double wanted = ratio * p.budget_bytes;
  if (wanted > free_bytes)
    throw std::invalid_argument("ratio: " + std::to_string(ratio) + " x budget needs " +
                                std::to_string(wanted / double(1 << 30)) + " GiB of managed memory, more than the " +
                                std::to_string(free_bytes / double(1 << 30)) + " GiB free; lower budget or ratio");
  p.layers = int(std::ceil(wanted / activation_bytes)) - 1;
  if (p.layers < 2)
    throw std::invalid_argument("n: one activation (" + std::to_string(activation_bytes / double(1 << 20)) +
                                " MiB) is too large for a chain in a budget of " +
                                std::to_string(p.budget_bytes / double(1 << 20)) + " MiB");
  // Two activations (a layer's input and output) must fit in the budget for the chain to run.
  if (2 * activation_bytes > p.budget_bytes)
    throw std::invalid_argument("n: a layer's input and output do not fit in the budget");
  p.ballast_bytes = free_bytes - p.budget_bytes;
  return p;
}

}  // namespace kcnn::bench
