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

TEST(StepSimulator, OneBucketThatCannotHide) {
  // The backward pass's last launch produces the only bucket; the update
  // reads it next. Nothing is left to overlap: the whole ring is exposed,
  // charged to that bucket.
  const int64_t n = 8;
  double ring = ringSeconds(kBytes, n);
  std::vector<SimLaunch> step = {compute(0.020), allReduce(kBytes, 2), compute(0.001)};
  StepTimeline t = simulateStep(step, oneNode(n), {});
  EXPECT_DOUBLE_EQ(t.stepSeconds, 0.021 + ring);
  ASSERT_EQ(t.comm.size(), 1u);
  EXPECT_DOUBLE_EQ(t.comm[0].start, 0.020);
  EXPECT_NEAR(t.comm[0].exposed, ring, 1e-12);
  EXPECT_EQ(t.exposedBy, 0);
  EXPECT_NEAR(t.exposedCommSeconds, ring, 1e-15);
  // The update starts when the all-reduce ends.
  EXPECT_DOUBLE_EQ(t.compute[1].start, 0.020 + ring);
}

TEST(StepSimulator, BucketsThatAllHideButTheLast) {
  // Three buckets, each followed by more backward work than its ring takes,
  // the updates at the end; only the last bucket (the first layers'
  // gradients) is exposed, by its whole ring.
  const int64_t n = 8;
  double ring = ringSeconds(kBytes, n);
  ASSERT_LT(ring, 0.010);
  std::vector<SimLaunch> step = {compute(0.010), allReduce(kBytes, 6), compute(0.010),
                                 allReduce(kBytes, 6), compute(0.010), allReduce(kBytes, 6),
                                 compute(0.001)};
  StepTimeline t = simulateStep(step, oneNode(n), {});
  ASSERT_EQ(t.comm.size(), 3u);
  EXPECT_DOUBLE_EQ(t.comm[0].exposed, 0);
  EXPECT_DOUBLE_EQ(t.comm[1].exposed, 0);
  EXPECT_NEAR(t.comm[2].exposed, ring, 1e-12);
  EXPECT_EQ(t.exposedBy, 2);
  EXPECT_NEAR(t.stepSeconds, 0.030 + ring + 0.001, 1e-12);
  EXPECT_NEAR(t.exposedCommSeconds, ring, 1e-15);
}

TEST(StepSimulator, ALargeEarlyBucketDelaysEveryLaterOne) {
  // The first bucket's ring (10x the bytes) outlasts the backward pass:
  // the two small buckets behind it start only when it ends, one after the
  // other on the one communicator, though their gradients were ready long
  // before. The last of them holds the step.
  const int64_t n = 8;
  double big = ringSeconds(10 * kBytes, n), small = ringSeconds(kBytes / 10, n);
  std::vector<SimLaunch> step = {compute(0.005), allReduce(10 * kBytes, 6), compute(0.005),
                                 allReduce(kBytes / 10, 6), compute(0.005),
                                 allReduce(kBytes / 10, 6), compute(0.001)};
  StepTimeline t = simulateStep(step, oneNode(n), {});
  ASSERT_GT(big, 0.015);
  ASSERT_EQ(t.comm.size(), 3u);
  EXPECT_DOUBLE_EQ(t.comm[0].start, 0.005);
  EXPECT_DOUBLE_EQ(t.comm[1].start, 0.005 + big);
  EXPECT_NEAR(t.comm[2].start, 0.005 + big + small, 1e-12);
  EXPECT_NEAR(t.stepSeconds, 0.005 + big + 2 * small + 0.001, 1e-12);
  // The wait at the updates is charged in queue order: to the large bucket
  // until it ends, then to each small one behind it. The large one exposes
  // the communication.
  EXPECT_NEAR(t.comm[0].exposed, 0.005 + big - 0.015, 1e-12);
  EXPECT_NEAR(t.comm[1].exposed, small, 1e-12);
  EXPECT_NEAR(t.comm[2].exposed, small, 1e-12);
  EXPECT_EQ(t.exposedBy, 0);
  EXPECT_NEAR(t.exposedCommSeconds, t.comm[0].exposed + 2 * small, 1e-12);
}

TEST(StepSimulator, EachUpdateWaitsForItsOwnBucket) {
  // Two buckets, each read by its own update: the first update waits only
  // for the first bucket, the second for the second; each wait charged to
  // its bucket, the charges adding up to the step less its compute.
  const int64_t n = 8;
  double ring = ringSeconds(kBytes, n);
  std::vector<SimLaunch> step = {compute(0.004), allReduce(kBytes, 4), compute(0.001),
                                 allReduce(kBytes, 5), compute(0.001), compute(0.001)};
  StepTimeline t = simulateStep(step, oneNode(n), {});
  ASSERT_EQ(t.comm.size(), 2u);
  // Bucket 0 ends at 0.004 + ring; update 0 (launch 4) starts there.
  EXPECT_DOUBLE_EQ(t.compute[2].start, 0.004 + ring);
  EXPECT_NEAR(t.comm[0].exposed, 0.004 + ring - 0.005, 1e-12);
  // Bucket 1 started at 0.005, queued behind bucket 0: ends at 0.004 + 2 ring.
  EXPECT_NEAR(t.compute[3].start, 0.004 + 2 * ring, 1e-12);
  EXPECT_NEAR(t.comm[1].exposed, ring - 0.001, 1e-12);
  EXPECT_NEAR(t.comm[0].exposed + t.comm[1].exposed, t.exposedCommSeconds, 1e-12);
}

TEST(StepSimulator, AutoTakesTheTreeForSmallMessagesAcrossNodes) {
  Cluster c;
  c.nodes = 4;
  c.gpusPerNode = 8;
  c.intraNode = {"nvlink", 100e9, 2e-6};
  c.interNode = {"ib", 10e9, 10e-6};
  for (double bytes : {1e3, 1e5, 1e7, 1e9}) {
    double ring = allReduceSeconds(bytes, c, AllReduceAlgorithm::kRing);
    double tree = allReduceSeconds(bytes, c, AllReduceAlgorithm::kTree);
    EXPECT_DOUBLE_EQ(allReduceSeconds(bytes, c, AllReduceAlgorithm::kAuto),
                     std::min(ring, tree));
  }
  // 1 kB: latency-bound, the tree's 2(2 x 10 + 7 x 2) us beats the ring's 62 x 10 us.
  EXPECT_LT(allReduceSeconds(1e3, c, AllReduceAlgorithm::kTree),
            allReduceSeconds(1e3, c, AllReduceAlgorithm::kRing));
  // 1 GB: bandwidth-bound, the ring's 2(N-1)/N beats the tree's 2.
  EXPECT_LT(allReduceSeconds(1e9, c, AllReduceAlgorithm::kRing),
            allReduceSeconds(1e9, c, AllReduceAlgorithm::kTree));
  // One node: the ring.
  Cluster one = oneNode(8);
  EXPECT_DOUBLE_EQ(allReduceSeconds(1e3, one, AllReduceAlgorithm::kAuto),
                   allReduceSeconds(1e3, one, AllReduceAlgorithm::kRing));
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
