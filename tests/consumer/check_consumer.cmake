# ctest driver: install kcnn into a scratch prefix, then configure, build and run the
# consumer project against it with find_package(kcnn), warnings as errors.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${KCNN_BINARY_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed")
endif()
# The install ships the consumer example (share/kcnn/examples/consumer): build that copy.
set(INSTALLED_CONSUMER ${WORK_DIR}/prefix/share/kcnn/examples/consumer)
foreach(f CMakeLists.txt main.cpp)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${CONSUMER_SOURCE_DIR}/${f} ${INSTALLED_CONSUMER}/${f}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the installed consumer example ${INSTALLED_CONSUMER}/${f} is missing or differs from ${CONSUMER_SOURCE_DIR}/${f}")
  endif()
endforeach()
# The portable sources alone (kcnn/tuning.hpp): a copy of the install without kcnn/host/, so that
# a header that still reached the host tuning would not compile.
file(COPY ${WORK_DIR}/prefix/ DESTINATION ${WORK_DIR}/prefix_portable)
file(REMOVE_RECURSE ${WORK_DIR}/prefix_portable/include/kcnn/host)
# Built as a user would, warnings as errors: at plain -O2 (no -march: a host without AVX-512 code
# generation, where GCC notes vectors passed by value; the flow-based warnings need optimisation);
# and the portable sources alone, host tuning off, for a generic x86-64 (no vector ISA beyond SSE2),
# at the compiler's default optimisation (-O0, which a build of the whole install at the defaults
# would only repeat; an -O2 build of every op is most of this test's time).
foreach(flags "-O2" "-march=x86-64 -DKCNN_HOST_TUNING=0")
  string(REGEX REPLACE "[^A-Za-z0-9]" "" tag "default${flags}")
  set(prefix ${WORK_DIR}/prefix)
  if(flags MATCHES "KCNN_HOST_TUNING=0")
    set(prefix ${WORK_DIR}/prefix_portable)
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${INSTALLED_CONSUMER} -B ${WORK_DIR}/build_${tag}
                    -DCMAKE_PREFIX_PATH=${prefix} -DKokkos_DIR=${Kokkos_DIR}
                    -DKokkosKernels_DIR=${KokkosKernels_DIR} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
                    "-DCMAKE_CXX_FLAGS=${flags} -Wall -Wextra -Werror"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer configure failed (flags '${flags} -Wall -Wextra -Werror')")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build_${tag} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer build failed (flags '${flags} -Wall -Wextra -Werror')")
  endif()
  execute_process(COMMAND ${WORK_DIR}/build_${tag}/consumer RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer run failed (flags '${flags} -Wall -Wextra -Werror')")
  endif()
endforeach()
