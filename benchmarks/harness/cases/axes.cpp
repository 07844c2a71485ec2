#include "cases/axes.hpp"

#include <algorithm>
#include <stdexcept>

namespace kcnn::bench {

namespace {
template <class Axis>
struct entry {
  Axis value;
  const char* name;
  const char* doc;
};

const entry<layout_axis> layouts[] = {
    {layout_axis::nchw, "nchw", "images, channels, rows, columns: w is contiguous (Caffe, PyTorch default)"},
    {layout_axis::nhwc, "nhwc", "channels contiguous (TensorFlow default, tensor cores, oneDNN's nhwc)"},
    {layout_axis::chwn, "chwn", "the batch contiguous (cuda-convnet): a thread per image coalesces"},
    {layout_axis::strided, "strided",
     "runtime Kokkos LayoutStride holding any permutation (tuning order_<o>): the price of not knowing the layout at compile time"},
};
const entry<space_axis> spaces[] = {
    {space_axis::global, "global", "the default memory space of the execution space (device memory on a GPU)"},
    {space_axis::scratch, "scratch", "team scratch level 0 (CUDA shared memory) stages tiles of the operands"},
    {space_axis::constant, "constant",
     "weights or per-channel parameters embedded by value in the functor (CUDA constant memory launch)"},
    {space_axis::readonly, "readonly", "const MemoryTraits<RandomAccess> inputs (CUDA: the read-only data cache)"},
    {space_axis::uvm_cold, "uvm_cold", "CUDA managed memory sent to the host before every run: the kernel pays the faults"},
    {space_axis::uvm_prefetch, "uvm_prefetch",
     "CUDA managed memory prefetched to the device before every run (the prefetch timed apart, in the note)"},
    {space_axis::uvm_advise, "uvm_advise",
     "CUDA managed memory with advice (read-mostly weights, device-preferred activations), touched on the host before every run"},
    {space_axis::pinned, "pinned", "CUDA host-pinned memory read and written by the kernel over the link (zero copy)"},
};
const entry<pattern_axis> patterns[] = {
    {pattern_axis::coalesced, "coalesced", "adjacent threads (vector lanes) take adjacent addresses of the layout's fastest dimension"},
    {pattern_axis::strided, "strided", "a thread mapping deliberately against the layout (adjacent threads a row or more apart)"},
    {pattern_axis::tiled, "tiled", "2-D/3-D tiles of the output per team, operands staged or blocked per tile"},
    {pattern_axis::regtile, "regtile", "several outputs per thread, shared loads reused from registers"},
    {pattern_axis::library, "library", "a library call chooses the mapping (oneDNN, cuDNN, cuBLAS, KokkosBlas::gemm)"},
};

template <class Axis>
struct table;
template <>
struct table<layout_axis> {
  static const auto& get() { return layouts; }
};
template <>
struct table<space_axis> {
  static const auto& get() { return spaces; }
};
template <>
struct table<pattern_axis> {
  static const auto& get() { return patterns; }
};

template <class Axis>
const entry<Axis>& find(Axis v) {
  for (const auto& e : table<Axis>::get())
    if (e.value == v) return e;
  return table<Axis>::get()[0];  // unreachable: every enumerator has an entry
}
}  // namespace

const char* name(layout_axis v) { return find(v).name; }
const char* name(space_axis v) { return find(v).name; }
const char* name(pattern_axis v) { return find(v).name; }
const char* doc(layout_axis v) { return find(v).doc; }
const char* doc(space_axis v) { return find(v).doc; }
const char* doc(pattern_axis v) { return find(v).doc; }

std::array<axis, 4> physical_order(layout_axis l) {
  switch (l) {
    case layout_axis::nchw: return layout::nchw::order;
    case layout_axis::nhwc: return layout::nhwc::order;
    case layout_axis::chwn: return layout::chwn::order;
    case layout_axis::strided: break;
  }
  throw std::invalid_argument("the strided layout has no fixed physical order");
}

const char* name(origin o) {
  switch (o) {
    case origin::kcnn: return "kcnn";
    case origin::peer: return "peer";
    case origin::fault: return "fault";
  }
  return "kcnn";
}

template <class Axis>
const std::vector<Axis>& all_values() {
  static const std::vector<Axis> v = [] {
    std::vector<Axis> out;
    for (const auto& e : table<Axis>::get()) out.push_back(e.value);
    return out;
  }();
  return v;
}

template <class Axis>
std::optional<Axis> parse(const std::string& text) {
  for (const auto& e : table<Axis>::get())
    if (text == e.name) return e.value;
  return std::nullopt;
}

template const std::vector<layout_axis>& all_values<layout_axis>();
template const std::vector<space_axis>& all_values<space_axis>();
template const std::vector<pattern_axis>& all_values<pattern_axis>();
template std::optional<layout_axis> parse<layout_axis>(const std::string&);
template std::optional<space_axis> parse<space_axis>(const std::string&);
template std::optional<pattern_axis> parse<pattern_axis>(const std::string&);

}  // namespace kcnn::bench
