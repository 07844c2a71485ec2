#pragma once
// Residual add (out = a + b): naive (one thread per output element in the output's storage order),
// vector (kcnn/lanes.hpp's rows and lanes) and flat (the storage as one run); concatenation along
// channels.
//
// Entry points: kcnn::add(exec, a, b, out, variant = variant::add_naive{}) and
// kcnn::concat(exec, inputs, out, variant = variant::concat_naive{}).
#include <kcnn/api.hpp>
#include <kcnn/lanes.hpp>
#include <kcnn/layout.hpp>
#include <kcnn/tuning.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace kcnn {

namespace detail {
template <class A, class B, class Out>
struct add_functor {
  A a;
  B b;
  Out out;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, c, h, w;
    out.storage_coords(i, n, c, h, w);
    out(n, c, h, w) = a(n, c, h, w) + b(n, c, h, w);
  }
};

// Copies one input into its slab of the output channels, walking the slab in the output's
// storage order so that the writes are coalesced.
template <class In, class Out>
struct concat_slab_functor {
  In in;
  Out out;
  int offset;  // first output channel of this input
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    int n, c, h, w;
    if constexpr (Out::layout_tag::runtime_strided) layout::strided::storage_coords(i, in.dims(), out.order(), n, c, h, w);
    else Out::layout_tag::storage_coords(i, in.dims(), n, c, h, w);
    out(n, offset + c, h, w) = in(n, c, h, w);
  }
};

// The flat form (kcnn/lanes.hpp's flat_items_of): out = a + b over the storages as one run. out
// may be a or b (in place): no restrict; an item's loads all precede its stores.
template <std::size_t Interleave>
struct add_flat_functor {
  const float* a;
  const float* b;
  float* out;
  std::size_t n;
  std::size_t q;  // the distance between an item's elements (Interleave > 1)
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t item) const {
    float x[Interleave], y[Interleave];
    for (std::size_t k = 0; k < Interleave; ++k) {
      const std::size_t e = item + k * q;
      x[k] = e < n ? a[e] : 0.0f;
      y[k] = e < n ? b[e] : 0.0f;
    }
    for (std::size_t k = 0; k < Interleave; ++k) {
      const std::size_t e = item + k * q;
      if (e < n) out[e] = x[k] + y[k];
    }
  }
};

// One element of the vector forms (kcnn/lanes.hpp).
template <class A, class B, class Out>
struct add_element {
  A a;
  B b;
  Out out;
  static constexpr axis run = run_axis<typename Out::layout_tag>;
  static_assert(std::is_same_v<typename A::layout_tag, typename Out::layout_tag> &&
                    std::is_same_v<typename B::layout_tag, typename Out::layout_tag>,
                "kcnn::add: add_vector needs a, b and out in one layout");
  KOKKOS_FORCEINLINE_FUNCTION float load(const coords4& x, int l) const {
    return float(lane_ptr<run>(a, x)[l]) + float(lane_ptr<run>(b, x)[l]);
  }
  KOKKOS_FORCEINLINE_FUNCTION void store(const coords4& x, int l, float v) const { lane_ptr<run>(out, x)[l] = v; }
};
template <class In, class Out>
struct concat_element {
  In in;
  Out out;
  int offset;  // first output channel of this input
  static constexpr axis run = run_axis<typename Out::layout_tag>;
  static_assert(std::is_same_v<typename In::layout_tag, typename Out::layout_tag>,
                "kcnn::concat: concat_vector needs the inputs and out in one layout");
  KOKKOS_FORCEINLINE_FUNCTION float load(const coords4& x, int l) const { return lane_ptr<run>(in, x)[l]; }
  KOKKOS_FORCEINLINE_FUNCTION void store(const coords4& x, int l, float v) const {
    lane_ptr<run>(out, x.with<axis::c>(offset + x.c))[l] = v;
  }
};
// concat_vector's portable form: one launch for up to concat_inputs_per_launch inputs, over
// the rows of their channel slab of the output (dims: the output's with the slab's channels).
// nchw and chwn (c a row axis): a row belongs to one input, the one whose channels hold it.
// nhwc (c the run): a row is an output pixel, the slab's channels one run whose every element
// is loaded from the input that holds it (the last K with first[K] <= its channel): a batch's
// loads are all issued before its stores whichever inputs they come from, so a pixel costs one
// round trip per batch, not one per input, and no narrow input leaves lanes idle. Its sources:
//  - lanes: through each input's lane_ptr, one predicated load per input (any tensor: the
//    read-only handles' loads go through __ldg);
//  - pointers: tensors of floats that hand out references over contiguous storage: the element's input,
//    its first channel and its channel count are selected from the launch's parameters and the
//    address is computed from the pixel's index, so no per-input address is held across the walk
//    (eight inputs' addresses would take 16 registers, and with them occupancy);
//  - chunks: as pointers, where every input's and the output's pixels also start on 16 bytes and
//    hold a multiple of four channels (no chunk straddles two inputs): 16-byte chunks
//    (kcnn::chunks_in_batches).
// Inputs are picked by compile-time index (kcnn::unrolled): an array of tensors indexed at run
// time would live in a GPU thread's local memory.
inline constexpr int concat_inputs_per_launch = 8;
enum class concat_source { lanes, pointers, chunks };
// Whether t's storage starts on 16 bytes (kcnn::chunk16's loads and stores).
template <class T>
bool aligned16(const T& t) {
  return reinterpret_cast<std::uintptr_t>(t.view().data()) % 16 == 0;
}
template <class Exec, class In, class Out, concat_source Source = concat_source::lanes>
struct concat_rows_body {
  static constexpr int N = concat_inputs_per_launch;
  using L = typename Out::layout_tag;
  static constexpr axis run = run_axis<L>;
  static_assert(std::is_same_v<typename In::layout_tag, L>, "kcnn::concat: concat_vector needs the inputs and out in one layout");
  static_assert(Source == concat_source::lanes || (std::is_same_v<L, layout::nhwc> &&
                                                    std::is_same_v<std::remove_const_t<typename In::value_type>, float>),
                "kcnn::concat: pointers and chunks index nhwc's pixels of floats");
  static constexpr bool chunks = Source == concat_source::chunks;
  // for_each_row's lanes: the run it is given is in chunks with chunks (kcnn::lanes_for_run).
  static constexpr int row_batch = chunks ? chunk_batch_size : lane_batch_size;
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  Kokkos::Array<In, N> in;
  Kokkos::Array<int, N + 1> first{};  // input k's first channel in the slab; first[count]: its channels
  int count = 0;                    // inputs in this launch
  int offset = 0;                   // the slab's first output channel
  Out out;
  int run_length = 0;               // the run's elements (nchw: w, nhwc: the slab's c, chwn: n)
  // nchw, chwn: input K's run at xi (its own coordinates), through concat_element's load and store.
  template <int K>
  KOKKOS_FORCEINLINE_FUNCTION void walk(const member& m, const coords4& xi) const {
    const concat_element<In, Out> e{in[K], out, offset + first[K]};
    run_in_batches(
        m, run_length, [&](const int l) { return e.load(xi, l); }, [&](const int l, const float v) { e.store(xi, l, v); });
  }
  // nhwc, lanes: channel l of the slab at pixel x.
  KOKKOS_FORCEINLINE_FUNCTION float load_lanes(const coords4& x, const int l) const {
    float v = 0.0f;
    unrolled<N>([&](auto k) {
      constexpr int K = decltype(k)::value;
      if (K < count && l >= first[K] && l < first[K + 1]) v = lane_ptr<run>(in[K], x)[l - first[K]];
    });
    return v;
  }
  // nhwc, pointers and chunks: channel c of the slab at the pixel of index `pixel` (its input's
  // pixels hold its channel count of contiguous floats).
  KOKKOS_FORCEINLINE_FUNCTION const float* source(const std::size_t pixel, const int c) const {
    const float* data = in[0].view().data();
    int f = 0, channels = first[1];
    unrolled<N - 1>([&](auto k) {
      constexpr int K = decltype(k)::value + 1;
      if (K < count && c >= first[K]) data = in[K].view().data(), f = first[K], channels = first[K + 1] - first[K];
    });
    return data + pixel * std::size_t(channels) + std::size_t(c - f);
  }
  KOKKOS_INLINE_FUNCTION void row(const member& m, const coords4& x) const {
    if constexpr (run != axis::c) {
      unrolled<N>([&](auto k) {
        constexpr int K = decltype(k)::value;
        if (K < count && x.c >= first[K] && x.c < first[K + 1]) walk<K>(m, x.with<axis::c>(x.c - first[K]));
      });
    } else if constexpr (Source == concat_source::lanes) {
      run_in_batches(
          m, run_length, [&](const int l) { return load_lanes(x, l); },
          [&](const int l, const float v) { lane_ptr<run>(out, x.with<axis::c>(offset))[l] = v; });
    } else {
      const dims4 d = out.dims();
      const std::size_t pixel = (std::size_t(x.n) * std::size_t(d.h) + std::size_t(x.h)) * std::size_t(d.w) + std::size_t(x.w);
      float* dst = &L::at(out.view(), x.n, offset, x.h, x.w);
      if constexpr (chunks)
        chunks_in_batches(
            m, run_length / 4, [&](const int i) { return load_chunk16(source(pixel, 4 * i)); },
            [&](const int i, const chunk16<float>& v) { store_chunk16(dst + 4 * i, v); });
      else
        run_in_batches(
            m, run_length, [&](const int l) { return *source(pixel, l); }, [&](const int l, const float v) { dst[l] = v; });
    }
  }
};
}  // namespace detail

namespace variant {
// One thread per output element in the output's storage order. Every layout (a, b and out may
// differ). The default.
struct add_naive {
  using op = ops::add;
  template <class Exec, class A, class B, class Out>
  void run(const Exec& exec, const A& a, const B& b, const Out& out, const no_params&) const {
    launch_range("kcnn::add", exec, out.size(),
                         detail::add_functor<A, B, Out>{a, b, out});
  }
};
// The portable row mapping (kcnn/lanes.hpp): rows of the output's storage, lanes along its
// contiguous axis (nchw: w, nhwc: c, chwn: n): coalesced on a GPU, row coordinates computed once
// per row. Host tuning: kcnn/host/rows.hpp's walk, lane blocks. Compile-time output layouts.
struct add_vector {
  using op = ops::add;
  static constexpr bool host_tunable = true;
  template <class Exec, class A, class B, class Out>
  void run(const Exec& exec, const A& a, const B& b, const Out& out, const no_params& p) const {
    run_tuned<tunings::automatic>(exec, a, b, out, p);
  }
  template <class T, class Exec, class A, class B, class Out>
  void run_tuned(const Exec& exec, const A& a, const B& b, const Out& out, const no_params&) const {
    for_each_element_by_rows<typename Out::layout_tag, T>("kcnn::add_vector", exec, out.dims(),
                                                          detail::add_element<A, B, Out>{a, b, out});
  }
};
// Over the storages directly, for a, b and out of one compile-time layout (no coordinates):
// thread i takes storage element i, or, past what the device holds at once, elements i, i + q,
// i + 2q, i + 3q (q = ceil(n / 4)), adjacent threads on adjacent addresses in each of its eight
// loads, all in flight at once. Host tuning (kcnn/host/eltwise.hpp): chunks of consecutive
// elements, streamed as activation_flat's.
struct add_flat {
  using op = ops::add;
  static constexpr bool host_tunable = true;
  host_store_options host_stores{};
  template <class Exec, class A, class B, class Out>
  void run(const Exec& exec, const A& a, const B& b, const Out& out, const no_params& p) const {
    run_tuned<tunings::automatic>(exec, a, b, out, p);
  }
  template <class T, class Exec, class A, class B, class Out>
  void run_tuned(const Exec& exec, const A& a, const B& b, const Out& out, const no_params&) const {
    static_assert(std::is_same_v<typename A::layout_tag, typename Out::layout_tag> &&
                      std::is_same_v<typename B::layout_tag, typename Out::layout_tag> &&
                      !Out::layout_tag::runtime_strided,
                  "kcnn::add: add_flat needs a, b and out in the same compile-time layout");
    const std::size_t n = out.size();
    const float* x = a.view().data();
    const float* y = b.view().data();
    float* z = out.view().data();
    if constexpr (takes_host_tuning<T, Exec>) {
      host_tuning::tuned<add_flat, Exec>::run(exec, x, y, z, n, host_stores);
    } else {
      const flat_items f = flat_items_of(exec, n);
      if (f.interleaved)
        launch_range("kcnn::add_flat", exec, f.items, detail::add_flat_functor<flat_interleave>{x, y, z, n, f.q});
      else
        launch_range("kcnn::add_flat", exec, f.items, detail::add_flat_functor<1>{x, y, z, n, f.q});
    }
  }
};
// One launch per input, each copying its channel slab in the output's storage order (Caffe's
// concat layer). Every layout. The default.
struct concat_naive {
  using op = ops::concat;
  template <class Exec, class In, class Out>
  void run(const Exec& exec, const std::vector<In>& inputs, const Out& out, const no_params&) const {
    int offset = 0;
    for (const auto& in : inputs) {
      launch_range("kcnn::concat", exec, in.size(),
                           detail::concat_slab_functor<In, Out>{in, out, offset});
      offset += in.dims().c;
    }
  }
};
// The portable row mapping (kcnn/lanes.hpp), lanes along the output's contiguous axis: one launch
// for every concat_inputs_per_launch (8) inputs, over the rows of their slab of the output. Host
// tuning: kcnn/host/rows.hpp's walk over each input's slab, lane blocks. Compile-time output
// layouts.
struct concat_vector {
  using op = ops::concat;
  static constexpr bool host_tunable = true;
  template <class Exec, class In, class Out>
  void run(const Exec& exec, const std::vector<In>& inputs, const Out& out, const no_params& p) const {
    run_tuned<tunings::automatic>(exec, inputs, out, p);
  }
  template <class T, class Exec, class In, class Out>
  void run_tuned(const Exec& exec, const std::vector<In>& inputs, const Out& out, const no_params&) const {
    using L = typename Out::layout_tag;
    int offset = 0;
    if constexpr (takes_host_tuning<T, Exec>) {
      for (const auto& in : inputs) {
        for_each_element_by_rows<L, T>("kcnn::concat_vector", exec, in.dims(), detail::concat_element<In, Out>{in, out, offset});
        offset += in.dims().c;
      }
    } else {
      using body = detail::concat_rows_body<Exec, In, Out>;
      for (std::size_t i = 0; i < inputs.size(); i += std::size_t(body::N)) {
        body b;
        b.out = out;
        b.offset = offset;
        b.first[0] = 0;
        // Tensors of floats in nhwc that hand out references: the pointer and chunk sources.
        constexpr bool addressable = std::is_reference_v<typename In::reference_type> &&
                                     std::is_reference_v<typename Out::reference_type> && std::is_same_v<L, layout::nhwc> &&
                                     std::is_same_v<std::remove_const_t<typename In::value_type>, float> &&
                                     std::is_same_v<typename Out::value_type, float>;
        bool pointers = addressable && out.view().span_is_contiguous();
        bool chunks = out.dims().c % 4 == 0 && offset % 4 == 0 && detail::aligned16(out);
        for (std::size_t k = i; k < inputs.size() && b.count < body::N; ++k, ++b.count) {
          const int c = inputs[k].dims().c;
          b.in[b.count] = inputs[k];
          b.first[b.count + 1] = b.first[b.count] + c;
          pointers = pointers && inputs[k].view().span_is_contiguous();
          chunks = chunks && c % 4 == 0 && detail::aligned16(inputs[k]);
        }
        dims4 slab = out.dims();
        slab.c = b.first[b.count];
        b.run_length = extent<run_axis<L>>(slab);
        if (!pointers) {
          for_each_row<L, -1, tunings::portable>("kcnn::concat_vector", exec, slab, b.run_length, b);
        } else if constexpr (addressable) {  // pointers is false otherwise
          using concat_source = detail::concat_source;
          if (chunks) {
            const detail::concat_rows_body<Exec, In, Out, concat_source::chunks> bc{b.in, b.first, b.count, b.offset, b.out, b.run_length};
            for_each_row<L, -1, tunings::portable>("kcnn::concat_vector", exec, slab, b.run_length / 4, bc);
          } else {
            const detail::concat_rows_body<Exec, In, Out, concat_source::pointers> bp{b.in, b.first, b.count, b.offset, b.out, b.run_length};
            for_each_row<L, -1, tunings::portable>("kcnn::concat_vector", exec, slab, b.run_length, bp);
          }
        }
        offset += slab.c;
      }
    }
  }
};
}  // namespace variant

// out = a + b. a, b and out: equal dims, any layouts. Throws std::invalid_argument otherwise.
template <class Exec, class A, class B, class Out, class V = variant::add_naive>
void add(const Exec& exec, const A& a, const B& b, const Out& out, const V& v = V{}) {
  static_assert(detail::is_variant_of<V, ops::add>, "kcnn::add: not an add variant (kcnn::variant::add_*)");
  const detail::checker<Exec> check{"add"};
  check.tensor("a", a, out.dims());
  check.tensor("b", b, out.dims());
  check.tensor("out", out, a.dims());
  v.run(exec, a, b, out, no_params{});
}

// out = the inputs concatenated along channels, in order. inputs: at least one tensor, all with
// out's n, h and w; their channels sum to out's. Every input is checked before anything runs;
// throws std::invalid_argument naming the offending input.
template <class Exec, class In, class Out, class V = variant::concat_naive>
void concat(const Exec& exec, const std::vector<In>& inputs, const Out& out, const V& v = V{}) {
  static_assert(detail::is_variant_of<V, ops::concat>, "kcnn::concat: not a concat variant (kcnn::variant::concat_*)");
  const detail::checker<Exec> check{"concat"};
  if (inputs.empty()) detail::fail("concat", "no inputs");
  check.view_extents("out", out);
  check.template accessible<Out>();
  long long channels = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const dims4 d = inputs[i].dims();
    const std::string name = "inputs[" + std::to_string(i) + "]";
    check.tensor(name.c_str(), inputs[i], dims4{out.dims().n, d.c, out.dims().h, out.dims().w});
    if (d.c <= 0) detail::fail("concat", "operand '" + name + "' has no channels");
    channels += d.c;
  }
  if (channels != out.dims().c)
    detail::fail("concat", "the inputs' channels sum to " + std::to_string(channels) + ", operand 'out' has c = " +
                               std::to_string(out.dims().c));
  v.run(exec, inputs, out, no_params{});
}

}  // namespace kcnn

#if KCNN_HOST_TUNING
#include <kcnn/host/eltwise.hpp>
#endif
