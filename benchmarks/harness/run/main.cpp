#include "run/runner.hpp"

int main(int argc, char** argv) { return kcnn::bench::run_main(argc, argv); }
