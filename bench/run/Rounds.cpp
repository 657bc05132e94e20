//===- Rounds.cpp - a sweep's configurations timed in rounds --------------===//

#include "Rounds.h"

#include "Interrupt.h"
#include "SweepProgress.h"

#include <memory>

namespace dlc::bench {

rt::Status runInRounds(std::vector<RoundEntry> &entries, int64_t repeats,
                       const std::function<rt::Status(size_t)> &finished) {
  std::vector<std::string> names;
  for (const RoundEntry &e : entries)
    names.push_back(e.name);
  SweepProgress sweep(names, repeats);
  std::vector<std::unique_ptr<RepeatRun>> runs;
  for (RoundEntry &e : entries) {
    e.options.sweep = &sweep;
    e.result->timingOrder = "interleaved";
    runs.push_back(std::make_unique<RepeatRun>(*e.plan, e.options, *e.result));
  }
  // A signal before a configuration's turn: it and the rest say where.
  auto stopped = [&](size_t running, const std::string &why) {
    for (size_t j = 0; j < entries.size(); ++j) {
      if (j == running)
        continue;
      Result &r = *entries[j].result;
      size_t done = r.repeatResults.size();
      if (done == static_cast<size_t>(repeats))
        continue;
      r.status = done ? "interrupted by " + interruptName() + " after " +
                            std::to_string(done) + " of " + std::to_string(repeats) +
                            " repeats"
                      : "not run (" + interruptName() + ")";
    }
    return rt::Status(rt::StatusCode::kInvalidArgument, why);
  };
  for (int64_t round = 0; round < repeats; ++round)
    for (size_t i = 0; i < entries.size(); ++i) {
      if (interruptSignal())
        return stopped(entries.size(), "interrupted by " + interruptName());
      RepeatRun &run = *runs[i];
      if (round == 0)
        if (rt::Status s = run.start(); !s.isOk())
          return s;
      sweep.begin(i, round);
      rt::Status ran = run.runRepeat(round);
      run.release();
      if (!ran.isOk()) {
        if (interruptSignal())
          entries[i].result->status = ran.message();
        return interruptSignal() ? stopped(i, ran.message()) : ran;
      }
      sweep.end(entries[i].result->repeatResults.back().samplesPerSec);
      if (round + 1 == repeats) {
        if (rt::Status s = run.finish(); !s.isOk())
          return s;
        if (rt::Status s = finished(i); !s.isOk())
          return s;
      }
    }
  return rt::Status::ok();
}

} // namespace dlc::bench
