#pragma once
// Whole-network forward passes (--network): each layer's output feeds the next on the device,
// weights are random but fixed (seeded per layer, the same logical values in every layout), and
// the final output is compared with a host reference forward pass of the same network.
#include "measure/sampler.hpp"
#include "modes/memory_plan.hpp"
#include "cases/registry.hpp"
#include "suites/suite.hpp"

#include <kcnn/validate.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kcnn::bench {

// One variant per layer, by layout and algorithm.
struct forward_plan {
  std::string name;                            // uniform_nchw, ..., per_layer
  std::vector<const variant_info*> variants;   // per layer
};

struct forward_step_time {
  std::string label;   // layer name, or "transform <tensor> a->b"
  std::string layout;  // the layer's layout (transforms: the target)
  std::string variant; // the case key's variant (and tuning)
  double ms = 0;       // median over the timed passes (0: not timed)
  int layer = 0;       // the layer (transforms: the layer they convert for)
  bool transform = false;
  dims4 dims{};        // transforms: the tensor's shape, and its layouts
  layout_axis from = layout_axis::nchw, to = layout_axis::nchw;
};

struct forward_result {
  std::string plan;
  double total_ms = 0;                 // median over passes of the sum of the fenced steps
  std::vector<forward_step_time> steps;
  int transforms = 0;
  int reps = 0;
  comparison check;                    // final output against the host reference
  std::vector<double> output;          // final output, logical nchw
  double arena_bytes = 0;              // activations' device memory (arena or sum of buffers)
  double converted_bytes = 0;          // layout transforms' copies (own buffers, outside the arena)
  // activation_memory::swapped only: the swap plan executed.
  swap_plan swaps;
  bool limit_met = true;               // false: not run (the plan cannot meet the limit)
};

// Where the activations live: one buffer per tensor, or carved out of one arena placed by the
// first-fit planner (the graph is built with each variant's own in-place capability), or that
// arena under a memory limit with the swap plan (memory_plan.hpp) executed: each swapped tensor is
// copied to a host buffer (host-pinned on CUDA and HIP) on a second execution-space instance right
// after its use at `from`, and back to its next place in the arena with step to-1 (overlapped) or
// just before step `to` (synchronous); a copy out is overlapped with step from+1 or waited for at
// once. Each layer's last step waits for the copies issued with it and after the layer before.
// With Kokkos 3 there is no second instance: the same schedule runs on the default one.
enum class activation_memory { separate, arena, swapped };

// The host reference forward pass (double), layer by layer with the plan's cases' weights.
std::vector<double> reference_forward(const suite& su, std::uint64_t seed, const case_settings& settings = {});

// Runs a plan: one validation pass, then timed passes (fenced per step) until min_reps and the
// time budget are both reached or max_reps (max_reps <= 0: the validation pass only, nothing
// timed: the gpu-model build). Throws std::runtime_error with the layer named when a variant
// cannot be chained.
forward_result run_forward(const suite& su, const forward_plan& plan, std::uint64_t seed,
                           const std::vector<double>& reference, double tolerance, int min_reps,
                           int max_reps, double budget_s, activation_memory memory,
                           const case_settings& settings = {}, double memory_limit_bytes = 0);

// The uniform plan: each layer's op's baseline in the given layout.
forward_plan uniform_plan(const suite& su, layout_axis layout);

// The uniform plan, except that each layer whose op may run in place gets a variant of the layout
// that is safe in place for it when the baseline is not (a kcnn one in global memory; none: the
// baseline stays), so an arena reaches the lifetimes the memory plan assumes. Named
// uniform_<layout>_in_place.
forward_plan in_place_plan(const suite& su, layout_axis layout, const case_settings& settings = {});

// The shape of tensor `producer`'s output (-1: the network input).
dims4 tensor_shape(const suite& su, int producer);

// The median time (ms) of the layout transform a forward pass would insert for a tensor of shape
// d (the kernel run_forward uses), one launch per sample of `timer` (the harness's sampler), over
// min_reps..max_reps samples within budget_s after one warm-up; with the device model as the
// sampler (the gpu-model build), its modelled time of one traced run (NaN: nothing recorded).
// Infinity when the build has no such transform.
double time_layout_transform(const dims4& d, layout_axis from, layout_axis to, std::uint64_t seed, const sampler& timer,
                             int min_reps, int max_reps, double budget_s, const case_settings& settings = {});

}  // namespace kcnn::bench
