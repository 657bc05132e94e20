//===- CollectiveTest.cpp - ranks as threads and their all-reduce ---------===//

#include "TestPlan.h"

#include "dlc/runtime/Collective.h"
#include "dlc/runtime/cpu/CpuExecutor.h"

#include "gtest/gtest.h"

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

TEST(PlanValidation, AllReducesDisagreeingOnRanks) {
  Plan plan = allReducePlan(DType::kF32);
  plan.kernels.push_back(plan.kernels.front());
  plan.kernels.back().attrs["ranks"] = int64_t{4};
  EXPECT_EQ(planRanks(plan), 4);
  EXPECT_NE(validatePlan(plan).message().find(
                "kernel #0 (all_reduce) averages over 2 ranks, another over 4"),
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
