// Runs every example of docs/library.md. A program using kcnn initialises Kokkos once, runs
// kernels on an execution space, and finalises Kokkos after its last View is gone.
#include <kcnn/kcnn.hpp>

#include <cstdio>

#include "conv2d.cpp"
#include "fc.cpp"
#include "pool.cpp"
#include "activation.cpp"
#include "lrn.cpp"
#include "batchnorm.cpp"
#include "softmax.cpp"
#include "add.cpp"
#include "concat.cpp"
#include "transform.cpp"

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  int failures = 0;
  {  // every tensor and View is released before Kokkos::finalize
    failures += !example_conv2d();
    failures += !example_fc();
    failures += !example_pool();
    failures += !example_activation();
    failures += !example_lrn();
    failures += !example_batchnorm();
    failures += !example_softmax();
    failures += !example_add();
    failures += !example_concat();
    failures += !example_transform();
  }
  Kokkos::finalize();
  std::printf("%d example(s) failed\n", failures);
  return failures == 0 ? 0 : 1;
}
