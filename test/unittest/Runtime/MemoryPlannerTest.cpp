//===- MemoryPlannerTest.cpp - arena offsets by liveness ------------------===//

#include "dlc/runtime/MemoryPlanner.h"

#include <gtest/gtest.h>

#include <random>

using namespace dlc::rt;

namespace {

/// Fails the test if two buffers that are alive together share a byte.
void expectNoLiveOverlap(const std::vector<BufferLifetime> &buffers,
                         const MemoryPlan &plan) {
  ASSERT_EQ(plan.offsets.size(), buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % kArenaAlignment, 0) << "buffer " << i;
    EXPECT_LE(plan.offsets[i] + buffers[i].bytes, plan.peakBytes);
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      const BufferLifetime &a = buffers[i], &b = buffers[j];
      bool liveTogether = a.firstUse <= b.lastUse && b.firstUse <= a.lastUse;
      bool shareBytes = plan.offsets[i] < plan.offsets[j] + b.bytes &&
                        plan.offsets[j] < plan.offsets[i] + a.bytes;
      EXPECT_FALSE(liveTogether && shareBytes && a.bytes > 0 && b.bytes > 0)
          << "buffers " << i << " and " << j << " overlap while both live";
    }
  }
}

TEST(MemoryPlanner, ChainReusesMemory) {
  // A chain a -> b -> c -> d: each intermediate dies after its consumer, so
  // two buffers suffice.
  std::vector<BufferLifetime> chain = {
      {1024, 0, 1}, {1024, 1, 2}, {1024, 2, 3}, {1024, 3, 4}};
  auto plan = planMemory(chain);
  ASSERT_TRUE(plan.isOk());
  expectNoLiveOverlap(chain, *plan);
  EXPECT_EQ(plan->totalBytes, 4096);
  EXPECT_EQ(plan->peakBytes, 2048);
  EXPECT_EQ(plan->lowerBoundBytes, 2048);
}

TEST(MemoryPlanner, PersistentBuffersNeverShare) {
  std::vector<BufferLifetime> state = {{512, 0, 9}, {300, 0, 9}, {100, 0, 9}};
  auto plan = planMemory(state);
  ASSERT_TRUE(plan.isOk());
  expectNoLiveOverlap(state, *plan);
  EXPECT_EQ(plan->peakBytes, 512 + 512 + 256); // each rounded to 256
}

TEST(MemoryPlanner, RandomLifetimesNeverOverlapAndStayNearTheBound) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<BufferLifetime> buffers;
    int steps = 40;
    for (int i = 0; i < 60; ++i) {
      int first = rng() % steps;
      int last = first + rng() % (steps - first);
      buffers.push_back({int64_t(1 + rng() % 100000), first, last});
    }
    auto plan = planMemory(buffers);
    ASSERT_TRUE(plan.isOk());
    expectNoLiveOverlap(buffers, *plan);
    EXPECT_GE(plan->peakBytes, plan->lowerBoundBytes);
    EXPECT_LE(plan->peakBytes, plan->totalBytes);
  }
}

TEST(MemoryPlanner, InvertedLifetimeIsRefused) {
  auto plan = planMemory({{64, 0, 1}, {64, 5, 2}});
  ASSERT_FALSE(plan.isOk());
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(plan.status().message(), "buffer #1 has size 64 and lifetime [5, 2]");
}

} // namespace
