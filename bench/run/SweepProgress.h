//===- SweepProgress.h - how far a whole sweep is ---------------*- C++ -*-===//
//
// A sweep of twelve configurations can run for hours. On a terminal the
// progress line of the step that runs also says how far the whole sweep is
// and how long it has left; on a pipe or a log each configuration's finished
// turn (one repeat, with its warm-up) is one line on stderr, so a log never
// stays silent for a whole configuration.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_SWEEPPROGRESS_H
#define DLC_BENCH_SWEEPPROGRESS_H

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace dlc::bench {

class SweepProgress {
public:
  /// `names` of the configurations to time ("mlp fp32 none, batch 4"),
  /// `repeats` turns each.
  SweepProgress(std::vector<std::string> names, int64_t repeats);

  /// Configuration `config` starts its turn of round `round` (0-based).
  void begin(size_t config, int64_t round);
  /// The turn that runs is `fraction` (0 to 1) done: "round 2/5, [3/12]
  /// ...: " to start the progress line with, and "; sweep 40%, about
  /// 12 min left" to end it.
  std::string label() const;
  std::string status(double fraction) const { return status(fraction, true); }
  /// The turn ended, at `samplesPerSec`; on a pipe, says so on stderr.
  void end(double samplesPerSec);
  /// The configuration gave up its remaining turns (an error or a signal).
  void drop(size_t config);

private:
  std::string status(double fraction, bool running) const;
  /// Seconds the sweep has left when the running turn is `fraction` done
  /// (`running`: else between turns).
  double secondsLeft(double fraction, bool running) const;
  /// Seconds a turn of `config` takes: its own mean, else the mean of the
  /// turns so far, else `unknown`.
  double turnSeconds(size_t config, double unknown) const;

  std::vector<std::string> names_;
  int64_t repeats_;
  std::vector<std::vector<double>> seconds_; // per configuration, per turn
  std::vector<int64_t> left_;                // turns still to run
  size_t config_ = 0;
  int64_t round_ = 0;
  bool terminal_;
  std::chrono::steady_clock::time_point turnStart_;
};

} // namespace dlc::bench

#endif // DLC_BENCH_SWEEPPROGRESS_H
