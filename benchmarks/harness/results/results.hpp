#pragma once
// The results contract: one CSV row per case (columns documented in results/README.md) and a
// JSON sidecar with the run's context. Rows are flushed as cases finish into <file>.partial;
// close() renames it to the final name, so the final file appears atomically.
#include "device/context.hpp"
#include "device/gpu_clocks.hpp"
#include "results/json.hpp"
#include "results/status.hpp"

#include <fstream>
#include <string>
#include <vector>

namespace kcnn::bench {

inline constexpr int results_schema_version = 9;

// The GPU execution model's figures for a case (gpu-model builds; results/README.md). A model
// figure, never a measurement.
struct model_figures {
  bool present = false;  // false: not modelled (another build, or a vendor library call)
  long long blocks = 0;  // of the launch with the largest predicted time
  int threads_per_block = 0;
  double waves = 0;
  double ld_requests = 0, ld_sectors_per_request = -1, st_requests = 0, st_sectors_per_request = -1;
  double smem_conflict_ways = -1, const_serialization = -1;  // < 0: no such request
  double l2_bytes = 0, dram_bytes = 0, time_us = 0;
  std::string bound;
  // Bytes of global loads one thread has in flight per round trip in the dominant launch (the
  // latency bound's loads in flight per warp, times a thread's bytes per load); < 0: no loads.
  double bytes_in_flight = -1;
  // Registers per thread of the dominant launch's kernel, from the CUDA build's compiler report
  // (benchmarks/model/registers.csv); 0: not in it (no register limit modelled).
  int registers = 0;
  long long traced_blocks = 0, all_blocks = 0;  // over all launches (fewer traced: counts scaled)
  bool dram_reads_capped = false;  // the untraced blocks' DRAM reads capped by the read operands
};

struct result_row {
  std::string suite, network, layer, op;
  int n = 0, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0, stride = 0, pad = 0, groups = 0;
  // Effective per-axis geometry (conv2d and pooling; the symmetric stride and pad for other ops).
  int stride_h = 0, stride_w = 0, pad_h = 0, pad_w = 0, pad_h_end = 0, pad_w_end = 0, dilation_h = 1, dilation_w = 1;
  int out_h = 0, out_w = 0, repeat = 1;
  std::string layout, memory_space, access_pattern, variant, tuning, key;
  std::string origin;  // kcnn | peer | fault; empty for rows that are not cases (network, memory_plan, ceiling)
  std::string cache;  // warm | flushed
  int fits_in_cache = -1;  // 1: warm and the working set fits in the LLC / L2; 0: not; < 0: not timed
  int reps = 0;
  int launches = 1;  // back-to-back launches per timed sample
  // The host clock's figures (every build): from before the launches to after the closing fence.
  double time_ms_median = 0, time_ms_min = 0, time_ms_max = 0, time_ms_stddev = 0,
         time_ms_mean = 0;
  // The device timer's (CUDA builds): between device events around the launches (< 0: none).
  double gpu_time_ms_median = -1, gpu_time_ms_min = -1, gpu_time_ms_max = -1;
  std::string timer;          // the sampler whose figure rate_ms() is: fenced_timer | cuda_events
  int throttled_samples = 0;  // samples discarded because the SM clock was below the threshold
  double bytes = 0, flops = 0, workspace_bytes = 0, passes = -1;
  double roofline_pct = -1;          // < 0: no ceilings or not timed
  double predicted_dram_bytes = -1;  // < 0: no traffic model for this op
  double rel_error = -1;  // < 0: not computed
  double tolerance = 0;
  case_status status = case_status::error;  // set by whoever completes the row
  std::string note;
  int rank = 0;   // the MPI rank that ran the case (0 without MPI)
  int ranks = 1;  // how many ranks ran this case at the same time (--mpi replicate), else 1
  model_figures model;
  // The time rates and roofline_pct are computed from: the device timer's median where there
  // is one, else the host clock's.
  double rate_ms() const { return gpu_time_ms_median >= 0 ? gpu_time_ms_median : time_ms_median; }
};

const std::vector<std::string>& result_columns();

// The keys of the rows with status ok in a results file (for --resume). Throws
// std::runtime_error naming the file when it cannot be read or its header is not this version's.
std::vector<std::string> finished_keys(const std::string& path);

// CSV field quoting (RFC 4180).
std::string csv_escape(const std::string& s);
// Splits one CSV line (RFC 4180 quoting, no embedded newlines: kcnn never writes them).
std::vector<std::string> csv_fields(const std::string& line);
// Where a column is in result_columns().
std::size_t column_index(const std::string& column);

// One CSV line (no newline) of row r measured under context ctx.
std::string csv_line(const run_context& ctx, const result_row& r);

class results_writer {
 public:
  // Creates <out>/<device slug>/<stamp>-<suite>.csv.partial with its header.
  results_writer(const std::string& out_dir, const run_context& ctx);
  // --resume: appends to an existing results file (a finished .csv, or the .csv.partial an
  // interrupted or crashed run left), whose header must be this version's; close() names it .csv.
  struct append_to {
    std::string path;
  };
  results_writer(const append_to& existing, const run_context& ctx);
  ~results_writer();
  void write(const result_row& row);
  // A line csv_line made elsewhere (another MPI rank's row, results/rank_rows.hpp), as it is.
  void write_line(const std::string& line);
  // Writes the JSON sidecar (the context plus the members of `extra`, atomically) and renames
  // the CSV into place.
  void close(const json& extra);
  const std::string& final_path() const { return final_path_; }
  const std::string& json_path() const { return json_path_; }
  const run_context& context() const { return ctx_; }

 private:
  const run_context& ctx_;
  std::string final_path_, partial_path_, json_path_;
  std::ofstream csv_;
  bool closed_ = false;
};

json context_json(const run_context& ctx);
// The JSON of a GPU clock reading: null-free, with `available` and `why` when there is none.
json gpu_clocks_json(const gpu_clocks& c);

}  // namespace kcnn::bench
