#include "suites/suite.hpp"

#include <csv.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace kcnn::bench {

namespace {

const std::vector<std::string> required_columns = {"network", "layer", "op", "n",      "c",
                                                   "h",       "w",     "k",  "r",      "s",
                                                   "stride",  "pad",   "groups"};
// repeat: multiplicity; rounding: floor|ceil for pooling; input: named inputs for
// add/concat; params: op-specific "key=value key=value"; note: free text; then the per-axis
// geometry (conv2d; pooling all but dilation), each defaulting to what stride and pad say.
const std::vector<std::string> geometry_columns = {"stride_h", "stride_w", "pad_h", "pad_w",
                                                   "pad_h_end", "pad_w_end", "dilation_h", "dilation_w"};
const std::vector<std::string> optional_columns = {"repeat", "rounding", "input", "params", "note",
                                                   "stride_h", "stride_w", "pad_h", "pad_w",
                                                   "pad_h_end", "pad_w_end", "dilation_h", "dilation_w"};

std::string where(const std::string& file, int line) {
  return file + ":" + std::to_string(line);
}

// Bytes a terminal would not show as themselves (a binary file's) are written \xNN.
std::string printable(const std::string& s) {
  std::string o;
  for (const char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (u >= 0x20 && u < 0x7f) {
      o += ch;
    } else {
      static const char hex[] = "0123456789abcdef";
      o += std::string("\\x") + hex[u >> 4] + hex[u & 15];
    }
  }
  return o;
}

[[noreturn]] void fail(const std::string& file, int line, const std::string& field,
                       const std::string& msg) {
  throw suite_error(where(file, line) + ": field '" + printable(field) + "': " + printable(msg));
}

// " (taken by conv2d, pool_max)": the ops whose rows may fill geometry column `col`.
std::string geometry_takers(const std::string& col) {
  std::string takers;
  for (const auto& op : registry::instance().ops())
    if (std::find(op.geometry.begin(), op.geometry.end(), col) != op.geometry.end())
      takers += (takers.empty() ? "" : ", ") + op.name;
  return takers.empty() ? std::string() : " (taken by " + takers + ")";
}

// Why a params key is refused for op `oi`: what the op takes, and which ops take the key if any
// (a key of another op, e.g. alpha on relu, or a misspelling, e.g. sise on lrn).
std::string param_not_taken(const op_info& oi, const std::string& key) {
  std::string takes;
  for (const auto& k : oi.params) takes += (takes.empty() ? "" : ", ") + k;
  std::set<std::string> takers;
  for (const auto& op : registry::instance().ops())
    if (std::find(op.params.begin(), op.params.end(), key) != op.params.end()) takers.insert(op.name);
  std::string others;
  for (const auto& name : takers) others += (others.empty() ? "" : ", ") + name;
  return (others.empty() ? "unknown key '" + key + "'"
                         : "'" + key + "' does not apply to " + oi.name + " (taken by " + others + ")") +
         "; " + oi.name + (takes.empty() ? " takes no params" : " takes: " + takes);
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// Integer fields: digits only; empty allowed where the op does not use the field.
int parse_int(const std::string& text, const std::string& file, int line,
              const std::string& field, bool allow_empty, int empty_value) {
  const std::string t = trim(text);
  if (t.empty()) {
    if (allow_empty) return empty_value;
    fail(file, line, field, "missing value");
  }
  int v = 0;
  if (!parse_int_exact(t, v)) fail(file, line, field, "expected an integer, got '" + t + "'");
  if (v < 0) fail(file, line, field, "must be >= 0, got " + t);
  return v;
}

bool valid_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-';
  });
}

std::vector<std::string> split_header(const std::string& line) {
  std::vector<std::string> cols;
  std::stringstream ss(line);
  std::string col;
  while (std::getline(ss, col, ',')) cols.push_back(trim(col));
  return cols;
}

// Fields on line `line` (1-based) of `text`, counted as the CSV reader splits them (commas
// outside double quotes), to name the column a short row is missing.
std::size_t fields_on_line(const std::string& text, int line) {
  std::istringstream ss(text);
  std::string l;
  for (int i = 0; i < line && std::getline(ss, l); ++i) {}
  std::size_t fields = 1;
  bool quoted = false;
  for (const char ch : l) {
    if (ch == '"') quoted = !quoted;
    else if (ch == ',' && !quoted) ++fields;
  }
  return fields;
}

// The lines before the header: "#@ key: value" suite metadata into `su`, comments and blank
// lines skipped. Leaves `header` at the header line (or the last line read) and its number.
void read_preamble(const std::string& path, std::istringstream& probe, suite& su, std::string& header, int& header_line) {
  while (std::getline(probe, header)) {
    ++header_line;
    const std::string t = trim(header);
    if (t.rfind("#@", 0) == 0) {
      // Suite metadata: "#@ key: value".
      const std::string kv = trim(t.substr(2));
      const auto colon = kv.find(':');
      const std::string key = trim(kv.substr(0, colon));
      const std::string value = colon == std::string::npos ? std::string() : trim(kv.substr(colon + 1));
      if (colon == std::string::npos || value.empty())
        fail(path, header_line, "#@", "expected '#@ key: value', got '" + t + "'");
      if (key == "kind") {
        if (value == "network") su.kind = suite_kind::network;
        else if (value == "layers") su.kind = suite_kind::layers;
        else fail(path, header_line, "#@ kind", "expected network or layers, got '" + value + "'");
      } else if (key == "source") {
        su.source = value;
      } else if (key == "rounding") {
        if (value != "floor" && value != "ceil")
          fail(path, header_line, "#@ rounding", "expected floor or ceil, got '" + value + "'");
        su.rounding = value;
      } else {
        fail(path, header_line, "#@ " + key, "unknown suite metadata (known: kind, source, rounding)");
      }
      continue;
    }
    if (!t.empty() && t[0] != '#') break;
  }
}

// The header's columns: each known, none twice, every required one present.
std::vector<std::string> check_header(const std::string& path, const std::string& header, int header_line) {
  const auto cols = split_header(header);
  std::set<std::string> seen;
  for (const auto& c : cols) {
    const bool known = std::find(required_columns.begin(), required_columns.end(), c) !=
                           required_columns.end() ||
                       std::find(optional_columns.begin(), optional_columns.end(), c) !=
                           optional_columns.end();
    if (!known) fail(path, header_line, c, "unknown column");
    if (!seen.insert(c).second) fail(path, header_line, c, "column appears twice");
  }
  for (const auto& c : required_columns)
    if (!seen.count(c)) fail(path, header_line, c, "required column is missing");
  return cols;
}

// One row's fields as the CSV reader gives them.
struct row_fields {
  std::string network, layer, op, n, c, h, w, k, r, s, stride, pad, groups, repeat, rounding,
      input, params, note;
  std::string geometry[8];  // in the order of geometry_columns
};

// The row's op, by name; an unknown one fails, naming the known ops.
const op_info& row_op(const std::string& path, int line, const std::string& op) {
  const op_info* oi = registry::instance().find_op(op);
  if (!oi) {
    std::string known;
    for (const auto& o : registry::instance().ops()) known += (known.empty() ? "" : ", ") + o.name;
    fail(path, line, "op", "unknown op '" + op + "' (known: " + known + ")");
  }
  return *oi;
}

// The shape and the shared geometry fields (n .. groups).
void parse_shape(const std::string& path, int line, const row_fields& f, layer_spec& sp) {
  sp.n = parse_int(f.n, path, line, "n", false, 0);
  sp.c = parse_int(f.c, path, line, "c", false, 0);
  sp.h = parse_int(f.h, path, line, "h", false, 0);
  sp.w = parse_int(f.w, path, line, "w", false, 0);
  sp.k = parse_int(f.k, path, line, "k", true, 0);
  sp.r = parse_int(f.r, path, line, "r", true, 0);
  sp.s = parse_int(f.s, path, line, "s", true, 0);
  sp.stride = parse_int(f.stride, path, line, "stride", true, 1);
  sp.pad = parse_int(f.pad, path, line, "pad", true, 0);
  sp.groups = parse_int(f.groups, path, line, "groups", true, 1);
  // Zero is no stride and no group count for any op, also one that does not use them.
  if (sp.stride < 1) fail(path, line, "stride", "must be > 0, got " + std::to_string(sp.stride));
  if (sp.groups < 1) fail(path, line, "groups", "must be > 0, got " + std::to_string(sp.groups));
}

// The per-axis geometry: only for an op that takes it; strides and dilations >= 1, pads >= 0.
void parse_axis_geometry(const std::string& path, int line, const row_fields& f, const op_info& oi, layer_spec& sp) {
  int* const geometry_fields[8] = {&sp.stride_h, &sp.stride_w, &sp.pad_h, &sp.pad_w,
                                   &sp.pad_h_end, &sp.pad_w_end, &sp.dilation_h, &sp.dilation_w};
  for (std::size_t i = 0; i < geometry_columns.size(); ++i) {
    const std::string& col = geometry_columns[i];
    if (trim(f.geometry[i]).empty()) continue;
    if (std::find(oi.geometry.begin(), oi.geometry.end(), col) == oi.geometry.end())
      fail(path, line, col, oi.name + " takes no " + col + geometry_takers(col));
    const int v = parse_int(f.geometry[i], path, line, col, false, 0);
    const bool is_pad = col.rfind("pad", 0) == 0;
    if (v < (is_pad ? 0 : 1)) fail(path, line, col, std::string("must be ") + (is_pad ? ">= 0" : "> 0") + ", got " + std::to_string(v));
    *geometry_fields[i] = v;
  }
}

// "key=value key=value": each key one the op takes, and given once.
void parse_params(const std::string& path, int line, const std::string& params, const op_info& oi, layer_spec& sp) {
  std::stringstream ps(params);
  std::string kv;
  while (ps >> kv) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == kv.size())
      fail(path, line, "params", "expected key=value, got '" + kv + "'");
    const std::string key = kv.substr(0, eq);
    if (std::find(oi.params.begin(), oi.params.end(), key) == oi.params.end())
      fail(path, line, "params", param_not_taken(oi, key));
    if (!sp.params.emplace(key, kv.substr(eq + 1)).second)
      fail(path, line, "params", "'" + key + "' is given twice");
  }
}

// One row as a layer of suite `su` (its default rounding), checked by its op.
layer_spec parse_row(const std::string& path, int line, const row_fields& f, const suite& su) {
  layer_spec sp;
  sp.file = path;
  sp.line = line;
  sp.network = trim(f.network);
  sp.layer = trim(f.layer);
  sp.op = trim(f.op);
  if (!valid_name(sp.network)) fail(path, line, "network", "expected a name of letters, digits, '_' or '-', got '" + sp.network + "'");
  if (!valid_name(sp.layer)) fail(path, line, "layer", "expected a name of letters, digits, '_' or '-', got '" + sp.layer + "'");
  const op_info& oi = row_op(path, line, sp.op);
  parse_shape(path, line, f, sp);
  parse_axis_geometry(path, line, f, oi, sp);
  sp.repeat = parse_int(f.repeat, path, line, "repeat", true, 1);
  if (sp.repeat < 1) fail(path, line, "repeat", "must be >= 1");
  sp.rounding = trim(f.rounding);
  if (sp.rounding.empty() && oi.rounds_output) sp.rounding = su.rounding;
  if (!sp.rounding.empty() && sp.rounding != "floor" && sp.rounding != "ceil")
    fail(path, line, "rounding", "expected floor or ceil, got '" + sp.rounding + "'");
  parse_params(path, line, f.params, oi, sp);
  std::stringstream is(f.input);
  for (std::string name; is >> name;) sp.inputs.push_back(name);
  try {
    if (const field_error e = oi.check(sp)) fail(path, line, e.field, e.message);
    sp.out = oi.output_shape(sp);
  } catch (const suite_error&) {
    throw;
  } catch (const std::exception& e) {
    // An op's parameter parsing (e.g. params size=abc) throws: the row's params are wrong.
    const std::string m = e.what();
    fail(path, line, "params", m.rfind("params: ", 0) == 0 ? m.substr(8) : m);
  }
  return sp;
}

// Every row into su.layers; the reader's errors as the suite's, naming the line and column.
void read_rows(const std::string& path, const std::string& text, const std::vector<std::string>& cols, suite& su) {
  using reader_t =
      io::CSVReader<26, io::trim_chars<' ', '\t', '\r'>, io::double_quote_escape<',', '"'>,
                    io::throw_on_overflow, io::single_and_empty_line_comment<'#'>>;
  std::set<std::string> names;
  try {
    reader_t in(path, text.data(), text.data() + text.size());
    in.read_header(io::ignore_missing_column, "network", "layer", "op", "n", "c", "h", "w", "k",
                   "r", "s", "stride", "pad", "groups", "repeat", "rounding", "input", "params",
                   "note", "stride_h", "stride_w", "pad_h", "pad_w", "pad_h_end", "pad_w_end", "dilation_h",
                   "dilation_w");
    row_fields f;
    while (true) {
      // The optional columns keep no value from the row before.
      f.repeat.clear();
      f.rounding.clear();
      f.input.clear();
      f.params.clear();
      f.note.clear();
      for (auto& g : f.geometry) g.clear();
      if (!in.read_row(f.network, f.layer, f.op, f.n, f.c, f.h, f.w, f.k, f.r, f.s, f.stride, f.pad, f.groups, f.repeat,
                       f.rounding, f.input, f.params, f.note, f.geometry[0], f.geometry[1], f.geometry[2], f.geometry[3],
                       f.geometry[4], f.geometry[5], f.geometry[6], f.geometry[7]))
        break;
      const int line = int(in.get_file_line());
      layer_spec sp = parse_row(path, line, f, su);
      if (!names.insert(sp.network + "." + sp.layer).second)
        fail(path, line, "layer", "duplicate layer name '" + sp.layer + "' in network '" + sp.network + "'");
      su.layers.push_back(std::move(sp));
    }
  } catch (const io::error::too_few_columns& e) {
    const std::size_t got = fields_on_line(text, e.file_line);
    fail(path, e.file_line, got < cols.size() ? cols[got] : "row",
         "missing value: the row has " + std::to_string(got) + " fields, the header names " +
             std::to_string(cols.size()));
  } catch (const io::error::too_many_columns& e) {
    fail(path, e.file_line, "row", "the row has " + std::to_string(fields_on_line(text, e.file_line)) +
                                       " fields, the header names " + std::to_string(cols.size()));
  } catch (const io::error::escaped_string_not_closed& e) {
    fail(path, e.file_line, "row", "a double-quoted value is not closed");
  } catch (const io::error::base& e) {
    // The reader's other errors (over-long line, a header it reads differently) in its words.
    const auto* fl = dynamic_cast<const io::error::with_file_line*>(&e);
    throw suite_error(fl && fl->file_line > 0 ? where(path, fl->file_line) + ": " + e.what()
                                              : path + ": " + e.what());
  }
}

// The suite as a whole: not empty; a network suite holds one network, chained.
void check_suite(const std::string& path, suite& su) {
  if (su.layers.empty()) throw suite_error(path + ": no layers");
  if (su.kind == suite_kind::network) {
    for (const auto& l : su.layers)
      if (l.network != su.layers.front().network)
        fail(path, l.line, "network", "a network suite holds one network ('" + su.layers.front().network +
                                          "'), got '" + l.network + "'");
    // The implicit input of a layer is the layer before it.
    for (std::size_t i = 1; i < su.layers.size(); ++i)
      if (su.layers[i].inputs.empty()) su.layers[i].inputs.push_back(su.layers[i - 1].layer);
    check_chain(su);
  } else {
    for (const auto& l : su.layers)
      if (!l.inputs.empty() && registry::instance().find_op(l.op)->input_shapes(l).size() < 2)
        fail(path, l.line, "input", "inputs are named only in network suites (#@ kind: network)");
  }
}

}  // namespace

suite load_suite(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw suite_error(path + ": cannot open suite file");
  std::ostringstream text;
  text << f.rdbuf();
  return parse_suite(path, text.str());
}

suite parse_suite(const std::string& path, const std::string& text) {
  suite su;
  su.path = path;
  su.name = fs::path(path).stem().string();
  std::istringstream probe(text);

  // The header is checked by hand first so that unknown or missing columns are named;
  // fast-cpp-csv-parser would silently ignore a misspelt optional column.
  std::string header;
  int header_line = 0;
  read_preamble(path, probe, su, header, header_line);
  if (su.kind == suite_kind::network && (su.source.empty() || su.rounding.empty()))
    fail(path, 1, su.source.empty() ? "#@ source" : "#@ rounding",
         "a network suite names its source and its pooling rounding mode");
  if (trim(header).empty() || trim(header)[0] == '#')
    throw suite_error(where(path, header_line) + ": no header line");
  const auto cols = check_header(path, header, header_line);
  read_rows(path, text, cols, su);
  check_suite(path, su);
  return su;
}

namespace {
std::string shape(const dims4& d) {
  return std::to_string(d.n) + "x" + std::to_string(d.c) + "x" + std::to_string(d.h) + "x" + std::to_string(d.w);
}
}  // namespace

void check_chain(const suite& su) {
  std::map<std::string, const layer_spec*> by_name;
  for (const auto& l : su.layers) {
    const auto expected = registry::instance().find_op(l.op)->input_shapes(l);
    if (&l != &su.layers.front() || !l.inputs.empty()) {
      if (l.inputs.size() != expected.size())
        fail(l.file, l.line, "input", "layer '" + l.layer + "' (" + l.op + ") takes " + std::to_string(expected.size()) +
                                          " input(s), " + std::to_string(l.inputs.size()) + " named");
      for (std::size_t i = 0; i < expected.size(); ++i) {
        const auto it = by_name.find(l.inputs[i]);
        if (it == by_name.end())
          fail(l.file, l.line, "input", "layer '" + l.layer + "': '" + l.inputs[i] +
                                            "' is not an earlier layer of network '" + l.network + "'");
        if (!(it->second->out == expected[i]))
          fail(l.file, l.line, "input", "layer '" + l.layer + "' expects " + shape(expected[i]) + " from '" +
                                            l.inputs[i] + "', which produces " + shape(it->second->out));
      }
    }
    if (l.repeat > 1 && !(l.out == dims4{l.n, l.c, l.h, l.w}))
      fail(l.file, l.line, "repeat", "layer '" + l.layer + "' is repeated but its output " + shape(l.out) +
                                         " is not its input " + shape({l.n, l.c, l.h, l.w}));
    by_name[l.layer] = &l;
  }
}

namespace {
std::vector<fs::path> search_dirs() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("KCNN_SUITES_DIR")) dirs.emplace_back(env);
  dirs.emplace_back("suites");
#ifdef KCNN_SOURCE_SUITES_DIR
  dirs.emplace_back(KCNN_SOURCE_SUITES_DIR);
#endif
#ifdef KCNN_INSTALL_SUITES_DIR
  dirs.emplace_back(KCNN_INSTALL_SUITES_DIR);
#endif
  return dirs;
}
}  // namespace

std::string resolve_suite(const std::string& name_or_path) {
  std::error_code ec;
  if (fs::is_regular_file(name_or_path, ec)) return name_or_path;
  for (const auto& d : search_dirs()) {
    const fs::path p = d / (name_or_path + ".csv");
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  std::string known;
  for (const auto& n : available_suites()) known += (known.empty() ? "" : ", ") + n;
  throw suite_error("unknown suite '" + name_or_path + "' (not a file; known suites: " +
                    (known.empty() ? "none found" : known) + ")");
}

void set_batch(suite& su, int n) {
  for (auto& spec : su.layers) {
    if (spec.n == n) continue;
    const op_info* oi = registry::instance().find_op(spec.op);
    spec.n = n;
    if (const field_error e = oi->check(spec))
      fail(spec.file, spec.line, e.field, e.message + " (with --batch " + std::to_string(n) + ")");
    spec.out = oi->output_shape(spec);
  }
  if (su.kind == suite_kind::network) check_chain(su);
}

namespace {
double activation_bytes_per_sample(const layer_spec& spec) {
  const op_info* oi = registry::instance().find_op(spec.op);
  layer_spec one = spec;
  one.n = 1;
  one.out = oi->output_shape(one);
  double elements = double(one.out.size());
  for (const dims4& d : oi->input_shapes(one)) elements += double(d.size());
  return 4.0 * elements;
}
}  // namespace

int fill_batch(const layer_spec& spec, double min_bytes, double max_bytes, int max_batch) {
  const double per_sample = activation_bytes_per_sample(spec);
  if (!(per_sample > 0) || !(min_bytes > 0)) return spec.n;
  const double wanted = std::ceil(min_bytes / per_sample);
  const double cap = max_bytes > 0 ? std::max(1.0, std::floor(max_bytes / per_sample)) : wanted;
  const double n = std::min({wanted, cap, double(std::max(1, max_batch))});
  return std::max(spec.n, int(n));
}

void fill_device(suite& su, double cache_bytes, double memory_bytes) {
  const double min_bytes = 4.0 * cache_bytes, max_bytes = memory_bytes / 4.0;
  if (su.kind == suite_kind::network) {
    int n = 0;
    for (const auto& spec : su.layers) n = std::max(n, fill_batch(spec, min_bytes, max_bytes, fill_max_batch));
    for (const auto& spec : su.layers) n = std::min(n, fill_batch(spec, 1e300, max_bytes, fill_max_batch));
    set_batch(su, n);
    return;
  }
  for (auto& spec : su.layers) {
    const int n = fill_batch(spec, min_bytes, max_bytes, fill_max_batch);
    if (n == spec.n) continue;
    const op_info* oi = registry::instance().find_op(spec.op);
    spec.n = n;
    if (const field_error e = oi->check(spec))
      fail(spec.file, spec.line, e.field, e.message + " (with --fill's batch " + std::to_string(n) + ")");
    spec.out = oi->output_shape(spec);
  }
}

std::vector<suite> all_network_suites() {
  std::vector<suite> out;
  for (const auto& name : available_suites()) {
    suite su = load_suite(resolve_suite(name));
    if (su.kind == suite_kind::network) out.push_back(std::move(su));
  }
  return out;
}

std::vector<std::string> available_suites() {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& d : search_dirs()) {
    if (!fs::is_directory(d, ec)) continue;
    for (const auto& e : fs::directory_iterator(d, ec))
      if (e.path().extension() == ".csv") names.insert(e.path().stem().string());
  }
  return {names.begin(), names.end()};
}

}  // namespace kcnn::bench
