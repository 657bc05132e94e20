//===- CostModelTest.cpp - the roofline of one launch, by hand ------------===//

#include "dlc/runtime/perf/CostModel.h"

#include <gtest/gtest.h>

using namespace dlc::rt::perf;

namespace {

DeviceSpec device() {
  DeviceSpec d;
  d.fp32Flops = 10e12;
  d.tf32Flops = 80e12;
  d.fp16Flops = 100e12;
  d.memoryBandwidth = 1e12;
  return d;
}

CostParams params() {
  CostParams p;
  p.launchOverhead = 2e-6;
  p.generatedMemEff = 0.8;
  p.reductionMemEff = 0.4;
  p.handWrittenMemEff = 0.5;
  p.libraryMemEff = 0.25;
  p.tensorMaxEff = 0.5;
  p.cudaCoreMaxEff = 0.8;
  p.halfFlops = 1e9;
  return p;
}

} // namespace

TEST(CostModel, MemoryBoundLaunchesRunAtTheirPathsBandwidth) {
  LaunchCost l;
  l.bytes = 1e9;
  l.path = "generated";
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false), 2e-6 + 1e9 / (1e12 * 0.8));
  l.reduction = true;
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false), 2e-6 + 1e9 / (1e12 * 0.4));
  l.reduction = false;
  l.path = "hand-written";
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false), 2e-6 + 1e9 / (1e12 * 0.5));
  l.path = "cudnn";
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false), 2e-6 + 1e9 / (1e12 * 0.25));
}

TEST(CostModel, ContractionsFollowTheirSizeCurveOnTheirUnit) {
  LaunchCost l;
  l.path = "cublaslt";
  l.flops = 1e9; // at half_flops: half the ceiling
  l.bytes = 1;
  l.contractionType = "f16";
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false),
                   2e-6 + 1e9 / (100e12 * 0.5 * 0.5));
  // fp32 runs on the CUDA cores, or the TF32 tensor cores when allowed.
  l.contractionType = "f32";
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false),
                   2e-6 + 1e9 / (10e12 * 0.8 * 0.5));
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), true),
                   2e-6 + 1e9 / (80e12 * 0.5 * 0.5));
  // A GPU without BF16 units (Volta) runs bf16 on the CUDA cores.
  l.contractionType = "bf16";
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false),
                   2e-6 + 1e9 / (10e12 * 0.8 * 0.5));
  // The roofline: memory wins when it is slower; a contraction's operands
  // stream as a generated kernel's.
  l.bytes = 1e12;
  EXPECT_DOUBLE_EQ(predictSeconds(l, device(), params(), false), 2e-6 + 1e12 / (1e12 * 0.8));
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
}

TEST(CostModel, ParametersRoundTripByName) {
  CostParams p = params();
  std::vector<double> v = p.values();
  ASSERT_EQ(v.size(), CostParams::names().size());
  CostParams q;
  q.setValues(v);
  EXPECT_EQ(q.values(), v);
}
