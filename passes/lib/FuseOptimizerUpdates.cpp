//===- FuseOptimizerUpdates.cpp - one kernel for every parameter's update -===//
//
// XLA's horizontal fusion applied to the optimizer: a training step updates
// every parameter with the same element-wise rule, each update independent
// of the others, so all of them can run as one kernel launch instead of one
// per parameter (161 for ResNet-50). The group runs where the last update
// was, after every gradient exists.
//
//===----------------------------------------------------------------------===//

#include "dlc/Transforms/FusionRewrite.h"
#include "dlc/Transforms/FusionUtils.h"
#include "dlc/Transforms/Passes.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"

#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "dlc-fuse-optimizer-updates"

namespace mlir::dlc {
#define GEN_PASS_DEF_FUSEOPTIMIZERUPDATESPASS
#include "dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::train;

namespace {

constexpr ::dlc::rt::FusionKind kKind = ::dlc::rt::FusionKind::kOptimizerHorizontal;

struct FuseOptimizerUpdatesPass final
    : mlir::dlc::impl::FuseOptimizerUpdatesPassBase<FuseOptimizerUpdatesPass> {
  using Base::Base;

  void runOnOperation() override {
    // Updates by block, in order; each block's updates form one group.
    llvm::MapVector<Block *, SmallVector<Operation *>> byBlock;
    walkFunctionsToFuse(getOperation(), [&](Operation *op) {
      if (getOpClass(op) == ::dlc::rt::OpClass::kOptimizer && !op->getParentOfType<FusedOp>())
        byBlock[op->getBlock()].push_back(op);
    });
    for (auto &[block, updates] : byBlock) {
      if (updates.size() < 2)
        continue;
      FusionDecision decision = canFuseHorizontally(updates);
      if (!decision) {
        updates.back()->emitRemark()
            << "optimizer updates not fused (" << kindName(kKind) << "): " << decision.reason();
        continue;
      }
      // Mixed precision: the cast of each half-precision gradient to its
      // float32 master's type runs in the update's loop (XLA fuses the
      // convert into its consumer).
      SmallVector<Operation *> ops(updates.begin(), updates.end());
      if (fuseGradientCasts) {
        for (Operation *update : updates)
          if (auto cast = update->getOperand(1).getDefiningOp<CastOp>();
              cast && cast->getBlock() == block && cast->hasOneUse() &&
              !cast->getParentOfType<FusedOp>())
            ops.push_back(cast);
        llvm::sort(ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
        if (FusionDecision withCasts = canFormGroup(ops); !withCasts) {
          updates.back()->emitRemark() << "gradient casts not fused (" << kindName(kKind)
                                       << "): " << withCasts.reason();
          ops.assign(updates.begin(), updates.end());
        }
      }
      numGradientCasts += ops.size() - updates.size();
      createFusedGroup(ops, kKind, strategy);
      ++numGroups;
      numUpdates += updates.size();
    }
  }
};

} // namespace
