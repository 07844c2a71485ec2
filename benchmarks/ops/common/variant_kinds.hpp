#pragma once
// Variant kinds that several ops register (an algorithm used by one op only is declared in that
// op's file). Each knows its name, its documentation line and its origin (axes.hpp).
#include "cases/axes.hpp"

namespace kcnn::bench::kinds {

inline const variant_kind naive{"naive", "one thread per output element in the output's storage order, its coordinates "
                                         "recovered by division: adjacent threads on adjacent outputs (coalesced writes)"};
inline const variant_kind in_place{"in_place", "naive, writing over its input (the output aliases input 0)", origin::kcnn,
                                   true};
inline const variant_kind flat{"flat", "the storage as one run, no coordinates (operands in one layout): GPU thread i "
                                       "takes element i, or, past the threads the GPU holds at once, elements i, i + q, "
                                       "i + 2q, i + 3q (q = ceil(n / 4); adjacent threads on adjacent addresses, four loads in "
                                       "flight per operand); a host thread 4096 consecutive elements, vectorised"};
inline const variant_kind vector{"vector", "rows of the storage per team (TeamThreadRange), lanes along the layout's "
                                           "contiguous axis (ThreadVectorRange: nchw w, nhwc c, chwn n): coalesced on a "
                                           "GPU, each lane a batch of elements of its row a slot count apart (4; 8 in a "
                                           "reduction or where a body asks: LRN nhwc), or of two 16-byte chunks (concat "
                                           "nhwc on pixels that start on 16 bytes), all loaded before the first store; 16-wide "
                                           "blocks on a host; coordinates once per row; LRN across channels in nchw and "
                                           "chwn walks the channel planes per element (512-element spans on a host, a "
                                           "batch of 4 per GPU lane) (kcnn/lanes.hpp, docs/performance.md)"};
inline const variant_kind direct{"direct", "direct convolution / inner product from the stored operands"};
inline const variant_kind tiled{"tiled", "a team per output tile, its input tile staged in team scratch; team threads "
                                         "along the tile's storage order"};
inline const variant_kind regtile{"regtile", "several outputs per thread (tuning: how many), shared loads reused from "
                                             "registers; threads along the output's storage order, a tile apart"};
inline const variant_kind gemm_kk{"gemm_kk", "KokkosBlas::gemm on the stored operands (the BLAS behind Kokkos Kernels): one call, or one per image for a conv2d in nchw"};
inline const variant_kind onednn{"onednn", "oneDNN primitive (host builds), weights packed once untimed", origin::peer,
                                 false, "oneDNN"};
inline const variant_kind native_cuda{"native_cuda", "plain CUDA without Kokkos, the same algorithm and thread mapping as "
                                                     "one kcnn variant (conv2d direct, pool naive, softmax vector; nchw): "
                                                     "what the abstraction costs", origin::peer, false, "CUDA"};

}  // namespace kcnn::bench::kinds
