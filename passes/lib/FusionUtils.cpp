//===- FusionUtils.cpp - fusion legality, shared by every strategy --------===//

#include "dlc/Transforms/FusionUtils.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::train;

int64_t mlir::dlc::tensorElements(Value v) {
  auto type = dyn_cast<ShapedType>(v.getType());
  return type && type.hasStaticShape() ? type.getNumElements() : 0;
}

int64_t mlir::dlc::tensorBytes(Value v) {
  auto type = dyn_cast<ShapedType>(v.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  Type element = type.getElementType();
  int64_t bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 32;
  return type.getNumElements() * ((bits + 7) / 8);
}

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
// TVM Relay's FuseOps
//===----------------------------------------------------------------------===//

namespace {

bool sameShape(Type a, Type b) {
  auto sa = dyn_cast<ShapedType>(a), sb = dyn_cast<ShapedType>(b);
  return sa && sb && sa.hasRank() && sb.hasRank() && sa.getShape() == sb.getShape();
}

} // namespace

StringRef mlir::dlc::tvmPatternName(TvmPattern pattern) {
  switch (pattern) {
  case TvmPattern::kElemWise:
    return "element-wise";
  case TvmPattern::kBroadcast:
    return "broadcast";
  case TvmPattern::kInjective:
    return "injective";
  case TvmPattern::kCommReduce:
    return "comm-reduce";
  case TvmPattern::kOutEWiseFusable:
    return "out-element-wise-fusable";
  case TvmPattern::kTuple:
    return "tuple";
  case TvmPattern::kOpaque:
    return "opaque";
  }
  llvm_unreachable("unknown TVM op pattern");
}

TvmPattern mlir::dlc::tvmOpPattern(Operation *op) {
  using ::dlc::rt::OpClass;
  std::optional<OpClass> opClass = getOpClass(op);
  if (!opClass || op->getNumResults() == 0)
    return TvmPattern::kOpaque;
  switch (*opClass) {
  case OpClass::kElementwise:
  case OpClass::kRandom:
    for (Value operand : op->getOperands())
      if (!sameShape(operand.getType(), op->getResult(0).getType()))
        return TvmPattern::kBroadcast;
    return TvmPattern::kElemWise;
  case OpClass::kDataMovement:
    return TvmPattern::kInjective;
  case OpClass::kReduction:
    return TvmPattern::kCommReduce;
  case OpClass::kContraction:
    return TvmPattern::kOutEWiseFusable;
  case OpClass::kRowNormalization:
  case OpClass::kBatchNormalization:
  case OpClass::kOptimizer:
  case OpClass::kCollective:
  case OpClass::kOpaque:
    return TvmPattern::kOpaque;
  }
  return TvmPattern::kOpaque;
}

TvmPattern mlir::dlc::tvmEdgePattern(OpOperand &use) {
  Operation *reader = use.getOwner();
  TvmPattern pattern = tvmOpPattern(reader);
  if (pattern == TvmPattern::kBroadcast && reader->getNumResults() > 0 &&
      sameShape(use.get().getType(), reader->getResult(0).getType()))
    return TvmPattern::kElemWise;
  return pattern;
}

FusionDecision mlir::dlc::tvmMayFuseIntoPostDominator(TvmPattern group,
                                                      TvmPattern dominatorEdges,
                                                      TvmPattern dominator, int phase) {
  if (group == TvmPattern::kOpaque)
    return FusionDecision::refuse("an opaque op fuses with nothing");
  if (group == TvmPattern::kCommReduce)
    return FusionDecision::refuse(
        "a reduction only ends a group: producers fuse into it, it fuses into nothing");
  if (dominator == TvmPattern::kTuple)
    return FusionDecision::refuse("a group does not fuse into a tuple");
  if (group == TvmPattern::kOutEWiseFusable) {
    if (phase != 0)
      return FusionDecision::refuse("a contraction fuses its epilogue in phase 0 only");
    if (dominatorEdges != TvmPattern::kElemWise)
      return FusionDecision::refuse(
          Twine("the contraction reaches its post-dominator through ") +
          tvmPatternName(dominatorEdges) + " edges, not element-wise ones");
    return FusionDecision::allow();
  }
  if (group <= TvmPattern::kBroadcast) {
    if (dominatorEdges <= TvmPattern::kInjective || dominatorEdges == TvmPattern::kCommReduce)
      return FusionDecision::allow();
    return FusionDecision::refuse(Twine("the post-dominator is reached through ") +
                                  tvmPatternName(dominatorEdges) +
                                  " edges, not injective or reduction ones");
  }
  // Injective groups (and tuples) wait for phase 1, so that contractions
  // have finished taking their epilogues.
  if (phase != 1)
    return FusionDecision::refuse("an injective op fuses in phase 1 only");
  return FusionDecision::allow();
}

FusionDecision mlir::dlc::tvmPathAllows(TvmPattern group, TvmPattern node, bool isSink) {
  bool ok;
  if (group == TvmPattern::kOutEWiseFusable)
    ok = node <= TvmPattern::kBroadcast;
  else if (group <= TvmPattern::kBroadcast)
    ok = isSink ? node <= TvmPattern::kBroadcast || node == TvmPattern::kCommReduce ||
                      node == TvmPattern::kInjective || node == TvmPattern::kOutEWiseFusable
                : node <= TvmPattern::kInjective;
  else
    ok = node <= TvmPattern::kInjective;
  if (ok)
    return FusionDecision::allow();
  return FusionDecision::refuse(Twine("a ") + tvmPatternName(node) + " op " +
                                (isSink ? "is the post-dominator" : "lies on the path to the post-dominator") +
                                " of a " + tvmPatternName(group) + " group");
}

//===----------------------------------------------------------------------===//
// Inductor's scheduler
//===----------------------------------------------------------------------===//

InductorNode mlir::dlc::inductorNodeOf(Operation *op, bool epilogueFusion) {
  using ::dlc::rt::OpClass;
  InductorNode node;
  std::optional<OpClass> opClass = getOpClass(op);
  if (!opClass || op->getNumResults() == 0 || op->getNumOperands() == 0)
    return node;
  int64_t outputs = tensorElements(op->getResult(0));
  int64_t inputs = tensorElements(op->getOperand(0));
  if (outputs <= 0 || inputs <= 0)
    return node;
  node.libraryCalls = ::dlc::rt::isLibraryCall(*opClass) ? 1 : 0;
  switch (*opClass) {
  case OpClass::kElementwise:
  case OpClass::kRandom:
  case OpClass::kDataMovement:
    node.kind = InductorNode::kPointwise;
    node.numel = outputs;
    return node;
  case OpClass::kReduction:
    node.kind = InductorNode::kReduction;
    node.numel = outputs;
    node.rnumel = inputs / outputs;
    return node;
  case OpClass::kRowNormalization: {
    auto shape = cast<ShapedType>(op->getOperand(0).getType()).getShape();
    node.kind = InductorNode::kReduction;
    node.rnumel = shape.empty() ? 1 : shape.back();
    node.numel = inputs / node.rnumel;
    return node;
  }
  case OpClass::kBatchNormalization: {
    // Per-channel statistics: the channels are the elements of the
    // smallest one-dimensional operand (the scale).
    int64_t channels = inputs;
    for (Value operand : op->getOperands())
      if (auto t = dyn_cast<ShapedType>(operand.getType());
          t && t.hasStaticShape() && t.getRank() == 1)
        channels = std::min(channels, t.getNumElements());
    node.kind = InductorNode::kReduction;
    node.numel = channels;
    node.rnumel = inputs / channels;
    return node;
  }
  case OpClass::kContraction:
    node.kind = epilogueFusion ? InductorNode::kTemplate : InductorNode::kExtern;
    node.numel = outputs;
    return node;
  case OpClass::kOptimizer:
  case OpClass::kCollective:
  case OpClass::kOpaque:
    return node;
  }
  return node;
}

StringRef mlir::dlc::inductorKindName(InductorNode::Kind kind) {
  switch (kind) {
  case InductorNode::kPointwise:
    return "pointwise";
  case InductorNode::kReduction:
    return "reduction";
  case InductorNode::kTemplate:
    return "template";
  case InductorNode::kExtern:
    return "extern";
  }
  llvm_unreachable("unknown Inductor node kind");
}

FusionDecision mlir::dlc::inductorCanFuse(InductorNode first, InductorNode second, bool vertical,
                                          bool sameIndex, bool sharesBuffer,
                                          int64_t sizeOfFused, int64_t maxFusionSize) {
  if (first.kind == InductorNode::kExtern || second.kind == InductorNode::kExtern)
    return FusionDecision::refuse("an extern kernel fuses with nothing");
  if (second.kind == InductorNode::kTemplate)
    return FusionDecision::refuse("a template only takes epilogues: it cannot follow a node");
  if (!vertical && !sharesBuffer)
    return FusionDecision::refuse("the nodes share no buffer");
  if (sizeOfFused > maxFusionSize)
    return FusionDecision::refuse(Twine("the group would hold ") + Twine(sizeOfFused) +
                                  " nodes, more than max-fusion-size " + Twine(maxFusionSize));
  if (vertical && !sameIndex)
    return FusionDecision::refuse(
        "the consumer reads the producer's buffer at another index than it was written");
  if (first.kind == InductorNode::kTemplate) {
    if (!vertical)
      return FusionDecision::refuse("a template fuses only epilogues that read its output");
    if (second.kind != InductorNode::kPointwise || second.numel != first.numel)
      return FusionDecision::refuse(
          "a template's epilogue must be pointwise over the template's output");
    return FusionDecision::allow();
  }
  // Scheduler.can_fuse (scheduler.py): "node1 is extern or nop", ExternKernelSchedulerNode.
  // A batch norm is a reduction node here (Inductor decomposes it) but a
  // cuDNN call at run time: two such calls are two launches, never one group.
  // (A template's pointwise epilogues, above, hold no call.)
  if (first.libraryCalls + second.libraryCalls > 1)
    return FusionDecision::refuse(
        "both nodes hold a library call (a batch norm or a contraction): each runs as its own "
        "call, as Inductor's extern kernels");
  bool r1 = first.kind == InductorNode::kReduction, r2 = second.kind == InductorNode::kReduction;
  if (!r1 && !r2) {
    if (first.numel != second.numel)
      return FusionDecision::refuse("numel mismatch (pointwise)");
    return FusionDecision::allow();
  }
  if (r1 && r2) {
    if (first.numel != second.numel || first.rnumel != second.rnumel)
      return FusionDecision::refuse("(numel, rnumel) mismatch (reductions)");
    return FusionDecision::allow();
  }
  InductorNode reduction = r1 ? first : second, pointwise = r1 ? second : first;
  if (pointwise.numel != reduction.numel * reduction.rnumel)
    return FusionDecision::refuse(
        "numel mismatch (a pointwise node must span the reduction's numel x rnumel)");
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
