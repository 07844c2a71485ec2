#pragma once
// The rows of the other MPI ranks (--mpi): each rank r > 0 writes its rows beside rank 0's results
// file as `<results>.rank<r>.partial` while it runs; at the end rank 0 merges them into its file
// and the rank files are removed. A job that dies first leaves them there, and --resume adopts
// them. The rows travel as the CSV lines csv_line() made on their own rank.
#include "results/results.hpp"
#include "results/status.hpp"

#include <fstream>
#include <string>
#include <vector>

namespace kcnn::bench {

// A rank's own rows: written to its rank file as they finish, and kept for the merge.
class rank_rows_file {
 public:
  // `results_path`: rank 0's results file; throws std::runtime_error when it cannot write.
  rank_rows_file(const std::string& results_path, int rank, const run_context& ctx);
  void write(const result_row& r);
  const std::string& lines() const { return lines_; }
  // Closes and deletes the rank file (after rank 0 merged its lines).
  void remove();

 private:
  std::string path_;
  const run_context& ctx_;
  std::ofstream out_;
  std::string lines_;
};

// Rank 0: appends the rows the other ranks sent (their lines(), in rank order) to its file and
// returns how many rows of each status they hold.
status_counts merge_rank_rows(results_writer& writer, const std::vector<std::string>& other_ranks_lines);

// --resume after an MPI job that died before its merge: appends the complete rows (those with this
// version's column count) of every `<path>.rank<r>.partial` (path: the .csv, or its .csv.partial)
// to `path` and removes them. Returns how many rows were adopted; throws std::runtime_error
// naming a file it cannot use.
std::size_t adopt_rank_rows(const std::string& path);

}  // namespace kcnn::bench
