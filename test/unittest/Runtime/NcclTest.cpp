//===- NcclTest.cpp - NCCL loaded at run time, and its all-reduce ---------===//
//
// Without a GPU: NCCL loads and reports its version (it needs no device),
// and a group fails with NCCL's own message. With one GPU: a one-rank group
// averages float32 and float16 buffers (the mean of one rank is its own
// values), launched directly and from a captured CUDA graph, as the CUDA
// executor launches it. Several ranks need several GPUs.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/Device.h"
#include "dlc/runtime/Half.h"
#include "dlc/runtime/cuda/Nccl.h"

#include <gtest/gtest.h>

#if DLC_ENABLE_CUDA
#include <cuda_runtime.h>
#endif

#include <cstring>
#include <vector>

using namespace dlc::rt;
using namespace dlc::rt::cuda;

namespace {

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

TEST(Nccl, AGroupWithoutAGpuFailsWithNcclsMessage) {
  if (listCudaDevices().isOk())
    GTEST_SKIP() << "a CUDA device is present";
  if (!ncclVersion().isOk())
    GTEST_SKIP() << "no NCCL here";
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
