//===- RowStrideTest.cpp - padded rows: who takes them, and what they compute ===//
//
// The plan's padded rows (rowStride in Plan.h, RowStride.h): validatePlan
// refuses a padded buffer any kernel would read densely, and the CPU
// backends' GEMMs and cross-entropy give over padded rows what they give
// over dense ones.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/RowStride.h"
#include "dlc/runtime/cpu/CpuExecutor.h"

#include "TestPlan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

using namespace dlc::rt;
using dlc_test::PlanBuilder;

namespace {

constexpr BufferRole kIn = BufferRole::kInput, kTemp = BufferRole::kTemporary;

/// Gives buffer `id` rows `stride` elements apart and lays every buffer out
/// again, one after another.
void pad(Plan &plan, int32_t id, int64_t stride) {
  PlanBuffer &b = plan.buffers[id];
  b.init["row_stride"] = stride;
  b.bytes = storageElements(b) * dtypeBytes(b.dtype);
  plan.arenaBytes = 0;
  for (PlanBuffer &each : plan.buffers) {
    each.offset = plan.arenaBytes;
    plan.arenaBytes += (each.bytes + 255) / 256 * 256;
  }
}

/// The LM head's step in miniature: logits = linear(x, w) over [2, 3] rows
/// of 10 classes, the loss and its gradient, the two GEMMs that read the
/// gradient (a left operand stacked over a shared right one, and a
/// transposed batched one) and BERT's bias gradient over it (sum_to_shape).
/// Buffers: x 0, w 1, labels 2, dloss 3, logits 4, loss 5, dlogits 6, dx
/// 7, dw 8, dbias 9.
Plan headPlan() {
  PlanBuilder b;
  int32_t x = b.add("x", DType::kF32, {2, 3, 8}, kIn), w = b.add("w", DType::kF32, {10, 8}, kIn);
  int32_t labels = b.add("labels", DType::kI64, {2, 3}, kIn);
  int32_t dloss = b.add("dloss", DType::kF32, {}, kIn);
  int32_t logits = b.add("logits", DType::kF32, {2, 3, 10}, kTemp);
  int32_t loss = b.add("loss", DType::kF32, {}, kTemp);
  int32_t dlogits = b.add("dlogits", DType::kF32, {2, 3, 10}, kTemp);
  int32_t dx = b.add("dx", DType::kF32, {2, 3, 8}, kTemp);
  int32_t dw = b.add("dw", DType::kF32, {2, 10, 8}, kTemp);
  int32_t dbias = b.add("dbias", DType::kF32, {10}, kTemp);
  b.kernel("linear", {x, w}, {logits});
  b.kernel("softmax_cross_entropy", {logits, labels}, {loss}, {{"class_axis", int64_t(2)}});
  b.kernel("softmax_cross_entropy_backward", {dloss, logits, labels}, {dlogits},
           {{"class_axis", int64_t(2)}});
  b.kernel("matmul", {dlogits, w}, {dx});
  b.kernel("matmul", {dlogits, x}, {dw}, {{"transpose_lhs", int64_t(1)}});
  b.kernel("sum_to_shape", {dlogits}, {dbias}, {{"shape", std::vector<int64_t>{10}}});
  return b.plan;
}

std::string refusal(const Plan &plan) {
  Status s = validatePlan(plan);
  return s.isOk() ? "" : s.message();
}

TEST(RowStride, TheHeadsBuffersTakePaddedRows) {
  Plan plan = headPlan();
  pad(plan, 4, 12);
  pad(plan, 6, 16);
  EXPECT_EQ(refusal(plan), "");
  EXPECT_EQ(storageElements(plan.buffers[4]), 6 * 12);
  for (size_t k = 0; k < plan.kernels.size(); ++k)
    for (int32_t id : {4, 6}) {
      const PlanKernel &kernel = plan.kernels[k];
      bool touches = std::count(kernel.inputs.begin(), kernel.inputs.end(), id) ||
                     std::count(kernel.outputs.begin(), kernel.outputs.end(), id);
      if (touches) {
        EXPECT_EQ(rowStrideRefusal(plan, kernel, id), "") << "kernel #" << k;
      }
    }
}

TEST(RowStride, ValidationRefusesWhatAKernelWouldReadDensely) {
  {
    Plan plan = headPlan();
    int32_t y = dlc_test::appendBuffer(plan, "y", DType::kF32, {2, 3, 10}, kTemp);
    plan.kernels.push_back(dlc_test::makeKernel("relu", {4}, {y}));
    pad(plan, 4, 12);
    EXPECT_EQ(refusal(plan),
              "kernel #6: relu reads or writes 'logits', and relu reads and writes its buffers "
              "densely, but that buffer's rows are padded (row stride 12)");
  }
  {
    Plan plan = headPlan();
    pad(plan, 1, 12); // the weight: an input, and linear reads it densely
    EXPECT_NE(refusal(plan).find("buffer 'w' has a row stride of 12, but only a temporary"),
              std::string::npos)
        << refusal(plan);
  }
  {
    Plan plan = headPlan();
    pad(plan, 4, 8); // shorter than a row
    EXPECT_NE(refusal(plan).find("buffer 'logits' has a row stride of 8"), std::string::npos);
  }
  {
    Plan plan = headPlan();
    pad(plan, 4, 12);
    plan.kernels[1].attrs["class_axis"] = int64_t(1);
    EXPECT_NE(refusal(plan).find("with the classes on axis 1, not the last"), std::string::npos)
        << refusal(plan);
  }
  {
    Plan plan = headPlan();
    pad(plan, 4, 12);
    plan.kernels[0].attrs["fusion.group"] = int64_t(0);
    EXPECT_NE(refusal(plan).find("inside fused group 0, which runs as one launch"),
              std::string::npos)
        << refusal(plan);
  }
  {
    // sum_to_shape reads padded rows but writes dense ones.
    Plan plan = headPlan();
    int32_t sums = dlc_test::appendBuffer(plan, "sums", DType::kF32, {2, 1, 10}, kTemp);
    plan.kernels.push_back(dlc_test::makeKernel("sum_to_shape", {6}, {sums},
                                                {{"shape", std::vector<int64_t>{2, 1, 10}}}));
    pad(plan, sums, 12);
    EXPECT_NE(refusal(plan).find("sum_to_shape reads or writes 'sums' as its result, which is "
                                 "written densely"),
              std::string::npos)
        << refusal(plan);
  }
  {
    Plan plan = headPlan();
    pad(plan, 4, 12);
    plan.buffers[4].bytes -= 4; // the padding of the last row left out
    EXPECT_NE(refusal(plan).find("'logits' has 284 bytes for 72 f32 elements (padded rows "
                                 "included)"),
              std::string::npos)
        << refusal(plan);
  }
}

TEST(RowStride, AViewSharesItsOwnersOffsetAndBytes) {
  Plan plan = headPlan();
  pad(plan, 4, 12);
  PlanBuffer view = plan.buffers[4];
  view.name = "logits.rows";
  view.shape = {2, 3, 12};
  view.init = {{"view_of", int64_t(4)}};
  plan.buffers.push_back(view);
  int32_t id = static_cast<int32_t>(plan.buffers.size() - 1);
  EXPECT_EQ(refusal(plan), "");
  EXPECT_EQ(storageOwner(plan, id), 4);
  EXPECT_EQ(storageOwner(plan, 4), 4);
  plan.buffers[id].offset += 256;
  EXPECT_NE(refusal(plan).find("buffer 'logits.rows' is a view of 'logits', but a view shares"),
            std::string::npos)
      << refusal(plan);
  plan.buffers[id].offset -= 256;
  plan.buffers[id].init["view_of"] = int64_t(99);
  EXPECT_NE(refusal(plan).find("is a view of no buffer"), std::string::npos) << refusal(plan);
}

/// Runs the head plan kernel by kernel and returns each temporary's values
/// in its logical (unpadded) order.
std::vector<std::vector<float>> runHead(const Plan &plan, const cpu::CpuExecutor::Options &options) {
  auto exec = cpu::CpuExecutor::create(plan, options);
  EXPECT_TRUE(exec.isOk()) << exec.status().toString();
  if (!exec.isOk())
    return {};
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (const char *name : {"x", "w"}) {
    std::vector<float> v(plan.buffers[name[0] == 'x' ? 0 : 1].numElements());
    for (float &e : v)
      e = normal(rng);
    EXPECT_TRUE((*exec)->write(name, v.data(), v.size() * 4).isOk());
  }
  int64_t labels[6] = {0, 9, 3, -100, 7, 5};
  EXPECT_TRUE((*exec)->write("labels", labels, sizeof(labels)).isOk());
  float dloss = 1.5f;
  EXPECT_TRUE((*exec)->write("dloss", &dloss, 4).isOk());
  for (size_t k = 0; k < plan.kernels.size(); ++k)
    EXPECT_TRUE((*exec)->runKernel(k, 0).isOk());
  std::vector<std::vector<float>> values;
  for (int32_t id = 4; id <= 9; ++id) {
    const PlanBuffer &b = plan.buffers[id];
    std::string bytes = (*exec)->bytesOf(id);
    int64_t last = b.shape.empty() ? 1 : b.shape.back();
    int64_t ld = rowStride(b) > 0 ? rowStride(b) : last;
    std::vector<float> v(b.numElements());
    for (int64_t e = 0; e < b.numElements(); ++e)
      std::memcpy(&v[e], bytes.data() + ((e / last) * ld + e % last) * 4, 4);
    values.push_back(std::move(v));
  }
  return values;
}

TEST(RowStride, CpuKernelsOverPaddedRowsGiveTheDenseResults) {
  Plan dense = headPlan(), padded = headPlan();
  pad(padded, 4, 12);
  pad(padded, 6, 16);
  ASSERT_EQ(refusal(padded), "");
  // The reference: the same sums in the same order, bit for bit.
  EXPECT_EQ(runHead(padded, {}), runHead(dense, {}));
  // The fast backend (oneDNN's GEMMs, the host cross-entropy): within
  // float32 rounding, a library picking its kernel by the stride.
  std::vector<std::vector<float>> want = runHead(dense, {}),
                                  have = runHead(padded, cpu::CpuExecutor::fastOptions());
  ASSERT_EQ(have.size(), want.size());
  for (size_t t = 0; t < want.size(); ++t)
    for (size_t e = 0; e < want[t].size(); ++e)
      EXPECT_NEAR(have[t][e], want[t][e], 1e-5 * (1 + std::fabs(want[t][e])))
          << "tensor " << t << " element " << e;
}

} // namespace
