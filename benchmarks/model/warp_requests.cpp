// A traced block's accesses as a GPU's warps would issue them: grouped into warp requests (same
// warp, program location and dynamic occurrence); global ones counted in sectors, shared ones by
// their bank-conflict degree, constant ones by distinct addresses; each warp's loads per iteration
// (the latency bound's loads in flight); then the block's global requests, its warps round-robin,
// queued on the wave the caches replay (cache_model.cpp).
#include "recorder.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kcnn::model::detail {

// Groups the block's accesses into warp requests and counts them.
void finish_block() {
  recorder& r = rec;
  const device_description& d = *r.dev;
  std::vector<access>& a = r.accesses;
  // Occurrence: the k-th time a thread executes a program location.
  std::sort(a.begin(), a.end(), [](const access& x, const access& y) {
    if (x.pc != y.pc) return x.pc < y.pc;
    if (x.store != y.store) return x.store < y.store;
    if (x.thread != y.thread) return x.thread < y.thread;
    return x.seq < y.seq;
  });
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i].occ = (i > 0 && a[i - 1].pc == a[i].pc && a[i - 1].store == a[i].store && a[i - 1].thread == a[i].thread)
                   ? a[i - 1].occ + 1
                   : 0;
  const std::uint32_t ws = std::uint32_t(d.warp_size);
  std::sort(a.begin(), a.end(), [ws](const access& x, const access& y) {
    if (x.pc != y.pc) return x.pc < y.pc;
    if (x.store != y.store) return x.store < y.store;
    if (x.thread / ws != y.thread / ws) return x.thread / ws < y.thread / ws;
    if (x.occ != y.occ) return x.occ < y.occ;
    return x.addr < y.addr;
  });
  block_trace t;
  t.block = r.block;
  struct load_event {
    std::uint32_t warp, first_seq;
    std::uintptr_t pc;
    bool store;  // a global store (kept for the loops' order; not a load)
  };
  std::vector<load_event> loads;
  std::vector<std::uint32_t> warp_requests, warp_loads;
  std::vector<std::uint64_t> words;
  std::vector<int> bank_words;
  for (std::size_t i = 0; i < a.size();) {
    std::size_t j = i;
    std::uint32_t first = a[i].seq;
    const std::uint32_t warp = a[i].thread / ws;
    while (j < a.size() && a[j].pc == a[i].pc && a[j].store == a[i].store && a[j].thread / ws == warp &&
           a[j].occ == a[i].occ) {
      first = std::min(first, a[j].seq);
      ++j;
    }
    if (warp >= warp_requests.size()) warp_requests.resize(warp + 1, 0), warp_loads.resize(warp + 1, 0);
    if (r.debug && r.block == 0 && warp == 0)
      std::fprintf(stderr, "kcnn model: %s block 0 warp 0 pc %p %s space %d occ %u lanes %zu addr %p\n", r.fig.label.c_str(),
                   reinterpret_cast<void*>(a[i].pc), a[i].store ? "st" : "ld", int(a[i].space), a[i].occ, j - i,
                   reinterpret_cast<void*>(a[i].addr));
    const std::uint8_t sp = a[i].space;
    if (sp == global_space) {
      ++warp_requests[warp];
      if (!a[i].store) ++warp_loads[warp];
      request q{first, warp, a[i].store, sp, std::uint32_t(t.sectors.size()), 0};
      double bytes = 0;
      for (std::size_t k = i; k < j; ++k) {
        bytes += a[k].size;
        const std::uint64_t s0 = a[k].addr / std::uint64_t(d.sector_bytes);
        const std::uint64_t s1 = (a[k].addr + a[k].size - 1) / std::uint64_t(d.sector_bytes);
        for (std::uint64_t s = s0; s <= s1; ++s)
          if (q.sector_count == 0 || t.sectors.back() < s) {  // addresses sorted: sectors ascend
            t.sectors.push_back(s);
            ++q.sector_count;
          }
      }
      if (a[i].store) {
        r.fig.st_requests += 1, r.fig.st_sectors += q.sector_count, r.fig.st_bytes += bytes;
        loads.push_back({warp, first, a[i].pc, true});
      } else {
        r.fig.ld_requests += 1, r.fig.ld_sectors += q.sector_count, r.fig.ld_bytes += bytes;
        loads.push_back({warp, first, a[i].pc, false});
      }
      t.requests.push_back(q);
    } else {
      // Shared memory: the 4-byte words (banks serve words); constant: the addresses (the
      // constant cache serialises over distinct addresses, whatever their width).
      words.clear();
      for (std::size_t k = i; k < j; ++k) {
        if (sp == shared_space)
          for (std::uint64_t w = a[k].addr / 4; w <= (a[k].addr + a[k].size - 1) / 4; ++w) words.push_back(w);
        else
          words.push_back(a[k].addr);
      }
      std::sort(words.begin(), words.end());
      words.erase(std::unique(words.begin(), words.end()), words.end());
      if (sp == shared_space) {
        ++warp_requests[warp];
        bank_words.assign(std::size_t(d.smem_banks), 0);
        int ways = 0;
        for (const std::uint64_t w : words)
          ways = std::max(ways, ++bank_words[std::size_t((w - r.scratch_base / 4) % std::uint64_t(d.smem_banks))]);
        r.fig.smem_requests += 1;
        r.fig.smem_wavefronts += ways;
      } else {
        r.fig.const_requests += 1;
        r.fig.const_words += double(words.size());
      }
    }
    i = j;
  }
  for (const std::uint32_t n : warp_requests) r.fig.max_warp_requests = std::max(r.fig.max_warp_requests, double(n));
  for (const std::uint32_t n : warp_loads) r.fig.max_warp_loads = std::max(r.fig.max_warp_loads, double(n));
  // Loads per iteration: per warp, in program order, the loads since the same location last
  // loaded; and whether the warp stored in between (an iteration that stores: its next
  // iteration's loads wait for the store, outputs possibly aliasing inputs). A load whose location
  // the warp has not loaded before is in flight with the other loads of its stretch between two
  // stores (a body written out, as a pooling window's loads before its outputs' stores; model
  // version 5: before it only repeated loads counted, and a warp whose main loads never repeat was
  // given its edge loop's loads per iteration).
  std::sort(loads.begin(), loads.end(), [](const load_event& x, const load_event& y) {
    return x.warp != y.warp ? x.warp < y.warp : x.first_seq < y.first_seq;
  });
  struct seen {
    std::size_t pos, stores;
  };
  std::unordered_map<std::uintptr_t, seen> last;
  std::size_t pos = 0, stores = 0, stretch = 0, firsts = 0;
  const auto close_stretch = [&] {
    r.fig.loads_per_iteration[std::min<std::size_t>(stretch, 32)] += double(firsts);
    r.fig.first_loads += double(firsts);
    stretch = firsts = 0;
  };
  for (std::size_t i = 0; i < loads.size(); ++i) {
    if (i > 0 && loads[i].warp != loads[i - 1].warp) close_stretch(), last.clear(), pos = 0, stores = 0;
    if (loads[i].store) {
      ++stores;
      close_stretch();
      continue;
    }
    ++stretch;
    const auto it = last.find(loads[i].pc);
    if (it != last.end()) {
      r.fig.loads_per_iteration[std::min<std::size_t>(pos - it->second.pos, 32)] += 1;
      if (stores > it->second.stores) r.fig.storing_iterations += 1;
    } else {
      ++firsts;
    }
    last[loads[i].pc] = seen{pos, stores};
    ++pos;
  }
  close_stretch();
  // Replay order: the block's warps round-robin, each warp's k-th request before any warp's
  // (k+1)-th, as the warps of a resident block progress together. (The host ran the block's
  // threads one after another: program order alone would put one warp's whole stream before the
  // next's, and the warps of a block would never share what L1 holds.)
  std::sort(t.requests.begin(), t.requests.end(),
            [](const request& x, const request& y) { return x.first_seq < y.first_seq; });
  std::vector<std::uint32_t> turns(warp_requests.size(), 0);
  for (request& q : t.requests) q.turn = turns[q.warp]++;
  std::stable_sort(t.requests.begin(), t.requests.end(), [](const request& x, const request& y) {
    return x.turn != y.turn ? x.turn < y.turn : x.warp < y.warp;
  });
  r.wave.push_back(std::move(t));
  if (int(r.wave.size()) >= d.sms * std::max(1, r.resident_per_sm)) replay_wave();
  a.clear();
}

}  // namespace kcnn::model::detail
