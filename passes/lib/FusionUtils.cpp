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

//===----------------------------------------------------------------------===//
// Priority fusion
//===----------------------------------------------------------------------===//

SmallVector<Value> mlir::dlc::groupInputs(ArrayRef<Operation *> ops) {
  SmallVector<Value> inputs;
  for (Operation *op : ops)
    for (Value v : op->getOperands())
      if (!llvm::is_contained(ops, v.getDefiningOp()) && !llvm::is_contained(inputs, v))
        inputs.push_back(v);
  return inputs;
}

FusionDecision mlir::dlc::isPriorityFusible(Operation *op) {
  if (classifyForFusion(op) != FusionClass::kOpaque)
    return FusionDecision::allow();
  std::optional<::dlc::rt::OpClass> opClass = getOpClass(op);
  std::string_view name = ::dlc::rt::opClassName(opClass ? *opClass : ::dlc::rt::OpClass::kOpaque);
  return FusionDecision::refuse(Twine("'") + op->getName().getStringRef() +
                                "' is not fusible (op class " +
                                StringRef(name.data(), name.size()) + ")");
}

FusionDecision mlir::dlc::canFuseIntoAllConsumers(ArrayRef<Operation *> producer,
                                                  Operation *root, size_t numConsumers) {
  bool read = false;
  for (Operation *user : root->getUsers()) {
    read = true;
    if (user->hasTrait<OpTrait::IsTerminator>())
      return FusionDecision::refuse("its result is returned: not fusing into the output of "
                                    "the function");
    if (user->getBlock() != root->getBlock())
      return FusionDecision::refuse(Twine("'") + user->getName().getStringRef() +
                                    "' reads it in another block");
  }
  if (!read)
    return FusionDecision::refuse("no users to fuse");
  if (numConsumers > 1)
    for (Operation *op : producer)
      if (getOpClass(op) == ::dlc::rt::OpClass::kRandom)
        return FusionDecision::refuse(Twine("a random op ('") + op->getName().getStringRef() +
                                      "') is not recomputed in several consumers");
  return FusionDecision::allow();
}

namespace {

/// CanFuse's rules on what the two groups hold, shared by priority and
/// multi-output fusion.
FusionDecision canFuseKinds(ArrayRef<Operation *> producer, ArrayRef<Operation *> consumer) {
  for (Operation *op : consumer)
    if (FusionDecision d = isPriorityFusible(op); !d)
      return FusionDecision::refuse("the consumer " + d.reason());
  auto isReduction = [](Operation *op) {
    return classifyForFusion(op) == FusionClass::kReduction;
  };
  auto reduces = [](Operation *op) {
    FusionClass c = classifyForFusion(op);
    return c == FusionClass::kReduction || c == FusionClass::kNormalization;
  };
  if (llvm::any_of(producer, isReduction))
    return FusionDecision::refuse(
        "fusion into the output of a reduction would make it a loop fusion");
  if (llvm::any_of(producer, reduces) && llvm::any_of(consumer, reduces))
    return FusionDecision::refuse("both the producer and the consumer contain a reduction");
  return FusionDecision::allow();
}

/// FusionFitsInBudget's operand count: the merged group's inputs, and the
/// results of `writers` read outside it.
FusionDecision fitsBudget(ArrayRef<Operation *> merged, ArrayRef<Operation *> writers,
                          int64_t maxOperands) {
  int64_t outputs = 0;
  for (Operation *op : writers)
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(),
                       [&](Operation *u) { return !llvm::is_contained(merged, u); }))
        ++outputs;
  int64_t operands = static_cast<int64_t>(groupInputs(merged).size()) + outputs;
  if (operands > maxOperands)
    return FusionDecision::refuse(Twine("the fusion would have more than ") +
                                  Twine(maxOperands) + " operands and outputs");
  return FusionDecision::allow();
}

} // namespace

FusionDecision mlir::dlc::canFusePriorityPair(ArrayRef<Operation *> producer,
                                              ArrayRef<Operation *> consumer,
                                              int64_t maxOperands) {
  if (FusionDecision d = canFuseKinds(producer, consumer); !d)
    return d;
  SmallVector<Operation *> merged(consumer.begin(), consumer.end());
  merged.append(producer.begin(), producer.end());
  // The merged group's outputs are the consumer's: the producer is
  // recomputed in every consumer, its results stay inside.
  return fitsBudget(merged, consumer, maxOperands);
}

FusionDecision mlir::dlc::canFuseMultiOutput(ArrayRef<Operation *> producer,
                                             ArrayRef<Operation *> consumer,
                                             int64_t maxOperands) {
  if (FusionDecision d = canFuseKinds(producer, consumer); !d)
    return d;
  SmallVector<Operation *> merged(producer.begin(), producer.end());
  merged.append(consumer.begin(), consumer.end());
  llvm::sort(merged, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  if (FusionDecision d = fitsBudget(merged, merged, maxOperands); !d)
    return d;
  return canFormGroup(merged);
}
