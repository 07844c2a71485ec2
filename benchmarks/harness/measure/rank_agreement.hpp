#pragma once
// What the measurement of a case agrees on with the other processes that measure it at the same
// time (--mpi replicate: k ranks time one case at once). Each call is a collective over those
// ranks, made by each of them in the same order. The measurement always has one: a process that
// times a case alone uses local_agreement, which agrees with itself. MPI's implementation is in
// run/mpi_job.cpp.
#include <string>
#include <vector>

namespace kcnn::bench {

class rank_agreement {
 public:
  virtual ~rank_agreement() = default;
  // Every rank arrives before any leaves (e.g. before each sample, so that the ranks' samples overlap).
  virtual void barrier(const std::string& what) = 0;
  // The largest (smallest) of every rank's v.
  virtual int agree_max(int v, const std::string& what) = 0;
  virtual int agree_min(int v, const std::string& what) = 0;
  // Every rank's value, in rank order.
  virtual std::vector<double> all_gather(double v, const std::string& what) = 0;
  virtual int size() const = 0;
  // This rank cannot make the collectives the others are waiting in (it failed while they time the
  // case together): under MPI the job ends, naming `why`, rather than hang or mismatch;
  // local_agreement has no one waiting, and the row records the failure.
  virtual void abandon_case(const std::string& why) = 0;
};

// One process timing a case by itself: every agreement is its own value.
class local_agreement final : public rank_agreement {
 public:
  void barrier(const std::string&) override {}
  int agree_max(int v, const std::string&) override { return v; }
  int agree_min(int v, const std::string&) override { return v; }
  std::vector<double> all_gather(double v, const std::string&) override { return {v}; }
  int size() const override { return 1; }
  void abandon_case(const std::string&) override {}
};

}  // namespace kcnn::bench
