#pragma once
// Variant kinds that several ops register (an algorithm used by one op only is declared in that
// op's file). Each knows its name, its documentation line and its origin (axes.hpp).
#include "../../harness/axes.hpp"

namespace kcnn::bench::kinds {

inline const variant_kind naive{"naive", "one thread per output element, in the output layout's storage order"};
inline const variant_kind in_place{"in_place", "naive, writing over its input (the output aliases input 0)", origin::kcnn,
                                   true};
inline const variant_kind flat{"flat", "storage order without coordinates: one contiguous run per thread, no index "
                                       "arithmetic (host-tuned; on a GPU adjacent threads are a run apart)"};
inline const variant_kind direct{"direct", "direct convolution / inner product from the stored operands"};
inline const variant_kind tiled{"tiled", "a team per output tile, its input tile staged in team scratch"};
inline const variant_kind regtile{"regtile", "several outputs per thread (tuning: how many), shared loads reused from registers"};
inline const variant_kind gemm_kk{"gemm_kk", "one KokkosBlas::gemm on the stored operands (the BLAS behind Kokkos Kernels)"};
inline const variant_kind onednn{"onednn", "oneDNN primitive (host builds), weights packed once untimed", origin::peer};
inline const variant_kind native_cuda{"native_cuda", "plain CUDA without Kokkos, the same mapping as the kcnn baseline: "
                                                     "what the abstraction costs", origin::peer};

}  // namespace kcnn::bench::kinds
