# ctest driver: `kcnn-bench --catalogue` against docs/catalogue.md (regenerate it with
# `build/benchmarks/kcnn-bench --catalogue > docs/catalogue.md` after changing a registration).
# The committed file is the reference build's (a host backend with oneDNN: CI's). On that build
# the two must be equal byte for byte. Any other build (HAS: what it has of oneDNN, CUDA, cuDNN,
# cuBLAS) compares the lines it can produce: the lines marked `(needs X)` for an X it lacks are
# dropped from the committed file, those for an X the reference build lacks from the generated
# one, and the "Not on this build" section (which says what each build lacks) from both; a CUDA
# build also drops the committed file's `portable` tunings (registered on host builds only).
cmake_minimum_required(VERSION 3.21)  # IN_LIST
execute_process(COMMAND ${BENCH} --catalogue OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kcnn-bench --catalogue failed (${rc})")
endif()
file(READ ${COMMITTED} committed)
string(REPLACE "," ";" HAS "${HAS}")
set(reference_has oneDNN)
set(all_needs oneDNN CUDA cuDNN cuBLAS)

function(comparable text keep out)
  string(FIND "${text}" "\n## Not on this build" at)
  if(at GREATER -1)
    string(SUBSTRING "${text}" 0 ${at} text)
  endif()
  foreach(x ${all_needs})
    if(NOT x IN_LIST keep)
      string(REGEX REPLACE "[^\n]*\\(needs ${x}\\)[^\n]*\n" "" text "${text}")
    endif()
  endforeach()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

if(HAS STREQUAL reference_has)
  set(what "byte for byte (the reference build)")
else()
  set(common)
  foreach(x ${HAS})
    if(x IN_LIST reference_has)
      list(APPEND common ${x})
    endif()
  endforeach()
  comparable("${committed}" "${common}" committed)
  comparable("${generated}" "${common}" generated)
  set(what "in the lines a build with '${HAS}' produces (those marked (needs X) for another X left out)")
  # A build whose default execution space is a GPU registers no `portable` tunings (there the
  # untuned key is the portable source: kcnn/tuning.hpp).
  if("CUDA" IN_LIST HAS)
    string(REGEX REPLACE "[^\n]*\| `[a-z0-9_]*\.?portable` \|[^\n]*\n" "" committed "${committed}")
    string(APPEND what ", the host's portable tunings left out")
  endif()
endif()
if(NOT generated STREQUAL committed)
  file(WRITE ${GENERATED} "${generated}")
  file(WRITE ${GENERATED}.committed "${committed}")
  message(FATAL_ERROR "docs/catalogue.md differs from what this build registers, ${what}; compare "
                      "${GENERATED} with ${GENERATED}.committed (regenerate on a host build with oneDNN: "
                      "kcnn-bench --catalogue > docs/catalogue.md)")
endif()
message(STATUS "catalogue_is_current: equal ${what}")
