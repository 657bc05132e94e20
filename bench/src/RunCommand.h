//===- RunCommand.h - dlc-bench MODEL...: run and sweep ----------*- C++ -*-===//

#ifndef DLC_BENCH_RUNCOMMAND_H
#define DLC_BENCH_RUNCOMMAND_H

namespace dlc::bench {

/// `dlc-bench MODEL... [flags]`: parses the command line (`overview` heads
/// --help), compiles and times every configuration of the sweep, or
/// predicts them (--predict), and writes the report. Returns the exit code.
int runBench(int argc, char **argv, const char *overview);

} // namespace dlc::bench

#endif // DLC_BENCH_RUNCOMMAND_H
