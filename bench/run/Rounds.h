//===- Rounds.h - a sweep's configurations timed in rounds ------*- C++ -*-===//
//
// Timed one after another, configurations meet different hosts: load that
// comes and goes during a long sweep lands on whichever ran then, and shows
// as a speed-up. In rounds (ABCABC...: each round one repeat of every
// configuration, each with its own warm-up before its timed steps) slow
// drift falls on all of them alike, and the confidence intervals show what
// is left. Each configuration's executor is freed after its turn, so a
// sweep holds one configuration's memory at a time.
//
// What is finished: a configuration whose every repeat ran. One stopped by
// a signal mid-round has no figures in the report ("interrupted ... in
// repeat k of R" for the one that ran, "interrupted after k of R repeats"
// for the others, "not run" for those that never had a turn), and
// --resume runs it again from its first repeat: repeats from two runs would
// mix two hosts' states in one interval.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_ROUNDS_H
#define DLC_BENCH_ROUNDS_H

#include "RunPlan.h"

#include "dlc/runtime/Plan.h"
#include "dlc/runtime/Status.h"

#include <functional>
#include <string>
#include <vector>

namespace dlc::bench {

/// One single-rank configuration of a sweep's rounds.
struct RoundEntry {
  const rt::Plan *plan = nullptr;
  Result *result = nullptr;
  RunOptions options;
  std::string name; // "mlp fp32 none, batch 4", for the progress
};

/// Times `entries` in `repeats` rounds, calling `finished(i)` after entry
/// i's last repeat (to write the report so far, say). Returns the first
/// error; after a signal, an error whose entries' status fields say where
/// each stopped (interruptSignal() tells the two apart).
rt::Status runInRounds(std::vector<RoundEntry> &entries, int64_t repeats,
                       const std::function<rt::Status(size_t)> &finished);

} // namespace dlc::bench

#endif // DLC_BENCH_ROUNDS_H
