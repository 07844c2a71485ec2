#pragma once
// The four axes of a case and its tuning, as typed values that know their names and their one-line
// documentation. Behaviour is keyed on these values, never on their spelling: names are read
// only by parse() (command line, --resume) and written only by name() (keys, rows, --list).
//
// Layout, memory space and access pattern are closed sets (the product's axes). Variants are an
// open set: each op file declares the algorithms it registers as `variant_kind` constants, so a
// new variant needs no central list.
#include <kcnn/layout.hpp>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace kcnn::bench {

enum class layout_axis { nchw, nhwc, chwn, strided };
enum class space_axis { global, scratch, constant, readonly, uvm_cold, uvm_prefetch, uvm_advise, pinned };
enum class pattern_axis { coalesced, strided, tiled, regtile, library };


const char* name(layout_axis v);
const char* name(space_axis v);
const char* name(pattern_axis v);
const char* doc(layout_axis v);
const char* doc(space_axis v);
const char* doc(pattern_axis v);

// Every value of an axis, in documentation order.
template <class Axis>
const std::vector<Axis>& all_values();

// The value named `text`, if any.
template <class Axis>
std::optional<Axis> parse(const std::string& text);

// The physical order of a compile-time layout, slowest axis first (layout_axis::strided has none:
// std::invalid_argument).
std::array<axis, 4> physical_order(layout_axis l);

// The CUDA-only memory spaces (managed memory, host-pinned).
inline bool cuda_only(space_axis s) {
  return s == space_axis::uvm_cold || s == space_axis::uvm_prefetch || s == space_axis::uvm_advise ||
         s == space_axis::pinned;
}
// The spaces whose buffers are ordinary device allocations that a forward pass can chain.
inline bool device_resident(space_axis s) { return !cuda_only(s); }

// Where an implementation comes from.
enum class origin {
  kcnn,   // a kernel of the kcnn::kernels library
  peer,   // a vendor library or hand-written native code run through the same harness
  fault,  // a deliberately broken variant (kcnn-bench-faults only)
};
const char* name(origin o);

// An algorithm: the variant axis. Declared once per op file as an `inline const variant_kind`.
struct variant_kind {
  const char* name;
  const char* doc;
  bench::origin origin = origin::kcnn;
  // Works on its input's storage (the output aliases input 0).
  bool in_place = false;
  // What a build needs to register it, beyond Kokkos on a host (oneDNN, CUDA, cuDNN, cuBLAS);
  // nullptr: every build has it. The catalogue marks its lines with it.
  const char* needs = nullptr;
};

// An extra component of the key that distinguishes registrations of the same variant (a tile
// factor, a physical order, a precision); empty for none.
struct tuning {
  std::string name;
  std::string doc;
  bool empty() const { return name.empty(); }
};

}  // namespace kcnn::bench
