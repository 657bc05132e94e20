//===- Passes.h - passes over the lowered step ------------------*- C++ -*-===//

#ifndef DLC_CONVERSION_PASSES_H
#define DLC_CONVERSION_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dlc {

#define GEN_PASS_DECL
#include "dlc/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dlc/Conversion/Passes.h.inc"

} // namespace mlir::dlc

#endif // DLC_CONVERSION_PASSES_H
