// conv2d: the shape rule, the direct kernel with one thread per output element (the baseline)
// and its mappings.
//   direct / global / coalesced (baseline): along the layout's fastest dimension (w, k, or n:
//     cuda-convnet's thread per image); also readonly and, on CUDA builds, from managed (cold,
//     prefetched, advised) and host-pinned memory;
//   direct / global / strided: the thread mapping deliberately against the layout (consecutive
//     threads a row or more apart);
//   direct / strided layout / order_<o>: the coalesced kernel over runtime LayoutStride tensors
//     holding the physical order <o>: compared with the same order as a compile-time layout, what
//     a layout unknown at compile time costs.
// Other variants: one file each in this folder.
#include "conv_descriptor.hpp"

#include "../common/variant_kinds.hpp"

#include <kcnn/conv2d/direct_global.hpp>

namespace {
using namespace kcnn;
using namespace kcnn::bench;

const registrar reg([](registry& r) {
  op_info info{"conv2d", [](const layer_spec& s) { return field_error_from(conv2d_from_spec(s).check()); },
               [](const layer_spec& s) { return conv2d_from_spec(s).output_dims(); }};
  info.geometry = {"stride_h", "stride_w", "pad_h", "pad_w", "pad_h_end", "pad_w_end", "dilation_h", "dilation_w"};
  register_op(r, std::move(info));
  using namespace kcnn::layout;
  using coalesced = conv_tag<variant::direct_coalesced>;
  register_variant<coalesced, nchw, nhwc, chwn>(
      r, {"conv2d", space_axis::global, pattern_axis::coalesced, &kinds::direct, {}, true}, with_memory_spaces);
  register_variant<conv_tag<variant::direct_strided>, nchw, nhwc, chwn>(
      r, {"conv2d", space_axis::global, pattern_axis::strided, &kinds::direct});
  for (const char* o : {"nchw", "nhwc", "chwn"}) {
    variant_decl d{"conv2d", space_axis::global, pattern_axis::coalesced, &kinds::direct,
                   {std::string("order_") + o, std::string("runtime strides holding the ") + o + " order"}};
    d.strided_order = layout::parse_order(o);
    register_variant<coalesced, strided>(r, d);
  }
});
}  // namespace
