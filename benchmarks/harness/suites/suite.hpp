#pragma once
// Suite files: CSV layer tables (format in suites/README.md).
#include "cases/registry.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace kcnn::bench {

// A malformed suite: the message names file, line and field.
struct suite_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What a suite file is, from its `#@ kind:` line: a table of independent layers (default), or
// one network's layers in forward order, checked to chain (each layer's inputs are earlier
// layers' outputs) and runnable as a forward pass.
enum class suite_kind { layers, network };

struct suite {
  std::string name;  // file stem, e.g. "smoke"
  std::string path;
  suite_kind kind = suite_kind::layers;
  std::string source;    // `#@ source:` where the layer table comes from
  std::string rounding;  // `#@ rounding:` pooling rounding of the network (floor|ceil)
  std::vector<layer_spec> layers;
};

// Checks that a network suite chains: every input names an earlier layer of the same network
// whose output shape is what this layer expects (fc: the same c x h x w; add: two equal shapes;
// concat: the parts' channels). Throws suite_error naming the layer's file, line and field.
// load_suite calls it; the runner calls it again after --batch changes n.
void check_chain(const suite& su);

// Loads and checks a suite file. Output shapes are computed by each op's registered shape
// rule. Throws suite_error on the first problem.
suite load_suite(const std::string& path);

// The same from a suite file's text; `path` names it in messages (the fuzzer's entry point).
suite parse_suite(const std::string& path, const std::string& text);

// Resolves a suite name ("smoke") or path to a file: a path that exists is used as is;
// a name is looked up as <dir>/<name>.csv in $KCNN_SUITES_DIR, ./suites, the source tree's
// suites/ and the installed share/kcnn/suites.
std::string resolve_suite(const std::string& name_or_path);

// All suite names found by resolve_suite's search path (for messages).
std::vector<std::string> available_suites();

// Sets every layer's batch to n (--batch), recomputing output shapes and re-checking the
// layers and, for a network, the chain. Throws suite_error.
void set_batch(suite& su, int n);

// --fill: the batch at which layer `spec`'s activations (its inputs and its output, 4-byte
// elements, at the op's shapes) are at least min_bytes, never below the layer's own batch, and
// at most the largest that keeps them under max_bytes and at most max_batch (unless the layer's
// own batch is larger).
int fill_batch(const layer_spec& spec, double min_bytes, double max_bytes, int max_batch);

// The largest batch --fill chooses: a real network's (the batches of 32 to 64 GPUs are measured
// at), and a host reference that validates it in minutes, not hours.
inline constexpr int fill_max_batch = 64;

// Sizes a suite to a device (--fill): each layer's fill_batch with min_bytes 4x cache_bytes (the
// last-level cache, L2 on a GPU), max_bytes a quarter of memory_bytes and fill_max_batch; a
// network suite's layers take one batch (the largest they need, within the smallest cap) so that
// they still chain. Throws suite_error as set_batch does.
void fill_device(suite& su, double cache_bytes, double memory_bytes);

// The network suites among available_suites() (what `--suite all` runs), loaded.
std::vector<suite> all_network_suites();

}  // namespace kcnn::bench
