//===- CollectiveTest.cpp - ranks as threads and their all-reduce ---------===//

#include "TestPlan.h"

#include "dlc/runtime/Collective.h"
#include "dlc/runtime/cpu/CpuExecutor.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <cstring>
#include <thread>

using namespace dlc::rt;

namespace {

/// Runs body(rank) on one thread per rank and returns each rank's status.
template <typename Body>
std::vector<Status> onRanks(int ranks, Body body) {
  std::vector<Status> status(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] { status[r] = body(r); });
  for (std::thread &t : threads)
    t.join();
  return status;
}

TEST(ThreadRankGroup, EveryRankGetsTheSameMeanSummedInRankOrder) {
  constexpr int kRanks = 3;
  auto group = createThreadRankGroup(kRanks);
  // Values whose sum depends on the order: 1e8 + 1 - 1e8 is 0 in float
  // when summed left to right, 1 otherwise.
  std::vector<std::vector<float>> a = {{1e8f, 2}, {1, 4}, {-1e8f, 6}};
  std::vector<std::vector<float>> b = {{1, 1, 1}, {2, 2, 2}, {6, 6, 6}};
  std::vector<std::vector<float>> outB(kRanks, std::vector<float>(3));
  auto status = onRanks(kRanks, [&](int r) {
    // In place for a, into another buffer for b.
    return group[r]->allReduceMean({a[r].data(), b[r].data()},
                                   {a[r].data(), outB[r].data()}, {2, 3});
  });
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_TRUE(status[r].isOk()) << status[r].toString();
    EXPECT_EQ(a[r][0], ((1e8f + 1.0f) + -1e8f) / 3) << "rank " << r;
    EXPECT_EQ(a[r][1], 4.0f) << "rank " << r;
    for (float v : outB[r])
      EXPECT_EQ(v, 3.0f) << "rank " << r;
    EXPECT_EQ(b[r][0], r == 0 ? 1.0f : r == 1 ? 2.0f : 6.0f) << "input kept";
  }
}

TEST(ThreadRankGroup, ARankThatFailsReleasesTheOthers) {
  auto group = createThreadRankGroup(3);
  std::vector<float> data(4, 1.0f);
  auto status = onRanks(3, [&](int r) -> Status {
    if (r == 2) {
      group[r]->abort("cannot read its batch");
      return Status(StatusCode::kInvalidArgument, "cannot read its batch");
    }
    std::vector<float> mine = data;
    return group[r]->allReduceMean({mine.data()}, {mine.data()}, {4});
  });
  for (int r = 0; r < 2; ++r)
    EXPECT_NE(status[r].message().find(
                  "all-reduce abandoned: rank 2 failed: cannot read its batch"),
              std::string::npos)
        << status[r].toString();
}

TEST(ThreadRankGroup, RanksWithOtherSizesFailAlike) {
  auto group = createThreadRankGroup(2);
  auto status = onRanks(2, [&](int r) {
    std::vector<float> mine(r == 0 ? 4 : 5, 1.0f);
    return group[r]->allReduceMean({mine.data()}, {mine.data()},
                                   {static_cast<int64_t>(mine.size())});
  });
  for (const Status &s : status)
    EXPECT_NE(s.message().find("rank 1 sends other buffer sizes than rank 0"),
              std::string::npos)
        << s.toString();
}

TEST(ThreadRankGroup, AllGatherPutsEveryRanksBytesInRankOrder) {
  constexpr int kRanks = 3;
  auto group = createThreadRankGroup(kRanks);
  std::vector<std::vector<int32_t>> gathered(kRanks, std::vector<int32_t>(2 * kRanks));
  auto status = onRanks(kRanks, [&](int r) {
    int32_t mine[2] = {10 * r, 10 * r + 1};
    return group[r]->allGather(mine, sizeof(mine), gathered[r].data());
  });
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_TRUE(status[r].isOk()) << status[r].toString();
    EXPECT_EQ(gathered[r], (std::vector<int32_t>{0, 1, 10, 11, 20, 21})) << "rank " << r;
  }
  // Ranks sending other sizes all fail, naming the odd one.
  auto uneven = onRanks(2, [&, g = createThreadRankGroup(2)](int r) {
    char mine[8] = {}, all[16];
    return g[r]->allGather(mine, r == 0 ? 8 : 4, all);
  });
  for (const Status &s : uneven)
    EXPECT_NE(s.message().find("all-gather: rank 1 sends 4 bytes"), std::string::npos)
        << s.toString();
}

TEST(AllReduceWaitPoints, TheFirstKernelTouchingAnOperandsBytes) {
  dlc_test::PlanBuilder b;
  int32_t g = b.add("g", DType::kF32, {64}, BufferRole::kGradient);
  int32_t avg = b.add("avg", DType::kF32, {64}, BufferRole::kTemporary);
  int32_t x = b.add("x", DType::kF32, {64}, BufferRole::kInput);
  int32_t y = b.add("y", DType::kF32, {64}, BufferRole::kTemporary);
  int32_t z = b.add("z", DType::kF32, {64}, BufferRole::kTemporary);
  b.kernel("all_reduce", {g}, {avg}, {{"ranks", int64_t{2}}}); // #0
  b.kernel("relu", {x}, {y});                                    // #1: elsewhere
  b.kernel("relu", {y}, {z});                                    // #2: elsewhere
  b.kernel("relu", {avg}, {y});                                  // #3: reads the result
  std::vector<int64_t> waitAt = allReduceWaitPoints(b.plan);
  EXPECT_EQ(waitAt, (std::vector<int64_t>{3, -1, -1, -1}));
  // A temporary the planner put on the gradient's bytes: its writer waits.
  b.plan.buffers[z].offset = b.plan.buffers[g].offset + 128;
  EXPECT_EQ(allReduceWaitPoints(b.plan)[0], 2);
  // Nothing reads the result: it finishes with the step.
  b.plan.buffers[z].offset = b.plan.buffers[x].offset;
  b.plan.kernels.pop_back();
  EXPECT_EQ(allReduceWaitPoints(b.plan)[0], 3);
}

TEST(ProcessRankGroup, NoLauncherNoProcesses) {
  // ctest does not run under mpirun; lit's mpi-ranks.test runs the group.
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (std::getenv(name))
      GTEST_SKIP() << name << " is set: this test runs under a launcher";
  EXPECT_EQ(launchedProcesses(), 1);
  EXPECT_EQ(launchedRank(), 0);
}

/// grad -> all_reduce over 2 ranks -> out, in f32 or a half type.
Plan allReducePlan(DType dtype) {
  dlc_test::PlanBuilder b;
  int32_t g = b.add("g", dtype, {5}, BufferRole::kInput);
  int32_t out = b.add("loss", dtype, {5}, BufferRole::kTemporary);
  b.kernel("all_reduce", {g}, {out}, {{"ranks", int64_t{2}}});
  b.plan.batch = 1;
  return b.plan;
}

TEST(CpuAllReduce, AveragesTwoExecutorsHalfPrecisionToo) {
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    Plan plan = allReducePlan(dtype);
    ASSERT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
    auto group = createThreadRankGroup(2);
    std::vector<std::unique_ptr<cpu::CpuExecutor>> execs;
    for (int r = 0; r < 2; ++r) {
      auto created = cpu::CpuExecutor::create(plan);
      ASSERT_TRUE(created.isOk()) << created.status().toString();
      execs.push_back(std::move(*created));
      execs[r]->setCommunicator(group[r].get());
      std::vector<float> values = {1, 2, 3, 4, 5};
      for (float &v : values)
        v *= r == 0 ? 1.0f : 3.0f;
      std::string bytes(plan.buffers[0].bytes, '\0');
      if (dtype == DType::kF32)
        std::memcpy(bytes.data(), values.data(), bytes.size());
      else
        cpu::roundFromFloat(values.data(), dtype, bytes.data(), 5);
      ASSERT_TRUE(execs[r]->write("g", bytes.data(), bytes.size()).isOk());
    }
    auto status = onRanks(2, [&](int r) { return execs[r]->step(); });
    for (int r = 0; r < 2; ++r) {
      ASSERT_TRUE(status[r].isOk()) << status[r].toString();
      std::string bytes = execs[r]->bytesOf(1);
      std::vector<float> got(5);
      if (dtype == DType::kF32)
        std::memcpy(got.data(), bytes.data(), bytes.size());
      else
        cpu::widenToFloat(bytes.data(), dtype, got.data(), 5);
      for (int i = 0; i < 5; ++i)
        EXPECT_EQ(got[i], 2.0f * (i + 1)) << dtypeName(dtype) << " rank " << r;
    }
  }
}

TEST(CpuAllReduce, AnExecutorWithoutItsGroupSaysHowToRunThePlan) {
  auto created = cpu::CpuExecutor::create(allReducePlan(DType::kF32));
  ASSERT_TRUE(created.isOk()) << created.status().toString();
  Status s = (*created)->step();
  EXPECT_NE(s.message().find("this plan averages gradients over 2 data-parallel "
                             "ranks, and this executor runs alone: run it with --gpus 2"),
            std::string::npos)
      << s.toString();
}

TEST(CpuAllReduce, EachRankDrawsItsOwnDropoutMaskRankZeroTheOneRankMask) {
  dlc_test::PlanBuilder b;
  int32_t x = b.add("x", DType::kF32, {4096}, BufferRole::kInput);
  int32_t y = b.add("y", DType::kF32, {4096}, BufferRole::kTemporary);
  int32_t g = b.add("g", DType::kF32, {4}, BufferRole::kInput);
  int32_t r = b.add("r", DType::kF32, {4}, BufferRole::kTemporary);
  b.kernel("dropout", {x}, {y}, {{"rate", 0.5}, {"seed", int64_t{7}}});
  b.kernel("all_reduce", {g}, {r}, {{"ranks", int64_t{2}}});
  b.plan.batch = 1;
  std::vector<float> ones(4096, 1.0f), four(4, 1.0f);
  auto run = [&](cpu::CpuExecutor &exec) {
    EXPECT_TRUE(exec.write("x", ones.data(), ones.size() * 4).isOk());
    EXPECT_TRUE(exec.write("g", four.data(), four.size() * 4).isOk());
  };
  // The one-rank stream, from the dropout alone.
  dlc_test::PlanBuilder alone;
  alone.add("x", DType::kF32, {4096}, BufferRole::kInput);
  alone.add("y", DType::kF32, {4096}, BufferRole::kTemporary);
  alone.kernel("dropout", {0}, {1}, {{"rate", 0.5}, {"seed", int64_t{7}}});
  alone.plan.batch = 1;
  auto single = cpu::CpuExecutor::create(alone.plan);
  ASSERT_TRUE(single.isOk()) << single.status().toString();
  ASSERT_TRUE((*single)->write("x", ones.data(), ones.size() * 4).isOk());
  ASSERT_TRUE((*single)->step().isOk());

  auto group = createThreadRankGroup(2);
  std::vector<std::unique_ptr<cpu::CpuExecutor>> execs;
  for (int rank = 0; rank < 2; ++rank) {
    auto created = cpu::CpuExecutor::create(b.plan);
    ASSERT_TRUE(created.isOk()) << created.status().toString();
    execs.push_back(std::move(*created));
    execs[rank]->setCommunicator(group[rank].get());
    run(*execs[rank]);
  }
  auto status = onRanks(2, [&](int rank) { return execs[rank]->step(); });
  ASSERT_TRUE(status[0].isOk() && status[1].isOk()) << status[0].toString();
  EXPECT_EQ(execs[0]->bytesOf(y), (*single)->bytesOf(1));
  std::string mask0 = execs[0]->bytesOf(y), mask1 = execs[1]->bytesOf(y);
  int64_t differ = 0;
  for (size_t i = 0; i < mask0.size(); i += 4)
    differ += std::memcmp(&mask0[i], &mask1[i], 4) != 0;
  // Independent masks at rate 0.5 differ in about half the elements.
  EXPECT_GT(differ, 4096 * 4 / 10);
  EXPECT_LT(differ, 4096 * 6 / 10);
}

TEST(PlanValidation, AllReducesDisagreeingOnRanks) {
  Plan plan = allReducePlan(DType::kF32);
  plan.kernels.push_back(plan.kernels.front());
  plan.kernels.back().attrs["ranks"] = int64_t{4};
  EXPECT_EQ(planRanks(plan), 4);
  EXPECT_NE(validatePlan(plan).message().find(
                "kernel #0 (all_reduce): averages over 2 ranks, another over 4"),
            std::string::npos)
      << validatePlan(plan).toString();
  plan.kernels.pop_back();
  plan.buffers[1].shape = {1, 5};
  EXPECT_NE(validatePlan(plan).message().find(
                "output 'loss' differs in shape or type from input 'g'"),
            std::string::npos)
      << validatePlan(plan).toString();
}

} // namespace
