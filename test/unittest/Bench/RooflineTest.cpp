//===- RooflineTest.cpp - each profiled launch's floor ---------------------===//

#include "Roofline.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace dlc::bench;

TEST(Roofline, TheFloorIsTheLongerOfTheBytesAndTheFlopsBound) {
  Roof roof = gpuRoof("H100-SXM", 989.4, "H100-SXM bf16-tensor");
  ASSERT_DOUBLE_EQ(roof.bytesPerSecond, 3350e9);
  ASSERT_DOUBLE_EQ(roof.flopsPerSecond, 989.4e12);
  // 3.35 GB at 3350 GB/s: 1 ms; its 1 GFLOP takes about 1 us at the peak.
  EXPECT_NEAR(floorMs(3'350'000'000, 1'000'000'000, roof), 1.0, 1e-12);
  // A GEMM of 989.4 GFLOP: 1 ms at the peak, whatever few bytes it moves.
  EXPECT_NEAR(floorMs(1000, 989'400'000'000, roof), 1.0, 1e-12);
  // No peak (a precision the table has no units for): bytes alone.
  Roof bandwidthOnly = gpuRoof("H100-SXM", 0, "");
  EXPECT_NEAR(floorMs(1000, 989'400'000'000, bandwidthOnly), 1000 / 3350e9 * 1e3, 1e-15);
  // An unknown device has no floor.
  EXPECT_EQ(floorMs(1000, 1000, gpuRoof("TPU-v5", 100, "")), -1);
}

TEST(Roofline, DeviceNamesAsCudaReportsThemFindTheTable) {
  EXPECT_EQ(tableGpuForDevice("NVIDIA H100 80GB HBM3"), "H100-SXM");
  EXPECT_EQ(tableGpuForDevice("NVIDIA H100 PCIe"), "H100-PCIe");
  EXPECT_EQ(tableGpuForDevice("NVIDIA H200"), "H200");
  EXPECT_EQ(tableGpuForDevice("NVIDIA A100-SXM4-80GB"), "A100-SXM");
  EXPECT_EQ(tableGpuForDevice("Tesla V100-SXM2-32GB"), "V100-SXM2");
  EXPECT_EQ(tableGpuForDevice("NVIDIA A10"), "A10");
  EXPECT_EQ(tableGpuForDevice("Some New GPU"), "");
  // --gpu wins over the device's own name; an unknown device without --gpu
  // has no roof.
  EXPECT_EQ(cudaRoof("A100-SXM", "NVIDIA H100 80GB HBM3", "amp", false, 0).bytesPerSecond,
            1555e9);
  EXPECT_DOUBLE_EQ(cudaRoof("", "NVIDIA H100 80GB HBM3", "amp-bf16", false, 0).flopsPerSecond,
                   989.4e12);
  EXPECT_EQ(cudaRoof("", "Some New GPU", "fp32", false, 0).bytesPerSecond, 0);
}

TEST(Roofline, TheTableListsWhatIsFurthestAboveItsFloorFirst) {
  std::vector<ProfileEntry> entries(3);
  entries[0] = {0, "layer_norm", "generated", 2.0, 3'350'000'000 / 2, 0};      // 0.5 ms floor
  entries[1] = {1, "matmul", "cublaslt", 1.1, 1000, 989'400'000'000};          // 1 ms floor
  entries[2] = {2, "transpose", "generated", 0.1, 3'350'000'000 / 4, 0};       // 0.25 ms floor
  Roof roof = gpuRoof("H100-SXM", 989.4, "bf16");
  applyFloors(entries, roof);
  EXPECT_NEAR(entries[0].floorMs, 0.5, 1e-12);
  std::ostringstream os;
  writeFloors(os, entries, roof);
  std::string text = os.str();
  size_t norm = text.find("layer_norm [generated]"), gemm = text.find("matmul [cublaslt]");
  ASSERT_NE(norm, std::string::npos) << text;
  ASSERT_NE(gemm, std::string::npos) << text;
  EXPECT_LT(norm, gemm) << "1.5 ms above the floor comes before 0.1 ms:\n" << text;
  EXPECT_NE(text.find("4.0x"), std::string::npos) << text;
  // The transpose ran under its floor: the table says what that means.
  EXPECT_NE(text.find("stayed in a cache"), std::string::npos) << text;
  std::ostringstream unknown;
  writeFloors(unknown, entries, Roof{});
  EXPECT_NE(unknown.str().find("not known for this device"), std::string::npos);
}
