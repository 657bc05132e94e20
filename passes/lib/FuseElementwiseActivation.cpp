//===- FuseElementwiseActivation.cpp - PaddlePaddle's elewise + act -------===//
//
// PaddlePaddle's build strategy fuses an element-wise add or mul with an
// activation, in both orders (act(add(x, y)) and add(x, act(y))), and the
// matching backward pairs. Here the backward pairs are the same patterns
// over the backward ops autodiff emits: an activation gradient fed by a
// gradient sum (act_backward(add(dy1, dy2), x)), and a gradient sum of an
// activation gradient (add(dz, act_backward(dy, x))).
//
//===----------------------------------------------------------------------===//

#include "dlc/Transforms/FusionRewrite.h"
#include "dlc/Transforms/FusionUtils.h"
#include "dlc/Transforms/Passes.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "dlc-fuse-elementwise-activation"

namespace mlir::dlc {
#define GEN_PASS_DEF_FUSEELEMENTWISEACTIVATIONPASS
#include "dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::train;

namespace {

constexpr ::dlc::rt::FusionKind kKind = ::dlc::rt::FusionKind::kElewiseAct;
constexpr llvm::StringLiteral kStrategy = "paddle";
/// PaddlePaddle's fused op writes its intermediate result when others read
/// it (save_intermediate_out).
constexpr bool kSaveIntermediate = true;

struct FuseElementwiseActivationPass final
    : mlir::dlc::impl::FuseElementwiseActivationPassBase<
          FuseElementwiseActivationPass> {
  using Base::Base;

  void runOnOperation() override {
    // Candidate pairs, found in order before any rewriting.
    SmallVector<std::pair<Operation *, Operation *>> pairs;
    DenseSet<Operation *> taken;
    walkFunctionsToFuse(getOperation(), [&](Operation *consumer) {
      if (taken.contains(consumer))
        return;
      bool act = isFusibleActivation(consumer);
      bool elementwise = isFusibleElementwise(consumer);
      if (!act && !elementwise)
        return;
      // act(add(..)) fuses through the activation's first operand (its input,
      // or its incoming gradient); add(.., act(..)) through either operand.
      unsigned operands = act ? 1 : consumer->getNumOperands();
      for (unsigned i = 0; i < operands; ++i) {
        Operation *producer = consumer->getOperand(i).getDefiningOp();
        if (!producer)
          continue;
        bool wanted = act ? isFusibleElementwise(producer)
                          : isFusibleActivation(producer);
        if (!wanted)
          continue;
        FusionDecision decision =
            taken.contains(producer)
                ? FusionDecision::refuse("the producer is already in another group")
                : canFuseProducerIntoConsumer(producer, consumer,
                                              kSaveIntermediate);
        if (!decision) {
          if (explain)
            consumer->emitRemark()
                << "not fused with '" << producer->getName() << "' ("
                << kindName(kKind) << "): " << decision.reason();
          continue;
        }
        pairs.push_back({producer, consumer});
        taken.insert(producer);
        taken.insert(consumer);
        return;
      }
    });
    for (auto [producer, consumer] : pairs)
      createFusedGroup({producer, consumer}, kKind, kStrategy);
    numFused += pairs.size();
  }
};

} // namespace
