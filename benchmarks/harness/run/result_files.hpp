#pragma once
// The benchmark run's result files, from open to close: rank 0's results file (new, or
// --resume's), the other MPI ranks' rank files, and the close with the run's summary.
#include "cli/options.hpp"
#include "device/context.hpp"
#include "measure/sampler.hpp"
#include "results/json.hpp"
#include "results/rank_rows.hpp"
#include "results/results.hpp"
#include "results/status.hpp"
#include "run/calibration.hpp"
#include "run/mpi_job.hpp"

#include <memory>
#include <string>

namespace kcnn::bench {

// Where this process's rows go: rank 0's results file, or (other MPI ranks) its rank file.
struct row_outputs {
  std::unique_ptr<results_writer> writer;
  std::unique_ptr<rank_rows_file> rank_rows;
  std::string final_path;  // rank 0's results file, on every rank
  void write(const result_row& r) {
    if (writer) writer->write(r);
    else rank_rows->write(r);
  }
};

// Opens rank 0's results file (new, or --resume's) and the other ranks' rank files; false (and
// the message on stderr) when any rank cannot.
bool open_outputs(const options& opt, const run_context& ctx, mpi_job& job, row_outputs& out);

// What the whole job ends with: every rank's rows in rank 0's file, the counts and the verdicts.
struct job_totals {
  status_counts counts;
  int network_failures = 0;
  int interrupted_by = 0;
  json rank_contexts = json::array();
};

// Rank 0 closes the results file with the run's summary in its context; 0, or 1 when it cannot.
int close_results(const options& opt, mpi_job& job, row_outputs& out, const run_calibration& cal,
                  const job_totals& t, const sampler& timer);

}  // namespace kcnn::bench
