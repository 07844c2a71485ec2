#pragma once
// Memory planning of a forward pass (science.md section 4): tensor lifetimes from a network
// suite, and the peak device memory of several allocation strategies.
//
// Time is the layer index: layer i runs at step i. A tensor is live from the step of its
// producer (the network input: step 0) to the step of its last consumer (the network's
// output: the last step), both included, so a layer's inputs and output are live together.
// A layer whose op may run in place and whose (first) input has no other consumer writes into
// that input (its output is the same tensor, whose lifetime grows): activations, batch norm,
// LRN, softmax, and the residual add into its first input (torchvision's `out += identity`).
#include "suites/suite.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kcnn::bench {

struct planned_tensor {
  std::string name;        // the producing layer ("input" for the network input)
  double bytes = 0;
  int first = 0, last = 0;  // live steps, inclusive
  std::vector<int> uses;   // steps that read or write it, ascending
  double offset = -1;      // placement in the arena (offset planners)
  int creator = -1;        // the layer that allocates it (-1: the network input)
};

struct tensor_graph {
  std::vector<planned_tensor> tensors;
  std::vector<int> output_of;               // per layer: the tensor it writes
  std::vector<std::vector<int>> inputs_of;  // per layer: the tensors it reads
  int steps = 0;
};

// Whether layer `layer` writes over its first input, whose tensor was allocated by layer
// `creator` (-1: the network input) and is read by no other layer when `sole_consumer`.
using alias_rule = std::function<bool(int layer, int creator, bool sole_consumer)>;

// Builds the graph of a network suite (layers already chained by the loader). Without a rule a
// layer works in place when its op is in_place_capable and it is its input's sole consumer.
tensor_graph build_tensor_graph(const suite& su, const alias_rule& may_alias = {},
                                std::size_t element_bytes = sizeof(float));

// Places every tensor in one arena, largest first (ties: earlier first), at the lowest offset
// (first fit) or in the smallest gap (best fit) that overlaps no placed tensor whose lifetime
// intersects its own. Sets each tensor's offset; returns the arena size.
enum class fit { first, best };
double place_in_arena(std::vector<planned_tensor>& tensors, fit f);
// The offset for `bytes` among busy [offset, offset + size) ranges (any order): the lowest gap
// that fits (first), the smallest gap that fits (best), else above the highest busy range.
double choose_offset(std::vector<std::pair<double, double>> busy, double bytes, fit f);

// A caching allocator that frees a tensor after its last use and reuses a freed block only for a
// tensor no larger than the block (no splitting, no coalescing): total bytes of blocks created.
double free_after_last_use_peak(const std::vector<planned_tensor>& tensors, int steps);

// The lower bound: the largest sum of live bytes over the steps.
double live_bytes_peak(const std::vector<planned_tensor>& tensors, int steps);
std::vector<double> live_bytes(const std::vector<planned_tensor>& tensors, int steps);

// A swap plan under a memory limit, for the schedule run_forward executes (forward_pass.hpp): a
// tensor swapped out after its use at step `from` is copied to the host, and copied back before
// its next use at `to`. Each copy is overlapped with the step beside it (the copy out with step
// from+1, the copy back with step to-1), which holds the tensor's device bytes through that step,
// or synchronous (the step waits for it), which frees them for that step too. So a swap frees
// its bytes for steps from+1+overlap_out .. to-1-overlap_in.
//
// The plan takes gaps between consecutive uses that contain the peak step of live bytes, with
// copies overlapped where the peak allows; the fewest synchronous copies first (widening a swap
// already taken to the peak by making one of its copies synchronous counts one), then the
// largest gap x size; greedily, until the live peak fits a target. Then it places every device
// residence of every tensor (its "pieces": a swapped tensor has one per stay on the device, each
// at its own offset) first fit in one arena. When fragmentation leaves the arena above the limit
// it lowers the target by the excess and goes on, until the arena fits or nothing is left.
struct swap_choice {
  std::string tensor;
  int tensor_index = 0;
  int from = 0, to = 0;  // consecutive uses
  double bytes = 0;
  bool overlap_out = true, overlap_in = true;
};
struct device_piece {
  int tensor = 0;         // index into the graph's tensors
  int first = 0, last = 0;  // steps on the device, inclusive
  double offset = 0;      // in the arena
};
struct swap_plan {
  std::vector<swap_choice> swaps;
  std::vector<device_piece> pieces;
  double arena = 0;        // peak device bytes: the arena with the pieces placed
  double live_peak = 0;    // peak live bytes with the swaps (the arena's lower bound)
  double moved_bytes = 0;  // device->host plus host->device, per forward pass
  bool fits = false;       // arena <= limit
  // The piece of tensor `t` on the device at step `s` (which must be a step it is on the device).
  const device_piece& piece_at(int t, int s) const;
};
swap_plan plan_swaps(const std::vector<planned_tensor>& tensors, int steps, double limit_bytes);
// The swaps as "tensor@from-to" words ("(sync out)", "(sync in)" or "(sync)" after synchronous
// copies), or "none".
std::string describe_swaps(const swap_plan& plan);

// The table of --memory-plan for one network at one batch.
struct memory_plan_summary {
  std::string network;
  int batch = 0;
  int tensors = 0;
  double no_reuse = 0, free_after_last_use = 0, first_fit = 0, best_fit = 0, lower_bound = 0;
};
memory_plan_summary summarize_memory_plan(const suite& su);

}  // namespace kcnn::bench
