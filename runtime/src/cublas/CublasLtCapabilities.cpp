//===- CublasLtCapabilities.cpp - what cuBLASLt takes ---------------------===//

#include "dlc/runtime/cublas/CublasLtCapabilities.h"

namespace dlc::rt::cublas {

std::string gemmRefusal(const Plan &plan, const PlanKernel &kernel) {
  bool linear = kernel.id == OpId::kLinear;
  if ((kernel.id != OpId::kMatmul && !linear) || kernel.outputs.size() != 1 ||
      kernel.inputs.size() < 2 || kernel.inputs.size() > (linear ? 3u : 2u))
    return kernel.op + " is not a matmul or linear of two operands";
  const PlanBuffer &lhs = plan.buffers[kernel.inputs[0]];
  const PlanBuffer &rhs = plan.buffers[kernel.inputs[1]];
  const PlanBuffer &out = plan.buffers[kernel.outputs[0]];
  const PlanBuffer *bias = kernel.inputs.size() > 2 ? &plan.buffers[kernel.inputs[2]] : nullptr;
  if (!isFloatType(lhs.dtype) || rhs.dtype != lhs.dtype || !isFloatType(out.dtype) ||
      (bias && !isFloatType(bias->dtype)))
    return std::string("operands of ") + dtypeName(lhs.dtype) + " and " +
           dtypeName(rhs.dtype) + ", result " + dtypeName(out.dtype);
  if (lhs.shape.size() < 2 || rhs.shape.size() < 2 || out.shape.size() < 2)
    return "an operand of rank below 2";
  return "";
}

} // namespace dlc::rt::cublas
