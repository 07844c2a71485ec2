# Writes OUTPUT, a header of the commit and tree state the harness is being built from, at every
# build (cmake -P, from the kcnn_build_info target), rewriting it only when they change, so that a
# binary records the source it was compiled from: a value taken at configure time went stale when
# a tree was edited, committed and rebuilt without reconfiguring (an H200 run of 2026-11-27
# recorded the commit before the one it ran). Inputs: SOURCE_DIR, OUTPUT, GIT_EXECUTABLE (may be
# empty), FALLBACK_COMMIT and FALLBACK_CLEAN (the KCNN_GIT_COMMIT / KCNN_GIT_CLEAN cache values,
# used when SOURCE_DIR is not the top of a git checkout, e.g. a release tarball).
set(commit "${FALLBACK_COMMIT}")
set(clean "${FALLBACK_CLEAN}")
if(GIT_EXECUTABLE AND NOT FALLBACK_COMMIT)
  # Only a checkout whose top level is SOURCE_DIR (kcnn's own repository or submodule): a copy of
  # the sources inside another project's repository would record that project's commit.
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" rev-parse --show-toplevel
                  OUTPUT_VARIABLE top OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  get_filename_component(top "${top}" REALPATH)
  get_filename_component(source_real "${SOURCE_DIR}" REALPATH)
  if(rc EQUAL 0 AND top STREQUAL source_real)
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" rev-parse HEAD
                    OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  else()
    set(rc 1)
  endif()
  if(rc EQUAL 0)
    execute_process(COMMAND "${GIT_EXECUTABLE}" --no-optional-locks -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE status OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
    if(rc EQUAL 0)
      set(commit "${head}")
      if(status STREQUAL "")
        set(clean 1)
      else()
        set(clean 0)
      endif()
    endif()
  endif()
endif()
set(content "// Generated at build time by benchmarks/cmake/kcnn_build_info.cmake: do not edit.\n#pragma once\n#define KCNN_BUILD_GIT_COMMIT \"${commit}\"\n#define KCNN_BUILD_GIT_CLEAN \"${clean}\"\n")
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUTPUT}" "${content}")
endif()
