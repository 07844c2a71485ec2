# ctest driver: `kcnn-bench --catalogue` must print docs/catalogue.md byte for byte (regenerate it
# with `build/benchmarks/kcnn-bench --catalogue > docs/catalogue.md` after changing a registration).
execute_process(COMMAND ${BENCH} --catalogue OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kcnn-bench --catalogue failed (${rc})")
endif()
file(READ ${COMMITTED} committed)
if(NOT generated STREQUAL committed)
  file(WRITE ${GENERATED} "${generated}")
  message(FATAL_ERROR "docs/catalogue.md differs from what this build registers; compare with ${GENERATED} "
                      "(regenerate: kcnn-bench --catalogue > docs/catalogue.md)")
endif()
