#pragma once
// kcnn-bench on MPI (--mpi shard | --mpi replicate): one rank per device, launched by mpirun or
// srun; Kokkos maps each rank to a node-local device itself (by the local rank mpirun or Slurm
// exports). mpi_job.cpp is the one file that includes <mpi.h> (built with KCNN_HAVE_MPI); without
// MPI, or without --mpi, the job is one rank and every collective is the identity.
//
// Waits are bounded: a collective that has not completed after the timeout (--mpi-timeout) ends
// the whole job with MPI_Abort and a message naming the rank and what it waited for, instead of
// leaving the other ranks hanging.
#include "measure/rank_agreement.hpp"

#include <memory>
#include <string>
#include <vector>

namespace kcnn::bench {

class mpi_job {
 public:
  // Starts MPI when argv holds --mpi (before Kokkos::initialize); the process's one job.
  static void init(int& argc, char**& argv);
  static mpi_job& instance();
  // Ends MPI if init started it.
  static void finalize();

  bool active() const { return active_; }  // MPI was started (--mpi)
  int rank() const { return rank_; }
  int size() const { return size_; }
  void set_timeout(double seconds) { timeout_s_ = seconds; }
  double timeout() const { return timeout_s_; }

  // World collectives with bounded waits (timeout() seconds; none when `unbounded`).
  void barrier(const std::string& what, bool unbounded = false);
  int agree_max(int v, const std::string& what);
  std::string broadcast(const std::string& from_rank0, const std::string& what);
  // Every rank's string, on rank 0 in rank order (an empty vector on the others).
  std::vector<std::string> gather(const std::string& mine, const std::string& what, bool unbounded = false);
  // The agreement of the first k ranks (replicate mode), made once per k; nullptr for a rank >= k,
  // which does not take part. Without MPI: a local agreement for k = 1.
  rank_agreement* first_ranks(int k);
  // Ends every rank of the job, printing the message (with this rank) on stderr.
  [[noreturn]] void abort(const std::string& message) const;

  mpi_job(const mpi_job&) = delete;
  mpi_job& operator=(const mpi_job&) = delete;
  ~mpi_job();

 private:
  mpi_job() = default;
  bool active_ = false;
  int rank_ = 0, size_ = 1;
  double timeout_s_ = 600;
  std::vector<std::unique_ptr<rank_agreement>> first_ranks_;  // index k - 1
  local_agreement alone_;
};

// Where each case goes in shard mode: cases sorted by estimated cost, each given to the rank
// with the least estimated work so far (longest processing time first); ties to the lower rank.
// Every rank computes the same assignment from the same estimates.
std::vector<int> assign_by_cost(const std::vector<double>& cost, int ranks);

// The rank counts of the contention study: 1, 2, 4, ... and the job's size.
std::vector<int> replicate_rank_counts(int size);

// The note of a replicate row: "<k> ranks at once: aggregate <X> GB/s (per rank <a>, <b>, ...)",
// from every rank's time in seconds (< 0: that rank did not time it); the aggregate is the sum
// of the ranks' rates, over those that timed it.
std::string replicate_note(double bytes, const std::vector<double>& seconds);


}  // namespace kcnn::bench
