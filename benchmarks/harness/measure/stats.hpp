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

// stddev/mean of the samples, without the copy and sort of summarize: the stopping rule asks for
// it after every repetition (a sort per repetition made a 0.1 ms case's 5,000 repetitions spend a
// fifth of their budget sorting, and walked a 40 KB vector through the cache between samples).
inline double rel_spread(const std::vector<double>& v) {
  const std::size_t n = v.size();
  if (n < 2) return 0.0;
  double sum = 0;
  for (double x : v) sum += x;
  const double mean = sum / double(n);
  if (!(mean > 0)) return 0.0;
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / double(n - 1)) / mean;
}

// The row's note for a case whose spread stayed above the threshold once the repetitions ended
// (budget or max-reps reached): empty when it is quiet enough or has a single sample.
inline std::string noisy_note(const sample_stats& s, std::size_t reps, double threshold) {
  if (reps < 2 || !(s.rel_spread() > threshold)) return {};
  char buf[96];
  std::snprintf(buf, sizeof buf, "noisy: stddev/mean %.1f%% after %zu reps", 100.0 * s.rel_spread(), reps);
  return buf;
}

}  // namespace kcnn::bench
