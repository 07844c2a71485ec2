#pragma once
// Robust summary statistics of timing samples (seconds).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace kcnn::bench {

struct sample_stats {
  double median = 0, min = 0, max = 0, mean = 0, stddev = 0;
  double rel_spread() const { return mean > 0 ? stddev / mean : 0.0; }
};

inline sample_stats summarize(std::vector<double> v) {
  sample_stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  s.min = v.front();
  s.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / double(n);
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.stddev = n > 1 ? std::sqrt(ss / double(n - 1)) : 0.0;
  return s;
}

// stddev/mean of the samples so far, updated per sample (Welford). The stopping rule asks for it
// after every repetition; computed from all the samples each time (summarize sorts them), a 0.1 ms
// case's 10,000 repetitions spent up to a fifth of the run on it, outside the timed region, and
// walked up to 80 KB of samples through the cache between two timed launches.
class running_spread {
 public:
  void add(double x) {
    ++n_;
    const double d = x - mean_;
    mean_ += d / double(n_);
    m2_ += d * (x - mean_);
  }
  double rel_spread() const { return n_ > 1 && mean_ > 0 ? std::sqrt(m2_ / double(n_ - 1)) / mean_ : 0.0; }

 private:
  std::size_t n_ = 0;
  double mean_ = 0, m2_ = 0;
};

// The row's note for a case whose spread stayed above the threshold once the repetitions ended
// (budget or max-reps reached): empty when it is quiet enough or has a single sample.
inline std::string noisy_note(const sample_stats& s, std::size_t reps, double threshold) {
  if (reps < 2 || !(s.rel_spread() > threshold)) return {};
  char buf[96];
  std::snprintf(buf, sizeof buf, "noisy: stddev/mean %.1f%% after %zu reps", 100.0 * s.rel_spread(), reps);
  return buf;
}

}  // namespace kcnn::bench
