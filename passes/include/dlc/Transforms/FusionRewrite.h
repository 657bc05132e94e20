//===- FusionRewrite.h - building fused groups ------------------*- C++ -*-===//
//
// The rewriting half of fusion, shared by every strategy: legality is
// decided in FusionUtils.h first.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TRANSFORMS_FUSIONREWRITE_H
#define DLC_TRANSFORMS_FUSIONREWRITE_H

#include "dlc/Dialect/Train/IR/TrainOps.h"

namespace mlir::dlc {

/// Replaces `ops` (in block order, as canFormGroup accepted them) by one
/// train.fused group placed where the last of them was. Its inputs are the
/// values the ops read from outside; its results are every result read
/// outside the group, in op order.
train::FusedOp createFusedGroup(ArrayRef<Operation *> ops, StringRef kind,
                                StringRef strategy);

} // namespace mlir::dlc

#endif // DLC_TRANSFORMS_FUSIONREWRITE_H
