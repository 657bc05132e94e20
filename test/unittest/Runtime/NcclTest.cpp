//===- NcclTest.cpp - NCCL loaded at run time, and its all-reduce ---------===//
//
// Without NCCL or a GPU: the host's bounded wait on NCCL work (NcclWait.h)
// driven by fake NCCL and CUDA queries. Without a GPU: NCCL loads and
// reports its version (it needs no device), and a group fails naming the
// rank and device, or with NCCL's own message when blocking. With one GPU:
// a rank of two whose peer never joins times out naming itself, and a
// one-rank group averages float32 and float16 buffers (the mean of one rank
// is its own values), launched directly and from a captured CUDA graph, as
// the CUDA executor launches it. Several ranks need several GPUs.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/Device.h"
#include "dlc/runtime/Half.h"
#include "dlc/runtime/cuda/Nccl.h"
#include "dlc/runtime/cuda/NcclWait.h"

#include <gtest/gtest.h>

#if DLC_ENABLE_CUDA
#include <cuda_runtime.h>
#endif

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

using namespace dlc::rt;
using namespace dlc::rt::cuda;

namespace {

/// Sets an environment variable for one test.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

private:
  const char *name_;
};

/// Fake NCCL and CUDA queries: NCCL's states in turn (the last repeats),
/// the CUDA work done after `pendingPolls` polls; counts the calls.
struct FakeWork {
  std::vector<int> states;
  int pendingPolls = 0;
  int stateCalls = 0, cudaCalls = 0, aborts = 0;

  NcclWaitQueries queries(bool withCuda) {
    NcclWaitQueries q;
    q.ncclState = [this]() -> StatusOr<int> {
      size_t i = std::min<size_t>(stateCalls++, states.size() - 1);
      return states[i];
    };
    if (withCuda)
      q.cudaDone = [this]() -> StatusOr<bool> { return cudaCalls++ >= pendingPolls; };
    q.describe = [](int r) {
      return r == 6 ? std::string("remote error") : "error " + std::to_string(r);
    };
    q.abort = [this] { ++aborts; };
    return q;
  }
};

TEST(NcclWait, ACommunicatorInProgressThreeTimesThenReady) {
  FakeWork work{{kNcclInProgress, kNcclInProgress, kNcclInProgress, kNcclSuccess}};
  Status s = waitPolling(work.queries(false), 0, "its communicator", {});
  EXPECT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(work.stateCalls, 4);
  EXPECT_EQ(work.aborts, 0);
}

TEST(NcclWait, AStreamPendingFivePollsThenDone) {
  FakeWork work{{kNcclSuccess}, 5};
  Status s = waitPolling(work.queries(true), 0, "step 3", {});
  EXPECT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(work.cudaCalls, 6);
  EXPECT_EQ(work.stateCalls, 6); // NCCL's state beside every CUDA query
  EXPECT_EQ(work.aborts, 0);
}

TEST(NcclWait, ARemoteErrorAbortsAndNamesTheRank) {
  // ncclRemoteError (6) on the third look, while the stream never finishes:
  // the collective waits for a peer that is gone.
  FakeWork work{{kNcclSuccess, kNcclSuccess, 6}, 1000000};
  Status s = waitPolling(work.queries(true), 3, "step 12", {});
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_EQ(s.message(), "rank 3: NCCL: remote error (NCCL error 6) while waiting for "
                         "step 12; its communicator was aborted");
  EXPECT_EQ(work.stateCalls, 3);
  EXPECT_EQ(work.aborts, 1);
}

TEST(NcclWait, AnErrorStateFailsEvenWhenTheStreamFinished) {
  // Aborted kernels return: a finished stream does not mean a good mean.
  FakeWork work{{2}, 0};
  Status s = waitPolling(work.queries(true), 1, "read('loss')", {});
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(), "rank 1: NCCL: error 2 (NCCL error 2) while waiting for "
                         "read('loss'); its communicator was aborted");
  EXPECT_EQ(work.aborts, 1);
}

TEST(NcclWait, ACommunicatorNeverReadyTimesOut) {
  FakeWork work{{kNcclInProgress}};
  NcclWaitLimits limits;
  limits.timeoutSeconds = 0.05;
  auto start = std::chrono::steady_clock::now();
  Status s = waitPolling(work.queries(false), 1, "its NCCL communicator on GPU 0", limits);
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "rank 1: its NCCL communicator on GPU 0 did not finish within "
                         "0.05 s (DLC_NCCL_TIMEOUT): another rank failed, stopped or never "
                         "joined; its communicator was aborted");
  EXPECT_GE(took.count(), 0.05);
  EXPECT_GT(work.stateCalls, 1); // it polled, not one blocking look
  EXPECT_EQ(work.aborts, 1);
}

TEST(NcclWait, AFailedCudaQueryIsReportedWithoutAnAbort) {
  NcclWaitQueries q = FakeWork{{kNcclSuccess}}.queries(false);
  int aborts = 0;
  q.abort = [&] { ++aborts; };
  q.ncclState = [] { return StatusOr<int>(kNcclSuccess); };
  q.cudaDone = []() -> StatusOr<bool> {
    return Status(StatusCode::kInternal, "cudaStreamQuery: cudaErrorIllegalAddress");
  };
  Status s = waitPolling(q, 2, "step 0", {});
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(), "rank 2: cudaStreamQuery: cudaErrorIllegalAddress");
  EXPECT_EQ(aborts, 0); // the caller's failure path aborts the group
}

TEST(NcclWait, TheTimeoutVariable) {
  EXPECT_EQ(*parseNcclTimeout(nullptr), kDefaultNcclTimeoutSeconds);
  EXPECT_EQ(*parseNcclTimeout(""), kDefaultNcclTimeoutSeconds);
  EXPECT_EQ(*parseNcclTimeout("0"), 0.0);
  EXPECT_EQ(*parseNcclTimeout("2.5"), 2.5);
  for (const char *bad : {"-1", "ten", "5s", "nan", "inf", "1e999"}) {
    auto parsed = parseNcclTimeout(bad);
    ASSERT_FALSE(parsed.isOk()) << bad;
    EXPECT_EQ(parsed.status().message(),
              std::string("DLC_NCCL_TIMEOUT='") + bad +
                  "': expected the seconds a rank waits for NCCL (0: no limit)");
  }
}

TEST(Nccl, VersionNames) {
  EXPECT_EQ(ncclVersionName(22803), "2.28.3");
  EXPECT_EQ(ncclVersionName(21005), "2.10.5");
  EXPECT_EQ(ncclVersionName(2708), "2.7.8"); // before 2.9's wider minor
}

TEST(Nccl, LoadsWithoutAGpu) {
  auto version = ncclVersion();
  if (!version.isOk()) {
    EXPECT_EQ(version.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(version.status().message().find("DLC_NCCL_LIBRARY"), std::string::npos)
        << version.status().toString();
    GTEST_SKIP() << "no NCCL here: " << version.status().toString();
  }
  EXPECT_GE(*version, 21000) << ncclVersionName(*version);
}

TEST(Nccl, AGroupWithoutAGpuFailsNamingTheRankAndDevice) {
  if (listCudaDevices().isOk())
    GTEST_SKIP() << "a CUDA device is present";
  if (!ncclVersion().isOk())
    GTEST_SKIP() << "no NCCL here";
  auto group = createNcclGroup({0, 1});
  ASSERT_FALSE(group.isOk());
  EXPECT_EQ(group.status().code(), StatusCode::kUnavailable);
  // Non-blocking (NCCL 2.14 on): one communicator per device, each made
  // current first; blocking: ncclCommInitAll's message.
  const std::string &message = group.status().message();
  if (*ncclVersion() >= 21400) {
    EXPECT_EQ(message.rfind("rank 0 of 2 on GPU 0: ", 0), 0u) << message;
  } else {
    EXPECT_NE(message.find("ncclCommInitAll failed: "), std::string::npos) << message;
  }
}

TEST(Nccl, ABadTimeoutIsRefusedBeforeAnyDevice) {
  if (!ncclVersion().isOk())
    GTEST_SKIP() << "no NCCL here";
  ScopedEnv timeout("DLC_NCCL_TIMEOUT", "soon");
  auto group = createNcclGroup({0});
  ASSERT_FALSE(group.isOk());
  EXPECT_EQ(group.status().message(),
            "DLC_NCCL_TIMEOUT='soon': expected the seconds a rank waits for NCCL (0: no limit)");
  auto rank = createNcclRank(0, 2, 0, std::string(128, '\0'));
  ASSERT_FALSE(rank.isOk());
  EXPECT_EQ(rank.status().message(), group.status().message());
}

TEST(Nccl, ABlockingGroupWithoutAGpuFailsWithNcclsMessage) {
  if (listCudaDevices().isOk())
    GTEST_SKIP() << "a CUDA device is present";
  if (!ncclVersion().isOk())
    GTEST_SKIP() << "no NCCL here";
  ScopedEnv blocking("DLC_NCCL_BLOCKING", "1");
  auto group = createNcclGroup({0, 1});
  ASSERT_FALSE(group.isOk());
  EXPECT_EQ(group.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(group.status().message().find("ncclCommInitAll failed: "), std::string::npos)
      << group.status().toString();
  EXPECT_NE(group.status().message().find("over 2 GPUs"), std::string::npos)
      << group.status().toString();
}

TEST(Nccl, ARankOfProcessesChecksItsUniqueId) {
  if (!ncclVersion().isOk())
    GTEST_SKIP() << "no NCCL here";
  auto rank = createNcclRank(0, 2, 0, "too short");
  ASSERT_FALSE(rank.isOk());
  EXPECT_NE(rank.status().message().find("an NCCL unique id is 128 bytes, got 9"),
            std::string::npos)
      << rank.status().toString();
  auto outside = createNcclRank(0, 2, 2, std::string(128, '\0'));
  ASSERT_FALSE(outside.isOk());
  EXPECT_NE(outside.status().message().find("NCCL rank 2 of 2"), std::string::npos)
      << outside.status().toString();
}

TEST(Nccl, ARankWhosePeerNeverJoinsFailsNamingItself) {
  if (!ncclVersion().isOk())
    GTEST_SKIP() << "no NCCL here";
  auto devices = listCudaDevices();
  int device = devices.isOk() ? devices->front().ordinal : 0;
  if (devices.isOk()) {
    ASSERT_TRUE(selectCudaDevice(device).isOk());
  }
  auto id = ncclUniqueId();
  ASSERT_TRUE(id.isOk()) << id.status().toString();
  // Rank 1 of 2 never comes. Blocking, ncclCommInitRank would wait for it
  // without end; on a GPU this is the timeout, without one NCCL's error.
  ScopedEnv timeout("DLC_NCCL_TIMEOUT", "2");
  auto start = std::chrono::steady_clock::now();
  auto rank = createNcclRank(device, 2, 0, *id);
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(rank.isOk());
  EXPECT_EQ(rank.status().code(), StatusCode::kUnavailable);
  EXPECT_LT(took.count(), 30.0);
  if (devices.isOk()) {
    EXPECT_EQ(rank.status().message(),
              "rank 0: its NCCL communicator on GPU " + std::to_string(device) +
                  " did not finish within 2 s (DLC_NCCL_TIMEOUT): another rank failed, "
                  "stopped or never joined; its communicator was aborted");
  } else {
    EXPECT_NE(rank.status().message().find("rank 0"), std::string::npos)
        << rank.status().toString();
  }
  std::cout << "without its peer: " << rank.status().toString() << "\n";
}

#if DLC_ENABLE_CUDA
TEST(Nccl, OneRankAveragesOnTheGpuDirectlyAndInACapturedGraph) {
  auto devices = listCudaDevices();
  if (!devices.isOk())
    GTEST_SKIP() << "needs a GPU: " << devices.status().toString();
  auto group = createNcclGroup({devices->front().ordinal});
  ASSERT_TRUE(group.isOk()) << group.status().toString();
  NcclCommunicator &comm = *group->front();
  EXPECT_EQ(comm.ranks(), 1);

  constexpr int kCount = 1000;
  std::vector<float> values(kCount);
  std::vector<uint16_t> halves(kCount);
  for (int i = 0; i < kCount; ++i) {
    values[i] = 0.25f * i - 7.0f;
    halves[i] = floatToHalf(values[i]);
  }
  void *f32In = nullptr, *f32Out = nullptr, *f16 = nullptr;
  ASSERT_EQ(cudaMalloc(&f32In, kCount * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&f32Out, kCount * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&f16, kCount * 2), cudaSuccess);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  auto check = [&](const char *how) {
    std::vector<float> got(kCount);
    std::vector<uint16_t> gotHalf(kCount);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess) << how;
    ASSERT_EQ(cudaMemcpy(got.data(), f32Out, kCount * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(gotHalf.data(), f16, kCount * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(got, values) << how;
    EXPECT_EQ(gotHalf, halves) << how << ": in place";
    EXPECT_TRUE(comm.asyncError().isOk()) << comm.asyncError().toString();
  };
  std::vector<DeviceBuffer> bucket = {{f32In, f32Out, kCount, DType::kF32},
                                      {f16, f16, kCount, DType::kF16}};
  ASSERT_EQ(cudaMemcpy(f32In, values.data(), kCount * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(f16, halves.data(), kCount * 2, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(f32Out, 0, kCount * 4), cudaSuccess);
  Status direct = comm.allReduceMean(bucket, stream);
  ASSERT_TRUE(direct.isOk()) << direct.toString();
  check("launched directly");

  ASSERT_EQ(cudaMemset(f32Out, 0, kCount * 4), cudaSuccess);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  Status captured = comm.allReduceMean(bucket, stream);
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_TRUE(captured.isOk()) << captured.toString();
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  check("replayed from a CUDA graph");

  EXPECT_FALSE(comm.allReduceMean({{f32In, f32Out, kCount, DType::kI64}}, stream).isOk());
  (void)cudaGraphExecDestroy(exec);
  (void)cudaGraphDestroy(graph);
  (void)cudaStreamDestroy(stream);
  (void)cudaFree(f32In);
  (void)cudaFree(f32Out);
  (void)cudaFree(f16);
}
#endif

} // namespace
