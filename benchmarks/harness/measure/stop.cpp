#include "measure/stop.hpp"

#include <csignal>

namespace kcnn::bench {

namespace {
// The one state a signal handler may write: a volatile sig_atomic_t at namespace scope (what else
// is process-wide is in harness/README.md).
volatile std::sig_atomic_t stop_signal = 0;
extern "C" void on_stop_signal(int s) { stop_signal = s; }
}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // a read or write in progress goes on; the loops look at the flag
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

int stop_requested() { return int(stop_signal); }

}  // namespace kcnn::bench
