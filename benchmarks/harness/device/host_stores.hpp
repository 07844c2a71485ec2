#pragma once
// The store options this run gives the host tuning of every variant that has them
// (kcnn::host_store_options: activation_flat, add_flat, pool_vector), and what the context
// records of them. The harness, not the library, reads the environment.
#include <kcnn/tuning.hpp>

#include <cstddef>

namespace kcnn::bench {

// KCNN_STREAMING_STORE_BYTES (decimal digits, at most SIZE_MAX) replaces the library's default
// threshold (half the last-level cache); anything else throws std::invalid_argument naming the
// variable, at every call. Read once, at the first call that succeeds.
const host_store_options& run_host_stores();
// The threshold in bytes in effect for this run (the default resolved).
std::size_t run_streaming_store_bytes();
// Whether host kernels of this build can stream their stores (x86 host with the host tunings).
bool run_streams_available();

}  // namespace kcnn::bench
