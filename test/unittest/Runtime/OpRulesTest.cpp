//===- OpRulesTest.cpp - every op's validation rule (OpRules.h) -----------===//
//
// Every OpId has a rule; each kind of fact a rule checks refuses a kernel
// that breaks it, with one line naming the kernel, the op, the attribute
// and the values; and issue #39's plan (mlp at batch 8, byte 3224 set to 4
// with the checksum recomputed, so that softmax_cross_entropy's class_axis
// points outside its operand) is refused at load instead of crashing both
// CPU backends.
//
//===----------------------------------------------------------------------===//

#include "TestPlan.h"

#include "dlc/runtime/OpRules.h"
#include "dlc/runtime/Plan.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

using namespace dlc::rt;
using dlc_test::PlanBuilder;

namespace {

constexpr BufferRole kIn = BufferRole::kInput, kOut = BufferRole::kTemporary;

/// The rule's message for the plan's only (or last) kernel, "" when it passes.
std::string refusal(const Plan &plan) {
  Status s = validatePlan(plan);
  return s.isOk() ? "" : s.message();
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

} // namespace

// A new op in ODS gets an OpId at the next build; it needs its rule in
// runtime/src/OpRules.cpp (docs/AddingAnOp.md), else this fails naming it.
TEST(OpRules, EveryOpHasARule) {
  for (size_t i = 0; i < kNumOps; ++i)
    EXPECT_TRUE(hasKernelRule(static_cast<OpId>(i)))
        << "train." << opName(static_cast<OpId>(i))
        << " has no validation rule in runtime/src/OpRules.cpp";
}

TEST(OpRules, ClassAxisOutsideTheRank) {
  PlanBuilder b;
  int32_t logits = b.add("logits", DType::kF32, {8, 10}, kIn);
  int32_t labels = b.add("labels", DType::kI64, {8}, BufferRole::kLabel);
  int32_t loss = b.add("loss", DType::kF32, {}, BufferRole::kLoss);
  b.kernel("softmax_cross_entropy", {logits, labels}, {loss}, {{"class_axis", int64_t(1)}});
  EXPECT_EQ(refusal(b.plan), "");
  b.plan.kernels[0].attrs["class_axis"] = int64_t(4);
  EXPECT_EQ(refusal(b.plan),
            "kernel #0 (softmax_cross_entropy): class_axis 4 is outside its operand's rank 2");
  b.plan.kernels[0].attrs["class_axis"] = int64_t(-3);
  EXPECT_EQ(refusal(b.plan),
            "kernel #0 (softmax_cross_entropy): class_axis -3 is outside its operand's rank 2");
  // Labels must hold one class per position.
  b.plan.kernels[0].attrs["class_axis"] = int64_t(0);
  EXPECT_EQ(refusal(b.plan), "kernel #0 (softmax_cross_entropy): operand #1 has 8 elements "
                             "where operand [8, 10] without class axis 0 gives 10");
}

TEST(OpRules, OperandCountsAndTypes) {
  PlanBuilder b;
  int32_t x = b.add("x", DType::kF32, {4}, kIn), y = b.add("y", DType::kF32, {4}, kOut);
  b.kernel("relu_backward", {x}, {y});
  EXPECT_EQ(refusal(b.plan), "kernel #0 (relu_backward): has 1 operands, the op takes 2");
  b.plan.kernels[0] = dlc_test::makeKernel("relu", {b.add("i", DType::kI32, {4}, kIn)}, {y});
  EXPECT_EQ(refusal(b.plan), "kernel #0 (relu): operand #0 is i32, not a float type");
  b.plan.kernels[0] = dlc_test::makeKernel("relu", {b.add("z", DType::kF32, {5}, kIn)}, {y});
  EXPECT_EQ(refusal(b.plan),
            "kernel #0 (relu): result #0 has shape [4], operand #0 [5]: the op takes them alike");
}

TEST(OpRules, PermutationsAndAxes) {
  PlanBuilder b;
  int32_t x = b.add("x", DType::kF32, {2, 3}, kIn), y = b.add("y", DType::kF32, {3, 2}, kOut);
  b.kernel("transpose", {x}, {y}, {{"permutation", std::vector<int64_t>{1, 0}}});
  EXPECT_EQ(refusal(b.plan), "");
  b.plan.kernels[0].attrs["permutation"] = std::vector<int64_t>{1, 1};
  EXPECT_EQ(refusal(b.plan), "kernel #0 (transpose): permutation [1, 1] is no permutation of "
                             "its operand's 2 dimensions");
  b.plan.kernels[0] = dlc_test::makeKernel("reduce_sum", {x}, {b.add("s", DType::kF32, {2}, kOut)},
                                           {{"axes", std::vector<int64_t>{1, -1}}});
  EXPECT_EQ(refusal(b.plan), "kernel #0 (reduce_sum): axes [1, -1] names axis 1 twice");
  b.plan.kernels[0].attrs["axes"] = std::vector<int64_t>{2};
  EXPECT_EQ(refusal(b.plan),
            "kernel #0 (reduce_sum): axes [2] has an axis outside its operand's rank 2");
  b.plan.kernels[0].attrs["axes"] = std::vector<int64_t>{1};
  EXPECT_EQ(refusal(b.plan), "");
}

TEST(OpRules, SliceStaysInsideItsAxis) {
  PlanBuilder b;
  int32_t x = b.add("x", DType::kF32, {2, 8}, kIn), y = b.add("y", DType::kF32, {2, 3}, kOut);
  b.kernel("slice", {x}, {y}, {{"axis", int64_t(1)}, {"start", int64_t(2)}, {"step", int64_t(2)}});
  EXPECT_EQ(refusal(b.plan), "");
  b.plan.kernels[0].attrs["start"] = int64_t(4);
  EXPECT_EQ(refusal(b.plan), "kernel #0 (slice): start 4, step 2 and 3 elements reach past "
                             "axis 1's extent 8");
  b.plan.kernels[0].attrs["start"] = int64_t(-1);
  EXPECT_EQ(refusal(b.plan), "kernel #0 (slice): start -1 is outside [0, 8]");
}

TEST(OpRules, RatesEpsilonsAndGroups) {
  PlanBuilder b;
  int32_t x = b.add("x", DType::kF32, {2, 4, 6, 6}, kIn);
  int32_t y = b.add("y", DType::kF32, {2, 4, 6, 6}, kOut);
  b.kernel("dropout", {x}, {y}, {{"rate", 1.0}});
  EXPECT_EQ(refusal(b.plan), "kernel #0 (dropout): rate 1 is not in [0, 1)");
  int32_t v = b.add("v", DType::kF32, {6}, kIn);
  b.plan.kernels[0] = dlc_test::makeKernel("layer_norm", {x, v, v}, {y}, {{"epsilon", 0.0}});
  EXPECT_EQ(refusal(b.plan), "kernel #0 (layer_norm): epsilon 0 is not in > 0");
  int32_t w = b.add("w", DType::kF32, {4, 2, 3, 3}, kIn);
  b.plan.kernels[0] = dlc_test::makeKernel(
      "conv2d", {x, w}, {y}, {{"padding", std::vector<int64_t>{1, 1}}, {"groups", int64_t(2)}});
  EXPECT_EQ(refusal(b.plan), "");
  b.plan.kernels[0].attrs["groups"] = int64_t(3);
  EXPECT_EQ(refusal(b.plan), "kernel #0 (conv2d): groups 3 does not divide the 4 input and 4 "
                             "output channels");
  b.plan.kernels[0].attrs["groups"] = int64_t(2);
  b.plan.kernels[0].attrs["stride"] = std::vector<int64_t>{0, 1};
  EXPECT_EQ(refusal(b.plan), "kernel #0 (conv2d): stride [0, 1] is outside [1, 2147483648]");
  b.plan.kernels[0].attrs["stride"] = std::vector<int64_t>{2, 2};
  EXPECT_EQ(refusal(b.plan),
            "kernel #0 (conv2d): result #0 is [2, 4, 6, 6] (NCHW) where the input [2, 4, 6, 6], "
            "filter [4, 2, 3, 3], stride [2, 2], padding [1, 1] and dilation [1, 1] give "
            "[2, 4, 3, 3]");
  b.plan.kernels[0] = dlc_test::makeKernel("max_pool2d", {x}, {y},
                                           {{"kernel_size", std::vector<int64_t>{3, 3}},
                                            {"padding", std::vector<int64_t>{2, 1}}});
  EXPECT_EQ(refusal(b.plan),
            "kernel #0 (max_pool2d): padding [2, 1] is more than half of kernel_size [3, 3]");
}

// Issue #39's reproduction, kept as its file: the mlp's plan at batch 8
// (`dlc-bench models/mlp.mlir --batch 8 --compile-only --emit-plan`) with
// class_axis's byte 3176 set from 1 to 4 and the checksum recomputed
// (scripts/plan_poke.py). It read, and both CPU backends crashed on it.
TEST(OpRules, IssueThirtyNinePlanIsRefusedAtLoad) {
  std::string dir = std::string(DLC_SOURCE_DIR) + "/test/unittest/Runtime/Inputs/";
  std::string bytes = readFile(dir + "mlp-b8-class-axis-4.plan");
  ASSERT_FALSE(bytes.empty());
  auto plan = deserializePlan(bytes, "mlp-b8-class-axis-4.plan");
  ASSERT_FALSE(plan.isOk());
  EXPECT_EQ(plan.status().message(),
            "mlp-b8-class-axis-4.plan: corrupt plan file: kernel #3 (softmax_cross_entropy): "
            "class_axis 4 is outside its operand's rank 2");
  // The plan it was made from reads.
  EXPECT_TRUE(deserializePlan(readFile(dir + "mlp-b8.plan"), "mlp-b8.plan").isOk());
}
