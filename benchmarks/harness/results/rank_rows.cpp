#include "results/rank_rows.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace kcnn::bench {

rank_rows_file::rank_rows_file(const std::string& results_path, int rank, const run_context& ctx)
    : path_(results_path + ".rank" + std::to_string(rank) + ".partial"), ctx_(ctx), out_(path_, std::ios::trunc) {
  if (!out_) throw std::runtime_error("cannot write " + path_);
}

void rank_rows_file::write(const result_row& r) {
  const std::string line = csv_line(ctx_, r);
  out_ << line << "\n" << std::flush;
  lines_ += line + "\n";
}

void rank_rows_file::remove() {
  out_.close();
  std::remove(path_.c_str());
}

status_counts merge_rank_rows(results_writer& writer, const std::vector<std::string>& other_ranks_lines) {
  // Every row is checked before any is written: a bad one leaves rank 0's file as it was.
  const std::size_t status_at = column_index("status");
  status_counts counts;
  std::vector<std::string> rows;
  for (const auto& lines : other_ranks_lines) {
    std::istringstream in(lines);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      const auto f = csv_fields(line);
      const auto s = status_at < f.size() ? parse_status(f[status_at]) : std::nullopt;
      if (!s) throw std::runtime_error("a rank sent a row without a valid status: " + line);
      counts.add(*s);
      rows.push_back(line);
    }
  }
  for (const auto& row : rows) writer.write_line(row);
  return counts;
}

std::size_t adopt_rank_rows(const std::string& path) {
  const std::string suffix = ".partial";
  const bool partial = path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  const fs::path final_path = partial ? path.substr(0, path.size() - suffix.size()) : path;
  const std::string prefix = final_path.filename().string() + ".rank";
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(final_path.parent_path().empty() ? fs::path(".") : final_path.parent_path(), ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0 && n.size() > prefix.size() + suffix.size() &&
        n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      found.push_back(e.path());
  }
  std::sort(found.begin(), found.end());
  std::size_t adopted = 0;
  if (found.empty()) return 0;
  std::ofstream out(path, std::ios::app);
  if (!out) throw std::runtime_error(path + ": cannot append the other ranks' rows");
  for (const auto& f : found) {
    std::ifstream in(f);
    if (!in) throw std::runtime_error(f.string() + ": cannot read this rank's rows");
    std::string line;
    while (std::getline(in, line))
      if (!line.empty() && csv_fields(line).size() == result_columns().size()) {
        out << line << "\n";
        ++adopted;
      }
    out.flush();
    if (!out) throw std::runtime_error(path + ": write failed");
    fs::remove(f, ec);
  }
  return adopted;
}

}  // namespace kcnn::bench
