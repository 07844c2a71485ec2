#include "modes/memory_plan.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

namespace kcnn::bench {

tensor_graph build_tensor_graph(const suite& su, const alias_rule& may_alias, std::size_t element_bytes) {
  tensor_graph g;
  const auto& layers = su.layers;
  g.steps = int(layers.size());
  std::map<std::string, int> consumers;  // per producing layer name
  for (const auto& l : layers)
    for (const auto& in : l.inputs) ++consumers[in];

  const dims4 in0{layers.front().n, layers.front().c, layers.front().h, layers.front().w};
  g.tensors.push_back({"input", double(in0.size() * element_bytes), 0, 0, {}, -1, -1});
  std::map<std::string, int> tensor_of;  // layer name -> the tensor holding its output
  for (int i = 0; i < g.steps; ++i) {
    const auto& l = layers[std::size_t(i)];
    std::vector<int> ins;
    if (l.inputs.empty()) ins.push_back(0);
    for (const auto& name : l.inputs) ins.push_back(tensor_of.at(name));
    for (int t : ins) g.tensors[std::size_t(t)].uses.push_back(i);
    const bool sole = l.inputs.empty() ? true : consumers[l.inputs.front()] == 1;
    const int creator = g.tensors[std::size_t(ins.front())].creator;
    const bool alias = may_alias ? may_alias(i, creator, sole)
                                 : registry::instance().find_op(l.op)->in_place_capable && sole;
    int out;
    if (alias) {
      out = ins.front();
    } else {
      out = int(g.tensors.size());
      g.tensors.push_back({l.layer, double(l.out.size() * element_bytes), i, i, {i}, -1, i});
    }
    tensor_of[l.layer] = out;
    g.output_of.push_back(out);
    g.inputs_of.push_back(ins);
  }
  for (auto& t : g.tensors) {
    std::sort(t.uses.begin(), t.uses.end());
    t.uses.erase(std::unique(t.uses.begin(), t.uses.end()), t.uses.end());
    t.last = t.uses.empty() ? t.first : t.uses.back();
  }
  // The network's output stays alive to the end of the pass.
  auto& result = g.tensors[std::size_t(g.output_of.back())];
  result.last = std::max(result.last, g.steps - 1);
  return g;
}

namespace {
bool overlap(const planned_tensor& a, const planned_tensor& b) {
  return a.first <= b.last && b.first <= a.last;
}
}  // namespace

double choose_offset(std::vector<std::pair<double, double>> busy, double bytes, fit f) {
  std::sort(busy.begin(), busy.end());
  double cur = 0, best = -1, best_gap = std::numeric_limits<double>::infinity();
  for (const auto& [offset, size] : busy) {
    const double gap = offset - cur;
    if (gap >= bytes) {
      if (f == fit::first) return cur;
      if (gap < best_gap) {
        best_gap = gap;
        best = cur;
      }
    }
    cur = std::max(cur, offset + size);
  }
  return best >= 0 ? best : cur;
}

double place_in_arena(std::vector<planned_tensor>& tensors, fit f) {
  std::vector<std::size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (tensors[a].bytes != tensors[b].bytes) return tensors[a].bytes > tensors[b].bytes;
    return tensors[a].first < tensors[b].first;
  });
  for (auto& t : tensors) t.offset = -1;
  double arena = 0;
  for (std::size_t idx : order) {
    auto& t = tensors[idx];
    std::vector<std::pair<double, double>> busy;
    for (const auto& o : tensors)
      if (o.offset >= 0 && overlap(o, t)) busy.push_back({o.offset, o.bytes});
    t.offset = choose_offset(std::move(busy), t.bytes, f);
    arena = std::max(arena, t.offset + t.bytes);
  }
  return arena;
}

double free_after_last_use_peak(const std::vector<planned_tensor>& tensors, int steps) {
  std::multiset<double> free_blocks;
  std::map<std::size_t, double> held;  // tensor -> its block's size
  double created = 0;
  for (int s = 0; s < steps; ++s) {
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      if (tensors[i].first != s) continue;
      auto it = free_blocks.lower_bound(tensors[i].bytes);  // the smallest block that fits
      if (it != free_blocks.end()) {
        held[i] = *it;
        free_blocks.erase(it);
      } else {
        held[i] = tensors[i].bytes;
        created += tensors[i].bytes;
      }
    }
    for (std::size_t i = 0; i < tensors.size(); ++i)
      if (tensors[i].last == s && held.count(i)) {
        free_blocks.insert(held[i]);
        held.erase(i);
      }
  }
  return created;
}

std::vector<double> live_bytes(const std::vector<planned_tensor>& tensors, int steps) {
  std::vector<double> live(std::size_t(std::max(steps, 1)), 0.0);
  for (const auto& t : tensors)
    for (int s = t.first; s <= t.last && s < steps; ++s) live[std::size_t(s)] += t.bytes;
  return live;
}

double live_bytes_peak(const std::vector<planned_tensor>& tensors, int steps) {
  const auto live = live_bytes(tensors, steps);
  return *std::max_element(live.begin(), live.end());
}

namespace {
// Each tensor's stays on the device under the swaps: split at every swapped gap.
std::vector<device_piece> device_pieces(const std::vector<planned_tensor>& tensors, const std::vector<swap_choice>& swaps) {
  std::vector<device_piece> pieces;
  for (int t = 0; t < int(tensors.size()); ++t) {
    std::vector<const swap_choice*> mine;
    for (const auto& s : swaps)
      if (s.tensor_index == t) mine.push_back(&s);
    std::sort(mine.begin(), mine.end(), [](auto* a, auto* b) { return a->from < b->from; });
    int start = tensors[std::size_t(t)].first;
    for (const auto* s : mine) {
      pieces.push_back({t, start, s->from + (s->overlap_out ? 1 : 0), 0});
      start = s->to - (s->overlap_in ? 1 : 0);
    }
    pieces.push_back({t, start, tensors[std::size_t(t)].last, 0});
  }
  return pieces;
}

std::vector<planned_tensor> as_tensors(const std::vector<planned_tensor>& tensors, const std::vector<device_piece>& pieces) {
  std::vector<planned_tensor> out;
  for (const auto& p : pieces) {
    const auto& t = tensors[std::size_t(p.tensor)];
    out.push_back({t.name, t.bytes, p.first, p.last, {}, -1, t.creator});
  }
  return out;
}
}  // namespace

const device_piece& swap_plan::piece_at(int t, int s) const {
  for (const auto& p : pieces)
    if (p.tensor == t && p.first <= s && s <= p.last) return p;
  throw std::logic_error("swap plan: tensor " + std::to_string(t) + " is not on the device at step " + std::to_string(s));
}

swap_plan plan_swaps(const std::vector<planned_tensor>& tensors, int steps, double limit_bytes) {
  swap_plan plan;
  double target = limit_bytes;
  while (true) {
    bool exhausted = false;
    while (true) {
      const auto live = live_bytes(as_tensors(tensors, device_pieces(tensors, plan.swaps)), steps);
      const auto peak_it = std::max_element(live.begin(), live.end());
      plan.live_peak = *peak_it;
      if (plan.live_peak <= target) break;
      const int peak = int(peak_it - live.begin());
      // Candidates: a gap between two consecutive uses that contains the peak step, swapped with
      // its copies overlapped where the peak allows (a copy beside the peak step would hold the
      // bytes there), or a swapped gap widened to the peak by making one of its copies
      // synchronous. The fewest copies made synchronous first, then the largest gap x size.
      int best_sync = 3;
      double best_score = -1;
      swap_choice best;
      int widen = -1;  // index of the swap to widen
      for (int i = 0; i < int(tensors.size()); ++i) {
        const auto& u = tensors[std::size_t(i)].uses;
        for (std::size_t j = 1; j < u.size(); ++j) {
          const int from = u[j - 1], to = u[j];
          if (!(from < peak && peak < to)) continue;
          const double score = double(to - from) * tensors[std::size_t(i)].bytes;
          swap_choice c{tensors[std::size_t(i)].name, i, from, to, tensors[std::size_t(i)].bytes, peak > from + 1, peak < to - 1};
          int sync = int(!c.overlap_out) + int(!c.overlap_in), index = -1;
          for (std::size_t k = 0; k < plan.swaps.size(); ++k)
            if (plan.swaps[k].tensor_index == i && plan.swaps[k].from == from) index = int(k);
          if (index >= 0) {  // already swapped, the peak beside one of its copies: that copy synchronous
            const auto& old = plan.swaps[std::size_t(index)];
            c.overlap_out = old.overlap_out && c.overlap_out;
            c.overlap_in = old.overlap_in && c.overlap_in;
            sync = int(!c.overlap_out) + int(!c.overlap_in) - int(!old.overlap_out) - int(!old.overlap_in);
            if (sync == 0) continue;  // its window already holds the peak
          }
          if (sync < best_sync || (sync == best_sync && score > best_score)) {
            best_sync = sync;
            best_score = score;
            best = c;
            widen = index;
          }
        }
      }
      if (best_score < 0) {  // nothing can be off the device at the peak: the target cannot be met
        exhausted = true;
        break;
      }
      if (widen >= 0) {
        plan.swaps[std::size_t(widen)] = best;
      } else {
        plan.swaps.push_back(best);
        plan.moved_bytes += 2.0 * best.bytes;
      }
    }
    plan.pieces = device_pieces(tensors, plan.swaps);
    auto placed = as_tensors(tensors, plan.pieces);
    plan.arena = place_in_arena(placed, fit::first);
    for (std::size_t k = 0; k < placed.size(); ++k) plan.pieces[k].offset = placed[k].offset;
    plan.fits = plan.arena <= limit_bytes;
    if (plan.fits || exhausted) return plan;
    // Fragmentation: ask the live peak for the arena's excess below what it reached.
    target = std::min(target, plan.live_peak) - (plan.arena - limit_bytes);
  }
}

std::string describe_swaps(const swap_plan& plan) {
  std::string out;
  for (const auto& s : plan.swaps) {
    out += (out.empty() ? "" : " ") + s.tensor + "@" + std::to_string(s.from) + "-" + std::to_string(s.to);
    if (!s.overlap_out || !s.overlap_in)
      out += !s.overlap_out && !s.overlap_in ? "(sync)" : !s.overlap_out ? "(sync out)" : "(sync in)";
  }
  return out.empty() ? "none" : out;
}

memory_plan_summary summarize_memory_plan(const suite& su) {
  tensor_graph g = build_tensor_graph(su);
  memory_plan_summary m;
  m.network = su.layers.front().network;
  m.batch = su.layers.front().n;
  m.tensors = int(g.tensors.size());
  for (const auto& t : g.tensors) m.no_reuse += t.bytes;
  m.free_after_last_use = free_after_last_use_peak(g.tensors, g.steps);
  m.first_fit = place_in_arena(g.tensors, fit::first);
  m.best_fit = place_in_arena(g.tensors, fit::best);
  m.lower_bound = live_bytes_peak(g.tensors, g.steps);
  return m;
}

}  // namespace kcnn::bench
