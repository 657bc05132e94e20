//===- StepSimulatorTest.cpp - hand-computable data-parallel timelines ----===//

#include "dlc/runtime/perf/StepSimulator.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace dlc::rt::perf;

namespace {

constexpr double kBandwidth = 100e9; // bytes/s
constexpr double kLatency = 5e-6;    // s per step
constexpr double kBytes = 100e6;

Cluster oneNode(int64_t gpus) {
  Cluster c;
  c.gpusPerNode = gpus;
  c.intraNode = {"link", kBandwidth, kLatency};
  return c;
}

SimLaunch compute(double seconds) {
  SimLaunch l;
  l.seconds = seconds;
  return l;
}

SimLaunch allReduce(double bytes, int64_t waitAt) {
  SimLaunch l;
  l.allReduceBytes = bytes;
  l.waitAt = waitAt;
  return l;
}

/// The one-level ring: 2(N-1)/N x bytes / bandwidth + 2(N-1) x latency.
double ringSeconds(double bytes, int64_t n) {
  return 2.0 * (n - 1) / n * bytes / kBandwidth + 2.0 * (n - 1) * kLatency;
}

} // namespace

TEST(StepSimulator, OneBucketWithoutOverlapAddsTheWholeRing) {
  for (int64_t n : {2, 8, 16}) {
    std::vector<SimLaunch> step = {compute(0.010), allReduce(kBytes, 2), compute(0.002)};
    SimOptions options;
    options.overlap = false;
    StepTimeline t = simulateStep(step, oneNode(n), options);
    double ring = 2.0 * (n - 1) / n * kBytes / kBandwidth + 2.0 * (n - 1) * kLatency;
    EXPECT_DOUBLE_EQ(t.stepSeconds, 0.012 + ring) << n;
    EXPECT_DOUBLE_EQ(t.commSeconds, ring);
    EXPECT_DOUBLE_EQ(t.exposedCommSeconds, t.stepSeconds - 0.012);
    ASSERT_EQ(t.comm.size(), 1u);
    EXPECT_DOUBLE_EQ(t.comm[0].start, 0.010);
  }
}

TEST(StepSimulator, OneGpuHasNoCommunication) {
  std::vector<SimLaunch> step = {compute(0.010), allReduce(kBytes, 2), compute(0.002)};
  StepTimeline t = simulateStep(step, oneNode(1), {});
  EXPECT_DOUBLE_EQ(t.stepSeconds, 0.012);
  EXPECT_DOUBLE_EQ(t.exposedCommSeconds, 0);
}

TEST(StepSimulator, FullOverlapHidesAllButTheLastBucket) {
  // Two buckets wait for the step's end; the backward work after the first
  // is longer than its all-reduce, nothing follows the second.
  const int64_t n = 8;
  double ring = ringSeconds(kBytes, n);
  std::vector<SimLaunch> step = {compute(0.010), allReduce(kBytes, 4), compute(0.050),
                                 allReduce(kBytes, 4)};
  StepTimeline t = simulateStep(step, oneNode(n), {});
  EXPECT_DOUBLE_EQ(t.stepSeconds, 0.060 + ring);
  // Exposed = step - compute: exact up to the subtraction's rounding.
  EXPECT_NEAR(t.exposedCommSeconds, ring, 1e-15);
  EXPECT_DOUBLE_EQ(t.commSeconds, 2 * ring);
  // The first ran beside the compute launch after it.
  EXPECT_DOUBLE_EQ(t.comm[0].start, 0.010);
  EXPECT_DOUBLE_EQ(t.comm[0].end, 0.010 + ring);
}

TEST(StepSimulator, TheWaitPointWaitsAndAllReducesQueue) {
  // The first bucket's reader comes right after it: the step waits there.
  // The second starts only when the first is done (one communicator).
  const int64_t n = 4;
  double ring = ringSeconds(kBytes, n);
  std::vector<SimLaunch> step = {compute(0.001), allReduce(kBytes, 3),
                                 allReduce(kBytes, 5), compute(0.001), compute(1.0)};
  StepTimeline t = simulateStep(step, oneNode(n), {});
  ASSERT_EQ(t.compute.size(), 3u);
  EXPECT_DOUBLE_EQ(t.compute[1].start, 0.001 + ring);
  EXPECT_DOUBLE_EQ(t.comm[1].start, 0.001 + ring);
  EXPECT_DOUBLE_EQ(t.stepSeconds, 0.001 + ring + 0.001 + 1.0);
  EXPECT_NEAR(t.exposedCommSeconds, ring, 1e-15);
}

TEST(StepSimulator, CompressionHalvesTheBandwidthTerm) {
  // --grad-compression fp16 sends float32 gradients in 2 bytes: half the
  // bytes, the same number of steps.
  const int64_t n = 8;
  Cluster c = oneNode(n);
  double full = allReduceSeconds(kBytes, c, AllReduceAlgorithm::kRing);
  double half = allReduceSeconds(kBytes / 2, c, AllReduceAlgorithm::kRing);
  double latency = 2.0 * (n - 1) * kLatency;
  EXPECT_DOUBLE_EQ(half - latency, (full - latency) / 2);
}

TEST(StepSimulator, SeveralNodes) {
  Cluster c;
  c.nodes = 4;
  c.gpusPerNode = 8;
  c.intraNode = {"nvlink", 100e9, 2e-6};
  c.interNode = {"ib", 10e9, 10e-6};
  // Flat ring: the slowest level sets both terms.
  EXPECT_DOUBLE_EQ(allReduceSeconds(kBytes, c, AllReduceAlgorithm::kRing),
                   2.0 * 31 / 32 * kBytes / 10e9 + 2.0 * 31 * 10e-6);
  // Hierarchical: a ring in the node, then the node's NIC carries a ring of
  // the whole bucket across the 4 nodes.
  EXPECT_DOUBLE_EQ(allReduceSeconds(kBytes, c, AllReduceAlgorithm::kHierarchicalRing),
                   (2.0 * 7 / 8 * kBytes / 100e9 + 2.0 * 7 * 2e-6) +
                       (2.0 * 3 / 4 * (kBytes / 8) / (10e9 / 8) + 2.0 * 3 * 10e-6));
  // Tree: two passes of the bucket, log2(4) levels across nodes, a chain of 8.
  EXPECT_DOUBLE_EQ(allReduceSeconds(kBytes, c, AllReduceAlgorithm::kTree),
                   2.0 * kBytes / 10e9 + 2.0 * (2 * 10e-6 + 7 * 2e-6));
}

TEST(StepSimulator, RankSlowdownScalesTheCompute) {
  std::vector<SimLaunch> step = {compute(0.010), compute(0.030)};
  SimOptions options;
  options.rankSlowdown = 1.5;
  StepTimeline t = simulateStep(step, oneNode(8), options);
  EXPECT_DOUBLE_EQ(t.stepSeconds, 0.060);
  EXPECT_DOUBLE_EQ(t.exposedCommSeconds, 0);
}

TEST(StepSimulator, ExpectedMaxOfNormals) {
  EXPECT_EQ(expectedMaxOfNormals(1), 0);
  // max of two: 1 / sqrt(pi); of three: 3 / (2 sqrt(pi)).
  EXPECT_NEAR(expectedMaxOfNormals(2), 1 / std::sqrt(M_PI), 1e-9);
  EXPECT_NEAR(expectedMaxOfNormals(3), 1.5 / std::sqrt(M_PI), 1e-9);
  // Tabulated (Tippett 1925): 8 -> 1.4236, 32 -> 2.0697.
  EXPECT_NEAR(expectedMaxOfNormals(8), 1.4236, 1e-4);
  EXPECT_NEAR(expectedMaxOfNormals(32), 2.0697, 1e-4);
}
