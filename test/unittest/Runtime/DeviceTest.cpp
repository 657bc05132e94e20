//===- DeviceTest.cpp - CUDA device discovery -----------------------------===//
//
// Runs on every machine: without a GPU the runtime must say so cleanly; with
// one it must describe it.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/Device.h"

#include <gtest/gtest.h>

using namespace dlc::rt;

TEST(CudaDevice, MissingGpuIsAnUnavailableStatusNotACrash) {
  auto devices = listCudaDevices();
  if (devices.isOk())
    GTEST_SKIP() << "a CUDA device is present: " << devices->front().name;
  EXPECT_EQ(devices.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(devices.status().message().find("no CUDA device"),
            std::string::npos)
      << devices.status().toString();
  EXPECT_EQ(devices.status().toString().rfind("unavailable: no CUDA device", 0),
            0u);
}

TEST(CudaDevice, DescribesEveryDevice) {
  auto devices = listCudaDevices();
  if (!devices.isOk())
    GTEST_SKIP() << "needs a GPU: " << devices.status().toString();
  ASSERT_TRUE(cudaBackendBuilt());
  for (const CudaDeviceInfo &device : *devices) {
    EXPECT_FALSE(device.name.empty());
    EXPECT_GE(device.computeMajor, 7) << device.name;
    EXPECT_GT(device.totalMemoryBytes, 1ull << 30) << device.name;
    EXPECT_GT(device.multiprocessors, 0) << device.name;
  }
}
