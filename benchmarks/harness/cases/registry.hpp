#pragma once
// The registry of ops (shape rules) and variants (cases). Op files under benchmarks/ops/ and
// studies under benchmarks/studies/ register themselves from static initialisers, so there is
// no central list to keep in sync. How to add a variant: benchmarks/README.md.
#include "cases/axes.hpp"
#include "cases/reference_cache.hpp"

#include <kcnn/layout.hpp>
#include <kcnn/validate.hpp>

#include <charconv>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kcnn::bench {

// One row of a suite file, after parsing and batch override.
struct layer_spec {
  std::string network, layer, op;
  int n = 0, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0, stride = 1, pad = 0, groups = 1;
  // Per-axis geometry as the row gives it (the optional columns), -1 where it gives none: as in
  // kcnn::conv2d_params, stride_h and stride_w then take stride, pad_h and pad_w take pad,
  // pad_h_end and pad_w_end take pad_h and pad_w. The effective values are the methods below.
  int stride_h = -1, stride_w = -1, pad_h = -1, pad_w = -1, pad_h_end = -1, pad_w_end = -1;
  int dilation_h = 1, dilation_w = 1;
  int row_stride() const { return stride_h < 0 ? stride : stride_h; }
  int col_stride() const { return stride_w < 0 ? stride : stride_w; }
  int pad_top() const { return pad_h < 0 ? pad : pad_h; }
  int pad_left() const { return pad_w < 0 ? pad : pad_w; }
  int pad_bottom() const { return pad_h_end < 0 ? pad_top() : pad_h_end; }
  int pad_right() const { return pad_w_end < 0 ? pad_left() : pad_w_end; }
  int repeat = 1;
  std::string rounding;                      // pooling output rounding (floor|ceil), if any
  std::map<std::string, std::string> params; // op-specific key=value parameters
  std::vector<std::string> inputs;           // producing layers (same network); empty: the network input
  std::string file;                          // where it came from, for messages
  int line = 0;
  dims4 out{};                               // output shape, computed by the op's shape rule
};

// The layer's identity for sharing a host reference: op, shape and op parameters (not the
// layout, space or variant, which do not change the logical result).
std::string reference_key(const layer_spec& s, std::uint64_t seed);
// The layer's geometry where it differs from a square stride, a symmetric pad and no dilation
// (what the stride and pad columns say): "" for most layers, else e.g. "s2x1_p0x3+1x3_d6x6"
// (stride h x w; begin pads h x w + end pads h x w; dilation h x w), each part only when needed.
std::string geometry_tag(const layer_spec& s);

// Parses the whole of `text` as a decimal integer: false for a fraction, an exponent, trailing
// characters or a value beyond T (suite columns, integer op parameters, command-line counts).
template <class T>
bool parse_int_exact(const std::string& text, T& v) {
  const auto res = std::from_chars(text.data(), text.data() + text.size(), v);
  return res.ec == std::errc() && res.ptr == text.data() + text.size();
}

// Reads an optional numeric op parameter from the suite's params column (throws
// std::invalid_argument "params: ..." when it does not parse).
double param_or(const layer_spec& s, const std::string& key, double fallback);
// Reads an optional integer op parameter: digits only (3.5, 1e300 or 7x are refused), within int.
int int_param_or(const layer_spec& s, const std::string& key, int fallback);

// Joins two parts of a row's note with "; ", skipping empty ones.
inline std::string join_notes(const std::string& a, const std::string& b) {
  return a.empty() ? b : b.empty() ? a : a + "; " + b;
}

// A problem with a named field of a layer (for "file:line: field 'x': ..." messages).
struct field_error {
  std::string field, message;
  explicit operator bool() const { return !message.empty(); }
};

// Turns a params check() message "field: what" into a field_error (empty message: no error).
field_error field_error_from(const std::string& e);
// n, c, h and w all > 0.
field_error check_positive_nchw(const layer_spec& s);

// Shape rule of an op: validates a spec and computes its output shape.
struct op_info {
  std::string name;
  std::function<field_error(const layer_spec&)> check;
  // The output shape (empty function: the input's, n x c x h x w).
  std::function<dims4(const layer_spec&)> output;
  // The shapes of its inputs, in order (empty function: one input of n x c x h x w).
  std::function<std::vector<dims4>(const layer_spec&)> inputs;
  // In a forward pass the op may overwrite its (first) input (activations, batch norm, LRN,
  // softmax, add: as Caffe's in-place layers and torchvision's inplace=True and += do).
  bool in_place_capable = false;
  // Its output size depends on the rounding of a window count (pooling: the suite's floor or ceil
  // applies to it when its row gives none).
  bool rounds_output = false;
  // It changes a tensor's layout and nothing else (network plans insert it between layers).
  bool transforms_layout = false;
  // The keys a suite row's `params` may give it; the loader refuses any other key, and a key given
  // twice, naming the file, line and field.
  std::vector<std::string> params;
  // The per-axis geometry columns a row of this op may fill (conv2d: all eight; pooling: stride and
  // pads); a value in another op's row is refused.
  std::vector<std::string> geometry;
  std::vector<dims4> input_shapes(const layer_spec& s) const {
    return inputs ? inputs(s) : std::vector<dims4>{dims4{s.n, s.c, s.h, s.w}};
  }
  dims4 output_shape(const layer_spec& s) const { return output ? output(s) : dims4{s.n, s.c, s.h, s.w}; }
};

class sampler;  // measure/sampler.hpp

// What the harness gives a case besides its layer: settings of this run (never globals).
struct case_settings {
  double device_l2_bytes = 50.0 * 1024 * 1024;  // for traffic models (host backends: the LLC)
  double uvm_cap_bytes = 4.0 * double(1 << 30);  // --uvm-cap: budget cap of the oversubscription study
  // The run's shared host references (nullptr: each case computes its own).
  std::shared_ptr<reference_cache> references;
  // The run's sampler, for the figures a case reports beside its row (a prefetch's time, say):
  // taken the way every figure of the run is (nullptr: not taken).
  const sampler* timer = nullptr;
};

// Timing-relevant facts a case reports about itself. bytes and flops hold from construction;
// workspace_bytes is exact after setup() (a library may size its workspace there) and an
// estimate before it.
struct case_cost {
  double bytes = 0;            // minimal bytes moved (inputs read once, outputs written once)
  double flops = 0;            // floating-point operations
  double workspace_bytes = 0;  // extra device memory the variant allocates (e.g. im2col)
  double passes = -1;          // full passes over the tensor's memory (reads + writes); < 0: not declared
  double predicted_dram_bytes = -1;  // the traffic model's DRAM bytes (conv2d, fc); < 0: no model
  double read_bytes = -1;  // what the operands it reads (inputs, weights, vectors, workspace) occupy; < 0: not known
};

// One benchmark case, instantiated for one layer spec. The harness drives its life cycle;
// a case never fences, times or prints.
class bench_case {
 public:
  virtual ~bench_case() = default;
  // Allocate operands in the case's memory space, fill inputs (seeded), poison outputs (NaN).
  virtual void setup(std::uint64_t seed) = 0;
  // Untimed work before every run, validation included (e.g. sending managed memory back to
  // the host so that the next run starts cold). The harness fences after it.
  virtual void before_run() {}
  // Launch the kernel(s) once. Asynchronous: the harness fences around it.
  virtual void run() = 0;
  // Extra measurements the case made itself outside the timed region (e.g. prefetch time),
  // for the row's note; empty if none.
  virtual std::string extra_note() const { return {}; }
  // Compare the output with the host reference (called after a fence), against tolerance().
  virtual comparison validate() = 0;
  // The largest relative L2 error accepted: the one fact validation, rows and tests read.
  virtual double tolerance() const = 0;
  // The output on the host in logical nchw order (for cross-checks between variants).
  virtual std::vector<double> output() = 0;
  // False when running twice changes the result (in-place ops applied to their own output).
  virtual bool idempotent() const { return true; }
  // True when runs may follow each other with nothing in between (idempotent, and before_run
  // has nothing to redo): the harness may then time several launches per sample.
  virtual bool runs_back_to_back() const { return false; }
  // True when the operands live in the device's own memory from run to run (not managed pages
  // sent to the host before each run, not host memory read over the link): only then can a warm
  // working set stay in its last-level cache (fits_in_cache).
  virtual bool operands_in_device_memory() const { return false; }
  // False when a run waits for the host or works on streams other than the execution space's (a
  // synchronous deep_copy, side streams): a device timer, whose events are on that one stream,
  // then times it with the host clock.
  virtual bool timed_on_one_stream() const { return true; }
  virtual case_cost cost() const = 0;

  // Network mode (--network, the arena forward pass). A case that can be chained runs on
  // caller-owned device buffers: bind() points its inputs and output there (the case's layout,
  // the default memory space; output == inputs[0] for a variant that works in place), and
  // reference_on() computes the op on the host, in double, on logical nchw inputs with the
  // case's own weights. setup() must have run.
  virtual bool bindable() const { return false; }
  virtual void bind(const std::vector<float*>& /*inputs*/, float* /*output*/) {}
  virtual std::vector<double> reference_on(const std::vector<std::vector<double>>& /*inputs*/) { return {}; }
  // The kernel gives the right result when its output is its input (elementwise or staged).
  virtual bool in_place_safe() const { return false; }
};

// A registered variant for one (op, layout, memory space, access pattern, variant, tuning).
struct variant_info {
  std::string op;
  layout_axis layout = layout_axis::nchw;      // of the inputs (the key's layout)
  layout_axis out_layout = layout_axis::nchw;  // of the output: differs for transforms only
  space_axis space = space_axis::global;
  pattern_axis pattern = pattern_axis::coalesced;
  const variant_kind* variant = nullptr;
  bench::tuning tuning;
  // The op's baseline in this layout: the reference point of quick runs and uniform plans.
  bool baseline = false;
  // Empty if the variant can run this spec, otherwise why not (shown by --list).
  std::function<std::string(const layer_spec&)> unsupported;
  std::function<std::unique_ptr<bench_case>(const layer_spec&, const case_settings&)> make;

  const char* variant_name() const { return variant->name; }
  bench::origin origin() const { return variant->origin; }
};

// A fixed cost that the rows of some variants include in every launch, measured once per run
// and recorded in the context's timing as <name>_us (e.g. conv2d's constant-memory launch, which
// uploads its weights with every launch). Registered by the op that has it.
struct launch_cost {
  std::string name;  // the context key, without _us
  std::string doc;
  // Measures it (on the default execution space), every sample through the run's sampler.
  std::function<double(const sampler&)> seconds;
  space_axis space;                 // the memory space whose rows pay it per launch (their note says so)
};

class registry {
 public:
  static registry& instance();
  void add_op(op_info op);
  void add_variant(variant_info v);
  // A combination that does not exist on this build at all, and why (shown by --list).
  void add_unavailable(std::string what, std::string why);
  void add_launch_cost(launch_cost c) { launch_costs_.push_back(std::move(c)); }
  // Fault injection (the harness's own tests): deliberately broken variants are kept aside and
  // registered only when enable_faults() is called, which only kcnn-bench-faults does.
  void add_fault_registration(std::function<void(registry&)> f) { faults_.push_back(std::move(f)); }
  void enable_faults() {
    auto f = std::move(faults_);
    faults_.clear();
    for (auto& g : f) g(*this);
  }

  const op_info* find_op(const std::string& name) const;
  // The op that transforms layouts (nullptr when none is registered).
  const op_info* layout_transform_op() const;
  const std::vector<op_info>& ops() const { return ops_; }
  const std::vector<variant_info>& variants() const { return variants_; }
  // What this build lacks and why: the notes added, then what follows from the registrations
  // (e.g. the ops with no constant-memory variant).
  std::vector<std::pair<std::string, std::string>> unavailable() const;
  const std::vector<launch_cost>& launch_costs() const { return launch_costs_; }
  // The op's baseline in a layout (nullptr if the op has none there).
  const variant_info* baseline(const std::string& op, layout_axis layout) const;

 private:
  std::vector<op_info> ops_;
  std::vector<variant_info> variants_;
  std::vector<std::pair<std::string, std::string>> unavailable_;
  std::vector<launch_cost> launch_costs_;
  std::vector<std::function<void(registry&)>> faults_;
};

// Runs a registration function during static initialisation.
struct registrar {
  explicit registrar(const std::function<void(registry&)>& f) { f(registry::instance()); }
};

// The key of a case: op/layout/space/pattern/variant/<network>.<layer>/n<batch>[/tuning].
std::string case_key(const variant_info& v, const layer_spec& s);

// A case a run will measure: a registered variant on one layer, and its key.
struct planned_case {
  const variant_info* variant;
  layer_spec spec;
  std::string key;
};

}  // namespace kcnn::bench
