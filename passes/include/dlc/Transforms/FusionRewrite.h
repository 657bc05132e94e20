//===- FusionRewrite.h - building fused groups ------------------*- C++ -*-===//
//
// The rewriting half of fusion, shared by every strategy: legality is
// decided in FusionUtils.h first.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TRANSFORMS_FUSIONREWRITE_H
#define DLC_TRANSFORMS_FUSIONREWRITE_H

#include "dlc/Dialect/Train/IR/TrainOps.h"
#include "dlc/Transforms/FusionUtils.h"
#include "dlc/runtime/OpKinds.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::dlc {

/// The functions a fusion pass rewrites: @train_step alone once
/// dlc-autodiff has made it, else every function with a body (a pass run on
/// its own). @forward stays the model as written and nothing runs it;
/// fusing it as well explained each refusal of the forward pass twice.
SmallVector<func::FuncOp> functionsToFuse(ModuleOp module);

/// Operation::walk over the ops of functionsToFuse(module).
template <typename Fn> void walkFunctionsToFuse(ModuleOp module, Fn &&fn) {
  for (func::FuncOp func : functionsToFuse(module))
    func.walk(fn);
}

/// `ops` (in block order) in the order a group's body runs them: where one
/// of them runs as a library call (a batch norm, a contraction), the ops
/// that feed it first, then the call, then the rest, each part in block
/// order; otherwise block order. The ops that do not feed the call then
/// run after it, with the ones that read its result, as one generated
/// kernel (issue 34's "call + kernel") instead of a kernel on each side.
SmallVector<Operation *> callFirstOrder(ArrayRef<Operation *> ops);

/// Replaces `ops` (in block order, as canFormGroup accepted them) by one
/// train.fused group placed where the last of them was, its body in
/// callFirstOrder for a loop, input or output fusion, else in block order. Its inputs are the values the ops read from outside; its
/// results are every result read outside the group, in block order.
train::FusedOp createFusedGroup(ArrayRef<Operation *> ops, ::dlc::rt::FusionKind kind,
                                StringRef strategy);

/// The kind's name, as `train.fused` spells it.
inline StringRef kindName(::dlc::rt::FusionKind kind) {
  std::string_view name = ::dlc::rt::fusionKindName(kind);
  return StringRef(name.data(), name.size());
}

/// The candidate groups of a pattern-matching fusion pass, collected before
/// any rewriting: a candidate is kept unless its pattern's own decision
/// refuses it, one of its ops is in a kept candidate already, or
/// canFormGroup refuses; with `explain`, each refusal is a remark on the op
/// the pattern matched at.
class GroupCandidates {
public:
  explicit GroupCandidates(bool explain) : explain(explain) {}

  /// Returns whether the candidate was kept.
  bool consider(SmallVector<Operation *> ops, ::dlc::rt::FusionKind kind,
                FusionDecision decision, Operation *at);
  /// Replaces every kept candidate by its group; returns how many.
  unsigned createAll(StringRef strategy);

private:
  bool explain;
  SmallVector<std::pair<SmallVector<Operation *>, ::dlc::rt::FusionKind>> kept;
  DenseSet<Operation *> taken;
};

} // namespace mlir::dlc

#endif // DLC_TRANSFORMS_FUSIONREWRITE_H
