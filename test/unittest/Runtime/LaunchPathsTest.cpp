//===- LaunchPathsTest.cpp - the CUDA backend's routing, without a GPU ----===//
//
// LaunchPaths decides every launch's device path from the plan alone; these
// run on any machine. A group no device kernel computes is split into its
// kernels, and each part then writes what its siblings read.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/cuda/KernelCodegen.h"
#include "dlc/runtime/cuda/LaunchPaths.h"

#include "TestPlan.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace dlc::rt;
using namespace dlc::rt::cuda;

namespace {

constexpr BufferRole kIn = BufferRole::kInput, kTmp = BufferRole::kTemporary;

struct Builder {
  Plan plan;
  int32_t add(const std::string &name, DType dtype, std::vector<int64_t> shape,
              BufferRole role) {
    return dlc_test::appendBuffer(plan, name, dtype, std::move(shape), role);
  }
  void kernel(const std::string &op, std::vector<int32_t> in, std::vector<int32_t> out,
              PlanAttrs attrs = {}) {
    plan.kernels.push_back(PlanKernel{op, std::move(in), std::move(out), std::move(attrs)});
  }
};

PlanAttrs group(int64_t id, const std::string &kind) {
  return {{"fusion.group", id}, {"fusion.kind", kind}};
}

TEST(LaunchPaths, RoutesEachOpToItsPath) {
  Builder b;
  const DType f = DType::kF32;
  int32_t x = b.add("x", f, {4, 8}, kIn), y = b.add("y", f, {4, 8}, kIn);
  int32_t s = b.add("s", f, {4, 8}, kTmp), r = b.add("r", f, {4, 8}, kTmp);
  int32_t w = b.add("w", f, {8, 16}, kIn), m = b.add("m", f, {4, 16}, kTmp);
  int32_t p = b.add("p", f, {4, 16}, kTmp);
  int32_t img = b.add("img", f, {2, 3, 8, 8}, kIn), filt = b.add("filt", f, {4, 3, 3, 3}, kIn);
  int32_t c = b.add("c", f, {2, 4, 8, 8}, kTmp);
  int32_t ids = b.add("ids", DType::kI32, {4, 8}, kIn), im = b.add("im", DType::kI32, {8, 16}, kIn);
  int32_t bad = b.add("bad", DType::kI32, {4, 16}, kTmp);
  b.kernel("add", {x, y}, {s}, group(0, "elewise_act"));
  b.kernel("relu", {s}, {r}, group(0, "elewise_act"));
  b.kernel("matmul", {r, w}, {m});
  b.kernel("softmax", {m}, {p}, {{"axis", int64_t(-1)}});
  b.kernel("conv2d", {img, filt}, {c},
           {{"stride", std::vector<int64_t>{1, 1}}, {"padding", std::vector<int64_t>{1, 1}}});
  b.kernel("matmul", {ids, im}, {bad}); // integer GEMMs: no cuBLASLt, no kernel

  std::vector<DeviceLaunch> device = planDeviceLaunches(b.plan);
  ASSERT_EQ(device.size(), 5u);
  EXPECT_EQ(device[0].path, "generated");
  EXPECT_EQ(device[0].launch.kernels.size(), 2u);
  EXPECT_EQ(device[1].path, "cublaslt");
  EXPECT_EQ(device[2].path, "hand-written");
  EXPECT_EQ(device[3].path, "cudnn");
  EXPECT_EQ(device[4].path, "host-fallback");
  EXPECT_NE(device[4].reason.find("cuBLASLt refuses it: operands of i32 and i32"),
            std::string::npos)
      << device[4].reason;
  std::map<std::string, int64_t> counts = countByPath(device);
  EXPECT_EQ(counts["generated"], 1);
  EXPECT_EQ(counts["host-fallback"], 1);
  EXPECT_EQ(counts.size(), devicePathNames().size());
}

TEST(LaunchPaths, AGroupNoKernelComputesIsSplitAndItsPartsExportWhatSiblingsRead) {
  // An xla-style input fusion: add feeding softmax, in one group. The
  // generator does not write softmax, so the group splits; `s` was internal
  // to the group and must now be written by the add part.
  Builder b;
  const DType f = DType::kF32;
  int32_t x = b.add("x", f, {4, 8}, kIn), y = b.add("y", f, {4, 8}, kIn);
  int32_t s = b.add("s", f, {4, 8}, kTmp), p = b.add("p", f, {4, 8}, kTmp);
  int32_t q = b.add("q", f, {4, 8}, BufferRole::kGradient); // read after the step
  b.kernel("add", {x, y}, {s}, group(0, "input"));
  b.kernel("softmax", {s}, {p}, {{"axis", int64_t(-1)}, {"fusion.group", int64_t(0)},
                                  {"fusion.kind", std::string("input")}});
  b.kernel("relu", {p}, {q});

  // Against the plan's own launches the add is internal: nothing leaves it.
  std::vector<Launch> original = planLaunches(b.plan);
  ASSERT_EQ(original.size(), 2u);
  EXPECT_FALSE(isGeneratable(b.plan, original[0]).ok);

  std::vector<DeviceLaunch> device = planDeviceLaunches(b.plan);
  ASSERT_EQ(device.size(), 3u);
  EXPECT_TRUE(device[0].splitFromGroup);
  EXPECT_TRUE(device[1].splitFromGroup);
  EXPECT_FALSE(device[2].splitFromGroup);
  EXPECT_EQ(device[0].path, "generated");
  EXPECT_EQ(device[1].path, "hand-written");
  EXPECT_EQ(device[2].path, "generated");
  EXPECT_EQ(device[0].launch.group, 0);
  EXPECT_NE(device[0].reason.find("split from its group"), std::string::npos);
  EXPECT_NE(device[0].reason.find("softmax"), std::string::npos) << device[0].reason;
  for (size_t i = 0; i < device.size(); ++i)
    EXPECT_EQ(device[i].launch.index, i);

  auto part = generateKernel(b.plan, device[0].launch, launchesOf(device));
  ASSERT_TRUE(part.isOk()) << part.status().toString();
  EXPECT_NE(std::find(part->args.begin(), part->args.end(), s), part->args.end())
      << "the add part must write s, which the softmax part reads";
}

TEST(LaunchPaths, LibraryRefusalsNameTheProblem) {
  Builder b;
  int32_t v = b.add("v", DType::kF32, {8}, kIn), w = b.add("w", DType::kF32, {8, 4}, kIn);
  int32_t o = b.add("o", DType::kF32, {4}, kTmp);
  b.kernel("matmul", {v, w}, {o});
  EXPECT_EQ(gemmRefusal(b.plan, b.plan.kernels[0]), "an operand of rank below 2");
  int32_t h = b.add("h", DType::kF16, {2, 3, 8, 8}, kIn), k = b.add("k", DType::kF32, {4, 3, 3, 3}, kIn);
  int32_t c = b.add("c", DType::kF16, {2, 4, 6, 6}, kTmp);
  b.kernel("conv2d", {h, k}, {c});
  EXPECT_EQ(convRefusal(b.plan, b.plan.kernels[1]),
            "operands of mixed or unsupported types (f16, f32, f16)");
  int32_t i3 = b.add("i3", DType::kF32, {2, 3, 8}, kIn), k3 = b.add("k3", DType::kF32, {4, 3, 3}, kIn);
  int32_t c3 = b.add("c3", DType::kF32, {2, 4, 6}, kTmp);
  b.kernel("conv2d", {i3, k3}, {c3});
  EXPECT_EQ(convRefusal(b.plan, b.plan.kernels[2]), "operands that are not 4-d (NCHW)");
}

} // namespace
