//===- FusionRewrite.cpp - building fused groups --------------------------===//

#include "dlc/Transforms/FusionRewrite.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::train;

SmallVector<func::FuncOp> mlir::dlc::functionsToFuse(ModuleOp module) {
  if (auto step = module.lookupSymbol<func::FuncOp>("train_step"); step && !step.isExternal())
    return {step};
  SmallVector<func::FuncOp> functions;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      functions.push_back(func);
  return functions;
}

namespace {
/// Whether the runtime runs the op as a library call (a batch norm, a
/// contraction) rather than inside a generated kernel.
bool runsAsCall(Operation *op) {
  using ::dlc::rt::OpClass;
  std::optional<OpClass> c = getOpClass(op);
  return c && !::dlc::rt::isElemental(*c) && *c != OpClass::kReduction &&
         *c != OpClass::kRowNormalization;
}
} // namespace

SmallVector<Operation *> mlir::dlc::callFirstOrder(ArrayRef<Operation *> ops) {
  SmallVector<Operation *> calls;
  for (Operation *op : ops)
    if (runsAsCall(op))
      calls.push_back(op);
  if (calls.size() != 1)
    return SmallVector<Operation *>(ops);
  // The call's producers inside the group, found backwards from it.
  llvm::DenseSet<Operation *> feeds{calls.front()};
  for (Operation *op : llvm::reverse(ops)) {
    if (!feeds.contains(op))
      continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp(); def && llvm::is_contained(ops, def))
        feeds.insert(def);
  }
  // Those in block order, then the rest in block order: every op still
  // follows its operands, as an op that does not feed the call reads only
  // ops before it.
  SmallVector<Operation *> order;
  for (Operation *op : ops)
    if (feeds.contains(op))
      order.push_back(op);
  for (Operation *op : ops)
    if (!feeds.contains(op))
      order.push_back(op);
  return order;
}

FusedOp mlir::dlc::createFusedGroup(ArrayRef<Operation *> ops, ::dlc::rt::FusionKind kind,
                                    StringRef strategy) {
  auto inside = [&](Operation *op) { return llvm::is_contained(ops, op); };
  SmallVector<Value> inputs, exported;
  for (Operation *op : ops) {
    for (Value v : op->getOperands())
      if (!inside(v.getDefiningOp()) && !llvm::is_contained(inputs, v))
        inputs.push_back(v);
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *u) { return !inside(u); }))
        exported.push_back(r);
  }
  Operation *last = ops.back();
  OpBuilder b(last);
  auto fused = FusedOp::create(b, last->getLoc(), ValueRange(exported).getTypes(),
                               inputs, b.getStringAttr(kindName(kind)),
                               b.getStringAttr(strategy));
  Block *body = b.createBlock(&fused.getBody());
  IRMapping map;
  for (Value input : inputs)
    map.map(input, body->addArgument(input.getType(), input.getLoc()));
  b.setInsertionPointToStart(body);
  // The generic kinds only (loop, input, output: a call and a generated
  // kernel at run time): a library's fused kind (bn_act, a GEMM epilogue)
  // keeps the order its pattern matched.
  using ::dlc::rt::FusionKind;
  bool generic = kind == FusionKind::kLoop || kind == FusionKind::kInput ||
                 kind == FusionKind::kOutput;
  for (Operation *op : generic ? callFirstOrder(ops) : SmallVector<Operation *>(ops))
    b.clone(*op, map);
  SmallVector<Value> yielded;
  for (Value v : exported)
    yielded.push_back(map.lookup(v));
  YieldOp::create(b, last->getLoc(), yielded);
  for (auto [value, result] : llvm::zip(exported, fused.getResults()))
    value.replaceUsesWithIf(result, [&](OpOperand &use) {
      return use.getOwner() != fused && !fused->isProperAncestor(use.getOwner());
    });
  for (Operation *op : llvm::reverse(ops))
    op->erase();
  return fused;
}

bool GroupCandidates::consider(SmallVector<Operation *> ops, ::dlc::rt::FusionKind kind,
                               FusionDecision decision, Operation *at) {
  for (Operation *op : ops)
    if (decision && taken.contains(op))
      decision = FusionDecision::refuse("already in another group");
  if (decision)
    decision = canFormGroup(ops);
  if (!decision) {
    if (explain)
      at->emitRemark() << "not fused (" << kindName(kind) << "): " << decision.reason();
    return false;
  }
  taken.insert(ops.begin(), ops.end());
  kept.push_back({std::move(ops), kind});
  return true;
}

unsigned GroupCandidates::createAll(StringRef strategy) {
  for (auto &[ops, kind] : kept)
    createFusedGroup(ops, kind, strategy);
  return kept.size();
}
