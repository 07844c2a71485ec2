// The cache model: the global requests of the blocks one wave keeps resident, replayed
// interleaved, request by request, on each block's SM's L1 and on the device's L2
// (cache_model.hpp), give a launch's L1 hits, L2 bytes and DRAM bytes.
#include "recorder.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kcnn::model::detail {

// Replays blocks [first, last) of the wave request by request (the first block's first request,
// the second's, ...), each on its SM's L1, all on the L2. Returns the DRAM bytes read.
double replay_blocks(std::size_t first, std::size_t last, const bool chain) {
  recorder& r = rec;
  const device_description& d = *r.dev;
  const double dram_before = r.fig.dram_read_bytes;
  std::vector<std::size_t> next(r.wave.size(), 0);
  bool any = true;
  double written_back = 0;
  while (any) {
    any = false;
    for (std::size_t b = first; b < last; ++b) {
      block_trace& t = r.wave[b];
      if (next[b] >= t.requests.size()) continue;
      any = true;
      request& q = t.requests[next[b]++];
      sector_cache& l1 = r.l1[std::size_t(t.block % d.sms)];
      for (std::uint32_t k = 0; k < q.sector_count; ++k) {
        const std::uint64_t s = t.sectors[q.sector_begin + k];
        if (q.store) {
          l1.access(s, false, false, nullptr);  // updated if present, never allocated
          r.fig.l2_bytes += d.sector_bytes;
          r.l2.access(s, true, true, &written_back);
        } else if (l1.access(s, true, false, nullptr)) {
          r.fig.l1_hit_sectors += 1;
        } else {
          r.fig.l2_bytes += d.sector_bytes;
          if (!r.l2.access(s, true, false, &written_back)) {
            r.fig.dram_read_bytes += d.sector_bytes;
            q.level = 2;
          } else {
            r.fig.l2_load_hit_sectors += 1;
            if (q.level < 1) q.level = 1;
          }
        }
      }
    }
  }
  r.fig.dram_write_bytes += written_back * d.sector_bytes;
  // Each warp's loads in program order (a block's requests are sorted by turn), cut into batches
  // of n, each waiting for its slowest: the latency bound's chain for every n it may take.
  const double latency[3] = {d.l1_latency_s, d.l2_latency_s, d.mem_latency_s};
  std::vector<std::vector<std::uint8_t>> warp_levels;
  for (std::size_t b = first; chain && b < last; ++b) {
    warp_levels.clear();
    for (const request& q : r.wave[b].requests) {
      if (q.store || q.space != global_space) continue;
      if (q.warp >= warp_levels.size()) warp_levels.resize(q.warp + 1);
      warp_levels[q.warp].push_back(q.level);
    }
    for (const std::vector<std::uint8_t>& v : warp_levels) {
      r.fig.load_chain_loads += double(v.size());
      for (std::size_t n = 1; n < r.fig.load_chain_s.size(); ++n)
        for (std::size_t k = 0; k < v.size(); k += n) {
          std::uint8_t worst = 0;
          for (std::size_t i = k; i < std::min(v.size(), k + n); ++i) worst = std::max(worst, v[i]);
          r.fig.load_chain_s[n] += latency[worst];
        }
    }
  }
  return r.fig.dram_read_bytes - dram_before;
}

// Replays the whole wave; the DRAM bytes read per block of it are the latest marginal rate.
void replay_wave() {
  recorder& r = rec;
  const std::size_t n = r.wave.size();
  r.dram_read_per_block = n > 0 ? replay_blocks(0, n) / double(n) : 0;
  r.wave.clear();
}

}  // namespace kcnn::model::detail
