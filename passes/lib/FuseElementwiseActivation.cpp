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

#include "dlc/Transforms/FusionUtils.h"
#include "dlc/Transforms/Passes.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#define DEBUG_TYPE "dlc-fuse-elementwise-activation"

namespace mlir::dlc {
#define GEN_PASS_DEF_FUSEELEMENTWISEACTIVATIONPASS
#include "dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::train;

namespace {

constexpr llvm::StringLiteral kKind = "elewise_act";
constexpr llvm::StringLiteral kStrategy = "paddle";

/// PaddlePaddle's fused op writes its intermediate result when the backward
/// pass needs it (save_intermediate_out).
constexpr bool kSaveIntermediate = true;

/// Replaces `producer` and `consumer` by one train.fused group computing the
/// consumer's result, and the producer's too when others read it.
void fuse(Operation *producer, Operation *consumer) {
  SmallVector<Value> inputs;
  auto addInput = [&](Value v) {
    if (v.getDefiningOp() != producer && !llvm::is_contained(inputs, v))
      inputs.push_back(v);
  };
  for (Value v : producer->getOperands())
    addInput(v);
  for (Value v : consumer->getOperands())
    addInput(v);

  Value intermediate = producer->getResult(0);
  bool exported = llvm::any_of(intermediate.getUsers(),
                               [&](Operation *user) { return user != consumer; });
  SmallVector<Type> resultTypes(consumer->getResultTypes());
  if (exported)
    resultTypes.push_back(intermediate.getType());
  OpBuilder b(consumer);
  auto fused = FusedOp::create(b, consumer->getLoc(), resultTypes, inputs,
                               b.getStringAttr(kKind), b.getStringAttr(kStrategy));
  Block *body = b.createBlock(&fused.getBody());
  IRMapping map;
  for (Value input : inputs)
    map.map(input, body->addArgument(input.getType(), input.getLoc()));
  b.setInsertionPointToStart(body);
  Operation *innerProducer = b.clone(*producer, map);
  Operation *inner = b.clone(*consumer, map);
  SmallVector<Value> yielded(inner->getResults());
  if (exported)
    yielded.push_back(innerProducer->getResult(0));
  YieldOp::create(b, consumer->getLoc(), yielded);
  consumer->replaceAllUsesWith(
      fused.getResults().take_front(consumer->getNumResults()));
  if (exported)
    intermediate.replaceAllUsesWith(fused.getResults().back());
  consumer->erase();
  producer->erase();
}

struct FuseElementwiseActivationPass final
    : mlir::dlc::impl::FuseElementwiseActivationPassBase<
          FuseElementwiseActivationPass> {
  using Base::Base;

  void runOnOperation() override {
    // Candidate pairs, found in order before any rewriting.
    SmallVector<std::pair<Operation *, Operation *>> pairs;
    DenseSet<Operation *> taken;
    getOperation().walk([&](Operation *consumer) {
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
                : canFuseProducerIntoConsumer(producer, consumer, kSaveIntermediate);
        if (!decision) {
          if (explain)
            consumer->emitRemark()
                << "not fused with '" << producer->getName() << "' ("
                << kKind << "): " << decision.reason();
          continue;
        }
        pairs.push_back({producer, consumer});
        taken.insert(producer);
        taken.insert(consumer);
        return;
      }
    });
    for (auto [producer, consumer] : pairs)
      fuse(producer, consumer);
    numFused += pairs.size();
  }
};

} // namespace
