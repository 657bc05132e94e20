//===- TrainToPlan.h - lower @train_step to a runtime plan ------*- C++ -*-===//

#ifndef DLC_TARGET_PLAN_TRAINTOPLAN_H
#define DLC_TARGET_PLAN_TRAINTOPLAN_H

#include "dlc/runtime/Plan.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::dlc {

struct PlanOptions {
  std::string model;     // recorded in the plan and reports
  std::string precision = "fp32";
  std::string fusion = "none";
  /// Pad the rows of temporaries whose rows break 16-byte alignment where
  /// every kernel on them takes a row stride (PadRows.h): cuBLASLt's fast
  /// GEMMs need aligned leading dimensions. A layout decision; off for the
  /// ablation (dlc-bench --pad-rows=false).
  bool padRows = true;
};

/// Statistics of a lowering, for reports.
struct PlanStats {
  int64_t kernels = 0;
  int64_t totalBufferBytes = 0; // without reuse
  int64_t lowerBoundBytes = 0;  // most bytes alive at once
  int64_t paddingBytes = 0;     // what padded rows add (PadRows.h)
};

/// Lowers the module's @train_step (static shapes, as dlc-autodiff makes it)
/// to a plan: one buffer per value, one kernel per op. Reshapes alias their
/// input instead of copying, and each result marked `train.update_of` is
/// written in place into the argument it updates when the producing op is
/// the argument's last reader. Buffers get arena offsets from the liveness
/// planner. Errors are reported on the offending op.
FailureOr<::dlc::rt::Plan> lowerToPlan(ModuleOp module,
                                       const PlanOptions &options,
                                       PlanStats *stats = nullptr);

} // namespace mlir::dlc

#endif // DLC_TARGET_PLAN_TRAINTOPLAN_H
