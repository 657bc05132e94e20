//===- CublasLtCapabilities.h - what cuBLASLt takes -------------*- C++ -*-===//
//
// What the cuBLASLt wrapper (src/cublas/CublasLtGemm.h) computes, decided
// from the plan alone: no CUDA header and no GPU, so that the CUDA backend's
// routing (LaunchPaths.h) asks here on any machine.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CUBLAS_CUBLASLTCAPABILITIES_H
#define DLC_RUNTIME_CUBLAS_CUBLASLTCAPABILITIES_H

#include "dlc/runtime/Plan.h"

#include <cstdint>
#include <string>

namespace dlc::rt::cublas {

/// "" when cuBLASLt can take `kernel` as far as its types, ranks and
/// operand count go; otherwise why not.
std::string gemmRefusal(const Plan &plan, const PlanKernel &kernel);

/// A whole gemm_bias_act / gemm_dact_bgrad group (xla's GEMM epilogues) as
/// one cuBLASLt call: which epilogue, the GEMM kernel, and the buffers the
/// epilogue writes besides D.
struct GemmEpilogue {
  /// relu, relu_bias, gelu, gelu_bias, gelu_aux, gelu_aux_bias (forward),
  /// dgelu, dgelu_bgrad (backward): CUBLASLT_EPILOGUE_* of the same name.
  std::string epilogue;
  size_t gemm = 0;        // the matmul / linear kernel
  int32_t output = -1;    // D: the activation (or its gradient)
  int32_t aux = -1;       // the pre-activation: written (gelu_aux*) or read (dgelu*)
  int32_t biasGrad = -1;  // dgelu_bgrad: the bias gradient
};

} // namespace dlc::rt::cublas

#endif // DLC_RUNTIME_CUBLAS_CUBLASLTCAPABILITIES_H
