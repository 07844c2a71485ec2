#pragma once
// The model's caches: a sectored, set-associative LRU cache, each SM's L1 and the device's L2. A
// header because the recorder sizes them per launch, the session empties them, and the replay of
// a wave (cache_model.cpp) looks up every sector of every global request in them.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kcnn::model::detail {

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

}  // namespace kcnn::model::detail
