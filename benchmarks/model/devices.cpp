// The GPU descriptions the model reads (devices.csv beside this file, or any file in its format:
// kcnn-bench --model-devices). Read with the suite loader's CSV reader (fast-cpp-csv-parser,
// harness/suites/suite.cpp) and every field checked, so that a bad description is refused with its
// file, line and field rather than modelled.
#include "gpu_model.hpp"

#include <csv.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef KCNN_MODEL_DEVICES_FILE
#define KCNN_MODEL_DEVICES_FILE "devices.csv"
#endif

namespace kcnn::model {

namespace {

constexpr std::size_t ncol = 24;
const char* const columns[ncol] = {"name", "sms", "clock_mhz", "fp32_tflops", "dram_gb_s", "l2_gb_s", "l2_mib",
                                   "l1_smem_kib_per_sm", "smem_kib_per_sm", "smem_kib_per_block",
                                   "max_threads_per_sm", "max_blocks_per_sm", "warp_size", "sector_bytes",
                                   "line_bytes", "smem_banks", "l1_latency_ns", "l2_latency_ns", "mem_latency_ns",
                                   "mlp_per_warp", "registers_per_sm", "lsu_per_clock", "issue_per_clock", "source"};
using fields = std::array<std::string, ncol>;  // a row's values in the order of `columns`

// The suite loader's dialect: cells trimmed, double quotes escape, '#' lines and blank lines skipped.
using reader_t = io::CSVReader<ncol, io::trim_chars<' ', '\t', '\r'>, io::double_quote_escape<',', '"'>,
                               io::throw_on_overflow, io::single_and_empty_line_comment<'#'>>;

std::string where(const std::string& path, long line) { return path + ":" + std::to_string(line); }

// The fields of line `line` of `text` (1-based) as the reader splits them: commas outside quotes.
std::size_t fields_on_line(const std::string& text, long line) {
  std::istringstream ss(text);
  std::string l;
  for (long i = 0; i < line && std::getline(ss, l); ++i) {}
  std::size_t n = 1;
  bool quoted = false;
  for (const char ch : l) {
    if (ch == '"') quoted = !quoted;
    else if (ch == ',' && !quoted) ++n;
  }
  return n;
}

// One description from a row's fields; `at` is "file:line". Every number must be positive.
device_description parse_device(const std::string& at, const fields& f, const std::vector<device_description>& earlier) {
  auto num = [&](std::size_t i) {
    try {
      std::size_t used = 0;
      const double v = std::stod(f[i], &used);
      if (used != f[i].size() || !(v > 0) || !std::isfinite(v)) throw std::invalid_argument("");
      return v;
    } catch (const std::exception&) {
      throw std::invalid_argument(at + ": field '" + columns[i] + "' must be a positive number, got '" + f[i] + "'");
    }
  };
  device_description d;
  d.name = f[0];
  if (d.name.empty()) throw std::invalid_argument(at + ": field 'name' is empty");
  for (const auto& o : earlier)
    if (o.name == d.name) throw std::invalid_argument(at + ": field 'name': '" + d.name + "' is given twice");
  d.sms = int(num(1));
  d.clock_hz = num(2) * 1e6;
  d.fp32_flops_per_s = num(3) * 1e12;
  d.dram_bytes_per_s = num(4) * 1e9;
  d.l2_bytes_per_s = num(5) * 1e9;
  d.l2_bytes = num(6) * 1024 * 1024;
  d.l1_smem_bytes_per_sm = num(7) * 1024;
  d.smem_bytes_per_sm = num(8) * 1024;
  d.smem_bytes_per_block = num(9) * 1024;
  d.max_threads_per_sm = int(num(10));
  d.max_blocks_per_sm = int(num(11));
  d.warp_size = int(num(12));
  d.sector_bytes = int(num(13));
  d.line_bytes = int(num(14));
  d.smem_banks = int(num(15));
  d.l1_latency_s = num(16) * 1e-9;
  d.l2_latency_s = num(17) * 1e-9;
  d.mem_latency_s = num(18) * 1e-9;
  d.mlp_per_warp = int(num(19));
  d.registers_per_sm = int(num(20));
  d.lsu_per_clock = num(21);
  d.issue_per_clock = num(22);
  d.source = f[23];
  if (d.line_bytes % d.sector_bytes != 0 || d.line_bytes / d.sector_bytes > 8)
    throw std::invalid_argument(at + ": field 'line_bytes' must be 1 to 8 sectors");
  return d;
}

}  // namespace

std::string default_devices_file() { return KCNN_MODEL_DEVICES_FILE; }

std::vector<device_description> load_devices(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::invalid_argument(path + ": cannot open the device file");
  std::ostringstream buffer;
  buffer << file.rdbuf();
  const std::string text = buffer.str();
  reader_t in(path, text.data(), text.data() + text.size());
  // The header names every column once, in any order; the reader's errors name the column.
  try {
    in.read_header(io::ignore_no_column, columns[0], columns[1], columns[2], columns[3], columns[4], columns[5],
                   columns[6], columns[7], columns[8], columns[9], columns[10], columns[11], columns[12], columns[13],
                   columns[14], columns[15], columns[16], columns[17], columns[18], columns[19], columns[20],
                   columns[21], columns[22], columns[23]);
  } catch (const io::error::header_missing&) {
    throw std::invalid_argument(path + ": no header line");
  } catch (const io::error::extra_column_in_header& e) {
    throw std::invalid_argument(where(path, in.get_file_line()) + ": the header's column '" +
                                std::string(e.column_name) + "' is not a device file column");
  } catch (const io::error::missing_column_in_header& e) {
    throw std::invalid_argument(where(path, in.get_file_line()) + ": the header has no column '" +
                                std::string(e.column_name) + "'");
  } catch (const io::error::duplicated_column_in_header& e) {
    throw std::invalid_argument(where(path, in.get_file_line()) + ": the header names column '" +
                                std::string(e.column_name) + "' twice");
  } catch (const io::error::base& e) {
    throw std::invalid_argument(where(path, in.get_file_line()) + ": " + e.what());
  }
  std::vector<device_description> out;
  try {
    fields f;
    while (in.read_row(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12], f[13], f[14],
                       f[15], f[16], f[17], f[18], f[19], f[20], f[21], f[22], f[23]))
      out.push_back(parse_device(where(path, in.get_file_line()), f, out));
  } catch (const io::error::too_few_columns& e) {
    throw std::invalid_argument(where(path, e.file_line) + ": " + std::to_string(fields_on_line(text, e.file_line)) +
                                " fields, expected " + std::to_string(ncol));
  } catch (const io::error::too_many_columns& e) {
    throw std::invalid_argument(where(path, e.file_line) + ": " + std::to_string(fields_on_line(text, e.file_line)) +
                                " fields, expected " + std::to_string(ncol));
  } catch (const io::error::escaped_string_not_closed& e) {
    throw std::invalid_argument(where(path, e.file_line) + ": a double-quoted field is not closed");
  } catch (const io::error::base& e) {
    // The reader's other errors (an over-long line) in its words.
    throw std::invalid_argument(where(path, in.get_file_line()) + ": " + e.what());
  }
  if (out.empty()) throw std::invalid_argument(path + ": no device");
  return out;
}

const device_description& find_device(const std::vector<device_description>& devices, const std::string& name) {
  std::string names;
  for (const auto& d : devices) {
    if (d.name == name) return d;
    names += (names.empty() ? "" : ", ") + d.name;
  }
  throw std::invalid_argument("no device description named '" + name + "' (have: " + names + ")");
}

}  // namespace kcnn::model
