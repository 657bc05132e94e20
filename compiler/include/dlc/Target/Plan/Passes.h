//===- Passes.h - passes over the lowered step ------------------*- C++ -*-===//

#ifndef DLC_TARGET_PLAN_PASSES_H
#define DLC_TARGET_PLAN_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dlc {

#define GEN_PASS_DECL
#include "dlc/Target/Plan/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dlc/Target/Plan/Passes.h.inc"

} // namespace mlir::dlc

#endif // DLC_TARGET_PLAN_PASSES_H
