//===- FusionUtils.cpp - fusion legality, shared by every strategy --------===//

#include "dlc/Transforms/FusionUtils.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::train;

bool mlir::dlc::isFusibleActivation(Operation *op) {
  return op->hasTrait<Activation>();
}

bool mlir::dlc::isFusibleElementwise(Operation *op) {
  return isa<AddOp, MulOp>(op);
}

FusionClass mlir::dlc::classifyForFusion(Operation *op) {
  using ::dlc::rt::OpClass;
  std::optional<OpClass> opClass = getOpClass(op);
  if (!opClass)
    return FusionClass::kOpaque;
  switch (*opClass) {
  case OpClass::kElementwise:
  case OpClass::kRandom:
  case OpClass::kDataMovement:
    return FusionClass::kElementwise;
  case OpClass::kReduction:
    return FusionClass::kReduction;
  case OpClass::kRowNormalization:
  case OpClass::kBatchNormalization:
    return FusionClass::kNormalization;
  case OpClass::kOpaque:
  case OpClass::kContraction:
  case OpClass::kOptimizer:
  case OpClass::kCollective:
    return FusionClass::kOpaque;
  }
  return FusionClass::kOpaque;
}

StringRef mlir::dlc::fusionClassName(FusionClass kind) {
  switch (kind) {
  case FusionClass::kOpaque:
    return "opaque";
  case FusionClass::kElementwise:
    return "element-wise";
  case FusionClass::kReduction:
    return "reduction";
  case FusionClass::kNormalization:
    return "normalization";
  }
  llvm_unreachable("unknown fusion class");
}

FusionDecision mlir::dlc::canFuseIntoGroup(Operation *producer,
                                           ArrayRef<Operation *> members) {
  FusionClass kind = classifyForFusion(producer);
  if (kind == FusionClass::kOpaque)
    return FusionDecision::refuse(
        Twine("'") + producer->getName().getStringRef() +
        "' is not element-wise, a reduction or a normalization");
  if (kind == FusionClass::kReduction)
    return FusionDecision::refuse(
        "a reduction only ends a group: its result does not fuse into consumers");
  auto reducing = [](Operation *op) {
    FusionClass c = classifyForFusion(op);
    return c == FusionClass::kReduction || c == FusionClass::kNormalization;
  };
  if (kind == FusionClass::kNormalization)
    if (const auto *other = llvm::find_if(members, reducing);
        other != members.end())
      return FusionDecision::refuse(Twine("the group already reduces, in '") +
                                    (*other)->getName().getStringRef() + "'");
  SmallVector<Operation *> ops(members.begin(), members.end());
  ops.push_back(producer);
  llvm::sort(ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return canFormGroup(ops);
}

FusionDecision mlir::dlc::canFuseProducerIntoConsumer(Operation *producer,
                                                      Operation *consumer,
                                                      bool allowMultiOutput) {
  if (producer->getBlock() != consumer->getBlock())
    return FusionDecision::refuse("producer and consumer are in different blocks");
  if (producer->getParentOfType<FusedOp>() || consumer->getParentOfType<FusedOp>())
    return FusionDecision::refuse("already in a fused group");
  if (producer->getNumResults() != 1)
    return FusionDecision::refuse("the producer has several results");
  for (Operation *user : producer->getResult(0).getUsers()) {
    if (user == consumer)
      continue;
    if (!allowMultiOutput)
      return FusionDecision::refuse(
          Twine("the producer's result has another user, '") +
          user->getName().getStringRef() + "'");
    // The group runs where the consumer is; an exported result can only
    // serve readers after it.
    if (user->getBlock() == consumer->getBlock() &&
        user->isBeforeInBlock(consumer))
      return FusionDecision::refuse(
          Twine("the producer's result is read before the consumer, by '") +
          user->getName().getStringRef() + "'");
  }
  return FusionDecision::allow();
}

FusionDecision mlir::dlc::canFuseHorizontally(ArrayRef<Operation *> ops) {
  for (Operation *op : ops) {
    if (op->getBlock() != ops.front()->getBlock())
      return FusionDecision::refuse("the ops are in different blocks");
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp(); def && llvm::is_contained(ops, def))
        return FusionDecision::refuse(Twine("'") + op->getName().getStringRef() +
                                      "' reads the result of another op of the group");
  }
  return FusionDecision::allow();
}

FusionDecision mlir::dlc::canFormGroup(ArrayRef<Operation *> ops) {
  Operation *last = ops.back();
  for (Operation *op : ops) {
    if (op->getBlock() != last->getBlock())
      return FusionDecision::refuse("the ops are in different blocks");
    if (op->getParentOfType<FusedOp>())
      return FusionDecision::refuse("already in a fused group");
    for (Operation *user : op->getUsers())
      if (!llvm::is_contained(ops, user) && user->getBlock() == last->getBlock() &&
          user->isBeforeInBlock(last))
        return FusionDecision::refuse(
            Twine("'") + user->getName().getStringRef() +
            "' reads a result of the group before the group would run");
  }
  return FusionDecision::allow();
}
