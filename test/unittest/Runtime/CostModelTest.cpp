//===- CostModelTest.cpp - the roofline of one launch, by hand ------------===//

#include "dlc/runtime/perf/CostModel.h"

#include "TestPlan.h"

#include <gtest/gtest.h>

using namespace dlc::rt::perf;
using dlc::rt::BufferRole;
using dlc::rt::DType;

namespace {

DeviceSpec device() {
  DeviceSpec d;
  d.fp32Flops = 10e12;
  d.tf32Flops = 80e12;
  d.fp16Flops = 100e12;
  d.memoryBandwidth = 1e12;
  d.sms = 100;
  d.threadsPerSm = 2048;
  return d;
}

CostParams params() {
  CostParams p;
  p.launchOverhead = 2e-6;
  p.streamMemEff = 0.8;
  p.reductionMemEff = 0.4;
  p.normMemEff = 0.25;
  p.legacyNormMemEff = 0.1;
  p.gatherMemEff = 0.5;
  p.tensorMaxEff = 0.5;
  p.cudaCoreMaxEff = 0.8;
  p.misalignedTensorEff = 0.05;
  p.contractionLatency = 3e-6;
  p.dramLatency = 500e-9;
  p.rowPassLatency = 1e-6;
  return p;
}

/// A 1e10-FLOP contraction on `path` in `type` whose output is 200 tiles of
/// 128 x 128 (two full waves over 100 multiprocessors), moving `bytes`.
LaunchCost contraction(const std::string &path, const std::string &type, double bytes) {
  LaunchCost l;
  l.path = path;
  l.access = Access::kContraction;
  l.flops = 1e10;
  l.bytes = bytes;
  l.contractionType = type;
  l.outputElements = 200 * 128 * 128;
  return l;
}

} // namespace

TEST(CostModel, MemoryBoundLaunchesRunAtTheirAccessPatternsBandwidth) {
  LaunchCost l;
  l.bytes = 1e9;
  l.path = "generated";
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false), 2e-6 + 1e9 / (1e12 * 0.8));
  l.access = Access::kReduction;
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false), 2e-6 + 1e9 / (1e12 * 0.4));
  l.access = Access::kGather;
  l.path = "hand-written";
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false), 2e-6 + 1e9 / (1e12 * 0.5));
  // A normalization moves its passes' bytes (the input read twice).
  l.access = Access::kNormalization;
  l.path = "cudnn";
  l.passBytes = 1.5e9;
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false), 2e-6 + 1.5e9 / (1e12 * 0.25));
}

TEST(CostModel, ASmallGridIsBoundByTheLoadsItKeepsInFlight) {
  LaunchCost l;
  l.path = "generated";
  l.bytes = 1e8;
  l.bytesPerThread = 4;
  // 10 blocks of 256 threads, 4 bytes each in flight for 500 ns: 20.48 GB/s.
  l.blocks = 10;
  l.threadsPerBlock = 256;
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false),
                   2e-6 + 1e8 / (10 * 256 * 4 / 500e-9));
  // A grid that fills every multiprocessor runs at the access pattern's
  // fraction of DRAM bandwidth instead.
  l.blocks = 100000;
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false), 2e-6 + 1e8 / (1e12 * 0.8));
}

TEST(CostModel, RowsWaitForTheBlocksResidentAtOnce) {
  LaunchCost l;
  l.path = "hand-written";
  l.access = Access::kNormalization;
  l.bytes = 1e3;
  l.bytesPerThread = 4;
  // 8 blocks of 256 threads fit a multiprocessor: 800 rows at once, so
  // 2000 rows take 3 rounds of two passes.
  l.rows = 2000;
  l.blocks = 2000;
  l.threadsPerBlock = 256;
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false), 2e-6 + 3 * 2 * 1e-6);
}

TEST(CostModel, ContractionsRunAtTheirUnitsCeilingOverTheirWaves) {
  LaunchCost l = contraction("cublaslt", "f16", 1);
  EXPECT_DOUBLE_EQ(waveEfficiency(l, device()), 1);
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false),
                   2e-6 + 1e10 / (100e12 * 0.5) + 3e-6);
  // 150 tiles: the second wave keeps half the multiprocessors busy.
  l.outputElements = 150 * 128 * 128;
  EXPECT_DOUBLE_EQ(waveEfficiency(l, device()), 0.75);
  // 10 tiles split the reduction 10 ways when it is deep enough (K =
  // 1e10 / 2 / 163840 = 30517 products, 119 slices of 256).
  l.outputElements = 10 * 128 * 128;
  EXPECT_DOUBLE_EQ(waveEfficiency(l, device()), 1);
  // fp32 runs on the CUDA cores, or the TF32 tensor cores when allowed.
  l.outputElements = 200 * 128 * 128;
  l.contractionType = "f32";
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false),
                   2e-6 + 1e10 / (10e12 * 0.8) + 3e-6);
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), true),
                   2e-6 + 1e10 / (80e12 * 0.5) + 3e-6);
  // A GPU without BF16 units (Volta) runs bf16 on the CUDA cores.
  l.contractionType = "bf16";
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false),
                   2e-6 + 1e10 / (10e12 * 0.8) + 3e-6);
  // The roofline: memory wins when it is slower; a contraction's operands
  // stream.
  l.bytes = 1e12;
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false), 2e-6 + 1e12 / (1e12 * 0.8));
}

TEST(CostModel, NchwConvolutionsOnTensorCoresPayCudnnsLayoutConversions) {
  LaunchCost l = contraction("cudnn", "f16", 1e8);
  l.nchwLibraryContraction = true;
  // A read and a write of every operand, at streaming bandwidth.
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false),
                   2e-6 + 1e10 / (100e12 * 0.5) + 3e-6 + 2e8 / (1e12 * 0.8));
  // On the CUDA cores (fp32 without TF32) cuDNN reads NCHW as it is.
  l.contractionType = "f32";
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false),
                   2e-6 + 1e10 / (10e12 * 0.8) + 3e-6);
}

TEST(CostModel, ConvolutionGradientsRunAtTheirPassesFractionOfTheForwardCeiling) {
  CostParams p = params();
  p.convDgradTensorRel = 0.8, p.convWgradTensorRel = 0.4;
  p.convDgradCudaCoreRel = 0.5, p.convWgradCudaCoreRel = 0.25;
  LaunchCost l = contraction("cudnn", "f16", 1);
  auto at = [&](double peak, double ceiling) { return 2e-6 + 1e10 / (peak * ceiling) + 3e-6; };
  l.convPass = ConvPass::kForward;
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), p, false), at(100e12, 0.5));
  l.convPass = ConvPass::kBackwardData;
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), p, false), at(100e12, 0.5 * 0.8));
  l.convPass = ConvPass::kBackwardFilter;
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), p, false), at(100e12, 0.5 * 0.4));
  // On the CUDA cores, the CUDA cores' fractions.
  l.contractionType = "f32";
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), p, false), at(10e12, 0.8 * 0.25));
  l.convPass = ConvPass::kBackwardData;
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), p, false), at(10e12, 0.8 * 0.5));
  // A GEMM is no convolution pass.
  l.convPass = ConvPass::kNone;
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), p, false), at(10e12, 0.8));

  // planLaunchCosts reads the pass from the kernel's op.
  dlc_test::PlanBuilder b;
  const BufferRole in = BufferRole::kInput, tmp = BufferRole::kTemporary;
  int32_t x = b.add("x", DType::kF32, {2, 4, 8, 8}, in), w = b.add("w", DType::kF32, {4, 4, 3, 3}, in);
  int32_t y = b.add("y", DType::kF32, {2, 4, 8, 8}, tmp), dy = b.add("dy", DType::kF32, {2, 4, 8, 8}, in);
  int32_t dx = b.add("dx", DType::kF32, {2, 4, 8, 8}, tmp), dw = b.add("dw", DType::kF32, {4, 4, 3, 3}, tmp);
  dlc::rt::PlanAttrs attrs = {{"padding", std::vector<int64_t>{1, 1}}};
  b.kernel("conv2d", {x, w}, {y}, attrs);
  b.kernel("conv2d_backward_data", {dy, w}, {dx}, attrs);
  b.kernel("conv2d_backward_filter", {dy, x}, {dw}, attrs);
  std::vector<LaunchCost> costs = planLaunchCosts(b.plan);
  ASSERT_EQ(costs.size(), 3u);
  EXPECT_EQ(costs[0].convPass, ConvPass::kForward);
  EXPECT_EQ(costs[1].convPass, ConvPass::kBackwardData);
  EXPECT_EQ(costs[2].convPass, ConvPass::kBackwardFilter);
}

TEST(CostModel, BatchNormsOffCudnnsNhwcHalfCallsRunAtTheLegacyFraction) {
  // A batch norm and its gradient over one input, as the lowering writes them.
  auto pair = [](DType data, const std::string &layout) {
    dlc_test::PlanBuilder b;
    std::vector<int64_t> shape = layout == "NHWC" ? std::vector<int64_t>{2, 4, 4, 8}
                                                  : std::vector<int64_t>{2, 8, 4, 4};
    const BufferRole in = BufferRole::kInput, tmp = BufferRole::kTemporary;
    int32_t x = b.add("x", data, shape, in), y = b.add("y", data, shape, tmp);
    int32_t dy = b.add("dy", data, shape, in), dx = b.add("dx", data, shape, tmp);
    std::vector<int32_t> c;
    for (const char *name :
         {"scale", "bias", "mean", "var", "new_mean", "new_var", "dscale", "dbias"})
      c.push_back(b.add(name, DType::kF32, {8}, in));
    dlc::rt::PlanAttrs attrs = {{"layout", layout}};
    b.kernel("batch_norm", {x, c[0], c[1], c[2], c[3]}, {y, c[4], c[5]}, attrs);
    b.kernel("batch_norm_backward", {dy, x, c[0]}, {dx, c[6], c[7]}, attrs);
    return planLaunchCosts(b.plan);
  };
  // FP16 NHWC: cuDNN's persistent calls (fusedBatchNormFor takes both).
  for (const LaunchCost &l : pair(DType::kF16, "NHWC")) {
    ASSERT_EQ(l.path, "cudnn");
    EXPECT_FALSE(l.legacyLibraryNorm) << l.label;
  }
  // fp32, or NCHW: the plain calls, at their own fraction of DRAM bandwidth.
  for (auto [data, layout] : {std::pair{DType::kF32, "NHWC"}, {DType::kF16, "NCHW"}})
    for (const LaunchCost &l : pair(data, layout)) {
      ASSERT_EQ(l.path, "cudnn");
      ASSERT_TRUE(l.legacyLibraryNorm) << l.label << " " << layout;
      EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false),
                       2e-6 + l.passBytes / (1e12 * 0.1));
    }
  // The plain calls count their passes as of 4-byte elements: an f16 NCHW
  // batch norm's passes are an f32 one's.
  std::vector<LaunchCost> half = pair(DType::kF16, "NCHW"), single = pair(DType::kF32, "NCHW");
  for (size_t i = 0; i < half.size(); ++i) {
    EXPECT_DOUBLE_EQ(half[i].passBytes, single[i].passBytes) << half[i].label;
    EXPECT_LT(half[i].bytes, single[i].bytes) << half[i].label;
  }
}

TEST(CostModel, GemmsWithoutSixteenByteRowsRunAtTheMisalignedCeiling) {
  // x[64, 32] @ w[32, N] on cuBLASLt in f16: N = 8 gives 16-byte rows; N = 10
  // 4-byte (20 bytes); N = 9 2-byte (18 bytes).
  auto gemm = [](int64_t n) {
    dlc_test::PlanBuilder b;
    int32_t x = b.add("x", DType::kF16, {64, 32}, BufferRole::kInput);
    int32_t w = b.add("w", DType::kF16, {32, n}, BufferRole::kInput);
    int32_t y = b.add("y", DType::kF16, {64, n}, BufferRole::kTemporary);
    b.kernel("matmul", {x, w}, {y});
    std::vector<LaunchCost> costs = planLaunchCosts(b.plan);
    EXPECT_EQ(costs.at(0).path, "cublaslt");
    return costs.at(0);
  };
  EXPECT_EQ(gemm(8).operandAlignment, 16);
  EXPECT_EQ(gemm(10).operandAlignment, 4);
  EXPECT_EQ(gemm(9).operandAlignment, 2);
  // Rows the plan padded (RowStride.h) start where their stride says:
  // linear's [64, 9] result padded to rows of 16 is 16-byte aligned.
  for (int64_t stride : {0, 16}) {
    dlc_test::PlanBuilder b;
    int32_t x = b.add("x", DType::kF16, {64, 32}, BufferRole::kInput);
    int32_t w = b.add("w", DType::kF16, {9, 32}, BufferRole::kInput);
    int32_t y = b.add("y", DType::kF16, {64, 9}, BufferRole::kTemporary);
    if (stride > 0)
      b.plan.buffers[y].init["row_stride"] = stride;
    b.kernel("linear", {x, w}, {y});
    EXPECT_EQ(planLaunchCosts(b.plan).at(0).operandAlignment, stride > 0 ? 16 : 2);
  }
  // The ceiling: misalignedTensorEff at 2 bytes, twice it at 4, never above
  // tensorMaxEff.
  LaunchCost l = contraction("cublaslt", "f16", 1);
  l.operandAlignment = 2;
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false),
                   2e-6 + 1e10 / (100e12 * 0.05) + 3e-6);
  l.operandAlignment = 4;
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false),
                   2e-6 + 1e10 / (100e12 * 0.1) + 3e-6);
  l.operandAlignment = 8;
  CostParams high = params();
  high.misalignedTensorEff = 0.2; // 0.8 at 8 bytes: tensorMaxEff (0.5) bounds it
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), high, false),
                   2e-6 + 1e10 / (100e12 * 0.5) + 3e-6);
  // The CUDA cores (fp32) are not held to it.
  l.contractionType = "f32";
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false),
                   2e-6 + 1e10 / (10e12 * 0.8) + 3e-6);
}

TEST(CostModel, AllReducesAreTheSimulatorsAndScaleMultipliesCompute) {
  LaunchCost compute, reduce;
  compute.path = "generated";
  compute.bytes = 1e9;
  reduce.path = "nccl";
  reduce.allReduceBytes = 4e6;
  reduce.waitAt = 2;
  EXPECT_EQ(predictSeconds(reduce, device(), params(), false), 0);
  std::vector<SimLaunch> sim = simLaunches({compute, reduce}, device(), params(), false, 3);
  ASSERT_EQ(sim.size(), 2u);
  EXPECT_DOUBLE_EQ(sim[0].seconds, 3 * (2e-6 + 1e9 / (1e12 * 0.8)));
  EXPECT_TRUE(sim[1].isAllReduce());
  EXPECT_EQ(sim[1].allReduceBytes, 4e6);
  EXPECT_EQ(sim[1].waitAt, 2);
  // --profile times each launch between CUDA events: the event overhead on
  // top; an all-reduce is the simulator's there too.
  CostParams p = params();
  p.profileEventOverhead = 5e-6;
  EXPECT_DOUBLE_EQ(profiledSeconds(compute, device(), p, false),
                   2e-6 + 1e9 / (1e12 * 0.8) + 5e-6);
  EXPECT_EQ(profiledSeconds(reduce, device(), p, false), 0);
}

TEST(CostModel, ParametersRoundTripByName) {
  CostParams p = params();
  std::vector<double> v = p.values();
  ASSERT_EQ(v.size(), CostParams::names().size());
  CostParams q;
  q.setValues(v);
  EXPECT_EQ(q.values(), v);
}
