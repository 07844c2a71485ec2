# ctest driver: install kcnn into a scratch prefix, then configure, build and run the
# consumer project against it with find_package(kcnn).
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
execute_process(COMMAND ${CMAKE_COMMAND} -S ${INSTALLED_CONSUMER} -B ${WORK_DIR}/build
                  -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DKokkos_DIR=${Kokkos_DIR}
                  -DKokkosKernels_DIR=${KokkosKernels_DIR} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer configure failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer build failed")
endif()
execute_process(COMMAND ${WORK_DIR}/build/consumer RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer run failed")
endif()
