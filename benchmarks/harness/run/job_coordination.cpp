#include "run/job_coordination.hpp"

#include "device/gpu_clocks.hpp"
#include "measure/ceilings.hpp"

#include <iostream>
#include <string>
#include <vector>

namespace kcnn::bench {

void share_run_id(mpi_job& job, run_context& ctx) {
  if (job.active()) ctx.run_id = job.broadcast(ctx.run_id, "the run id") + "-r" + std::to_string(job.rank());
}

void merge_ranks(mpi_job& job, row_outputs& out, const run_context& ctx, const run_calibration& cal, job_totals& t) {
  // Every rank done with its cases (no time limit: in shard mode one may have hours left); the
  // collectives after this point are bounded again.
  job.barrier("the end of every rank's cases", true);
  const auto rows = job.gather(out.rank_rows ? out.rank_rows->lines() : std::string(), "the rows of every rank");
  // Each rank's own context, with its own ceilings and GPU clocks (ranks may be different GPUs).
  const json mine = context_json(ctx)
                        .set("ceilings", ceilings_json(cal.ceil))
                        .set("gpu_clocks", json::object()
                                               .set("start", gpu_clocks_json(cal.clocks_start))
                                               .set("end", gpu_clocks_json(read_gpu_clocks())));
  const auto contexts = job.gather(mine.dump(), "the context of every rank");
  if (job.rank() == 0) {
    const status_counts others = merge_rank_rows(*out.writer, std::vector<std::string>(rows.begin() + 1, rows.end()));
    for (case_status s : all_statuses()) t.counts.add(s, others[s]);
    if (rows.size() > 1) std::cerr << "kcnn-bench: merged the rows of " << rows.size() << " ranks into " << out.final_path << "\n";
  }
  for (const auto& c : contexts) t.rank_contexts.push(json::raw(c));
  t.network_failures = job.agree_max(t.network_failures, "the failure count");
  t.interrupted_by = job.agree_max(t.interrupted_by, "the interruption");
  if (out.rank_rows) out.rank_rows->remove();
}

}  // namespace kcnn::bench
