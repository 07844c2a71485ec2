// GoogleTest main with Kokkos initialised once for every test. Listing the tests (CTest's
// discovery runs --gtest_list_tests at build time) initialises nothing: on a GPU build it must
// work on a machine without a usable device, such as a build node.
#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (::testing::GTEST_FLAG(list_tests)) return RUN_ALL_TESTS();  // lists and returns, runs nothing
  Kokkos::initialize(argc, argv);
  const int rc = RUN_ALL_TESTS();
  Kokkos::finalize();
  return rc;
}
