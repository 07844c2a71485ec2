# The GPU architecture of the CUDA configuration (KcnnKokkosCuda.cmake), and its detection.
#
# kcnn_cuda_arch(<cc_var> <kokkos_arch_var> <how_var>) sets
#   <cc_var>          the compute capability without the dot (90 for an H100/H200),
#   <kokkos_arch_var> Kokkos' name for it (HOPPER90), the suffix of its Kokkos_ARCH_ option,
#   <how_var>         where it came from, for configure's report,
# from KCNN_CUDA_ARCH when it is set (a compute capability, 90 or 9.0, or a Kokkos name, HOPPER90),
# and otherwise from the first GPU `nvidia-smi --query-gpu=compute_cap` lists. Neither: both
# result variables are empty and <how_var> says why.
#
# Run as a script (cmake [-DKCNN_CUDA_ARCH=...] -P KcnnCudaArch.cmake) it prints
# `cc=<cc> kokkos=<arch> how=<how>`, and exits 1 when nothing was found: what configure would take.

set(_kcnn_cuda_arches
  50 MAXWELL50 52 MAXWELL52 53 MAXWELL53 60 PASCAL60 61 PASCAL61 70 VOLTA70 72 VOLTA72
  75 TURING75 80 AMPERE80 86 AMPERE86 87 AMPERE87 89 ADA89 90 HOPPER90 100 BLACKWELL100
  120 BLACKWELL120)

function(kcnn_cuda_arch cc_var arch_var how_var)
  set(_cc "")
  set(_how "")
  if(KCNN_CUDA_ARCH)
    string(TOUPPER "${KCNN_CUDA_ARCH}" _given)
    string(REPLACE "." "" _given_cc "${_given}")
    list(FIND _kcnn_cuda_arches "${_given}" _at_name)
    list(FIND _kcnn_cuda_arches "${_given_cc}" _at_cc)
    if(_at_name GREATER -1 AND NOT _given MATCHES "^[0-9]")
      math(EXPR _at "${_at_name} - 1")
      list(GET _kcnn_cuda_arches ${_at} _cc)
    elseif(_at_cc GREATER -1 AND _given_cc MATCHES "^[0-9]+$")
      set(_cc "${_given_cc}")
    else()
      message(FATAL_ERROR "kcnn: KCNN_CUDA_ARCH=${KCNN_CUDA_ARCH} is neither a compute capability "
        "nor a Kokkos architecture kcnn knows (e.g. 90, 9.0 or HOPPER90 for an H100/H200; 80 for an A100)")
    endif()
    set(_how "KCNN_CUDA_ARCH=${KCNN_CUDA_ARCH}")
  else()
    find_program(_kcnn_nvidia_smi nvidia-smi NO_CACHE)
    if(NOT _kcnn_nvidia_smi)
      set(_how "no nvidia-smi on PATH and KCNN_CUDA_ARCH not given")
    else()
      execute_process(COMMAND "${_kcnn_nvidia_smi}" --query-gpu=compute_cap --format=csv,noheader
                      OUTPUT_VARIABLE _out RESULT_VARIABLE _rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
      string(REGEX MATCH "^[ \t]*([0-9]+)\\.([0-9])" _first "${_out}")
      if(NOT _rc EQUAL 0 OR NOT _first)
        set(_how "nvidia-smi found no GPU (exit ${_rc}) and KCNN_CUDA_ARCH not given")
      else()
        set(_cc "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
        set(_how "nvidia-smi: compute capability ${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
        list(FIND _kcnn_cuda_arches "${_cc}" _at_cc)
        if(_at_cc EQUAL -1)
          message(FATAL_ERROR "kcnn: the GPU's compute capability ${CMAKE_MATCH_1}.${CMAKE_MATCH_2} (nvidia-smi) "
            "has no Kokkos architecture kcnn knows; give the nearest one with -DKCNN_CUDA_ARCH=")
        endif()
      endif()
    endif()
  endif()
  set(_arch "")
  if(_cc)
    list(FIND _kcnn_cuda_arches "${_cc}" _at)
    math(EXPR _at "${_at} + 1")
    list(GET _kcnn_cuda_arches ${_at} _arch)
  endif()
  set(${cc_var} "${_cc}" PARENT_SCOPE)
  set(${arch_var} "${_arch}" PARENT_SCOPE)
  set(${how_var} "${_how}" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  kcnn_cuda_arch(_cc _arch _how)
  if(NOT _cc)
    message(FATAL_ERROR "cc= kokkos= how=${_how}")  # exit status 1
  endif()
  message("cc=${_cc} kokkos=${_arch} how=${_how}")
endif()
