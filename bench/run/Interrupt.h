//===- Interrupt.h - SIGINT and SIGTERM end a run, keeping what finished -*- C++ -*-===//
//
// Ctrl-C two minutes into a sweep must not throw away the configurations
// that finished. The first SIGINT or SIGTERM sets a flag and nothing else
// (the only thing a handler may safely do): a single-rank step loop stops
// after its step, the sweep starts nothing new, and dlc-bench writes the
// report with the finished rows and the interrupted one marked. The handler
// restores the default action, so a second signal ends the process at once.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_RUN_INTERRUPT_H
#define DLC_BENCH_RUN_INTERRUPT_H

#include <string>

namespace dlc::bench {

/// Installs the handlers (once; later calls do nothing).
void catchInterrupts();
/// The signal that asked the run to stop (SIGINT, SIGTERM), or 0.
int interruptSignal();
/// "SIGINT", "SIGTERM", or "" when none came.
std::string interruptName();

/// Under mpirun: a rank that mpirun terminates (it does when another rank
/// of the job died or failed) says so in one line on stderr, naming itself,
/// before it ends as the signal would have ended it. mpirun's own message
/// names the rank that died.
void sayWhenMpirunEndsThisRank(const std::string &tool, int rank);

} // namespace dlc::bench

#endif // DLC_BENCH_RUN_INTERRUPT_H
