//===- HostLoad.h - what else the host ran during a repeat ------*- C++ -*-===//
//
// A repeat that shared the host with a build or another benchmark is slower
// for reasons that are not the configuration's. Each repeat records how busy
// the host's CPUs were with everything but this process: /proc/stat's busy
// time over all CPUs, less this process's own CPU time (getrusage), over the
// CPUs' total time. A configuration whose repeats saw loads far apart is
// flagged in every report format.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_HOSTLOAD_H
#define DLC_BENCH_HOSTLOAD_H

#include <cstdint>
#include <vector>

namespace dlc::bench {

/// Repeats whose other load differs by more than this many points of the
/// host's CPU capacity flag their configuration: on a 2-core host, one
/// other process busy on one core is 50 points; scheduler noise stays under
/// 10.
constexpr double kHostLoadChangePoints = 20;

/// Measures the other processes' share of the host's CPUs over an interval.
class HostLoadMeter {
public:
  void start();
  /// Percent of the host's CPU time (all CPUs) that others used since
  /// start(), or -1 where /proc/stat is missing or the interval was too
  /// short to tell (under kMinJiffies of CPU time over all CPUs).
  double stop();

private:
  uint64_t busy_ = 0, total_ = 0;
  double self_ = 0;
  bool ok_ = false;
};

/// The least and the most load of `percents` (-1 entries: not measured);
/// false when none was measured.
bool hostLoadRange(const std::vector<double> &percents, double &min, double &max);

/// Whether the measured repeats' loads lie more than kHostLoadChangePoints
/// apart.
bool hostLoadVaried(const std::vector<double> &percents);

} // namespace dlc::bench

#endif // DLC_BENCH_HOSTLOAD_H
