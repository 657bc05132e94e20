//===- NvmlTest.cpp - the NVML monitor against a fake libnvidia-ml -------===//
//
// No GPU here, so the monitor is checked against a fake NVML library built
// by the test (the host compiler, DLC_HOST_CXX) and loaded through
// $DLC_NVML_LIBRARY: the entry points are found, the device is looked up by
// its PCI bus id, samples are averaged and the largest memory use is kept.
// With a missing library the monitor says so.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/Nvml.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <unistd.h>

using namespace dlc::rt;

namespace {

/// Utilization alternates 40% / 60% (memory 25%); each reading uses one
/// more GiB of the 80 GiB, from 1 GiB on.
const char *const kFakeNvml = R"src(
#include <cstring>
extern "C" {
static int readings = 0;
static int deviceTag = 7;
int nvmlInit_v2() { return 0; }
int nvmlShutdown() { return 0; }
const char *nvmlErrorString(int code) { return code == 6 ? "Not Found" : "Unknown Error"; }
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **device) {
  if (std::strcmp(bus, "00000000:3B:00.0") != 0) return 6;
  *device = &deviceTag;
  return 0;
}
int nvmlDeviceGetUtilizationRates(void *device, unsigned *u) {
  if (device != &deviceTag) return 999;
  u[0] = readings % 2 ? 60 : 40;
  u[1] = 25;
  return 0;
}
int nvmlDeviceGetMemoryInfo(void *device, unsigned long long *m) {
  if (device != &deviceTag) return 999;
  m[0] = 80ull << 30;
  m[2] = (unsigned long long)(++readings) << 30;
  m[1] = m[0] - m[2];
  return 0;
}
}
)src";

class FakeNvml : public ::testing::Test {
protected:
  void SetUp() override {
#ifndef DLC_HOST_CXX
    GTEST_SKIP() << "needs the host C++ compiler's path (DLC_HOST_CXX) at build time";
#else
    // A file per test: a fresh library, so its reading counter starts at 0.
    static int made = 0;
    std::string dir = ::testing::TempDir() + "dlc-nvml-" + std::to_string(getpid()) + "-" +
                      std::to_string(made++);
    std::string source = dir + ".cpp";
    library = dir + ".so";
    std::ofstream(source) << kFakeNvml;
    std::string command =
        std::string(DLC_HOST_CXX) + " -shared -fPIC -o " + library + " " + source;
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    setenv("DLC_NVML_LIBRARY", library.c_str(), 1);
#endif
  }
  void TearDown() override { unsetenv("DLC_NVML_LIBRARY"); }
  std::string library;
};

TEST(Nvml, AMissingLibraryIsUnavailableAndSaysWhichAndWhy) {
  setenv("DLC_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  auto monitor = NvmlMonitor::open("00000000:3B:00.0");
  unsetenv("DLC_NVML_LIBRARY");
  ASSERT_FALSE(monitor.isOk());
  EXPECT_EQ(monitor.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(monitor.status().message().find("/nonexistent/libnvidia-ml.so.1"), std::string::npos)
      << monitor.status().message();
  EXPECT_NE(monitor.status().message().find("NVIDIA driver"), std::string::npos);
}

TEST_F(FakeNvml, AnUnknownBusIdNamesTheBusAndNvmlsError) {
  auto monitor = NvmlMonitor::open("00000000:99:00.0");
  ASSERT_FALSE(monitor.isOk());
  EXPECT_NE(monitor.status().message().find("PCI 00000000:99:00.0"), std::string::npos)
      << monitor.status().message();
  EXPECT_NE(monitor.status().message().find("Not Found"), std::string::npos);
}

TEST_F(FakeNvml, OneSampleReadsUtilizationAndMemory) {
  auto monitor = NvmlMonitor::open("00000000:3B:00.0");
  ASSERT_TRUE(monitor.isOk()) << monitor.status().toString();
  auto first = (*monitor)->sample();
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  EXPECT_EQ(first->gpuUtilizationPercent, 40);
  EXPECT_EQ(first->memoryUtilizationPercent, 25);
  EXPECT_EQ(first->memoryUsedBytes, int64_t(1) << 30);
  EXPECT_EQ(first->memoryTotalBytes, int64_t(80) << 30);
  auto second = (*monitor)->sample();
  ASSERT_TRUE(second.isOk());
  EXPECT_EQ(second->gpuUtilizationPercent, 60);
}

TEST_F(FakeNvml, SamplingOnAThreadAveragesAndKeepsThePeakMemory) {
  auto monitor = NvmlMonitor::open("00000000:3B:00.0");
  ASSERT_TRUE(monitor.isOk()) << monitor.status().toString();
  (*monitor)->start(/*periodMs=*/1);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  GpuUsage usage = (*monitor)->stop();
  ASSERT_GE(usage.samples, 2);
  // Readings alternate 40 and 60: the mean of n of them is 50, or 50 -+
  // 10/n when n is odd.
  double expected = usage.samples % 2 ? 50.0 - 10.0 / usage.samples : 50.0;
  EXPECT_DOUBLE_EQ(usage.gpuUtilizationPercent, expected);
  EXPECT_DOUBLE_EQ(usage.memoryUtilizationPercent, 25);
  // Memory use grows a GiB per reading: the peak is the last one.
  EXPECT_EQ(usage.memoryUsedBytes, int64_t(usage.samples) << 30);
}

} // namespace
