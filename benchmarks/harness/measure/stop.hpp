#pragma once
// A stop asked by SIGINT or SIGTERM. Whatever runs checks it where stopping leaves nothing half
// done (between ceiling samples, before each case, between and inside forward passes): the step
// in progress ends, the rest is skipped, the files are closed as usual and kcnn-bench exits with
// 128 + the signal. The handlers are installed first thing in run_main, before MPI and Kokkos, and
// whatever the disposition the process inherited: a script's `cmd &` starts it with SIGINT
// ignored, and a signal sent during the ceilings (seconds) was lost.
namespace kcnn::bench {

void install_stop_handlers();
// The signal that asked to stop, 0 if none.
int stop_requested();

}  // namespace kcnn::bench
