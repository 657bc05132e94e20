//===- Interrupt.cpp - SIGINT and SIGTERM end a run, keeping what finished -===//

#include "Interrupt.h"

#include <atomic>
#include <csignal>

namespace dlc::bench {

namespace {

std::atomic<int> caught{0};
static_assert(std::atomic<int>::is_always_lock_free, "a handler may store only lock-free atomics");

extern "C" void onInterrupt(int signal) {
  caught.store(signal);
  std::signal(signal, SIG_DFL); // a second one ends the process
}

} // namespace

void catchInterrupts() {
  static bool installed = false;
  if (installed)
    return;
  installed = true;
  std::signal(SIGINT, onInterrupt);
  std::signal(SIGTERM, onInterrupt);
}

int interruptSignal() { return caught.load(); }

std::string interruptName() {
  switch (caught.load()) {
  case SIGINT:
    return "SIGINT";
  case SIGTERM:
    return "SIGTERM";
  case 0:
    return "";
  default:
    return "signal " + std::to_string(caught.load());
  }
}

} // namespace dlc::bench
