//===- FuseProducerConsumer.cpp - XLA's loop and input fusion -------------===//
//
// XLA's instruction fusion, greedy and consumer-first: walking the block
// from its end, each element-wise, reduction or normalization op starts a
// group (or continues the one it already joined) and pulls in the producers
// of its operands while canFuseIntoGroup allows, then the producers of
// those, so a chain of element-wise ops ending in a reduction becomes one
// kernel whose intermediates never reach memory. A producer read outside
// its group is written out by the group (multi-output fusion) instead of
// being recomputed. Groups without a reduction are XLA's `loop` fusions,
// groups with one are `input` fusions.
//
//===----------------------------------------------------------------------===//

#include "dlc/Transforms/FusionRewrite.h"
#include "dlc/Transforms/FusionUtils.h"
#include "dlc/Transforms/Passes.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#define DEBUG_TYPE "dlc-fuse-producer-consumer"

namespace mlir::dlc {
#define GEN_PASS_DEF_FUSEPRODUCERCONSUMERPASS
#include "dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::train;

namespace {

constexpr llvm::StringLiteral kStrategy = "xla";

struct FuseProducerConsumerPass final
    : mlir::dlc::impl::FuseProducerConsumerPassBase<FuseProducerConsumerPass> {
  using Base::Base;

  void runOnOperation() override {
    for (func::FuncOp func : functionsToFuse(getOperation()))
      for (Block &block : func.getBody())
        fuseBlock(block);
  }

  void fuseBlock(Block &block) {
    // Groups as op lists; `groupOf` maps an op to its group's index.
    SmallVector<SmallVector<Operation *>> groups;
    DenseMap<Operation *, unsigned> groupOf;
    SmallVector<Operation *> ops;
    for (Operation &op : block.without_terminator())
      ops.push_back(&op);
    for (Operation *consumer : llvm::reverse(ops)) {
      // An op that joined a group as a producer offered its own producers
      // then.
      if (classifyForFusion(consumer) == FusionClass::kOpaque ||
          groupOf.contains(consumer))
        continue;
      unsigned g = groups.size();
      groupOf[consumer] = g;
      groups.push_back({consumer});
      // Pull in producers until none more can join; members added later
      // offer their own producers in turn.
      for (size_t m = 0; m < groups[g].size(); ++m) {
        Operation *member = groups[g][m];
        for (Value operand : member->getOperands()) {
          Operation *producer = operand.getDefiningOp();
          if (!producer || producer->getBlock() != &block ||
              llvm::is_contained(groups[g], producer))
            continue;
          FusionDecision decision =
              groupOf.contains(producer)
                  ? FusionDecision::refuse("the producer is already in another group")
                  : canFuseIntoGroup(producer, groups[g]);
          if (!decision) {
            if (explain && classifyForFusion(producer) != FusionClass::kOpaque)
              member->emitRemark()
                  << "not fused with '" << producer->getName()
                  << "' (xla producer-consumer): " << decision.reason();
            continue;
          }
          groupOf[producer] = g;
          groups[g].push_back(producer);
        }
      }
    }
    for (SmallVector<Operation *> &group : groups) {
      if (group.size() < 2)
        continue;
      llvm::sort(group, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
      bool reduces = llvm::any_of(group, [](Operation *op) {
        return classifyForFusion(op) != FusionClass::kElementwise;
      });
      createFusedGroup(group, reduces ? ::dlc::rt::FusionKind::kInput : ::dlc::rt::FusionKind::kLoop, kStrategy);
      ++numGroups;
      numFusedOps += group.size();
    }
  }
};

} // namespace
