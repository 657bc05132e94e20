//===- OpExpressions.h - each op's value at an index, one table -*- C++ -*-===//
//
// One entry per op the emitter computes (Inductor's OpOverrides habit): an
// element-wise op is a float expression over its operands' values read at
// the result's index; an op that remaps the index, branches or passes a
// value through writes its own emission. A target whose text differs for
// an op overrides the expression for that op alone. Adding an element-wise
// op is one entry here (docs/AddingAnOp.md); what the expression calls
// (dlc_relu, dlc_gelu, ...) lives in the prelude (kernels/Prelude.cuh).
//
// Keyed by op name for now: the runtime's op enum will key it.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CODEGEN_OPEXPRESSIONS_H
#define DLC_RUNTIME_CODEGEN_OPEXPRESSIONS_H

#include "dlc/runtime/codegen/KernelCodegen.h"

#include <functional>
#include <map>
#include <string>

namespace dlc::rt::codegen {

class Emitter;

/// An op's value as float text over its operands' values %0, %1, ...,
/// which may depend on the kernel's attributes.
using OpPattern = std::function<std::string(const PlanKernel &)>;
/// The value of `k`'s result `result` at `idx`, written by the op itself.
using OpEmission = std::string (*)(Emitter &e, const PlanKernel &k, int32_t result,
                                   const std::string &idx);

struct OpExpression {
  /// Operands the op takes, with one result; 0: the emission checks them.
  size_t operands = 1;
  /// Every target's expression, unless `overrides` holds the target's own.
  OpPattern pattern;
  std::map<KernelTarget, OpPattern> overrides;
  /// Instead of a pattern: an op that is no expression of its operands at
  /// the result's index.
  OpEmission emit = nullptr;

  /// The pattern `target` writes for `k`.
  std::string patternFor(KernelTarget target, const PlanKernel &k) const {
    auto it = overrides.find(target);
    return (it != overrides.end() ? it->second : pattern)(k);
  }
};

/// The op's entry; null for an op the emitter does not compute.
const OpExpression *opExpression(OpId op);

} // namespace dlc::rt::codegen

#endif // DLC_RUNTIME_CODEGEN_OPEXPRESSIONS_H
