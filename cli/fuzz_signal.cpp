// Stop signals of a fuzz campaign (fuzz_signal.hpp).
#include "cli/fuzz_signal.hpp"

#include <csignal>
#include <cstdio>

namespace headroom::cli {

namespace {

volatile std::sig_atomic_t caught = 0;

extern "C" void on_stop_signal(int sig) { caught = sig; }

}  // namespace

void install_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;  // the next one of the same signal has its default effect
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int stop_signal() { return caught; }

const char* signal_name(int sig) {
  if (sig == SIGINT) return "SIGINT";
  if (sig == SIGTERM) return "SIGTERM";
  static char text[32];
  std::snprintf(text, sizeof text, "signal %d", sig);
  return text;
}

}  // namespace headroom::cli
