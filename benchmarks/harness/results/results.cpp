#include "results/results.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace kcnn::bench {

const std::vector<std::string>& result_columns() {
  static const std::vector<std::string> cols = {
      "run_id", "timestamp", "device", "backend", "kokkos_version", "suite", "network", "layer",
      "op", "n", "c", "h", "w", "k", "r", "s", "stride", "pad", "groups", "stride_h", "stride_w", "pad_h", "pad_w",
      "pad_h_end", "pad_w_end", "dilation_h", "dilation_w", "out_h", "out_w",
      "repeat", "layout", "memory_space", "access_pattern", "variant", "tuning", "origin", "key", "cache", "fits_in_cache",
      "reps", "launches", "time_ms_median", "time_ms_min", "time_ms_max", "time_ms_stddev", "time_ms_mean",
      "timer", "gpu_time_ms_median", "gpu_time_ms_min", "gpu_time_ms_max", "throttled_samples",
      "bytes", "flops", "workspace_bytes", "passes", "gbps", "gflops", "arithmetic_intensity",
      "roofline_pct", "predicted_dram_bytes", "rel_error", "tolerance", "status", "note", "rank", "ranks",
      "model_blocks", "model_threads_per_block", "model_waves", "model_ld_requests", "model_ld_sectors_per_request",
      "model_st_requests", "model_st_sectors_per_request", "model_smem_conflict_ways", "model_const_serialization",
      "model_l2_bytes", "model_dram_bytes", "model_time_us", "model_bound", "model_bytes_in_flight",
      "model_registers"};
  return cols;
}

// One row per line, always (grep, --resume and line-based readers rely on it): a line break
// inside a value (a library's multi-line error message) becomes a space.
std::string csv_escape(const std::string& s) {
  std::string one_line = s;
  for (char& ch : one_line)
    if (ch == '\n' || ch == '\r') ch = ' ';
  if (one_line.find_first_of(",\"") == std::string::npos) return one_line;
  std::string o = "\"";
  for (char ch : one_line) {
    if (ch == '"') o += '"';
    o += ch;
  }
  return o + "\"";
}

namespace {
std::string num(double v, int precision = 6) {
  if (!std::isfinite(v)) return "";
  std::ostringstream o;
  o << std::setprecision(precision) << v;
  return o.str();
}
}  // namespace

results_writer::results_writer(const std::string& out_dir, const run_context& ctx) : ctx_(ctx) {
  const fs::path dir = fs::path(out_dir) / ctx.device.slug;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create results folder " + dir.string() + ": " + ec.message());
  std::string stem = ctx.run_id.substr(0, ctx.run_id.find('-')) + "-" + ctx.suite;
  // Two runs started in the same second must not overwrite each other: add -2, -3, ...
  const std::string base = stem;
  for (int k = 2; fs::exists(dir / (stem + ".csv")) || fs::exists(dir / (stem + ".csv.partial")) ||
                  fs::exists(dir / (stem + ".json"));
       ++k)
    stem = base + "-" + std::to_string(k);
  final_path_ = (dir / (stem + ".csv")).string();
  json_path_ = (dir / (stem + ".json")).string();
  partial_path_ = final_path_ + ".partial";
  csv_.open(partial_path_, std::ios::out | std::ios::trunc);
  if (!csv_) throw std::runtime_error("cannot write " + partial_path_);
  const auto& cols = result_columns();
  for (std::size_t i = 0; i < cols.size(); ++i) csv_ << (i ? "," : "") << cols[i];
  csv_ << "\n" << std::flush;
}

std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> f(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted && ch == '"' && i + 1 < line.size() && line[i + 1] == '"') { f.back() += '"'; ++i; }
    else if (ch == '"') quoted = !quoted;
    else if (ch == ',' && !quoted) f.emplace_back();
    else f.back() += ch;
  }
  return f;
}

std::size_t column_index(const std::string& column) {
  const auto& cols = result_columns();
  const auto at = std::find(cols.begin(), cols.end(), column);
  if (at == cols.end()) throw std::logic_error("no results column '" + column + "'");
  return std::size_t(at - cols.begin());
}

namespace {
std::string header_line() {
  std::string h;
  for (const auto& c : result_columns()) h += (h.empty() ? "" : ",") + c;
  return h;
}
}  // namespace

std::vector<std::string> finished_keys(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the results file to resume");
  std::string line;
  if (!std::getline(in, line) || line != header_line())
    throw std::runtime_error(path + ": not a results file of this version (its header differs)");
  const std::size_t columns = result_columns().size(), key_at = column_index("key"), status_at = column_index("status");
  std::vector<std::string> keys;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto f = csv_fields(line);
    if (f.size() == columns && parse_status(f[status_at]) == case_status::ok) keys.push_back(f[key_at]);
  }
  return keys;
}

results_writer::results_writer(const append_to& existing, const run_context& ctx) : ctx_(ctx) {
  (void)finished_keys(existing.path);  // checks that it exists and has this version's header
  const std::string p = existing.path;
  const std::string suffix = ".partial";
  const bool partial = p.size() > suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0;
  partial_path_ = p;
  final_path_ = partial ? p.substr(0, p.size() - suffix.size()) : p;
  json_path_ = final_path_.substr(0, final_path_.size() - 4) + ".json";
  csv_.open(partial_path_, std::ios::out | std::ios::app);
  if (!csv_) throw std::runtime_error("cannot append to " + partial_path_);
}

results_writer::~results_writer() {
  // An unclosed writer (exception, crash path) leaves the .partial file with every finished row.
  if (!closed_ && csv_.is_open()) csv_.flush();
}

std::string csv_line(const run_context& ctx_, const result_row& r) {
  const bool timed = is_timed(r.status) && r.time_ms_median > 0;
  const bool gpu_timed = timed && r.gpu_time_ms_median >= 0;
  const double secs = r.rate_ms() * 1e-3;
  std::vector<std::string> f = {
      ctx_.run_id, ctx_.timestamp, ctx_.device.name, ctx_.device.backend, ctx_.kokkos_version,
      r.suite, r.network, r.layer, r.op, std::to_string(r.n), std::to_string(r.c),
      std::to_string(r.h), std::to_string(r.w), std::to_string(r.k), std::to_string(r.r),
      std::to_string(r.s), std::to_string(r.stride), std::to_string(r.pad),
      std::to_string(r.groups), std::to_string(r.stride_h), std::to_string(r.stride_w), std::to_string(r.pad_h),
      std::to_string(r.pad_w), std::to_string(r.pad_h_end), std::to_string(r.pad_w_end), std::to_string(r.dilation_h),
      std::to_string(r.dilation_w), std::to_string(r.out_h), std::to_string(r.out_w),
      std::to_string(r.repeat), r.layout, r.memory_space, r.access_pattern, r.variant, r.tuning,
      r.origin, r.key, r.cache, r.fits_in_cache >= 0 ? std::to_string(r.fits_in_cache) : "", std::to_string(r.reps),
      timed ? std::to_string(r.launches) : "", timed ? num(r.time_ms_median) : "",
      timed ? num(r.time_ms_min) : "", timed ? num(r.time_ms_max) : "",
      timed ? num(r.time_ms_stddev) : "", timed ? num(r.time_ms_mean) : "", timed ? r.timer : "",
      gpu_timed ? num(r.gpu_time_ms_median) : "", gpu_timed ? num(r.gpu_time_ms_min) : "",
      gpu_timed ? num(r.gpu_time_ms_max) : "", timed ? std::to_string(r.throttled_samples) : "", num(r.bytes, 15),
      num(r.flops, 15), num(r.workspace_bytes, 15), r.passes >= 0 ? num(r.passes) : "", timed ? num(r.bytes / secs / 1e9) : "",
      timed ? num(r.flops / secs / 1e9) : "", r.bytes > 0 ? num(r.flops / r.bytes) : "",
      timed && r.roofline_pct >= 0 ? num(r.roofline_pct, 4) : "",
      r.predicted_dram_bytes >= 0 ? num(r.predicted_dram_bytes, 15) : "",
      r.rel_error >= 0 ? num(r.rel_error, 4) : "", num(r.tolerance, 3), name(r.status), r.note, std::to_string(r.rank),
      std::to_string(r.ranks)};
  const model_figures& m = r.model;
  const auto ratio = [&](double v) { return m.present && v >= 0 ? num(v, 4) : std::string(); };
  const auto count = [&](double v) { return m.present ? num(v, 15) : std::string(); };
  f.insert(f.end(), {m.present ? std::to_string(m.blocks) : "", m.present ? std::to_string(m.threads_per_block) : "",
                     m.present ? num(m.waves, 4) : "", count(m.ld_requests), ratio(m.ld_sectors_per_request),
                     count(m.st_requests), ratio(m.st_sectors_per_request), ratio(m.smem_conflict_ways),
                     ratio(m.const_serialization), count(m.l2_bytes), count(m.dram_bytes),
                     m.present ? num(m.time_us, 6) : "", m.present ? m.bound : "", ratio(m.bytes_in_flight),
                     m.present && m.registers > 0 ? std::to_string(m.registers) : ""});
  std::string line;
  for (std::size_t i = 0; i < f.size(); ++i) line += (i ? "," : "") + csv_escape(f[i]);
  return line;
}

void results_writer::write(const result_row& r) { write_line(csv_line(ctx_, r)); }

void results_writer::write_line(const std::string& line) {
  csv_ << line << "\n" << std::flush;
  if (!csv_) throw std::runtime_error("write failed: " + partial_path_);
}

json context_json(const run_context& c) {
  json device = json::object();
  device.set("name", c.device.name).set("slug", c.device.slug).set("backend", c.device.backend);
  for (const auto& [k, v] : c.device.properties) device.set(k, json::raw(v));
  json kokkos = json::object();
  kokkos.set("version", c.kokkos_version)
      .set("kernels_version", c.kokkos_kernels_version)
      .set("backends", json::array_of(c.kokkos_backends))
      .set("default_execution_space", c.device.backend)
      .set("configuration", c.kokkos_configuration)
      .set("view", c.kokkos_view)
      .set("read_only_loads", c.read_only_loads)
      .set("gemm_backend", c.gemm_backend);
  json env = json::object();
  for (const auto& [k, v] : c.environment) env.set(k, v);
  json blas = json::object();
  blas.set("library", c.blas.library)
      .set("path", c.blas.path)
      .set("version", c.blas.version)
      .set("threads", c.blas.threads)
      .set("core", c.blas.core)
      .set("warning", c.blas.warning)
      .set("kokkos_kernels_tpl_blas", c.blas.kokkos_kernels_tpl_blas)
      .set("kokkos_kernels_tpl_cublas", c.blas.kokkos_kernels_tpl_cublas);
  json host = json::object();
  host.set("cpu", c.host_cpu).set("logical_cpus", c.host_logical_cpus).set("hostname", c.hostname);
  host.set("streaming_stores", c.streaming_stores)
      .set("streaming_store_threshold_bytes", static_cast<unsigned long long>(c.streaming_store_threshold_bytes));
  json build = json::object();
  build.set("compiler", c.compiler).set("cxx_flags", c.cxx_flags).set("build_type", c.build_type);
  json git = json::object();
  git.set("commit", c.git_known ? json(c.git_commit) : json()).set("clean", c.git_known ? json(c.git_clean) : json());
  json j = json::object();
  j.set("schema_version", results_schema_version)
      .set("run_id", c.run_id)
      .set("timestamp", c.timestamp)
      .set("suite", c.suite)
      .set("command_line", json::array_of(c.command_line))
      .set("device", device)
      .set("kokkos", kokkos)
      .set("blas", blas)
      .set("host", host)
      .set("environment", env)
      .set("build", build)
      .set("git", git);
  return j;
}

json gpu_clocks_json(const gpu_clocks& c) {
  json j = json::object();
  j.set("available", c.available);
  if (!c.available) return j.set("why", c.why);
  using ul = unsigned long;
  return j.set("sm_mhz", ul(c.sm_mhz))
      .set("memory_mhz", ul(c.memory_mhz))
      .set("sm_max_mhz", ul(c.sm_max_mhz))
      .set("memory_max_mhz", ul(c.memory_max_mhz))
      .set("temperature_c", ul(c.temperature_c))
      .set("power_mw", ul(c.power_mw))
      .set("throttle_reasons", c.throttle_reasons);
}

void results_writer::close(const json& extra) {
  if (closed_) return;
  csv_.close();
  const std::string json_tmp = json_path_ + ".partial";
  {
    std::ofstream js(json_tmp, std::ios::out | std::ios::trunc);
    js << context_json(ctx_).merge(extra).dump();
    if (!js) throw std::runtime_error("cannot write " + json_tmp);
  }
  std::error_code ec;
  fs::rename(json_tmp, json_path_, ec);
  if (ec) throw std::runtime_error("cannot rename " + json_tmp + ": " + ec.message());
  if (partial_path_ != final_path_) {
    fs::rename(partial_path_, final_path_, ec);
    if (ec) throw std::runtime_error("cannot rename " + partial_path_ + ": " + ec.message());
  }
  closed_ = true;
}

}  // namespace kcnn::bench
