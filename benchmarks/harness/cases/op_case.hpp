#pragma once
// The one case contract of every op (tensor ops, conv2d, fc, peers, faults): a descriptor K
// states, once, the layer's shapes, its cost, its tolerance, its reference, what it cannot run
// and its launch; op_case does the rest, through op_case_operands, which no descriptor changes
// (allocation in the case's memory space, seeded fill, NaN poison, the shared host reference,
// validation, binding for forward passes), and register_variant files it under typed axes. What
// K must and may provide is checked at compile time (check_descriptor below); descriptor_defaults
// supplies every optional member.
//
// Required members of K:
//   using params = ...;                                   // the kernel library's params
//   static params from_spec(const layer_spec&);
//   static std::vector<dims4> inputs(const params&);      // activations, in the case's layout
//   static dims4 output(const params&);
//   static double tolerance(const params&);               // relative L2 error accepted
//   static double bytes(const params&), flops(const params&);
//   template <class Exec, class Ops, class Out> void run(const Exec&, const Ops&, const Out&, const params&) const;
//   template <class HostOps> static std::vector<double> reference(const params&, const HostOps&);
// Ops (device) and HostOps (host mirrors) are operands<...>: ins, weights, vecs.
#include "cases/memory_spaces.hpp"
#include "cases/reference_cache.hpp"
#include "cases/registry.hpp"
#include "device/host_stores.hpp"

#include <kcnn/api.hpp>
#include <kcnn/fill.hpp>
#include <kcnn/tensor.hpp>
#include <kcnn/tuning.hpp>
#include <kcnn/validate.hpp>

#include <Kokkos_Core.hpp>

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kcnn::bench {

// The operands of a case: activations (in the case's input layout), 4-D weights (same layout)
// and rank-1 vectors (bias, per-channel statistics).
template <class Tensor, class Vector>
struct operands {
  std::vector<Tensor> ins, weights;
  std::vector<Vector> vecs;
};

// A 4-D weight tensor's shape and fill (values from seed + seed_offset, times scale).
struct weight_spec {
  dims4 dims;
  std::uint64_t seed_offset = 1;
  float scale = 1.0f;
};
// A rank-1 operand's length and fill (then passed through K::vector_value).
struct vector_spec {
  int length = 0;
  std::uint64_t seed_offset = 100;
  float scale = 1.0f;
};

// Every optional member of a descriptor, with its default.
struct descriptor_defaults {
  // Set when this descriptor fills and computes its reference exactly as its op does (by
  // convention to the descriptor that defines them, as documentation): it then shares the op's one
  // cached host reference with every variant of the layer; the cache key is the op's name, so an
  // op has one reference. void: its own fill or reference, shared only by the registrations of
  // its op, variant and tuning (its layouts and memory spaces). A variant, peer or fault derived
  // from an op's descriptor inherits it.
  using reference_family = void;
  // Correct when the caller passes the input as the output (network mode's in-place layers),
  // for every params (false) or for those in_place_safe_for accepts.
  static constexpr bool in_place_safe = false;
  template <class Params>
  static bool in_place_safe_for(const Params&) { return true; }
  template <class Params>
  static std::vector<weight_spec> weights(const Params&) { return {}; }
  template <class Params>
  static std::vector<vector_spec> vectors(const Params&) { return {}; }
  static float vector_value(int /*vector*/, float raw) { return raw; }
  // Why this layout cannot run the layer (empty: it can).
  template <class Layout, class Params>
  static std::string unsupported(const Params&) { return {}; }
  // Once after the fill, untimed (workspaces, weight packing, library handles): for a kcnn
  // variant, kcnn::prepare on the variant object the descriptor holds.
  template <class Exec, class Params, class Ops, class Out>
  void prepare(const Exec&, const Params&, const Ops&, const Out&) {}
  template <class Params>
  double workspace_bytes(const Params&) const { return 0; }
  template <class Params>
  double passes(const Params&) const { return -1; }
  // DRAM bytes predicted by a traffic model (< 0: none).
  template <class Layout, class Params>
  double predicted_dram_bytes(const Params&, const case_settings&) const { return -1; }
  // What the row's note should say about the variant (e.g. a library's thread count).
  std::string note() const { return {}; }
};

// A descriptor that chooses among a library's algorithms by timing them in prepare (a peer at its
// best) declares `const sampler* run_sampler = nullptr;`: the case sets it to the run's sampler
// before prepare, so those timings are taken the way every figure of the run is (nullptr: none).
template <class K, class = void>
struct times_in_prepare : std::false_type {};
template <class K>
struct times_in_prepare<K, std::void_t<decltype(std::declval<K&>().run_sampler)>> : std::true_type {};

// The kcnn library variant a descriptor holds (this->v, prepared once, untimed, by the
// descriptor's prepare with kcnn::prepare; stateless variants ignore it) and its workspace. A
// descriptor deriving from this and from descriptor_defaults says `using
// holds_variant<V>::workspace_bytes;` (both define it).
// A variant with host store options (kcnn::host_store_options) gets this run's
// (device/host_stores.hpp).
template <class V, class = void>
struct has_host_stores : std::false_type {};
template <class V>
struct has_host_stores<V, std::void_t<decltype(std::declval<V&>().host_stores)>> : std::true_type {};
template <class Variant>
struct holds_variant {
  using variant_type = Variant;
  Variant v = with_run_host_stores(Variant{});
  static Variant with_run_host_stores(Variant v) {
    if constexpr (has_host_stores<Variant>::value) v.host_stores = run_host_stores();
    return v;
  }
  template <class Params>
  double workspace_bytes(const Params&) const { return kcnn::workspace_bytes(v); }
};

// The opening every descriptor of a kcnn library variant shares: the variant it holds, how the
// readonly space swaps it (with_variant) and the op's reference it shares (the descriptor of the
// op's Reference variant). Self<W> is the descriptor running variant W. The derived descriptor
// adds its params, the layer's facts and the op's call (run, and prepare when the variant may be
// stateful). conv2d and fc hold their variant the same way (conv_descriptor.hpp's conv_call).
template <template <class> class Self, class Variant, class Reference>
struct library_descriptor : descriptor_defaults, holds_variant<Variant> {
  using holds_variant<Variant>::workspace_bytes;
  template <class W>
  using with_variant = Self<W>;
  using reference_family = Self<Reference>;
};

namespace detail {
template <class K, class = void>
struct has_params : std::false_type {};
template <class K>
struct has_params<K, std::void_t<typename K::params>> : std::true_type {};

template <class K, class = void>
struct has_shape_facts : std::false_type {};
template <class K>
struct has_shape_facts<
    K, std::void_t<decltype(K::from_spec(std::declval<const layer_spec&>())),
                   decltype(K::inputs(std::declval<const typename K::params&>())),
                   decltype(K::output(std::declval<const typename K::params&>())),
                   decltype(K::tolerance(std::declval<const typename K::params&>())),
                   decltype(K::bytes(std::declval<const typename K::params&>())),
                   decltype(K::flops(std::declval<const typename K::params&>()))>>
    : std::bool_constant<std::is_same_v<decltype(K::from_spec(std::declval<const layer_spec&>())), typename K::params> &&
                         std::is_same_v<decltype(K::inputs(std::declval<const typename K::params&>())), std::vector<dims4>> &&
                         std::is_same_v<decltype(K::output(std::declval<const typename K::params&>())), dims4>> {};

template <class K, class Ops, class Out, class = void>
struct has_run : std::false_type {};
template <class K, class Ops, class Out>
struct has_run<K, Ops, Out,
               std::void_t<decltype(std::declval<const K&>().run(std::declval<const Kokkos::DefaultExecutionSpace&>(),
                                                                 std::declval<const Ops&>(), std::declval<const Out&>(),
                                                                 std::declval<const typename K::params&>()))>>
    : std::true_type {};

template <class K, class HostOps, class = void>
struct has_reference : std::false_type {};
template <class K, class HostOps>
struct has_reference<K, HostOps,
                     std::void_t<decltype(K::reference(std::declval<const typename K::params&>(),
                                                       std::declval<const HostOps&>()))>>
    : std::is_same<decltype(K::reference(std::declval<const typename K::params&>(), std::declval<const HostOps&>())),
                   std::vector<double>> {};
}  // namespace detail

namespace detail {
// K runs the library's variant::read_only<V>.
template <class K, class = void>
struct reads_only : std::false_type {};
template <class K>
struct reads_only<K, std::void_t<typename K::variant_type>> : kcnn::detail::is_read_only<typename K::variant_type> {};
}  // namespace detail

// The descriptor's requirements, as readable compile errors.
template <class K, class Ops, class HostOps, class Out>
constexpr bool check_descriptor() {
  static_assert(std::is_base_of_v<descriptor_defaults, K>,
                "a descriptor derives from descriptor_defaults (directly or through another descriptor)");
  static_assert(detail::has_params<K>::value, "a descriptor names its kernel's params: using params = ...;");
  if constexpr (detail::has_params<K>::value) {
    static_assert(detail::has_shape_facts<K>::value,
                  "a descriptor states its shapes and cost: static params from_spec(const layer_spec&); "
                  "static std::vector<dims4> inputs(const params&); static dims4 output(const params&); "
                  "static double tolerance(const params&), bytes(const params&), flops(const params&);");
    static_assert(detail::has_run<K, Ops, Out>::value,
                  "a descriptor launches its kernel: void run(const Exec&, const Ops&, const Out&, const params&) const");
    static_assert(detail::has_reference<K, HostOps>::value,
                  "a descriptor computes its host reference: static std::vector<double> reference(const params&, "
                  "const HostOps&) (logical nchw order, double)");
  }
  return true;
}

// The bytes of a case's operands as it allocates them (every kcnn operand is fp32).
inline double operand_bytes(const std::vector<dims4>& inputs, const std::vector<weight_spec>& weights,
                            const std::vector<vector_spec>& vectors) {
  double elements = 0;
  for (const dims4& d : inputs) elements += double(d.size());
  for (const weight_spec& w : weights) elements += double(w.dims.size());
  for (const vector_spec& v : vectors) elements += double(v.length);
  return elements * sizeof(float);
}

// Everything a case does that its descriptor does not change: the operands' allocation, fill and
// poison, host mirrors, comparison with the reference, binding, the memory space's policy. One
// instantiation per layouts and memory space, shared by every descriptor registered with them (a
// translation unit registers tens of descriptors in a few layouts: compiling this once per
// descriptor was a large part of the harness's build time).
template <class InL, class OutL, class Space>
class op_case_operands : public bench_case {
 public:
  using exec = Kokkos::DefaultExecutionSpace;
  using mem = typename Space::memory_space;
  using in_t = tensor4<float, InL, mem>;
  using out_t = tensor4<float, OutL, mem>;
  using vec_t = Kokkos::View<float*, mem>;
  using ops_t = operands<in_t, vec_t>;
  using host_in_t = decltype(create_mirror_view(std::declval<in_t>()));
  using host_vec_t = typename vec_t::HostMirror;
  using host_ops_t = operands<host_in_t, host_vec_t>;

  void before_run() override { space_.before_run(buffers(), settings_.timer); }

  std::vector<double> output() override {
    auto out_h = create_mirror_view(out_);
    deep_copy(out_h, out_);
    return to_logical(out_h);
  }

  bool idempotent() const override { return !in_place_; }
  bool runs_back_to_back() const override { return !in_place_ && Space::runs_back_to_back; }
  bool operands_in_device_memory() const override { return Space::device_memory; }
  bool bindable() const override {
    return std::is_same_v<Space, space_global> && !InL::runtime_strided && !OutL::runtime_strided;
  }

 protected:
  op_case_operands(const layer_spec& s, const case_settings& st, bool in_place, std::array<axis, 4> order,
                   std::string reference_scope)
      : spec_(s), settings_(st), in_place_(in_place), order_(order), reference_scope_(std::move(reference_scope)) {
    if (in_place_ && !std::is_same_v<InL, OutL>) throw std::logic_error("in place needs one layout");
  }

  // The operands of seed `seed`: inputs, weights and vectors filled (a vector's values passed
  // through vector_value), the output poisoned, or the input kept aside when in place.
  void allocate(std::uint64_t seed, const std::vector<dims4>& in_dims, const std::vector<weight_spec>& weights,
                const std::vector<vector_spec>& vectors, float (*vector_value)(int, float), const dims4& out_dims) {
    seed_ = seed;
    ops_ = {};
    for (std::size_t i = 0; i < in_dims.size(); ++i) {
      ops_.ins.push_back(make_in("in" + std::to_string(i), in_dims[i]));
      fill_random(ops_.ins.back(), seed + 17 * i);
    }
    for (const auto& w : weights) {
      ops_.weights.push_back(make_in("weights", w.dims));
      fill_random(ops_.weights.back(), seed + w.seed_offset, w.scale);
    }
    for (std::size_t j = 0; j < vectors.size(); ++j) {
      vec_t v("vec" + std::to_string(j), vectors[j].length);
      auto h = Kokkos::create_mirror_view(v);
      for (int i = 0; i < vectors[j].length; ++i)
        h(i) = vector_value(int(j), fill_value(seed + vectors[j].seed_offset, i, vectors[j].scale));
      Kokkos::deep_copy(v, h);
      ops_.vecs.push_back(v);
    }
    if (in_place_) {
      if constexpr (std::is_same_v<InL, OutL>) out_ = ops_.ins[0];
      // The reference needs the input as it was before the kernel overwrote it: a real copy
      // (create_mirror always allocates, create_mirror_view may alias host data).
      saved_in_ = host_in_t(Kokkos::create_mirror(ops_.ins[0].view()), ops_.ins[0].dims(), order_);
      Kokkos::deep_copy(saved_in_.view(), ops_.ins[0].view());
    } else {
      out_ = make_out("out", out_dims);
      poison(out_);
    }
  }

  // After the descriptor's prepare: a library's search in prepare (cuDNN's, cuBLASLt's
  // candidates) computes into the output, poisoned again, so the validated run is the one that
  // must write it; then the memory space's own preparation.
  void finish_setup() {
    if (!in_place_) poison(out_);
    Kokkos::fence();
    space_.prepare(buffers());
  }

  // The output against the layer's reference, computed by `compute` or taken from the run's
  // cache. Every variant and layout of a layer sees the same logical operands (the fill is
  // layout-independent), so the reference is computed once per layer and seed.
  comparison compare_output(const dims4& out_dims, double tolerance,
                            const std::function<std::vector<double>()>& compute) {
    const std::string key = reference_key(spec_, seed_) + "/" + reference_scope_;
    const auto ref = settings_.references ? settings_.references->get(key, compute)
                                          : std::make_shared<const std::vector<double>>(compute());
    auto out_h = create_mirror_view(out_);
    deep_copy(out_h, out_);
    return compare(out_h, out_dims, *ref, tolerance);
  }

  // The inputs as they were before the run (the saved input of an in-place case).
  host_ops_t operands_before_run() const { return host_operands(in_place_ ? &saved_in_ : nullptr); }

  // Host operands whose inputs hold `logical` (logical nchw order).
  host_ops_t operands_holding(const std::vector<std::vector<double>>& logical) const {
    auto h = host_operands(nullptr);
    for (std::size_t i = 0; i < h.ins.size(); ++i) {
      h.ins[i] = host_in_t(Kokkos::create_mirror(ops_.ins[i].view()), h.ins[i].dims(), order_);  // a new allocation
      from_logical(h.ins[i], logical.at(i));
    }
    return h;
  }

  void bind_operands(const std::vector<float*>& ins, float* out, const std::vector<dims4>& in_dims,
                     const dims4& out_dims) {
    if constexpr (!InL::runtime_strided && !OutL::runtime_strided) {
      if (ins.size() != in_dims.size()) throw std::invalid_argument("bind: wrong number of inputs");
      for (std::size_t i = 0; i < in_dims.size(); ++i)
        ops_.ins[i] = in_t(typename in_t::view_type(ins[i], InL::make(in_dims[i])), in_dims[i]);
      if (in_place_) {
        if (out != ins[0]) throw std::invalid_argument("bind: an in-place variant writes over its input");
        if constexpr (std::is_same_v<InL, OutL>) out_ = ops_.ins[0];
      } else {
        out_ = out_t(typename out_t::view_type(out, OutL::make(out_dims)), out_dims);
      }
    } else {
      (void)ins, (void)out, (void)in_dims, (void)out_dims;
    }
  }

  layer_spec spec_;
  case_settings settings_;
  bool in_place_;
  std::array<axis, 4> order_;
  std::string reference_scope_;
  std::uint64_t seed_ = 0;
  Space space_;
  ops_t ops_;
  out_t out_;
  host_in_t saved_in_;

 private:
  in_t make_in(const std::string& name, const dims4& d) const {
    if constexpr (InL::runtime_strided) return in_t(spec_.op + "." + name, d, order_);
    else return in_t(spec_.op + "." + name, d);
  }
  out_t make_out(const std::string& name, const dims4& d) const {
    if constexpr (OutL::runtime_strided) return out_t(spec_.op + "." + name, d, order_);
    else return out_t(spec_.op + "." + name, d);
  }

  // Host copies of the operands; the first input replaced by `saved_input` when given.
  host_ops_t host_operands(const host_in_t* saved_input) const {
    host_ops_t h;
    for (std::size_t i = 0; i < ops_.ins.size(); ++i) {
      if (i == 0 && saved_input) {
        h.ins.push_back(*saved_input);
        continue;
      }
      h.ins.push_back(create_mirror_view(ops_.ins[i]));
      deep_copy(h.ins.back(), ops_.ins[i]);
    }
    for (const auto& w : ops_.weights) {
      h.weights.push_back(create_mirror_view(w));
      deep_copy(h.weights.back(), w);
    }
    for (const auto& v : ops_.vecs) {
      h.vecs.push_back(Kokkos::create_mirror_view(v));
      Kokkos::deep_copy(h.vecs.back(), v);
    }
    return h;
  }

  std::vector<buffer> buffers() const {
    std::vector<buffer> b;
    for (const auto& t : ops_.ins) b.push_back({t.view().data(), t.bytes(), false});
    for (const auto& t : ops_.weights) b.push_back({t.view().data(), t.bytes(), true});
    for (const auto& v : ops_.vecs) b.push_back({v.data(), v.span() * sizeof(float), true});
    if (!in_place_) b.push_back({out_.view().data(), out_.bytes(), false});
    return b;
  }
};

// A descriptor's case: what K states (shapes, cost, tolerance, reference, launch) around the
// operands its layouts and memory space share.
template <class InL, class OutL, class K, class Space = space_global>
class op_case : public op_case_operands<InL, OutL, Space> {
  using base = op_case_operands<InL, OutL, Space>;

 public:
  using typename base::exec;
  using typename base::host_ops_t;
  using typename base::ops_t;
  using typename base::out_t;
  using params = typename K::params;
  static_assert(check_descriptor<K, ops_t, host_ops_t, out_t>());

  // reference_scope: what, besides the layer and the seed, names the host reference this case
  // shares (register_case: the op when K declares a reference family, else the registration).
  op_case(const layer_spec& s, const case_settings& st, bool in_place, std::array<axis, 4> order,
          std::string reference_scope)
      : base(s, st, in_place, order, std::move(reference_scope)), p_(K::from_spec(s)) {}

  void setup(std::uint64_t seed) override {
    this->allocate(seed, K::inputs(p_), K::weights(p_), K::vectors(p_), &K::vector_value, K::output(p_));
    if constexpr (times_in_prepare<K>::value) k_.run_sampler = this->settings_.timer;
    k_.prepare(exec(), p_, this->ops_, this->out_);
    this->finish_setup();
  }

  void run() override { k_.run(exec(), this->ops_, this->out_, p_); }
  std::string extra_note() const override { return join_notes(this->space_.note(), k_.note()); }
  double tolerance() const override { return K::tolerance(p_); }

  comparison validate() override {
    return this->compare_output(K::output(p_), tolerance(),
                                [&] { return K::reference(p_, this->operands_before_run()); });
  }

  void bind(const std::vector<float*>& ins, float* out) override {
    this->bind_operands(ins, out, K::inputs(p_), K::output(p_));
  }
  std::vector<double> reference_on(const std::vector<std::vector<double>>& logical) override {
    return K::reference(p_, this->operands_holding(logical));
  }
  // Read-only loads need an input distinct from the output (the library refuses the alias).
  bool in_place_safe() const override {
    return this->in_place_ || (K::in_place_safe && K::in_place_safe_for(p_) && !detail::reads_only<K>::value);
  }

  case_cost cost() const override {
    case_cost c{K::bytes(p_), K::flops(p_), k_.workspace_bytes(p_), k_.passes(p_)};
    c.predicted_dram_bytes = k_.template predicted_dram_bytes<InL>(p_, this->settings_);
    // A workspace may be written by one launch and read back by the next: counted as read.
    c.read_bytes = operand_bytes(K::inputs(p_), K::weights(p_), K::vectors(p_)) + c.workspace_bytes;
    return c;
  }

 private:
  params p_;
  K k_;
};

// A transform's pair of layouts (input From, output To) in a register_variant layout list.
template <class From, class To>
struct layout_pair {};

namespace detail {
template <class L>
struct layout_io {
  using in = L;
  using out = L;
};
template <class From, class To>
struct layout_io<layout_pair<From, To>> {
  using in = From;
  using out = To;
};

template <class Layout>
constexpr layout_axis layout_axis_of() {
  if constexpr (std::is_same_v<Layout, layout::nchw>) return layout_axis::nchw;
  else if constexpr (std::is_same_v<Layout, layout::nhwc>) return layout_axis::nhwc;
  else if constexpr (std::is_same_v<Layout, layout::chwn>) return layout_axis::chwn;
  else return layout_axis::strided;
}
}  // namespace detail

// How a descriptor is filed: the op, the axes other than the layout, and whether it is the op's
// baseline (in each layout it is registered in).
struct variant_decl {
  std::string op;
  space_axis space = space_axis::global;
  pattern_axis pattern = pattern_axis::coalesced;
  const variant_kind* variant = nullptr;
  bench::tuning tuning = {};
  bool baseline = false;
  // layout::strided only: the physical order the runtime strides hold.
  std::array<axis, 4> strided_order = {axis::n, axis::c, axis::h, axis::w};
};

// Registers one descriptor in one layout (or layout_pair) and one memory-space policy.
template <class K, class L, class Space = space_global>
void register_case(registry& r, const variant_decl& d, space_axis space, bool baseline) {
  using InL = typename detail::layout_io<L>::in;
  using OutL = typename detail::layout_io<L>::out;
  const bool in_place = d.variant->in_place;
  if (in_place && !std::is_same_v<InL, OutL>)
    throw std::logic_error(d.op + "/" + d.variant->name + ": an in-place variant needs one layout for input and output");
  std::array<axis, 4> order = d.strided_order;
  if constexpr (!InL::runtime_strided) order = InL::order;
  variant_info v;
  v.op = d.op;
  v.layout = detail::layout_axis_of<InL>();
  v.out_layout = detail::layout_axis_of<OutL>();
  v.space = space;
  v.pattern = d.pattern;
  v.variant = d.variant;
  v.tuning = d.tuning;
  v.baseline = baseline;
  v.unsupported = [](const layer_spec& s) { return K::template unsupported<InL>(K::from_spec(s)); };
  // A descriptor with a reference family computes the op's one reference (shared by every
  // variant of the layer); one without computes its own, shared by the registrations of its op,
  // variant and tuning only.
  const std::string scope = std::is_void_v<typename K::reference_family>
                                ? "own/" + d.op + "/" + d.variant->name + "/" + d.tuning.name
                                : "op/" + d.op;
  v.make = [in_place, order, scope](const layer_spec& s, const case_settings& st) -> std::unique_ptr<bench_case> {
    return std::make_unique<op_case<InL, OutL, K, Space>>(s, st, in_place, order, scope);
  };
  r.add_variant(std::move(v));
}

// Registers descriptor K as the variant `d` in each of the given layouts (tags or layout_pairs).
template <class K, class... Layouts>
void register_variant(registry& r, const variant_decl& d) {
  (register_case<K, Layouts>(r, d, d.space, d.baseline), ...);
}

// The same, plus the memory-space axis of the descriptor: readonly (unless in place) and, on CUDA
// builds, managed memory (cold, prefetched, advised) and host-pinned memory. The readonly space
// is the library's kcnn::variant::read_only<V> (inputs, weights and vectors as const
// RandomAccess handles), so K names its variant (variant_type) and how to swap it (with_variant).
struct memory_space_axis_tag {};
inline constexpr memory_space_axis_tag with_memory_spaces{};
template <class K, class... Layouts>
void register_variant(registry& r, const variant_decl& d, memory_space_axis_tag) {
  register_variant<K, Layouts...>(r, d);
  using read_only_k = typename K::template with_variant<kcnn::variant::read_only<typename K::variant_type>>;
  if (!d.variant->in_place) (register_case<read_only_k, Layouts>(r, d, space_axis::readonly, false), ...);
  for_each_cuda_space([&](auto space) {
    using S = decltype(space);
    (register_case<K, Layouts, S>(r, d, S::space, false), ...);
  });
}

// The portable source of a host-tunable variant (kcnn/tuning.hpp) as a tuning of its own, on a
// build whose default execution space is a host's and that has the host tunings: the key of `d`
// with tuning `portable`, K's variant wrapped in kcnn::variant::portable (no baseline). Beside the untuned key (the host tuning there), it says what portability costs a
// CPU. Nothing on other builds: there the untuned key is the portable source.
inline const bench::tuning portable_tuning{
    "portable", "the variant's portable Kokkos source (the GPU's code, kcnn::variant::portable) on this host, beside "
                "the untuned key's host tuning (kcnn/host/)"};
template <class K, class... Layouts>
void register_portable_tuning(registry& r, variant_decl d) {
  using V = typename K::variant_type;
  if constexpr (kcnn::detail::is_host_tunable<V>::value && kcnn::host_tuning_built &&
                kcnn::host_backend<Kokkos::DefaultExecutionSpace>) {
    d.tuning = d.tuning.empty() ? portable_tuning : bench::tuning{d.tuning.name + ".portable", d.tuning.doc + "; " + portable_tuning.doc};
    d.baseline = false;
    register_variant<typename K::template with_variant<kcnn::variant::portable<V>>, Layouts...>(r, d);
  } else {
    (void)r, (void)d;
  }
}

// Registers a case that is not a layer descriptor (the studies under benchmarks/studies/), in
// layout nchw: make(spec, settings) builds it, unsupported(spec) says why it cannot run.
inline void register_study(registry& r, const variant_decl& d,
                           std::function<std::string(const layer_spec&)> unsupported,
                           std::function<std::unique_ptr<bench_case>(const layer_spec&, const case_settings&)> make) {
  variant_info v;
  v.op = d.op;
  v.layout = v.out_layout = layout_axis::nchw;
  v.space = d.space;
  v.pattern = d.pattern;
  v.variant = d.variant;
  v.tuning = d.tuning;
  v.unsupported = std::move(unsupported);
  v.make = std::move(make);
  r.add_variant(std::move(v));
}

// Registers an op's shape rule.
inline void register_op(registry& r, op_info op) { r.add_op(std::move(op)); }

}  // namespace kcnn::bench
