#pragma once
// The benchmark run's agreements across MPI ranks outside the cases: the job's run id, and the
// merge of every rank's rows and context into rank 0's file at the end. Without MPI the job is
// one rank and these are no-ops or the identity.
#include "device/context.hpp"
#include "run/calibration.hpp"
#include "run/mpi_job.hpp"
#include "run/result_files.hpp"

namespace kcnn::bench {

// One run id for the job, rank 0's, with the rank appended: each rank's rows point to its own
// context (its host and device) in the JSON's `ranks`.
void share_run_id(mpi_job& job, run_context& ctx);

// --mpi: every rank's rows and context to rank 0, whose file then holds them all.
void merge_ranks(mpi_job& job, row_outputs& out, const run_context& ctx, const run_calibration& cal, job_totals& t);

}  // namespace kcnn::bench
