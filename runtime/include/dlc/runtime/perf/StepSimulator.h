//===- StepSimulator.h - one data-parallel step's timeline ------*- C++ -*-===//
//
// Replays a step's launches on two streams, as the CUDA backend schedules
// them (CudaExecutor's scheduleAllReduces / enqueueLaunch):
//  - compute launches run one after another on the step's stream;
//  - an all-reduce forks when everything before it on the step's stream is
//    done, and runs on the all-reduce stream after the all-reduce before it
//    (a communicator runs its collectives in order);
//  - the launch at its wait point (allReduceWaitPoints: the first that
//    touches its bytes), or the step's end, waits for it.
// Without overlap (--no-overlap) every all-reduce runs in its place on the
// step's stream. Ranks are assumed to run the same timeline. A straggler
// term (rankSlowdown, a factor on the compute) is off by default: it is for
// a measured spread of per-rank step times, never a fitted one.
//
// Exposed communication is what the step's stream waits for: at a wait
// point (or the step's end) whose all-reduces are not done, the wait is
// charged to them in queue order, each until it ends
// (TimelineSpan::exposed), so the buckets' charges add up to the step less
// its compute (without rankSlowdown).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_PERF_STEPSIMULATOR_H
#define DLC_RUNTIME_PERF_STEPSIMULATOR_H

#include "dlc/runtime/perf/Network.h"

#include <cstdint>
#include <vector>

namespace dlc::rt::perf {

/// One launch of the step, in plan order.
struct SimLaunch {
  /// A compute launch's time on one GPU (ignored for an all-reduce).
  double seconds = 0;
  /// An all-reduce: the bytes each rank sends into it; -1 for compute.
  double allReduceBytes = -1;
  /// An all-reduce: the launch that waits for it; launches.size() (or
  /// anything past the last launch) for the step's end.
  int64_t waitAt = -1;

  bool isAllReduce() const { return allReduceBytes >= 0; }
};

struct SimOptions {
  bool overlap = true;
  AllReduceAlgorithm algorithm = AllReduceAlgorithm::kRing;
  /// Every compute launch takes this factor longer: the slowest of the N
  /// ranks sets the pace at each all-reduce (see expectedMaxOfNormals).
  /// 1 (off) unless a measured per-rank spread is given.
  double rankSlowdown = 1;
};

/// A launch's place on the timeline, in seconds from the step's start.
struct TimelineSpan {
  int64_t launch = 0;
  double start = 0, end = 0;
  /// An all-reduce: how long the step's stream waited for it (all of it
  /// without overlap); 0 for compute.
  double exposed = 0;
};

struct StepTimeline {
  double stepSeconds = 0;
  /// The compute launches' total (with rankSlowdown), the all-reduces'
  /// total, and what of the step is neither: communication not hidden.
  double computeSeconds = 0, commSeconds = 0, exposedCommSeconds = 0;
  std::vector<TimelineSpan> compute, comm;
  /// The index into `comm` of the all-reduce charged the most exposed time
  /// (the bucket that exposes the communication); -1 when none is exposed.
  int64_t exposedBy = -1;
};

StepTimeline simulateStep(const std::vector<SimLaunch> &launches, const Cluster &cluster,
                          const SimOptions &options);

/// E[max of n independent standard normals] (0 for n = 1): with per-rank
/// step times of mean m and standard deviation cv x m, a synchronous step
/// of n ranks takes about m (1 + cv x expectedMaxOfNormals(n)).
double expectedMaxOfNormals(int64_t n);

/// samples/s of N ranks over N x samples/s of one: the scaling efficiency
/// of a step of `stepSeconds` on N ranks against `oneGpuSeconds` on one.
inline double scalingEfficiency(double oneGpuSeconds, double stepSeconds) {
  return stepSeconds > 0 ? oneGpuSeconds / stepSeconds : 0;
}

} // namespace dlc::rt::perf

#endif // DLC_RUNTIME_PERF_STEPSIMULATOR_H
