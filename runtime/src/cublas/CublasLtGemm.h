//===- CublasLtGemm.h - matmul and linear through cuBLASLt ------*- C++ -*-===//
//
// The thin wrapper of cuBLASLt: one Gemm per plan kernel (matmul, linear),
// described and given an algorithm once, when the executor is created, and
// run every step. Row-major plan buffers are handed to cuBLASLt, which is
// column-major, as their transposes: Y = A B is computed as Y^T = B^T A^T,
// so no data moves. Linear's bias is CUBLASLT_EPILOGUE_BIAS. A batched
// product whose right operand is shared by every batch is one GEMM over
// the stacked rows.
//
// An xla GEMM-epilogue group (LaunchPaths.h, gemmEpilogueFor) is one call
// with the group's epilogue: bias and ReLU / tanh-GELU forward, GELU's
// pre-activation written as the auxiliary output, and on the way back
// DGELU with the bias gradient (BGRAD) from that auxiliary input.
//
// Precision: fp32 operands compute in fp32 (CUBLAS_COMPUTE_32F, no TF32)
// unless the caller allows TF32; f16 / bf16 operands accumulate in fp32.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_SRC_CUBLAS_CUBLASLTGEMM_H
#define DLC_RUNTIME_SRC_CUBLAS_CUBLASLTGEMM_H

#include "dlc/runtime/Plan.h"
#include "dlc/runtime/cublas/CublasLtCapabilities.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <memory>
#include <string>

namespace dlc::rt::cublas {

/// ok, or "<call>: <CUBLAS_STATUS_...> (<its text>) in <where>".
Status cublasCheck(cublasStatus_t status, const char *call, const std::string &where);

/// Workspace each GEMM may use (cuBLAS's recommendation for Hopper).
constexpr size_t kGemmWorkspaceBytes = 32u << 20;

class Gemm {
public:
  /// A GEMM for `kernel` (matmul or linear). When cuBLASLt cannot take it
  /// (element types it has no kernel for, batch dimensions that broadcast
  /// other than whole-operand), `*gemm` stays null and `refusal` says why:
  /// the kernel then runs elsewhere. A failing cuBLASLt call is an error.
  static Status plan(cublasLtHandle_t handle, const Plan &plan, const PlanKernel &kernel,
                     bool allowTf32, const std::string &where,
                     std::unique_ptr<Gemm> &gemm, std::string &refusal,
                     const GemmEpilogue *epilogue = nullptr);
  ~Gemm();

  /// Enqueues the product on `stream`, buffers at `arena` + their offsets.
  Status run(cublasLtHandle_t handle, unsigned char *arena, void *workspace,
             size_t workspaceBytes, cudaStream_t stream) const;
  size_t workspaceBytes() const { return workspace_; }

private:
  Gemm() = default;
  std::string where_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  size_t workspace_ = 0;
  /// Arena offsets of cuBLASLt's A (the plan's right operand), B (the
  /// plan's left operand), bias (-1: none; the bias gradient's for BGRAD),
  /// the epilogue's auxiliary matrix (-1: none) and D.
  int64_t aOffset_ = 0, bOffset_ = 0, biasOffset_ = -1, auxOffset_ = -1, dOffset_ = 0;
};

} // namespace dlc::rt::cublas

#endif // DLC_RUNTIME_SRC_CUBLAS_CUBLASLTGEMM_H
