#include "run/mpi_job.hpp"

#include "cli/options.hpp"
#include "measure/clock.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <numeric>
#include <sstream>
#include <thread>

#if defined(KCNN_HAVE_MPI)
#include <mpi.h>
#endif

namespace kcnn::bench {

bool have_mpi() {
#if defined(KCNN_HAVE_MPI)
  return true;
#else
  return false;
#endif
}

std::vector<int> assign_by_cost(const std::vector<double>& cost, int ranks) {
  std::vector<int> owner(cost.size(), 0);
  if (ranks <= 1) return owner;
  std::vector<std::size_t> order(cost.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  // Most expensive first; equal costs keep their listed order (stable), so the result is the
  // same on every rank.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  std::vector<double> load(std::size_t(ranks), 0.0);
  for (std::size_t i : order) {
    const auto least = std::min_element(load.begin(), load.end());  // the first of equal loads
    owner[i] = int(least - load.begin());
    *least += std::max(0.0, cost[i]);
  }
  return owner;
}

std::vector<int> replicate_rank_counts(int size) {
  std::vector<int> ks;
  for (int k = 1; k < size; k *= 2) ks.push_back(k);
  ks.push_back(std::max(1, size));
  return ks;
}

std::string replicate_note(double bytes, const std::vector<double>& seconds) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(2);
  double aggregate = 0;
  std::ostringstream per;
  per.setf(std::ios::fixed);
  per.precision(2);
  for (std::size_t i = 0; i < seconds.size(); ++i) {
    per << (i ? ", " : "");
    if (seconds[i] > 0) {
      aggregate += bytes / seconds[i] / 1e9;
      per << bytes / seconds[i] / 1e9;
    } else {
      per << "-";
    }
  }
  o << seconds.size() << " rank" << (seconds.size() == 1 ? "" : "s") << " at once: aggregate " << aggregate
    << " GB/s (per rank " << per.str() << ")";
  return o.str();
}

#if defined(KCNN_HAVE_MPI)
namespace {
// Waits for a non-blocking MPI operation; after `timeout` seconds (0: never) the job is aborted
// with a message naming what was awaited. Spins for the first `spin_s` seconds, then polls every
// 100 us (a sleeping rank would leave a barrier up to that much after the others; a long wait,
// e.g. a rank idle while others run a case, must not take a core from them).
void wait_bounded(MPI_Request& req, double timeout, const std::string& what, const mpi_job& job,
                  double spin_s = 0.01) {
  const budget_clock waiting;
  int done = 0;
  while (true) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    const double waited = waiting.seconds();
    if (timeout > 0 && waited > timeout)
      job.abort("no answer from the other ranks after " + std::to_string(int(timeout)) + " s waiting for " + what +
                " (--mpi-timeout): a rank failed or hangs");
    if (waited > spin_s) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

class comm_agreement : public rank_agreement {
 public:
  comm_agreement(MPI_Comm comm, const mpi_job& job) : comm_(comm), job_(job) { MPI_Comm_size(comm_, &size_); }
  ~comm_agreement() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }
  // Before each sample: the ranks that time a case arrive within a sample's time of each other,
  // so the wait spins (for up to a second) and they leave the barrier together.
  void barrier(const std::string& what) override {
    MPI_Request r;
    MPI_Ibarrier(comm_, &r);
    wait_bounded(r, job_.timeout(), what, job_, 1.0);
  }
  int agree_max(int v, const std::string& what) override { return reduce(v, MPI_MAX, what); }
  int agree_min(int v, const std::string& what) override { return reduce(v, MPI_MIN, what); }
  std::vector<double> all_gather(double v, const std::string& what) override {
    std::vector<double> all(std::size_t(size_), 0.0);
    MPI_Request r;
    MPI_Iallgather(&v, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, comm_, &r);
    wait_bounded(r, job_.timeout(), what, job_);
    return all;
  }
  int size() const override { return size_; }
  void abandon_case(const std::string& why) override { job_.abort(why); }

 private:
  int reduce(int v, MPI_Op op, const std::string& what) {
    int out = v;
    MPI_Request r;
    MPI_Iallreduce(&v, &out, 1, MPI_INT, op, comm_, &r);
    wait_bounded(r, job_.timeout(), what, job_);
    return out;
  }
  MPI_Comm comm_;
  const mpi_job& job_;
  int size_ = 1;
};
}  // namespace
#endif

mpi_job& mpi_job::instance() {
  static mpi_job job;
  return job;
}

mpi_job::~mpi_job() = default;

void mpi_job::init(int& argc, char**& argv) {
  mpi_job& j = instance();
  bool asked = false;
  for (int i = 1; i < argc; ++i) asked |= std::strcmp(argv[i], "--mpi") == 0 || std::strncmp(argv[i], "--mpi=", 6) == 0;
#if defined(KCNN_HAVE_MPI)
  if (!asked) return;
  int provided = 0;
  // Only the main thread calls MPI (the host reference's threads never do).
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  j.active_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &j.rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &j.size_);
  // The communicators of the contention study, made once, collectively, in the same order.
  for (int k : replicate_rank_counts(j.size_)) {
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, j.rank_ < k ? 0 : MPI_UNDEFINED, j.rank_, &c);
    if (j.first_ranks_.size() < std::size_t(k)) j.first_ranks_.resize(std::size_t(k));
    if (c != MPI_COMM_NULL) j.first_ranks_[std::size_t(k) - 1] = std::make_unique<comm_agreement>(c, j);
  }
#else
  (void)asked;
  (void)argc;
  (void)argv;
#endif
}

void mpi_job::finalize() {
#if defined(KCNN_HAVE_MPI)
  mpi_job& j = instance();
  if (!j.active_) return;
  j.first_ranks_.clear();
  MPI_Finalize();
  j.active_ = false;
#endif
}

void mpi_job::abort(const std::string& message) const {
  std::cerr << "kcnn-bench: rank " << rank_ << " of " << size_ << ": " << message << std::endl;
#if defined(KCNN_HAVE_MPI)
  if (active_) MPI_Abort(MPI_COMM_WORLD, 1);
#endif
  std::_Exit(1);
}

void mpi_job::barrier(const std::string& what, bool unbounded) {
#if defined(KCNN_HAVE_MPI)
  if (!active_) return;
  MPI_Request r;
  MPI_Ibarrier(MPI_COMM_WORLD, &r);
  wait_bounded(r, unbounded ? 0 : timeout_s_, what, *this);
#else
  (void)what;
  (void)unbounded;
#endif
}

int mpi_job::agree_max(int v, const std::string& what) {
#if defined(KCNN_HAVE_MPI)
  if (!active_) return v;
  int out = v;
  MPI_Request r;
  MPI_Iallreduce(&v, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &r);
  wait_bounded(r, timeout_s_, what, *this);
  return out;
#else
  (void)what;
  return v;
#endif
}

std::string mpi_job::broadcast(const std::string& from_rank0, const std::string& what) {
#if defined(KCNN_HAVE_MPI)
  if (!active_) return from_rank0;
  unsigned long long n = from_rank0.size();
  MPI_Request r;
  MPI_Ibcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD, &r);
  wait_bounded(r, timeout_s_, what, *this);
  std::string s = rank_ == 0 ? from_rank0 : std::string(std::size_t(n), '\0');
  MPI_Ibcast(s.data(), int(n), MPI_CHAR, 0, MPI_COMM_WORLD, &r);
  wait_bounded(r, timeout_s_, what, *this);
  return s;
#else
  (void)what;
  return from_rank0;
#endif
}

std::vector<std::string> mpi_job::gather(const std::string& mine, const std::string& what, bool unbounded) {
#if defined(KCNN_HAVE_MPI)
  if (!active_) return {mine};
  const double timeout = unbounded ? 0 : timeout_s_;
  int n = int(mine.size());
  std::vector<int> sizes(std::size_t(size_), 0), offsets(std::size_t(size_), 0);
  MPI_Request r;
  MPI_Igather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
  wait_bounded(r, timeout, what, *this);
  std::partial_sum(sizes.begin(), sizes.end() - 1, offsets.begin() + 1);
  std::string all(rank_ == 0 ? std::size_t(offsets.back() + sizes.back()) : 0, '\0');
  MPI_Igatherv(mine.data(), n, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD, &r);
  wait_bounded(r, timeout, what, *this);
  std::vector<std::string> out;
  if (rank_ == 0)
    for (int i = 0; i < size_; ++i) out.push_back(all.substr(std::size_t(offsets[std::size_t(i)]), std::size_t(sizes[std::size_t(i)])));
  return out;
#else
  (void)what;
  (void)unbounded;
  return {mine};
#endif
}

rank_agreement* mpi_job::first_ranks(int k) {
  if (!active_) return k == 1 ? &alone_ : nullptr;
  if (k < 1 || std::size_t(k) > first_ranks_.size()) return nullptr;
  return first_ranks_[std::size_t(k) - 1].get();
}

}  // namespace kcnn::bench
