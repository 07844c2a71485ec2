# Finds Kokkos and Kokkos Kernels and guarantees the targets Kokkos::kokkos and
# Kokkos::kokkoskernels.
#
# A healthy install (Kokkos >= 4, chosen with -DKokkos_ROOT=... / -DKokkosKernels_ROOT=...)
# exports both targets correctly and this file only reports what it found.
#
# Debian's Trilinos packaging of Kokkos 3.4.1 (libtrilinos-kokkos-dev) is broken:
#   - Kokkos::kokkos carries the include directory /usr/lib/include, which does not exist
#     (the headers live in <prefix>/include/trilinos);
#   - there is no Kokkos::kokkoskernels target (only trilinos_kokkoskernels) and
#     KokkosKernels_VERSION is empty.
# The shim below repairs exactly those two things, and only when they are broken.

find_package(Kokkos CONFIG REQUIRED)

set(KCNN_KOKKOS_SHIM OFF)
if(TARGET Kokkos::kokkos)
  get_target_property(_kcnn_kk_inc Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
  set(_kcnn_kk_inc_ok TRUE)
  if(_kcnn_kk_inc)
    foreach(_d IN LISTS _kcnn_kk_inc)
      # Generator expressions (healthy installs) cannot be checked here; plain paths can.
      if(NOT _d MATCHES "^\\$<" AND NOT EXISTS "${_d}")
        set(_kcnn_kk_inc_ok FALSE)
      endif()
    endforeach()
  endif()
  if(NOT _kcnn_kk_inc_ok AND Kokkos_INCLUDE_DIRS)
    # Trilinos packaging: point the target at the directory that really holds Kokkos_Core.hpp.
    set_property(TARGET Kokkos::kokkos PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${Kokkos_INCLUDE_DIRS}")
    set(KCNN_KOKKOS_SHIM ON)
  endif()
elseif(Kokkos_INCLUDE_DIRS AND Kokkos_LIBRARIES)
  add_library(Kokkos::kokkos INTERFACE IMPORTED)
  set_target_properties(Kokkos::kokkos PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${Kokkos_INCLUDE_DIRS}"
    INTERFACE_LINK_LIBRARIES "${Kokkos_LIBRARIES}")
  set(KCNN_KOKKOS_SHIM ON)
else()
  message(FATAL_ERROR "kcnn: Kokkos found at ${Kokkos_DIR} exports no usable target")
endif()

find_package(KokkosKernels CONFIG REQUIRED)
if(NOT TARGET Kokkos::kokkoskernels)
  if(TARGET trilinos_kokkoskernels)
    add_library(Kokkos::kokkoskernels INTERFACE IMPORTED)
    set_target_properties(Kokkos::kokkoskernels PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${KokkosKernels_INCLUDE_DIRS}"
      INTERFACE_LINK_LIBRARIES "trilinos_kokkoskernels;Kokkos::kokkos")
    set(KCNN_KOKKOS_SHIM ON)
  else()
    message(FATAL_ERROR "kcnn: Kokkos Kernels found at ${KokkosKernels_DIR} exports no usable target")
  endif()
endif()
if(NOT KokkosKernels_VERSION)
  # Trilinos ships Kokkos Kernels in lock-step with Kokkos.
  set(KokkosKernels_VERSION "${Kokkos_VERSION}")
endif()

# Backends: Kokkos >= 4 exports Kokkos_DEVICES; the Trilinos packaging does too (SERIAL).
set(KCNN_KOKKOS_BACKENDS "${Kokkos_DEVICES}")
message(STATUS "kcnn: Kokkos ${Kokkos_VERSION} from ${Kokkos_DIR}")
message(STATUS "kcnn: Kokkos backends: ${KCNN_KOKKOS_BACKENDS}")
message(STATUS "kcnn: Kokkos Kernels ${KokkosKernels_VERSION} from ${KokkosKernels_DIR}")
if(KCNN_KOKKOS_SHIM)
  message(STATUS "kcnn: repaired broken Kokkos CMake targets (Trilinos packaging)")
endif()
