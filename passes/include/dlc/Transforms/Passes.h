//===- Passes.h - train -> train passes -------------------------*- C++ -*-===//

#ifndef DLC_TRANSFORMS_PASSES_H
#define DLC_TRANSFORMS_PASSES_H

#include "dlc/Dialect/Train/IR/TrainDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <limits> // the lr option's default

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace mlir::dlc {

/// Counts of what specializeBatch changed, for pass statistics and tests.
struct SpecializeBatchResult {
  unsigned numArgs = 0;
  unsigned numOps = 0;
};

/// Sets the dynamic batch dimension (dimension 0) of every argument of
/// `func` to `batchSize` and re-infers every op's result types in order.
/// Reports an error on the offending op or argument and fails when an
/// argument has another dynamic dimension, an op cannot re-infer its types,
/// or a shape becomes inconsistent with the concrete batch.
FailureOr<SpecializeBatchResult> specializeBatch(func::FuncOp func,
                                                 int64_t batchSize);

#define GEN_PASS_DECL
#include "dlc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dlc/Transforms/Passes.h.inc"

} // namespace mlir::dlc

#endif // DLC_TRANSFORMS_PASSES_H
