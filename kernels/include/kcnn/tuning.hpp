#pragma once
// The two tunings of a kcnn variant and the one place that chooses between them.
//
//  * tunings::portable: the variant's Kokkos source in its op's header, the code a GPU and the GPU
//    model run. On a host backend it runs with the sizes the execution policy allows there (a team
//    of the backend's threads, Kokkos' vector loops), nothing else changed: what portability
//    costs a CPU.
//  * tunings::host: a variant's host tuning in kcnn/host/ (SIMD lane blocks, non-temporal stores,
//    prefetch, host register tiles), where one exists, on a host backend only.
//  * tunings::automatic (the default of every entry point): host where a variant has a host tuning
//    and Exec runs on the host, portable otherwise.
//
// A variant with a host tuning declares it (Kokkos Kernels' availability trait, *_tpl_spec_avail):
// `static constexpr bool host_tunable = true;` and a member template run_tuned<Tuning>(exec, ...);
// its run() calls run_tuned<tunings::automatic> (and where its prepared state differs between the
// tunings, prepare_tuned likewise, detail::has_tuned_prepare). Its host path is the specialisation
// host_tuning::tuned<Variant, Exec> in kcnn/host/<op>.hpp, reached only through `takes_host_tuning`.
// variant::portable<V> asks for V's portable path on any backend.
//
// KCNN_HOST_TUNING=0 (a compile definition, the same in every translation unit of a program)
// leaves kcnn/host/ out of the build: every variant runs its portable source.
#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

#ifndef KCNN_HOST_TUNING
#define KCNN_HOST_TUNING 1
#endif

namespace kcnn {

namespace tunings {
struct portable {
  static constexpr const char* name = "portable";
};
struct host {
  static constexpr const char* name = "host";
};
struct automatic {
  static constexpr const char* name = "automatic";
};
}  // namespace tunings

// True when Exec runs on the host (its memory is host-accessible): Serial, OpenMP, Threads.
// The GPU-model build (KCNN_GPU_MODEL) runs on a host backend and models a GPU: false there.
template <class Exec>
inline constexpr bool host_backend =
#if defined(KCNN_GPU_MODEL)
    false;
#else
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible;
#endif

// Whether this build has the host tunings (kcnn/host/).
inline constexpr bool host_tuning_built = KCNN_HOST_TUNING != 0;

// Whether a run of a host-tunable variant on Exec asked for tuning T takes its host tuning: the
// dispatch condition of every host-tunable variant.
template <class T, class Exec>
inline constexpr bool takes_host_tuning = host_tuning_built && host_backend<Exec> && !std::is_same_v<T, tunings::portable>;

// What the host tuning of a variant that writes a large output (activation_flat, add_flat,
// pool_vector) does with its stores: an output of at least streaming_store_bytes bytes is stored
// non-temporally where the host has such stores (0: every output; never: none). The default,
// half_last_level_cache, is half the last-level cache the host reports (16 MiB where it reports
// none). The portable path ignores it.
struct host_store_options {
  static constexpr std::size_t never = std::size_t(-1);
  static constexpr std::size_t half_last_level_cache = std::size_t(-1) - 1;
  std::size_t streaming_store_bytes = half_last_level_cache;
};

namespace host_tuning {
// A variant's host tuning: specialised, with a static run(exec, operands..., params) (and, for a
// stateful variant, what its state needs), in kcnn/host/<op>.hpp. Never defined for others.
template <class Variant, class Exec, class = void>
struct tuned;
}  // namespace host_tuning

namespace detail {
template <class V, class = void>
struct is_host_tunable : std::false_type {};
template <class V>
struct is_host_tunable<V, std::enable_if_t<V::host_tunable>> : std::true_type {};
// A host-tunable variant whose prepared state differs between its tunings says so:
// `static constexpr bool tuned_prepare = true;` and a member template prepare_tuned<Tuning>.
template <class V, class = void>
struct has_tuned_prepare : std::false_type {};
template <class V>
struct has_tuned_prepare<V, std::enable_if_t<V::tuned_prepare>> : std::true_type {};
}  // namespace detail

namespace variant {
// Variant V on its portable path on every backend (V itself where V has no host tuning). Stateful
// variants keep their state (prepare runs V's portable prepare).
template <class V>
struct portable : V {
  static constexpr bool host_tunable = false;
  portable() = default;
  explicit portable(const V& v) : V(v) {}
  template <class Exec, class... A>
  void run(const Exec& exec, const A&... a) const {
    if constexpr (detail::is_host_tunable<V>::value) V::template run_tuned<tunings::portable>(exec, a...);
    else V::run(exec, a...);
  }
  template <class Exec, class... A>
  void prepare(const Exec& exec, const A&... a) {
    if constexpr (detail::has_tuned_prepare<V>::value) V::template prepare_tuned<tunings::portable>(exec, a...);
    else V::prepare(exec, a...);
  }
};
}  // namespace variant

}  // namespace kcnn
