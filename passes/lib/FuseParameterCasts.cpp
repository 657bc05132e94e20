//===- FuseParameterCasts.cpp - one kernel for the weight casts -----------===//
//
// Under AMP with float32 master weights every step starts by casting each
// parameter that a GEMM or convolution reads to half precision: one tiny
// kernel per parameter (53 in ResNet-50, ~200 in BERT-base). They read only
// arguments and are independent, which is what XLA's horizontal loop fusion
// targets: one launch casts them all. The group runs where the last cast
// was, so every reader must come after it (casts of arguments sit at the
// top of the step, where dlc-auto-mixed-precision puts them).
//
//===----------------------------------------------------------------------===//

#include "dlc/Transforms/FusionRewrite.h"
#include "dlc/Transforms/FusionUtils.h"
#include "dlc/Transforms/Passes.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#define DEBUG_TYPE "dlc-fuse-parameter-casts"

namespace mlir::dlc {
#define GEN_PASS_DEF_FUSEPARAMETERCASTSPASS
#include "dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::train;

namespace {

constexpr ::dlc::rt::FusionKind kKind = ::dlc::rt::FusionKind::kCastHorizontal;
constexpr llvm::StringLiteral kStrategy = "xla";

struct FuseParameterCastsPass final
    : mlir::dlc::impl::FuseParameterCastsPassBase<FuseParameterCastsPass> {
  using Base::Base;

  void runOnOperation() override {
    for (func::FuncOp func : functionsToFuse(getOperation())) {
      Block &entry = func.front();
      SmallVector<Operation *> casts;
      for (auto cast : entry.getOps<CastOp>())
        if (isa<BlockArgument>(cast.getInput()))
          casts.push_back(cast);
      if (casts.size() < 2)
        continue;
      FusionDecision decision = canFuseHorizontally(casts);
      if (decision)
        decision = canFormGroup(casts);
      if (!decision) {
        if (explain)
          casts.back()->emitRemark()
              << "parameter casts not fused (" << kindName(kKind) << "): " << decision.reason();
        continue;
      }
      createFusedGroup(casts, kKind, kStrategy);
      ++numGroups;
      numCasts += casts.size();
    }
  }
};

} // namespace
