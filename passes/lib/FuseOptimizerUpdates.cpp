//===- FuseOptimizerUpdates.cpp - one kernel for every parameter's update -===//
//
// XLA's horizontal fusion applied to the optimizer: a training step updates
// every parameter with the same element-wise rule, each update independent
// of the others, so all of them can run as one kernel launch instead of one
// per parameter (161 for ResNet-50). The group runs where the last update
// was, after every gradient exists.
//
//===----------------------------------------------------------------------===//

#include "dlc/Transforms/FusionUtils.h"
#include "dlc/Transforms/Passes.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#define DEBUG_TYPE "dlc-fuse-optimizer-updates"

namespace mlir::dlc {
#define GEN_PASS_DEF_FUSEOPTIMIZERUPDATESPASS
#include "dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::train;

namespace {

constexpr llvm::StringLiteral kKind = "optimizer_horizontal";
constexpr llvm::StringLiteral kStrategy = "xla";

void fuseHorizontally(ArrayRef<Operation *> updates) {
  Operation *last = updates.back();
  SmallVector<Value> inputs;
  SmallVector<Type> resultTypes;
  for (Operation *op : updates) {
    for (Value v : op->getOperands())
      if (!llvm::is_contained(inputs, v))
        inputs.push_back(v);
    llvm::append_range(resultTypes, op->getResultTypes());
  }
  OpBuilder b(last);
  auto fused = FusedOp::create(b, last->getLoc(), resultTypes, inputs,
                               b.getStringAttr(kKind), b.getStringAttr(kStrategy));
  Block *body = b.createBlock(&fused.getBody());
  IRMapping map;
  for (Value input : inputs)
    map.map(input, body->addArgument(input.getType(), input.getLoc()));
  b.setInsertionPointToStart(body);
  SmallVector<Value> yielded;
  for (Operation *op : updates)
    llvm::append_range(yielded, b.clone(*op, map)->getResults());
  YieldOp::create(b, last->getLoc(), yielded);
  unsigned next = 0;
  for (Operation *op : updates) {
    op->replaceAllUsesWith(fused.getResults().slice(next, op->getNumResults()));
    next += op->getNumResults();
  }
  for (Operation *op : updates)
    op->erase();
}

struct FuseOptimizerUpdatesPass final
    : mlir::dlc::impl::FuseOptimizerUpdatesPassBase<FuseOptimizerUpdatesPass> {
  using Base::Base;

  void runOnOperation() override {
    // Updates by block, in order; each block's updates form one group.
    llvm::MapVector<Block *, SmallVector<Operation *>> byBlock;
    getOperation().walk([&](Operation *op) {
      if (isa<SgdUpdateOp, AdamWUpdateOp>(op) && !op->getParentOfType<FusedOp>())
        byBlock[op->getBlock()].push_back(op);
    });
    for (auto &[block, updates] : byBlock) {
      if (updates.size() < 2)
        continue;
      FusionDecision decision = canFuseHorizontally(updates);
      if (!decision) {
        updates.back()->emitRemark()
            << "optimizer updates not fused (" << kKind << "): " << decision.reason();
        continue;
      }
      fuseHorizontally(updates);
      ++numGroups;
      numUpdates += updates.size();
    }
  }
};

} // namespace
