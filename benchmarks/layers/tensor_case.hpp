#pragma once
// The benchmark case shared by the memory-bound layers (pooling, activations, LRN, batch norm,
// softmax, add, concat, layout transforms): allocation, seeded fill, NaN poison, reference and
// validation around a kernel descriptor K that supplies the shapes, the launch and the
// reference. A layer file defines its descriptors and registers them with register_layer.
#include "../harness/memory_spaces.hpp"
#include "../harness/registry.hpp"

#include <kcnn/fill.hpp>
#include <kcnn/tensor.hpp>
#include <kcnn/validate.hpp>

#include <Kokkos_Core.hpp>

#include <memory>
#include <string>
#include <vector>

namespace kcnn::bench {

// Defaults a descriptor may override (see tensor_case for the full list of what it provides).
struct layer_kernel_base {
  static constexpr bool in_place = false;  // output aliases input 0
  // Correct when the caller passes the input as the output (network mode's in-place layers).
  static constexpr bool in_place_safe = false;
  template <class Params>
  static std::vector<int> vectors(const Params&) { return {}; }  // per-channel vector lengths
  static float vector_value(int /*vector*/, float raw) { return raw; }
  template <class Layout, class Params>
  static std::string unsupported(const Params&) { return {}; }
  // Once after the fill, untimed (workspaces, host-side packing of the per-channel vectors).
  template <class Exec, class Params, class Vecs>
  void prepare(const Exec&, const Params&, const Vecs&) {}
  template <class Params>
  double workspace_bytes(const Params&) const { return 0; }
  template <class Params>
  double passes(const Params&) const { return -1; }
  // What the row's note should say about the variant (e.g. a library's thread count).
  std::string note() const { return {}; }
};


// K provides: using params; static params from_spec(spec); static std::vector<dims4>
// inputs(p); static dims4 output(p); static double tolerance(p); static double bytes(p),
// flops(p); void run(exec, ins, vecs, out, p) const; static std::vector<double>
// reference(p, host_ins, host_vecs).
template <class InL, class OutL, class K, class Space = space_global>
class tensor_case : public bench_case {
 public:
  using exec = Kokkos::DefaultExecutionSpace;
  using mem = typename Space::memory_space;
  using in_t = tensor4<float, InL, mem>;
  using out_t = tensor4<float, OutL, mem>;
  using vec_t = Kokkos::View<float*, mem>;
  using params = typename K::params;

  explicit tensor_case(const layer_spec& s) : p_(K::from_spec(s)) {}

  void setup(std::uint64_t seed) override {
    const auto in_dims = K::inputs(p_);
    ins_.clear();
    for (std::size_t i = 0; i < in_dims.size(); ++i) {
      ins_.emplace_back("in" + std::to_string(i), in_dims[i]);
      fill_random(ins_.back(), seed + 17 * i);
    }
    const auto lens = K::vectors(p_);
    vecs_.clear();
    for (std::size_t j = 0; j < lens.size(); ++j) {
      vec_t v("vec" + std::to_string(j), lens[j]);
      auto h = Kokkos::create_mirror_view(v);
      for (int i = 0; i < lens[j]; ++i) h(i) = K::vector_value(int(j), fill_value(seed + 100 + j, i));
      Kokkos::deep_copy(v, h);
      vecs_.push_back(v);
    }
    if constexpr (K::in_place) {
      static_assert(std::is_same_v<InL, OutL>, "in-place needs one layout");
      out_ = ins_[0];
      // The reference needs the input as it was before the kernel overwrote it: a real
      // copy (create_mirror always allocates, create_mirror_view may alias host data).
      auto copy = Kokkos::create_mirror(ins_[0].view());
      Kokkos::deep_copy(copy, ins_[0].view());
      saved_in_ = host_in_t(copy, ins_[0].dims());
    } else {
      out_ = out_t("out", K::output(p_));
      poison(out_);
    }
    k_.prepare(exec(), p_, vecs_);
    Kokkos::fence();
    space_.prepare(buffers());
  }

  void before_run() override { space_.before_run(buffers()); }
  void run() override { k_.run(exec(), ins_, vecs_, out_, p_); }
  std::string extra_note() const override { return join_notes(space_.note(), k_.note()); }

  comparison validate() override {
    std::vector<host_in_t> hins;
    if constexpr (K::in_place) {
      hins.push_back(saved_in_);
    } else {
      for (const auto& t : ins_) {
        hins.push_back(create_mirror_view(t));
        deep_copy(hins.back(), t);
      }
    }
    std::vector<typename vec_t::HostMirror> hvecs;
    for (const auto& v : vecs_) {
      hvecs.push_back(Kokkos::create_mirror_view(v));
      Kokkos::deep_copy(hvecs.back(), v);
    }
    const auto ref = K::reference(p_, hins, hvecs);
    auto out_h = create_mirror_view(out_);
    deep_copy(out_h, out_);
    return compare(out_h, K::output(p_), ref, K::tolerance(p_));
  }

  std::vector<double> output() override {
    auto out_h = create_mirror_view(out_);
    deep_copy(out_h, out_);
    return to_logical(out_h);
  }

  bool idempotent() const override { return !K::in_place; }

  bool bindable() const override {
    return std::is_same_v<Space, space_global> && !InL::runtime_strided && !OutL::runtime_strided;
  }
  void bind(const std::vector<float*>& ins, float* out) override {
    const auto in_dims = K::inputs(p_);
    if (ins.size() != in_dims.size()) throw std::invalid_argument("bind: wrong number of inputs");
    for (std::size_t i = 0; i < in_dims.size(); ++i)
      ins_[i] = in_t(typename in_t::view_type(ins[i], InL::make(in_dims[i])), in_dims[i]);
    if constexpr (K::in_place) {
      if (out != ins[0]) throw std::invalid_argument("bind: an in-place variant writes over its input");
      out_ = ins_[0];
    } else {
      out_ = out_t(typename out_t::view_type(out, OutL::make(K::output(p_))), K::output(p_));
    }
  }
  std::vector<double> reference_on(const std::vector<std::vector<double>>& logical) override {
    const auto in_dims = K::inputs(p_);
    std::vector<host_in_t> hins;
    for (std::size_t i = 0; i < in_dims.size(); ++i) {
      host_in_t h(Kokkos::create_mirror(ins_[i].view()), in_dims[i]);  // always a new allocation
      from_logical(h, logical.at(i));
      hins.push_back(h);
    }
    std::vector<typename vec_t::HostMirror> hvecs;
    for (const auto& v : vecs_) {
      hvecs.push_back(Kokkos::create_mirror_view(v));
      Kokkos::deep_copy(hvecs.back(), v);
    }
    return K::reference(p_, hins, hvecs);
  }
  bool in_place_safe() const override { return K::in_place || K::in_place_safe; }
  bool works_in_place() const override { return K::in_place; }

  case_cost cost() const override {
    return {K::bytes(p_), K::flops(p_), k_.workspace_bytes(p_), k_.passes(p_)};
  }

 private:
  using host_in_t = decltype(create_mirror_view(std::declval<in_t>()));
  std::vector<buffer> buffers() const {
    std::vector<buffer> b;
    for (const auto& t : ins_) b.push_back({t.view().data(), t.bytes(), false});
    for (const auto& v : vecs_) b.push_back({v.data(), v.span() * sizeof(float), true});
    if (!K::in_place) b.push_back({out_.view().data(), out_.bytes(), false});
    return b;
  }

  params p_;
  K k_;
  Space space_;
  std::vector<in_t> ins_;
  std::vector<vec_t> vecs_;
  out_t out_;
  host_in_t saved_in_;
};

// Registers descriptor K for op `op` with input layout InL and output layout OutL (the same
// except for transforms); the key's layout is InL's name.
template <class K, class InL, class OutL = InL, class Space = space_global>
void register_layer(registry& r, const std::string& op, const std::string& space,
                    const std::string& pattern, const std::string& variant,
                    const std::string& tuning, double tolerance) {
  r.add_variant(variant_info{
      op, InL::name, space, pattern, variant, tuning, tolerance,
      [](const layer_spec& s) { return K::template unsupported<InL>(K::from_spec(s)); },
      [](const layer_spec& s) -> std::unique_ptr<bench_case> {
        return std::make_unique<tensor_case<InL, OutL, K, Space>>(s);
      }});
}

// K with its inputs and per-channel vectors read through const MemoryTraits<RandomAccess>
// views (CUDA: the read-only data cache, ld.global.nc).
template <class K>
struct readonly_kernel : K {
  template <class Exec, class Ins, class Vecs, class Out, class Params>
  void run(const Exec& e, const Ins& ins, const Vecs& vecs, const Out& out, const Params& p) const {
    std::vector<decltype(read_only(ins[0]))> ro;
    for (const auto& t : ins) ro.push_back(read_only(t));
    std::vector<decltype(read_only(std::declval<typename Vecs::value_type>()))> rv;
    for (const auto& v : vecs) rv.push_back(read_only(v));
    K::run(e, ro, rv, out, p);
  }
};

// The memory-space axis of a memory-bound op's variant K in nchw, nhwc and chwn: readonly
// (unless K works in place) and, on CUDA builds, managed (cold, prefetched, advised) and pinned.
template <class K>
void register_layer_spaces(registry& r, const std::string& op, const std::string& pattern,
                           const std::string& variant, const std::string& tuning, double tolerance) {
  if constexpr (!K::in_place) {
    register_layer<readonly_kernel<K>, layout::nchw>(r, op, "readonly", pattern, variant, tuning, tolerance);
    register_layer<readonly_kernel<K>, layout::nhwc>(r, op, "readonly", pattern, variant, tuning, tolerance);
    register_layer<readonly_kernel<K>, layout::chwn>(r, op, "readonly", pattern, variant, tuning, tolerance);
  }
  for_each_cuda_space([&](auto space) {
    using S = decltype(space);
    register_layer<K, layout::nchw, layout::nchw, S>(r, op, S::name, pattern, variant, tuning, tolerance);
    register_layer<K, layout::nhwc, layout::nhwc, S>(r, op, S::name, pattern, variant, tuning, tolerance);
    register_layer<K, layout::chwn, layout::chwn, S>(r, op, S::name, pattern, variant, tuning, tolerance);
  });
}

// The same descriptor in nchw, nhwc and chwn.
template <class K>
void register_layer_all_layouts(registry& r, const std::string& op, const std::string& space,
                                const std::string& pattern, const std::string& variant,
                                const std::string& tuning, double tolerance) {
  register_layer<K, layout::nchw>(r, op, space, pattern, variant, tuning, tolerance);
  register_layer<K, layout::nhwc>(r, op, space, pattern, variant, tuning, tolerance);
  register_layer<K, layout::chwn>(r, op, space, pattern, variant, tuning, tolerance);
}

// Reads an optional numeric op parameter from the suite's params column.
inline double param_or(const layer_spec& s, const std::string& key, double fallback) {
  const auto it = s.params.find(key);
  if (it == s.params.end()) return fallback;
  try {
    std::size_t pos = 0;
    const double v = std::stod(it->second, &pos);
    if (pos == it->second.size()) return v;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument("params: '" + key + "' is not a number: '" + it->second + "'");
}

// Reads an optional integer op parameter: digits only (3.5, 1e300 or 7x are refused), within int.
inline int int_param_or(const layer_spec& s, const std::string& key, int fallback) {
  const auto it = s.params.find(key);
  if (it == s.params.end()) return fallback;
  int v = 0;
  if (!parse_int_exact(it->second, v))
    throw std::invalid_argument("params: '" + key + "' is not an integer: '" + it->second + "'");
  return v;
}

// A shape rule for ops whose output has the input's shape.
inline field_error check_positive_nchw(const layer_spec& s) {
  const struct { const char* name; int v; } dims[] = {{"n", s.n}, {"c", s.c}, {"h", s.h}, {"w", s.w}};
  for (const auto& d : dims)
    if (d.v <= 0) return {d.name, "must be > 0, got " + std::to_string(d.v)};
  return {};
}

}  // namespace kcnn::bench
