#include "device/host_stores.hpp"

#if KCNN_HOST_TUNING
#include <kcnn/host/streaming.hpp>
#endif

#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

namespace kcnn::bench {
namespace {
constexpr const char* variable = "KCNN_STREAMING_STORE_BYTES";

std::size_t parse_byte_count(const char* text) {
  std::size_t v = 0;
  const char* p = text;
  for (; *p >= '0' && *p <= '9'; ++p) {
    const std::size_t d = std::size_t(*p - '0');
    if (v > (std::numeric_limits<std::size_t>::max() - d) / 10) break;
    v = v * 10 + d;
  }
  if (p == text || *p != '\0')
    throw std::invalid_argument(std::string(variable) + ": not a byte count (decimal digits, at most SIZE_MAX): '" + text +
                                "'");
  return v;
}

host_store_options from_environment() {
  host_store_options o;
  if (const char* e = std::getenv(variable)) o.streaming_store_bytes = parse_byte_count(e);
  return o;
}
}  // namespace

const host_store_options& run_host_stores() {
  static const host_store_options o = from_environment();
  return o;
}

std::size_t run_streaming_store_bytes() {
#if KCNN_HOST_TUNING
  return host_tuning::streaming_store_bytes(run_host_stores());
#else
  return host_store_options::never;
#endif
}

bool run_streams_available() {
#if KCNN_HOST_TUNING
  return host_tuning::streaming_available && host_backend<Kokkos::DefaultExecutionSpace>;
#else
  return false;
#endif
}

}  // namespace kcnn::bench
