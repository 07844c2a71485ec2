# The CUDA configuration (-DKCNN_CUDA=ON, preset `cuda`): Kokkos with the CUDA backend and Kokkos
# Kernels with its cuBLAS backend, from an install when find_package finds a suitable one, otherwise
# fetched at the pinned releases below and built with this project. Needs only the CUDA toolkit.
#
#   KCNN_KOKKOS_FROM  auto (default): an installed Kokkos >= 4.7.03 (< 5: kcnn is C++17) with CUDA and
#                     an installed Kokkos Kernels, else fetch; installed: that or an error; fetch: always
#                     fetch. Choose an install with -DKokkos_ROOT / -DKokkosKernels_ROOT.
#   KCNN_CUDA_ARCH    the GPU (90, 9.0 or HOPPER90 for an H100/H200); default: nvidia-smi's first GPU.
#
# Fetched sources can be local ones: -DFETCHCONTENT_SOURCE_DIR_KOKKOS=<dir>
# -DFETCHCONTENT_SOURCE_DIR_KOKKOSKERNELS=<dir> (CMake's FetchContent; nothing is downloaded).
# A fetched CUDA Kokkos compiles every target that links it through its kokkos_launch_compiler and
# nvcc_wrapper; CMAKE_CXX_COMPILER stays the host compiler (nvcc's host compiler too), and
# CMAKE_CXX_COMPILER_LAUNCHER (ccache) cannot be combined with that launcher.

# Pinned releases. The hashes are those of the release tarballs as Spack's kokkos and
# kokkos-kernels packages record them.
set(KCNN_KOKKOS_PIN 4.7.03)
set(KCNN_KOKKOS_URL https://github.com/kokkos/kokkos/releases/download/4.7.03/kokkos-4.7.03.tar.gz)
set(KCNN_KOKKOS_SHA256 969e7933b9426219b220f08036e489b3226e6d8cd24eecf2c5b80df8c37443c0)
set(KCNN_KOKKOSKERNELS_PIN 4.7.03)
set(KCNN_KOKKOSKERNELS_URL https://github.com/kokkos/kokkos-kernels/releases/download/4.7.03/kokkos-kernels-4.7.03.tar.gz)
set(KCNN_KOKKOSKERNELS_SHA256 902701e3481b2c535925a02e0918baed6f82186a25297e45314712b0905d9780)

if(CMAKE_VERSION VERSION_LESS 3.21)
  message(FATAL_ERROR "kcnn: the CUDA configuration needs CMake >= 3.21 (this is ${CMAKE_VERSION})")
endif()
set(KCNN_KOKKOS_FROM auto CACHE STRING "CUDA configuration: where Kokkos comes from: auto, installed or fetch")
set_property(CACHE KCNN_KOKKOS_FROM PROPERTY STRINGS auto installed fetch)
set(KCNN_CUDA_ARCH "" CACHE STRING "CUDA configuration: the GPU (90, 9.0 or HOPPER90); empty: detected with nvidia-smi")
if(NOT KCNN_KOKKOS_FROM MATCHES "^(auto|installed|fetch)$")
  message(FATAL_ERROR "kcnn: KCNN_KOKKOS_FROM=${KCNN_KOKKOS_FROM}: expected auto, installed or fetch")
endif()

include(KcnnCudaArch)
kcnn_cuda_arch(KCNN_CUDA_CC KCNN_CUDA_KOKKOS_ARCH _kcnn_arch_how)
message(STATUS "kcnn: CUDA configuration: GPU ${KCNN_CUDA_KOKKOS_ARCH} (${_kcnn_arch_how})")

# An installed Kokkos, looked at by a CMake run of its own (cmake/kokkos-probe): whatever it finds
# leaves nothing behind in this configuration.
set(_kcnn_use_installed FALSE)
set(_kcnn_why_not "")
if(NOT KCNN_KOKKOS_FROM STREQUAL "fetch")
  set(_kcnn_probe_args)
  foreach(_v IN ITEMS Kokkos_ROOT KokkosKernels_ROOT Kokkos_DIR KokkosKernels_DIR CMAKE_PREFIX_PATH CMAKE_CXX_COMPILER)
    if(DEFINED ${_v} AND NOT "${${_v}}" STREQUAL "")
      string(REPLACE ";" "\\;" _value "${${_v}}")
      list(APPEND _kcnn_probe_args "-D${_v}=${_value}")
    endif()
  endforeach()
  file(REMOVE_RECURSE ${CMAKE_BINARY_DIR}/kokkos-probe)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${CMAKE_CURRENT_LIST_DIR}/kokkos-probe
                          -B ${CMAKE_BINARY_DIR}/kokkos-probe ${_kcnn_probe_args}
                  OUTPUT_VARIABLE _kcnn_probe_out ERROR_VARIABLE _kcnn_probe_err RESULT_VARIABLE _kcnn_probe_rc)
  foreach(_v IN ITEMS Kokkos_FOUND Kokkos_VERSION Kokkos_DEVICES Kokkos_ARCH Kokkos_DIR
                      KokkosKernels_FOUND KokkosKernels_VERSION KokkosKernels_DIR)
    set(KCNN_PROBE_${_v} "")
    if(_kcnn_probe_out MATCHES "KCNN_PROBE_${_v}=([^\n]*)")
      string(REPLACE "," ";" KCNN_PROBE_${_v} "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  if(NOT _kcnn_probe_rc EQUAL 0)
    set(_kcnn_why_not "looking for it failed: ${_kcnn_probe_err}")
  elseif(NOT KCNN_PROBE_Kokkos_FOUND)
    set(_kcnn_why_not "find_package(Kokkos) found none")
  elseif(KCNN_PROBE_Kokkos_VERSION VERSION_LESS KCNN_KOKKOS_PIN OR NOT KCNN_PROBE_Kokkos_VERSION VERSION_LESS 5)
    set(_kcnn_why_not "Kokkos ${KCNN_PROBE_Kokkos_VERSION} at ${KCNN_PROBE_Kokkos_DIR} is not in [${KCNN_KOKKOS_PIN}, 5)")
  elseif(NOT "CUDA" IN_LIST KCNN_PROBE_Kokkos_DEVICES)
    set(_kcnn_why_not "Kokkos at ${KCNN_PROBE_Kokkos_DIR} has no CUDA backend (${KCNN_PROBE_Kokkos_DEVICES})")
  elseif(NOT KCNN_PROBE_KokkosKernels_FOUND)
    set(_kcnn_why_not "find_package(KokkosKernels) found none beside Kokkos ${KCNN_PROBE_Kokkos_VERSION}")
  elseif(KCNN_PROBE_KokkosKernels_VERSION VERSION_LESS KCNN_KOKKOSKERNELS_PIN)
    set(_kcnn_why_not "Kokkos Kernels ${KCNN_PROBE_KokkosKernels_VERSION} at ${KCNN_PROBE_KokkosKernels_DIR} is older than ${KCNN_KOKKOSKERNELS_PIN}")
  else()
    set(_kcnn_use_installed TRUE)
  endif()
  if(NOT _kcnn_use_installed AND KCNN_KOKKOS_FROM STREQUAL "installed")
    message(FATAL_ERROR "kcnn: KCNN_KOKKOS_FROM=installed, but ${_kcnn_why_not}; "
      "give -DKokkos_ROOT=<a Kokkos >= ${KCNN_KOKKOS_PIN} install with CUDA> or -DKCNN_KOKKOS_FROM=fetch")
  endif()
endif()

if(_kcnn_use_installed)
  set(Kokkos_DIR "${KCNN_PROBE_Kokkos_DIR}" CACHE PATH "" FORCE)
  set(KokkosKernels_DIR "${KCNN_PROBE_KokkosKernels_DIR}" CACHE PATH "" FORCE)
  include(KcnnKokkos)
  set(KCNN_KOKKOS_ORIGIN "installed (${Kokkos_DIR})")
  if(KCNN_CUDA_KOKKOS_ARCH AND NOT "${KCNN_CUDA_KOKKOS_ARCH}" IN_LIST Kokkos_ARCH)
    message(WARNING "kcnn: the installed Kokkos is built for ${Kokkos_ARCH}, the GPU is ${KCNN_CUDA_KOKKOS_ARCH} "
      "(${_kcnn_arch_how}): its kernels may not load; rebuild it with -DKokkos_ARCH_${KCNN_CUDA_KOKKOS_ARCH}=ON "
      "or configure kcnn with -DKCNN_KOKKOS_FROM=fetch")
  endif()
else()
  if(NOT KCNN_KOKKOS_FROM STREQUAL "fetch")
    message(STATUS "kcnn: no suitable installed Kokkos (${_kcnn_why_not}): fetching Kokkos ${KCNN_KOKKOS_PIN} "
      "and Kokkos Kernels ${KCNN_KOKKOSKERNELS_PIN}")
  endif()
  if(NOT KCNN_CUDA_KOKKOS_ARCH)
    message(FATAL_ERROR "kcnn: the CUDA configuration needs the GPU's architecture: ${_kcnn_arch_how}. "
      "On a machine without the GPU, give it: -DKCNN_CUDA_ARCH=90 (H100/H200), 80 (A100), 89 (L40S), ...")
  endif()
  # nvcc_wrapper runs `nvcc` from PATH (or $CUDA_ROOT/bin), at configure time and in every compile.
  find_program(KCNN_NVCC_ON_PATH nvcc NO_CACHE NO_CMAKE_PATH NO_CMAKE_ENVIRONMENT_PATH NO_CMAKE_SYSTEM_PATH)
  if(NOT KCNN_NVCC_ON_PATH AND NOT EXISTS "$ENV{CUDA_ROOT}/bin/nvcc")
    message(FATAL_ERROR "kcnn: the fetched CUDA Kokkos compiles through nvcc_wrapper, which runs nvcc from PATH: "
      "nvcc is not on PATH; e.g. export PATH=/usr/local/cuda/bin:$PATH (or CUDA_ROOT=/usr/local/cuda) and configure again")
  endif()
  if(CMAKE_CXX_COMPILER_LAUNCHER)
    message(FATAL_ERROR "kcnn: a fetched CUDA Kokkos compiles through its own launcher (nvcc_wrapper); "
      "configure without CMAKE_CXX_COMPILER_LAUNCHER (${CMAKE_CXX_COMPILER_LAUNCHER})")
  endif()
  include(FetchContent)
  if(POLICY CMP0135)
    cmake_policy(SET CMP0135 NEW)  # extracted files get the extraction time: rebuilds follow a new pin
  endif()
  # Kokkos: CUDA for the GPU found, Serial on the host (kcnn's host references use their own
  # threads), and under GCC 12 the legacy View: GCC 12, also as nvcc's host compiler, miscompiles
  # the mdspan-based View's default constructor (docs/kokkos.md).
  set(Kokkos_ENABLE_CUDA ON CACHE BOOL "")
  set(Kokkos_ENABLE_SERIAL ON CACHE BOOL "")
  # One GPU architecture: a build folder reconfigured for another GPU forgets the previous one.
  foreach(_name IN LISTS _kcnn_cuda_arches)
    if(NOT _name MATCHES "^[0-9]+$" AND DEFINED CACHE{Kokkos_ARCH_${_name}})
      set(Kokkos_ARCH_${_name} OFF CACHE BOOL "" FORCE)
    endif()
  endforeach()
  set(Kokkos_ARCH_${KCNN_CUDA_KOKKOS_ARCH} ON CACHE BOOL "" FORCE)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    set(Kokkos_ENABLE_IMPL_VIEW_LEGACY ON CACHE BOOL "")
  endif()
  # Kokkos Kernels: the BLAS component with its cuBLAS backend and no explicit instantiation (kcnn
  # instantiates the few GEMMs it calls): a build of about a minute instead of an hour.
  set(KokkosKernels_ENABLE_ALL_COMPONENTS OFF CACHE BOOL "")
  set(KokkosKernels_ENABLE_COMPONENT_BLAS ON CACHE BOOL "")
  set(KokkosKernels_ENABLE_TPL_CUBLAS ON CACHE BOOL "")
  set(KokkosKernels_ENABLE_SUPERNODAL_SPTRSV OFF CACHE BOOL "")  # sparse, and needs an instantiation
  foreach(_inst FLOAT DOUBLE COMPLEX_FLOAT COMPLEX_DOUBLE LAYOUTLEFT LAYOUTRIGHT OFFSET_INT OFFSET_SIZE_T
                ORDINAL_INT ORDINAL_INT64_T)
    set(KokkosKernels_INST_${_inst} OFF CACHE BOOL "")
  endforeach()
  FetchContent_Declare(kokkos URL ${KCNN_KOKKOS_URL} URL_HASH SHA256=${KCNN_KOKKOS_SHA256})
  FetchContent_Declare(kokkoskernels URL ${KCNN_KOKKOSKERNELS_URL} URL_HASH SHA256=${KCNN_KOKKOSKERNELS_SHA256})
  FetchContent_MakeAvailable(kokkos kokkoskernels)

  # What the consumer side of an install would give (KcnnKokkos.cmake): the targets under kcnn's
  # names, their headers as system headers (as an imported target's are: their own warnings, e.g.
  # CUDA 13's deprecation of double4 in Kokkos Kernels' batched SIMD, are not kcnn's), the
  # versions and the backends.
  foreach(_t IN ITEMS kokkoscore kokkoscontainers kokkosalgorithms kokkossimd kokkoskernels)
    if(TARGET ${_t})
      get_target_property(_inc ${_t} INTERFACE_INCLUDE_DIRECTORIES)
      if(_inc)
        set_property(TARGET ${_t} APPEND PROPERTY INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${_inc})
      endif()
    endif()
  endforeach()
  if(NOT TARGET Kokkos::kokkoskernels)
    add_library(Kokkos::kokkoskernels ALIAS kokkoskernels)
  endif()
  file(STRINGS "${kokkos_SOURCE_DIR}/CMakeLists.txt" _v REGEX "^set\\(Kokkos_VERSION_(MAJOR|MINOR|PATCH) ")
  string(REGEX REPLACE "[^;]*_(MAJOR|MINOR|PATCH) ([0-9]+)\\)" "\\2" _v "${_v}")
  string(REPLACE ";" "." Kokkos_VERSION "${_v}")
  file(STRINGS "${kokkoskernels_SOURCE_DIR}/CMakeLists.txt" _v REGEX "^SET\\(KokkosKernels_VERSION_(MAJOR|MINOR|PATCH) ")
  string(REGEX REPLACE "[^;]*_(MAJOR|MINOR|PATCH) ([0-9]+)\\)" "\\2" _v "${_v}")
  string(REPLACE ";" "." KokkosKernels_VERSION "${_v}")
  set(KCNN_KOKKOS_BACKENDS CUDA SERIAL)
  set(KCNN_KOKKOS_ORIGIN "fetched (${kokkos_SOURCE_DIR})")
  foreach(_dep IN ITEMS KOKKOS KOKKOSKERNELS)
    if(FETCHCONTENT_SOURCE_DIR_${_dep})
      message(STATUS "kcnn: ${_dep} sources from FETCHCONTENT_SOURCE_DIR_${_dep}=${FETCHCONTENT_SOURCE_DIR_${_dep}} "
        "instead of the pinned release")
    endif()
  endforeach()
  if(NOT Kokkos_VERSION VERSION_EQUAL KCNN_KOKKOS_PIN OR NOT KokkosKernels_VERSION VERSION_EQUAL KCNN_KOKKOSKERNELS_PIN)
    message(STATUS "kcnn: these sources are Kokkos ${Kokkos_VERSION} and Kokkos Kernels ${KokkosKernels_VERSION}, "
      "not the pinned ${KCNN_KOKKOS_PIN} and ${KCNN_KOKKOSKERNELS_PIN}")
  endif()
  message(STATUS "kcnn: Kokkos ${Kokkos_VERSION} fetched, built here")
  message(STATUS "kcnn: Kokkos backends: ${KCNN_KOKKOS_BACKENDS}")
  message(STATUS "kcnn: Kokkos Kernels ${KokkosKernels_VERSION} fetched, built here (BLAS, cuBLAS backend)")
endif()

# The native CUDA kernels (benchmarks/native_cuda) are built for the same GPU.
if(KCNN_CUDA_CC AND NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES ${KCNN_CUDA_CC})
endif()
message(STATUS "kcnn: CUDA configuration: Kokkos ${KCNN_KOKKOS_ORIGIN}")
