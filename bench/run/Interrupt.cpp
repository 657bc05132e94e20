//===- Interrupt.cpp - SIGINT and SIGTERM end a run, keeping what finished -===//

#include "Interrupt.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>
#include <unistd.h>

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

namespace {
// Written before any signal can come: a handler may only write(2) it.
char endedLine[256];
size_t endedLength = 0;

extern "C" void onMpirunEnd(int signal) {
  if (endedLength)
    (void)!write(STDERR_FILENO, endedLine, endedLength);
  std::signal(signal, SIG_DFL);
  raise(signal);
}
} // namespace

void sayWhenMpirunEndsThisRank(const std::string &tool, int rank) {
  std::string line = tool + ": rank " + std::to_string(rank) +
                     " was ended by mpirun (SIGTERM): another rank of the job died or "
                     "failed; mpirun's message names it\n";
  endedLength = std::min(line.size(), sizeof endedLine);
  std::memcpy(endedLine, line.data(), endedLength);
  std::signal(SIGTERM, onMpirunEnd);
}

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
