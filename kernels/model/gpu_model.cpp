// The GPU execution model's recorder and memory model (gpu_model.hpp). This file is compiled
// without the trace instrumentation (its own loads are not the kernels').
#include "gpu_model.hpp"

#include <kcnn/model_hooks.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <vector>
#include <pthread.h>

#ifndef KCNN_MODEL_DEVICES_FILE
#define KCNN_MODEL_DEVICES_FILE "devices.csv"
#endif

namespace kcnn::model {

namespace {
thread_local thread_coords current_thread_;
thread_local block_dims current_dims;
}  // namespace

thread_coords current_thread() { return current_thread_; }
void set_thread(int x, int y, int z) { current_thread_ = thread_coords{x, y, z}; }
block_dims current_block_dims() { return current_dims; }

namespace {

enum space : std::uint8_t { global_space = 0, shared_space = 1, constant_space = 2 };

struct access {
  std::uint64_t addr, pc;
  std::uint32_t thread, seq, occ;
  std::uint8_t size, store, space;
};

// One warp request after grouping.
struct request {
  std::uint32_t first_seq, warp;
  std::uint8_t store, space;
  std::uint32_t sector_begin, sector_count;  // into block_trace::sectors (global only)
  std::uint32_t turn = 0;                     // its position in its warp's program order
};

struct block_trace {
  long long block = 0;
  std::vector<request> requests;  // global requests in program order
  std::vector<std::uint64_t> sectors;
};

// A sectored, set-associative LRU cache with a hashed set index.
class sector_cache {
 public:
  void configure(double bytes, int line_bytes, int sector_bytes, int ways) {
    line_bytes_ = line_bytes;
    sectors_per_line_ = line_bytes / sector_bytes;
    ways_ = ways;
    const std::size_t lines = std::size_t(std::max(0.0, bytes) / line_bytes);
    sets_ = std::max<std::size_t>(1, lines / std::size_t(ways));
    capacity_ = lines;
    lines_.assign(capacity_ == 0 ? 0 : sets_ * std::size_t(ways), line{});
    clock_ = 0;
  }
  bool enabled() const { return capacity_ > 0; }
  // Looks up sector address s (byte address / sector bytes). Returns true on a hit. On a miss
  // with allocate, the sector is filled (evicting the set's LRU line: its dirty sectors are
  // added to *written_back). `dirty` marks the sector written.
  bool access(std::uint64_t s, bool allocate, bool dirty, double* written_back) {
    if (!enabled()) return false;
    const std::uint64_t line_addr = s / std::uint64_t(sectors_per_line_);
    const std::uint8_t bit = std::uint8_t(1u << (s % std::uint64_t(sectors_per_line_)));
    line* set = &lines_[set_of(line_addr) * std::size_t(ways_)];
    ++clock_;
    line* victim = set;
    for (int w = 0; w < ways_; ++w) {
      line& l = set[w];
      if (l.valid && l.tag == line_addr) {
        l.stamp = clock_;
        const bool hit = (l.sectors & bit) != 0;
        if (hit || allocate) l.sectors |= bit;
        if (dirty && (hit || allocate)) l.dirty |= bit;
        return hit;
      }
      if (!l.valid || l.stamp < victim->stamp || (victim->valid && !l.valid)) victim = &l;
    }
    if (!allocate) return false;
    if (victim->valid && written_back) *written_back += double(__builtin_popcount(victim->dirty));
    *victim = line{line_addr, clock_, true, bit, std::uint8_t(dirty ? bit : 0)};
    return false;
  }
  // Writes back every dirty sector (kept valid, now clean); returns how many.
  double clean() {
    double n = 0;
    for (line& l : lines_) {
      n += double(__builtin_popcount(l.dirty));
      l.dirty = 0;
    }
    return n;
  }
  void invalidate() {
    for (line& l : lines_) l = line{};
  }

 private:
  struct line {
    std::uint64_t tag = 0, stamp = 0;
    bool valid = false;
    std::uint8_t sectors = 0, dirty = 0;
  };
  std::size_t set_of(std::uint64_t line_addr) const {
    std::uint64_t h = line_addr * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    return std::size_t(h % sets_);
  }
  int line_bytes_ = 128, sectors_per_line_ = 4, ways_ = 16;
  std::size_t sets_ = 1, capacity_ = 0;
  std::vector<line> lines_;
  std::uint64_t clock_ = 0;
};

// Everything the recorder keeps; one model session at a time (single-threaded by construction).
struct recorder {
  const device_description* dev = nullptr;
  trace_limits limits;
  bool session_open = false;
  bool debug = std::getenv("KCNN_MODEL_DEBUG") != nullptr;  // prints block 0's warp 0 requests
  // The launch being run.
  bool in_launch = false;
  launch_geometry geometry;
  launch_figures fig;
  std::size_t accesses_this_launch = 0;
  bool tracing_blocks = true;
  int resident_per_sm = 1;
  // The block being run.
  bool recording = false;
  long long block = 0;
  std::uintptr_t params_lo = 0, params_hi = 0, stack_hi = 0;
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> scratch;
  std::uintptr_t scratch_base = 0;
  std::vector<access> accesses;
  std::uint32_t seq = 0;
  // The wave being assembled, and the caches.
  std::vector<block_trace> wave;
  std::vector<sector_cache> l1;
  // DRAM bytes read per block once the launch is under way (data shared by every block, such as
  // weights, already in the L2): what the untraced blocks of a sampled launch are given.
  double dram_read_per_block = 0;
  sector_cache l2;
  std::vector<launch_figures> launches;
};

recorder rec;
// Read by the instrumentation callbacks on every load and store of the program: a plain global.
bool recording_now = false;

int threads_of(const launch_geometry& g) { return g.block_x * g.block_y * g.block_z; }

int resident_blocks(const device_description& d, const launch_geometry& g) {
  const int threads = threads_of(g);
  const int warps = (threads + d.warp_size - 1) / d.warp_size;
  int by_threads = d.max_threads_per_sm / std::max(1, warps * d.warp_size);
  int by_smem = g.scratch_bytes > 0 ? int(d.smem_bytes_per_sm / double(g.scratch_bytes)) : d.max_blocks_per_sm;
  return std::max(0, std::min({d.max_blocks_per_sm, by_threads, by_smem}));
}

// Replays blocks [first, last) of the wave request by request (the first block's first request,
// the second's, ...), each on its SM's L1, all on the L2. Returns the DRAM bytes read.
double replay_blocks(std::size_t first, std::size_t last) {
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
      const request& q = t.requests[next[b]++];
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
          if (!r.l2.access(s, true, false, &written_back)) r.fig.dram_read_bytes += d.sector_bytes;
          else r.fig.l2_load_hit_sectors += 1;
        }
      }
    }
  }
  r.fig.dram_write_bytes += written_back * d.sector_bytes;
  return r.fig.dram_read_bytes - dram_before;
}

// Replays the whole wave; the DRAM bytes read per block of it are the latest marginal rate.
void replay_wave() {
  recorder& r = rec;
  const std::size_t n = r.wave.size();
  r.dram_read_per_block = n > 0 ? replay_blocks(0, n) / double(n) : 0;
  r.wave.clear();
}

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
      } else {
        r.fig.ld_requests += 1, r.fig.ld_sectors += q.sector_count, r.fig.ld_bytes += bytes;
        loads.push_back({warp, first, a[i].pc});
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
  // Loads per iteration: per warp, in program order, the loads since the same location last loaded.
  std::sort(loads.begin(), loads.end(), [](const load_event& x, const load_event& y) {
    return x.warp != y.warp ? x.warp < y.warp : x.first_seq < y.first_seq;
  });
  std::unordered_map<std::uintptr_t, std::size_t> last;
  for (std::size_t i = 0, pos = 0; i < loads.size(); ++i, ++pos) {
    if (i > 0 && loads[i].warp != loads[i - 1].warp) last.clear(), pos = 0;
    const auto it = last.find(loads[i].pc);
    if (it != last.end()) r.fig.loads_per_iteration[std::min<std::size_t>(pos - it->second, 32)] += 1;
    last[loads[i].pc] = pos;
  }
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

void record(const void* p, std::uint8_t size, bool store, const void* pc) {
  recorder& r = rec;
  const std::uintptr_t addr = reinterpret_cast<std::uintptr_t>(p);
  std::uint8_t sp = global_space;
  if (addr >= r.params_lo && addr < r.params_hi) {
    if (store) return;  // the functor's own copy written (host-side bookkeeping)
    sp = constant_space;
  } else {
    const char here = 0;
    // Anything else on this thread's stack (the simulated thread's locals, the host's loop and
    // team bookkeeping) is a register or a local on a GPU: not a memory access.
    if (addr >= reinterpret_cast<std::uintptr_t>(&here) && addr < r.stack_hi) return;
    for (const auto& s : r.scratch)
      if (addr >= s.first && addr < s.second) {
        sp = shared_space;
        break;
      }
  }
  const thread_coords c = current_thread_;
  const block_dims& g = current_dims;
  const int x0 = c.x < 0 ? 0 : c.x, x1 = c.x < 0 ? g.x : c.x + 1;
  const int y0 = c.y < 0 ? 0 : c.y, y1 = c.y < 0 ? g.y : c.y + 1;
  const int z0 = c.z < 0 ? 0 : c.z, z1 = c.z < 0 ? g.z : c.z + 1;
  const std::uint32_t seq = r.seq++;
  for (int z = z0; z < z1; ++z)
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x)
        r.accesses.push_back(access{addr, reinterpret_cast<std::uint64_t>(pc),
                                    std::uint32_t(x + g.x * (y + g.y * z)), seq, 0, size, std::uint8_t(store), sp});
}

// The recorder's own code may run an instrumented copy of a library template (the linker keeps
// one copy of each): recording is off while it runs.
void record_guarded(const void* p, std::uint8_t size, bool store, const void* pc) {
  recording_now = false;
  record(p, size, store, pc);
  recording_now = true;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  const auto e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

// ---- hooks called by kcnn/map.hpp and kcnn/lanes.hpp ----

int device_concurrency() {
  const recorder& r = rec;
  return r.session_open && r.dev ? r.dev->sms * r.dev->max_threads_per_sm : 0;
}

void launch_begin(const launch_geometry& g) {
  current_dims = block_dims{g.block_x, g.block_y, g.block_z};
  current_thread_ = thread_coords{};
  recorder& r = rec;
  if (!r.session_open) return;
  if (r.in_launch) throw std::logic_error("kcnn model: a launch inside a launch");
  r.in_launch = true;
  r.geometry = g;
  r.fig = launch_figures{};
  r.fig.label = g.label;
  r.fig.blocks = g.blocks;
  r.fig.threads_per_block = threads_of(g);
  r.resident_per_sm = resident_blocks(*r.dev, g);
  r.fig.resident_blocks_per_sm = r.resident_per_sm;
  r.fig.waves = r.resident_per_sm > 0 ? double(g.blocks) / double(r.dev->sms * r.resident_per_sm) : 0;
  r.accesses_this_launch = 0;
  r.tracing_blocks = true;
  // L1 holds what shared memory leaves of the combined array (the carve-out for the resident blocks).
  const double smem = double(g.scratch_bytes) * r.resident_per_sm;
  for (sector_cache& c : r.l1) {
    c.configure(std::max(0.0, r.dev->l1_smem_bytes_per_sm - smem), r.dev->line_bytes, r.dev->sector_bytes, 4);
  }
}

void launch_end() {
  recorder& r = rec;
  current_dims = block_dims{};
  current_thread_ = thread_coords{};
  if (!r.session_open || !r.in_launch) return;
  launch_figures& f = r.fig;
  const bool sampled = f.traced_blocks > 0 && f.traced_blocks < f.blocks;
  if (sampled && r.wave.size() >= 2) {
    // The traced blocks' second half, after the first has brought in what all blocks share.
    const std::size_t half = r.wave.size() / 2;
    replay_blocks(0, half);
    r.dram_read_per_block = replay_blocks(half, r.wave.size()) / double(r.wave.size() - half);
    r.wave.clear();
  } else if (!r.wave.empty()) {
    replay_wave();
  }
  // Written data reaches DRAM: the L2's dirty sectors are written back at the end of each launch.
  r.fig.dram_write_bytes += r.l2.clean() * r.dev->sector_bytes;
  if (sampled) {
    // Per-block figures scale with the blocks; DRAM reads do not (the first blocks also fetched
    // what every block shares): the untraced blocks read at the marginal rate of the last traced ones.
    const double k = double(f.blocks) / double(f.traced_blocks);
    for (double* v : {&f.ld_requests, &f.ld_sectors, &f.ld_bytes, &f.st_requests, &f.st_sectors, &f.st_bytes,
                      &f.smem_requests, &f.smem_wavefronts, &f.const_requests, &f.const_words, &f.l1_hit_sectors,
                      &f.l2_load_hit_sectors, &f.l2_bytes, &f.dram_write_bytes})
      *v *= k;
    f.extrapolated_dram_read_bytes = double(f.blocks - f.traced_blocks) * r.dram_read_per_block;
    f.dram_read_bytes += f.extrapolated_dram_read_bytes;
  }
  r.launches.push_back(f);
  r.in_launch = false;
}

void block_begin(long long block, const void* params, std::size_t params_bytes) {
  recorder& r = rec;
  current_thread_ = thread_coords{};
  if (!r.session_open || !r.in_launch) return;
  r.recording = r.tracing_blocks;
  if (!r.recording) return;
  r.block = block;
  r.params_lo = reinterpret_cast<std::uintptr_t>(params);
  r.params_hi = r.params_lo + params_bytes;
  r.scratch.clear();
  r.scratch_base = 0;
  r.accesses.clear();
  r.seq = 0;
  recording_now = true;
}

void block_end() {
  recorder& r = rec;
  recording_now = false;
  if (!r.recording) return;
  r.recording = false;
  r.accesses_this_launch += r.accesses.size();
  ++r.fig.traced_blocks;
  finish_block();
  if (r.accesses_this_launch >= r.limits.max_accesses_per_launch) r.tracing_blocks = false;
}

void scratch_region(const void* p, std::size_t bytes) {
  recorder& r = rec;
  if (!r.recording) return;
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p);
  if (r.scratch.empty()) r.scratch_base = a;  // bank 0 at the first allocation (Kokkos' offset shifts all alike)
  r.scratch.emplace_back(a, a + bytes);
}

// ---- session ----

session::session(const device_description& d, trace_limits limits) {
  recorder& r = rec;
  if (r.session_open) throw std::logic_error("kcnn model: a model session is already open");
  r.dev = &d;
  r.limits = limits;
  r.session_open = true;
  r.launches.clear();
  pthread_attr_t attr;
  void* stack = nullptr;
  std::size_t stack_bytes = 0;
  if (pthread_getattr_np(pthread_self(), &attr) != 0 || pthread_attr_getstack(&attr, &stack, &stack_bytes) != 0)
    throw std::runtime_error("kcnn model: cannot read this thread's stack bounds");
  pthread_attr_destroy(&attr);
  r.stack_hi = reinterpret_cast<std::uintptr_t>(stack) + stack_bytes;
  r.l1.assign(std::size_t(d.sms), sector_cache{});
  r.l2.configure(d.l2_bytes, d.line_bytes, d.sector_bytes, 16);
}

session::~session() {
  if (open_) {
    rec.session_open = false;
    recording_now = false;
  }
}

namespace {
// finish()'s cap: the untraced blocks' DRAM reads, scaled down together so that the case's reads
// do not exceed max(its traced reads, its read operands). True when it changed anything.
bool cap_extrapolated_reads(const device_description& d, std::vector<launch_figures>& launches, double read_bytes) {
  if (read_bytes <= 0 || read_bytes > 0.5 * d.l2_bytes) return false;
  double traced = 0, extrapolated = 0;
  for (const launch_figures& f : launches) {
    traced += f.dram_read_bytes - f.extrapolated_dram_read_bytes;
    extrapolated += f.extrapolated_dram_read_bytes;
  }
  const double allowed = std::max(0.0, read_bytes - traced);
  if (extrapolated <= allowed) return false;
  const double scale = allowed / extrapolated;
  for (launch_figures& f : launches) {
    const double kept = f.extrapolated_dram_read_bytes * scale;
    f.dram_read_bytes -= f.extrapolated_dram_read_bytes - kept;
    f.extrapolated_dram_read_bytes = kept;
  }
  return true;
}
}  // namespace

case_figures session::finish(double flops, double read_bytes) {
  recorder& r = rec;
  open_ = false;
  r.session_open = false;
  recording_now = false;
  case_figures c;
  c.launches = std::move(r.launches);
  r.launches.clear();
  c.dram_reads_capped = cap_extrapolated_reads(*r.dev, c.launches, read_bytes);
  r.l1.clear();
  r.l2.configure(0, 128, 32, 16);
  c.flops = flops;
  predict(*r.dev, c);
  return c;
}

void predict(const device_description& d, case_figures& c) {
  c.ld_requests = c.ld_sectors = c.st_requests = c.st_sectors = c.smem_requests = c.smem_wavefronts = 0;
  c.const_requests = c.const_words = c.l2_bytes = c.dram_bytes = 0;
  c.blocks = c.traced_blocks = 0;
  double memory_time = 0, worst = -1;
  c.dominant = -1;
  std::string worst_bound = "dram";
  for (launch_figures& f : c.launches) {
    c.ld_requests += f.ld_requests, c.ld_sectors += f.ld_sectors;
    c.st_requests += f.st_requests, c.st_sectors += f.st_sectors;
    c.smem_requests += f.smem_requests, c.smem_wavefronts += f.smem_wavefronts;
    c.const_requests += f.const_requests, c.const_words += f.const_words;
    c.l2_bytes += f.l2_bytes, c.dram_bytes += f.dram_read_bytes + f.dram_write_bytes;
    c.blocks += f.blocks, c.traced_blocks += f.traced_blocks;
    f.t_dram = (f.dram_read_bytes + f.dram_write_bytes) / d.dram_bytes_per_s;
    f.t_l2 = f.l2_bytes / d.l2_bytes_per_s;
    // Issue: memory instructions (global and shared requests, shared replays included) over the
    // busiest SM's four schedulers, or one warp's own chain at one per clock.
    const double per_block = f.blocks > 0 ? (f.ld_requests + f.st_requests + f.smem_wavefronts) / double(f.blocks) : 0;
    const double blocks_on_busiest = std::ceil(double(f.blocks) / d.sms);
    f.t_issue = std::max(blocks_on_busiest * per_block / 4.0, f.max_warp_requests) / d.clock_hz;
    // Latency: each wave lasts at least its busiest warp's global loads, loads_in_flight of them
    // at a time, each taking the launch's mean load latency (its loads' sectors served by L1, L2
    // or DRAM, in the proportions the caches gave). Stores do not stall a warp, and shared-memory
    // requests are in the issue bound. (Until the H200 run of 2026-11-27 this chain held every
    // request, stores and shared ones included, at least mlp_per_warp of them in flight.)
    const double waves = f.resident_blocks_per_sm > 0 ? std::ceil(double(f.blocks) / (double(d.sms) * f.resident_blocks_per_sm)) : 1;
    const double dram_sectors = f.dram_read_bytes / d.sector_bytes;
    const double load_sectors = f.l1_hit_sectors + f.l2_load_hit_sectors + dram_sectors;
    const double latency = load_sectors > 0 ? (f.l1_hit_sectors * d.l1_latency_s + f.l2_load_hit_sectors * d.l2_latency_s +
                                               dram_sectors * d.mem_latency_s) / load_sectors
                                            : d.l2_latency_s;
    // Loads in flight per warp: the median loads per iteration (a compiler issues an
    // iteration's independent loads before their uses), at least mlp_per_warp (the unrolling
    // of a loop with one load) and at most 32; a warp whose loads never repeat has them all in
    // flight, however few (a one-element-per-thread kernel: one, which is what kept kcnn's copy
    // and relu at a third of the H200's bandwidth).
    double repeats = 0, below = 0, median = 0;
    for (const double h : f.loads_per_iteration) repeats += h;
    for (std::size_t b = 0; b < f.loads_per_iteration.size(); ++b)
      if ((below += f.loads_per_iteration[b]) >= repeats / 2) {
        median = double(b);
        break;
      }
    f.loads_in_flight = repeats > 0 ? std::clamp(median, double(std::max(1, d.mlp_per_warp)), 32.0)
                                    : std::clamp(f.max_warp_loads, 1.0, 32.0);
    f.t_latency = waves * f.max_warp_loads / f.loads_in_flight * latency;
    const double t = std::max({f.t_dram, f.t_l2, f.t_issue, f.t_latency});
    memory_time += t;
    if (t > worst) {
      worst = t;
      c.dominant = int(&f - c.launches.data());
      worst_bound = t == f.t_dram ? "dram" : t == f.t_l2 ? "l2" : t == f.t_issue ? "issue" : "latency";
    }
  }
  const double t_fp32 = c.flops / d.fp32_flops_per_s;
  c.time_s = std::max(memory_time, t_fp32);
  c.bound = t_fp32 > memory_time ? "fp32" : worst_bound;
}

// ---- device descriptions ----

std::string default_devices_file() { return KCNN_MODEL_DEVICES_FILE; }

std::vector<device_description> load_devices(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(path + ": cannot open the device file");
  static const char* const columns[] = {"name", "sms", "clock_mhz", "fp32_tflops", "dram_gb_s", "l2_gb_s", "l2_mib",
                                        "l1_smem_kib_per_sm", "smem_kib_per_sm", "smem_kib_per_block",
                                        "max_threads_per_sm", "max_blocks_per_sm", "warp_size", "sector_bytes",
                                        "line_bytes", "smem_banks", "l1_latency_ns", "l2_latency_ns", "mem_latency_ns",
                                        "mlp_per_warp", "source"};
  constexpr std::size_t ncol = sizeof(columns) / sizeof(columns[0]);
  std::vector<device_description> out;
  std::string line;
  int lineno = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++lineno;
    if (trim(line).empty() || trim(line)[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) f.push_back(trim(cell));
    if (!line.empty() && line.back() == ',') f.push_back("");
    const std::string where = path + ":" + std::to_string(lineno);
    if (!header) {
      if (f.size() != ncol) throw std::invalid_argument(where + ": the header must have " + std::to_string(ncol) + " columns");
      for (std::size_t i = 0; i < ncol; ++i)
        if (f[i] != columns[i])
          throw std::invalid_argument(where + ": column " + std::to_string(i + 1) + " is '" + f[i] + "', expected '" +
                                      columns[i] + "'");
      header = true;
      continue;
    }
    if (f.size() != ncol)
      throw std::invalid_argument(where + ": " + std::to_string(f.size()) + " fields, expected " + std::to_string(ncol));
    auto num = [&](std::size_t i) {
      try {
        std::size_t used = 0;
        const double v = std::stod(f[i], &used);
        if (used != f[i].size() || !(v > 0) || !std::isfinite(v)) throw std::invalid_argument("");
        return v;
      } catch (const std::exception&) {
        throw std::invalid_argument(where + ": field '" + columns[i] + "' must be a positive number, got '" + f[i] + "'");
      }
    };
    device_description d;
    d.name = f[0];
    if (d.name.empty()) throw std::invalid_argument(where + ": field 'name' is empty");
    for (const auto& o : out)
      if (o.name == d.name) throw std::invalid_argument(where + ": field 'name': '" + d.name + "' is given twice");
    d.sms = int(num(1));
    d.clock_hz = num(2) * 1e6;
    d.fp32_flops_per_s = num(3) * 1e12;
    d.dram_bytes_per_s = num(4) * 1e9;
    d.l2_bytes_per_s = num(5) * 1e9;
    d.l2_bytes = num(6) * 1024 * 1024;
    d.l1_smem_bytes_per_sm = num(7) * 1024;
    d.smem_bytes_per_sm = num(8) * 1024;
    d.smem_bytes_per_block = num(9) * 1024;
    d.max_threads_per_sm = int(num(10));
    d.max_blocks_per_sm = int(num(11));
    d.warp_size = int(num(12));
    d.sector_bytes = int(num(13));
    d.line_bytes = int(num(14));
    d.smem_banks = int(num(15));
    d.l1_latency_s = num(16) * 1e-9;
    d.l2_latency_s = num(17) * 1e-9;
    d.mem_latency_s = num(18) * 1e-9;
    d.mlp_per_warp = int(num(19));
    d.source = f[20];
    if (d.line_bytes % d.sector_bytes != 0 || d.line_bytes / d.sector_bytes > 8)
      throw std::invalid_argument(where + ": field 'line_bytes' must be 1 to 8 sectors");
    out.push_back(d);
  }
  if (!header) throw std::invalid_argument(path + ": no header line");
  if (out.empty()) throw std::invalid_argument(path + ": no device");
  return out;
}

const device_description& find_device(const std::vector<device_description>& devices, const std::string& name) {
  std::string names;
  for (const auto& d : devices) {
    if (d.name == name) return d;
    names += (names.empty() ? "" : ", ") + d.name;
  }
  throw std::invalid_argument("no device description named '" + name + "' (have: " + names + ")");
}

}  // namespace kcnn::model

// ---- the compiler's callbacks (clang -fsanitize-coverage=trace-loads,trace-stores) ----
extern "C" {
#define KCNN_TRACE_CALLBACK(kind, bits, bytes, store)                                           \
  __attribute__((no_sanitize("coverage"))) void __sanitizer_cov_##kind##bytes(std::uint##bits##_t* p) { \
    if (__builtin_expect(kcnn::model::recording_now, 0))                                        \
      kcnn::model::record_guarded(p, bytes, store, __builtin_return_address(0));                \
  }
KCNN_TRACE_CALLBACK(load, 8, 1, false)
KCNN_TRACE_CALLBACK(load, 16, 2, false)
KCNN_TRACE_CALLBACK(load, 32, 4, false)
KCNN_TRACE_CALLBACK(load, 64, 8, false)
KCNN_TRACE_CALLBACK(store, 8, 1, true)
KCNN_TRACE_CALLBACK(store, 16, 2, true)
KCNN_TRACE_CALLBACK(store, 32, 4, true)
KCNN_TRACE_CALLBACK(store, 64, 8, true)
__attribute__((no_sanitize("coverage"))) void __sanitizer_cov_load16(__int128* p) {
  if (__builtin_expect(kcnn::model::recording_now, 0)) kcnn::model::record_guarded(p, 16, false, __builtin_return_address(0));
}
__attribute__((no_sanitize("coverage"))) void __sanitizer_cov_store16(__int128* p) {
  if (__builtin_expect(kcnn::model::recording_now, 0)) kcnn::model::record_guarded(p, 16, true, __builtin_return_address(0));
}
}
