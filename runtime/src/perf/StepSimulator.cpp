//===- StepSimulator.cpp - one data-parallel step's timeline --------------===//

#include "dlc/runtime/perf/StepSimulator.h"

#include <algorithm>
#include <cmath>

namespace dlc::rt::perf {

StepTimeline simulateStep(const std::vector<SimLaunch> &launches, const Cluster &cluster,
                          const SimOptions &options) {
  StepTimeline t;
  int64_t count = static_cast<int64_t>(launches.size());
  // The all-reduces each launch waits for before it starts (overlap only);
  // index `count` holds the step's end.
  std::vector<std::vector<int64_t>> waiters(launches.size() + 1);
  if (options.overlap)
    for (int64_t i = 0; i < count; ++i)
      if (launches[i].isAllReduce())
        waiters[std::clamp<int64_t>(launches[i].waitAt, i + 1, count)].push_back(i);
  std::vector<double> commEnd(launches.size(), 0);
  // Each all-reduce's span in t.comm.
  std::vector<int64_t> spanOf(launches.size(), -1);
  double stream = 0, commStream = 0;
  auto join = [&](int64_t at) {
    // In queue order (an all-reduce ends no earlier than the one before
    // it): the wait is charged to the first unfinished bucket until it
    // ends, then to the next, so a large bucket that delays the ones
    // queued behind it is charged for that delay.
    for (int64_t r : waiters[at])
      if (commEnd[r] > stream) {
        t.comm[spanOf[r]].exposed += commEnd[r] - stream;
        stream = commEnd[r];
      }
  };
  for (int64_t i = 0; i < count; ++i) {
    join(i);
    const SimLaunch &l = launches[i];
    if (!l.isAllReduce()) {
      double seconds = l.seconds * options.rankSlowdown;
      t.compute.push_back({i, stream, stream + seconds});
      stream += seconds;
      t.computeSeconds += seconds;
      continue;
    }
    double seconds = allReduceSeconds(l.allReduceBytes, cluster, options.algorithm);
    t.commSeconds += seconds;
    spanOf[i] = static_cast<int64_t>(t.comm.size());
    if (!options.overlap) {
      t.comm.push_back({i, stream, stream + seconds, seconds});
      stream += seconds;
      continue;
    }
    // Forked once everything before it on the step's stream is done (its
    // last gradient is produced), queued behind the all-reduce before it.
    double start = std::max(stream, commStream);
    commEnd[i] = commStream = start + seconds;
    t.comm.push_back({i, start, commEnd[i], 0});
  }
  join(count);
  t.stepSeconds = stream;
  t.exposedCommSeconds = std::max(0.0, t.stepSeconds - t.computeSeconds);
  double most = 0;
  for (size_t s = 0; s < t.comm.size(); ++s)
    if (t.comm[s].exposed > most) {
      most = t.comm[s].exposed;
      t.exposedBy = static_cast<int64_t>(s);
    }
  return t;
}

double expectedMaxOfNormals(int64_t n) {
  if (n <= 1)
    return 0;
  // E[max] = integral of x n phi(x) Phi(x)^(n-1) dx, by the midpoint rule
  // over [-10, 10] (the integrand is below 1e-20 outside).
  constexpr int kSteps = 20000;
  constexpr double kLow = -10, kHigh = 10;
  double h = (kHigh - kLow) / kSteps, sum = 0;
  for (int s = 0; s < kSteps; ++s) {
    double x = kLow + (s + 0.5) * h;
    double phi = std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
    double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    sum += x * static_cast<double>(n) * phi * std::pow(cdf, static_cast<double>(n - 1));
  }
  return sum * h;
}

} // namespace dlc::rt::perf
