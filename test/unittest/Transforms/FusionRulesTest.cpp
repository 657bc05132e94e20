//===- FusionRulesTest.cpp - the published fusion rules, decided alone ----===//
//
// The legality predicates of the tvm and inductor strategies
// (FusionUtils.h), each rule of the source it comes from deciding a case,
// with the reason it gives.
//
//===----------------------------------------------------------------------===//

#include "dlc/Transforms/FusionUtils.h"

#include <gtest/gtest.h>

using namespace mlir::dlc;

namespace {

InductorNode pointwise(int64_t numel) { return {InductorNode::kPointwise, numel, 1}; }
InductorNode reduction(int64_t numel, int64_t rnumel) {
  return {InductorNode::kReduction, numel, rnumel};
}

TEST(InductorRules, APairThatSharesNoBufferIsRefused) {
  FusionDecision d = inductorCanFuse(pointwise(32), pointwise(32), /*vertical=*/false,
                                     /*sameIndex=*/true, /*sharesBuffer=*/false, 2, 64);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.reason(), "the nodes share no buffer");
  EXPECT_TRUE(inductorCanFuse(pointwise(32), pointwise(32), false, true, true, 2, 64));
}

TEST(InductorRules, StopsAtMaxFusionSize) {
  EXPECT_TRUE(inductorCanFuse(pointwise(32), pointwise(32), true, true, false, 64, 64));
  FusionDecision d = inductorCanFuse(pointwise(32), pointwise(32), true, true, false, 65, 64);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.reason(), "the group would hold 65 nodes, more than max-fusion-size 64");
}

TEST(InductorRules, ReductionsNeedEqualNumelAndRnumel) {
  EXPECT_TRUE(inductorCanFuse(reduction(4, 8), reduction(4, 8), false, true, true, 2, 64));
  FusionDecision d = inductorCanFuse(reduction(4, 8), reduction(8, 4), false, true, true, 2, 64);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.reason(), "(numel, rnumel) mismatch (reductions)");
  // A pointwise node beside a reduction spans numel x rnumel.
  EXPECT_TRUE(inductorCanFuse(pointwise(32), reduction(4, 8), true, true, false, 2, 64));
  EXPECT_TRUE(inductorCanFuse(reduction(4, 8), pointwise(32), true, true, false, 2, 64));
  EXPECT_FALSE(inductorCanFuse(pointwise(4), reduction(4, 8), true, true, false, 2, 64));
}

TEST(InductorRules, TemplatesTakeOnlyPointwiseEpilogues) {
  InductorNode gemm{InductorNode::kTemplate, 64, 1};
  EXPECT_TRUE(inductorCanFuse(gemm, pointwise(64), true, true, false, 2, 64));
  FusionDecision before = inductorCanFuse(pointwise(64), gemm, true, true, false, 2, 64);
  ASSERT_FALSE(before);
  EXPECT_EQ(before.reason(), "a template only takes epilogues: it cannot follow a node");
  EXPECT_FALSE(inductorCanFuse(gemm, reduction(8, 8), true, true, false, 2, 64));
  InductorNode conv{InductorNode::kExtern, 64, 1};
  EXPECT_EQ(inductorCanFuse(conv, pointwise(64), true, true, false, 2, 64).reason(),
            "an extern kernel fuses with nothing");
}

TEST(InductorRules, AGroupHoldsAtMostOneLibraryCall) {
  // Two batch norms (reductions of equal (numel, rnumel), one cuDNN call
  // each), as the two branches of a residual block: never one group.
  InductorNode bn = reduction(64, 98), other = reduction(64, 98);
  bn.libraryCalls = other.libraryCalls = 1;
  FusionDecision d = inductorCanFuse(bn, other, false, true, true, 2, 64);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.reason(), "both nodes hold a library call (a batch norm or a contraction): each "
                        "runs as its own call, as Inductor's extern kernels");
  // One call with its pointwise epilogue, or a reduction without a call, fuses.
  EXPECT_TRUE(inductorCanFuse(bn, pointwise(64 * 98), true, true, false, 2, 64));
  EXPECT_TRUE(inductorCanFuse(bn, reduction(64, 98), false, true, true, 2, 64));
}

TEST(TvmRules, AContractionTakesOnlyAnElementwiseEpilogueInPhaseZero) {
  EXPECT_TRUE(tvmMayFuseIntoPostDominator(TvmPattern::kOutEWiseFusable, TvmPattern::kElemWise,
                                          TvmPattern::kBroadcast, 0));
  EXPECT_FALSE(tvmMayFuseIntoPostDominator(TvmPattern::kOutEWiseFusable, TvmPattern::kElemWise,
                                           TvmPattern::kBroadcast, 1));
  FusionDecision d = tvmMayFuseIntoPostDominator(TvmPattern::kOutEWiseFusable,
                                                 TvmPattern::kInjective, TvmPattern::kInjective, 0);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.reason(), "the contraction reaches its post-dominator through injective edges, "
                        "not element-wise ones");
  // Every op on the path is element-wise or broadcast.
  EXPECT_TRUE(tvmPathAllows(TvmPattern::kOutEWiseFusable, TvmPattern::kBroadcast, false));
  EXPECT_FALSE(tvmPathAllows(TvmPattern::kOutEWiseFusable, TvmPattern::kInjective, false));
}

TEST(TvmRules, TwoReductionsNeverFuse) {
  FusionDecision d = tvmMayFuseIntoPostDominator(TvmPattern::kCommReduce, TvmPattern::kCommReduce,
                                                 TvmPattern::kCommReduce, 0);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.reason(),
            "a reduction only ends a group: producers fuse into it, it fuses into nothing");
  // Element-wise ops do fuse into a reduction.
  EXPECT_TRUE(tvmMayFuseIntoPostDominator(TvmPattern::kElemWise, TvmPattern::kCommReduce,
                                          TvmPattern::kCommReduce, 0));
  EXPECT_TRUE(tvmPathAllows(TvmPattern::kElemWise, TvmPattern::kCommReduce, true));
  EXPECT_FALSE(tvmPathAllows(TvmPattern::kElemWise, TvmPattern::kCommReduce, false));
}

TEST(TvmRules, InjectiveOpsWaitForPhaseOne) {
  EXPECT_FALSE(tvmMayFuseIntoPostDominator(TvmPattern::kInjective, TvmPattern::kElemWise,
                                           TvmPattern::kElemWise, 0));
  EXPECT_TRUE(tvmMayFuseIntoPostDominator(TvmPattern::kInjective, TvmPattern::kElemWise,
                                          TvmPattern::kElemWise, 1));
}

} // namespace
