//===- CublasLtGemm.cpp - matmul and linear through cuBLASLt --------------===//

#include "CublasLtGemm.h"

#include "dlc/runtime/RowStride.h"
#include "dlc/runtime/Shape.h"

#include <algorithm>
#include <vector>

namespace dlc::rt::cublas {

Status cublasCheck(cublasStatus_t status, const char *call, const std::string &where) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return Status::ok();
  StatusCode code = status == CUBLAS_STATUS_ALLOC_FAILED ? StatusCode::kResourceExhausted
                                                         : StatusCode::kInternal;
  return Status(code, std::string(call) + ": " + cublasLtGetStatusName(status) + " (" +
                          cublasLtGetStatusString(status) + ") in " + where);
}

#define DLC_CUBLAS(call, where)                                                \
  do {                                                                         \
    if (Status s_ = cublasCheck((call), #call, where); !s_.isOk())             \
      return s_;                                                               \
  } while (0)

namespace {

bool toCudaType(DType dtype, cudaDataType_t &type) {
  switch (dtype) {
  case DType::kF32: type = CUDA_R_32F; return true;
  case DType::kF16: type = CUDA_R_16F; return true;
  case DType::kBF16: type = CUDA_R_16BF; return true;
  default: return false;
  }
}

/// LaunchPaths' epilogue names as cuBLASLt's modes.
bool epilogueMode(const std::string &name, cublasLtEpilogue_t &mode) {
  static const std::pair<const char *, cublasLtEpilogue_t> modes[] = {
      {"relu", CUBLASLT_EPILOGUE_RELU},
      {"relu_bias", CUBLASLT_EPILOGUE_RELU_BIAS},
      {"gelu", CUBLASLT_EPILOGUE_GELU},
      {"gelu_bias", CUBLASLT_EPILOGUE_GELU_BIAS},
      {"gelu_aux", CUBLASLT_EPILOGUE_GELU_AUX},
      {"gelu_aux_bias", CUBLASLT_EPILOGUE_GELU_AUX_BIAS},
      {"dgelu", CUBLASLT_EPILOGUE_DGELU},
      {"dgelu_bgrad", CUBLASLT_EPILOGUE_DGELU_BGRAD}};
  for (const auto &[n, m] : modes)
    if (name == n) {
      mode = m;
      return true;
    }
  return false;
}

/// The batch stride of an operand whose leading dimensions are `batch`
/// against the output's `out`: a whole matrix per output batch, or 0 when
/// the operand is one matrix shared by every batch; -1 when it broadcasts
/// some dimensions only (one strided batch cannot express it).
int64_t batchStride(std::vector<int64_t> batch, const std::vector<int64_t> &out,
                    int64_t matrixElements) {
  if (numElements(batch) == 1)
    return 0;
  while (batch.size() < out.size())
    batch.insert(batch.begin(), 1);
  return batch == out ? matrixElements : -1;
}

} // namespace

Status Gemm::plan(cublasLtHandle_t handle, const Plan &plan, const PlanKernel &kernel,
                  bool allowTf32, const std::string &where, std::unique_ptr<Gemm> &gemm,
                  std::string &refusal, const GemmEpilogue *epilogue) {
  gemm.reset();
  const bool linear = kernel.id == OpId::kLinear;
  if ((kernel.id != OpId::kMatmul && !linear) || kernel.outputs.size() != 1 ||
      kernel.inputs.size() < 2) {
    refusal = kernel.op + " is not a matmul or linear of two operands";
    return Status::ok();
  }
  const PlanBuffer &lhs = plan.buffers[kernel.inputs[0]];
  const PlanBuffer &rhs = plan.buffers[kernel.inputs[1]];
  // With an epilogue, D is the group's result (the activation or its
  // gradient), the GEMM's own output never being written.
  const PlanBuffer &out = plan.buffers[epilogue ? epilogue->output : kernel.outputs[0]];
  const PlanBuffer *bias = linear && kernel.inputs.size() > 2
                               ? &plan.buffers[kernel.inputs[2]]
                               : nullptr;
  cudaDataType_t abType, dType, biasType = CUDA_R_32F;
  if (!toCudaType(lhs.dtype, abType) || !toCudaType(out.dtype, dType) ||
      rhs.dtype != lhs.dtype || (bias && !toCudaType(bias->dtype, biasType))) {
    refusal = std::string("operands of ") + dtypeName(lhs.dtype) + " and " +
              dtypeName(rhs.dtype) + ", result " + dtypeName(out.dtype);
    return Status::ok();
  }
  if (lhs.shape.size() < 2 || rhs.shape.size() < 2 || out.shape.size() < 2) {
    refusal = "an operand of rank below 2";
    return Status::ok();
  }

  // Rows lie a row stride apart: the last dimension, or the padded rows'
  // stride the compiler chose so that each starts 16-byte aligned
  // (RowStride.h). Epilogues read their auxiliary matrices densely.
  const int64_t ldL = leadingDimension(lhs), ldR = leadingDimension(rhs),
                ldD = leadingDimension(out);
  if (epilogue && (ldL != lhs.shape.back() || ldR != rhs.shape.back() || ldD != out.shape.back())) {
    refusal = "an epilogue over padded rows";
    return Status::ok();
  }
  // Row-major sizes: Y[m, n] = op(L)[m, k] op(R)[k, n], `batches` times.
  // Linear: Y[rows, out] = X[rows, in] W[out, in]^T.
  bool ta = !linear && kernel.flag("transpose_lhs");
  bool tb = linear || kernel.flag("transpose_rhs");
  int64_t lr = lhs.shape[lhs.shape.size() - 2], lc = lhs.shape.back();
  int64_t rr = rhs.shape[rhs.shape.size() - 2], rc = rhs.shape.back();
  int64_t m, k, n, batches = 1, lStride = 0, rStride = 0, dStride = 0;
  if (linear) {
    k = lc;
    m = numElements(lhs.shape) / k;
    lr = m;
    n = rr;
  } else {
    m = ta ? lc : lr;
    k = ta ? lr : lc;
    n = tb ? rr : rc;
    std::vector<int64_t> outBatch(out.shape.begin(), out.shape.end() - 2);
    batches = numElements(outBatch);
    lStride = batchStride({lhs.shape.begin(), lhs.shape.end() - 2}, outBatch, lr * ldL);
    rStride = batchStride({rhs.shape.begin(), rhs.shape.end() - 2}, outBatch, rr * ldR);
    dStride = m * ldD;
    if (lStride < 0 || rStride < 0) {
      refusal = "batch dimensions that broadcast partly";
      return Status::ok();
    }
    // A right operand shared by every batch and stacked left rows: one GEMM
    // over batches x m rows.
    if (batches > 1 && rStride == 0 && !ta && lStride == lr * ldL) {
      m *= batches;
      lr = m;
      batches = 1;
    }
  }
  if (epilogue && batches > 1) {
    refusal = "an epilogue on a batched GEMM";
    return Status::ok();
  }

  std::unique_ptr<Gemm> g(new Gemm());
  g->where_ = where;
  // Half operands accumulate in fp32; fp32 stays fp32 unless TF32 is allowed.
  cublasComputeType_t compute =
      abType == CUDA_R_32F && allowTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  DLC_CUBLAS(cublasLtMatmulDescCreate(&g->desc_, compute, CUDA_R_32F), where);
  // cuBLASLt's A is the plan's right operand, its B the left one (see the
  // header): column-major A is R^T as stored, so R's transpose flag applies.
  cublasOperation_t opA = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  DLC_CUBLAS(cublasLtMatmulDescSetAttribute(g->desc_, CUBLASLT_MATMUL_DESC_TRANSA, &opA,
                                            sizeof(opA)),
             where);
  DLC_CUBLAS(cublasLtMatmulDescSetAttribute(g->desc_, CUBLASLT_MATMUL_DESC_TRANSB, &opB,
                                            sizeof(opB)),
             where);
  cublasLtEpilogue_t mode = bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  if (epilogue && !epilogueMode(epilogue->epilogue, mode)) {
    refusal = "no cuBLASLt epilogue named '" + epilogue->epilogue + "'";
    return Status::ok();
  }
  const PlanBuffer *biasGrad =
      epilogue && epilogue->biasGrad >= 0 ? &plan.buffers[epilogue->biasGrad] : nullptr;
  if (biasGrad && !toCudaType(biasGrad->dtype, biasType)) {
    refusal = std::string("a bias gradient of ") + dtypeName(biasGrad->dtype);
    return Status::ok();
  }
  if (mode != CUBLASLT_EPILOGUE_DEFAULT)
    DLC_CUBLAS(cublasLtMatmulDescSetAttribute(g->desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &mode,
                                              sizeof(mode)),
               where);
  if (bias || biasGrad) {
    DLC_CUBLAS(cublasLtMatmulDescSetAttribute(g->desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                              &biasType, sizeof(biasType)),
               where);
    g->biasOffset_ = biasGrad ? biasGrad->offset : bias->offset;
  }
  if (epilogue && epilogue->aux >= 0) {
    // The pre-activation, laid out as D (n x m column-major, ld n).
    // cuBLASLt keeps the GELU input in D's type: CUBLASLT_MATMUL_DESC_
    // EPILOGUE_AUX_DATA_TYPE stays at its default (-1); a non-default type
    // is for FP8 matmuls only.
    const PlanBuffer &aux = plan.buffers[epilogue->aux];
    if (aux.dtype != out.dtype || aux.numElements() != m * n) {
      refusal = "an auxiliary matrix of another type or size than D";
      return Status::ok();
    }
    if (n % 8 != 0) { // EPILOGUE_AUX_LD: divisible by 8 (cublasLt.h)
      refusal = "an auxiliary matrix whose leading dimension " + std::to_string(n) +
                " is not a multiple of 8";
      return Status::ok();
    }
    int64_t ld = n;
    DLC_CUBLAS(cublasLtMatmulDescSetAttribute(g->desc_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD,
                                              &ld, sizeof(ld)),
               where);
    g->auxOffset_ = aux.offset;
  }
  // Stored column-major: R as rc x rr (ld ldR), L as lc x lr (ld ldL), D
  // as n x m (ld ldD).
  DLC_CUBLAS(cublasLtMatrixLayoutCreate(&g->a_, abType, rc, rr, ldR), where);
  DLC_CUBLAS(cublasLtMatrixLayoutCreate(&g->b_, abType, lc, lr, ldL), where);
  DLC_CUBLAS(cublasLtMatrixLayoutCreate(&g->c_, dType, n, m, ldD), where);
  if (batches > 1) {
    int32_t count = static_cast<int32_t>(batches);
    struct {
      cublasLtMatrixLayout_t layout;
      int64_t stride;
    } layouts[] = {{g->a_, rStride}, {g->b_, lStride}, {g->c_, dStride}};
    for (auto &l : layouts) {
      DLC_CUBLAS(cublasLtMatrixLayoutSetAttribute(l.layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                  &count, sizeof(count)),
                 where);
      DLC_CUBLAS(cublasLtMatrixLayoutSetAttribute(
                     l.layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &l.stride,
                     sizeof(l.stride)),
                 where);
    }
  }
  g->aOffset_ = rhs.offset;
  g->bOffset_ = lhs.offset;
  g->dOffset_ = out.offset;

  cublasLtMatmulPreference_t preference = nullptr;
  DLC_CUBLAS(cublasLtMatmulPreferenceCreate(&preference), where);
  uint64_t maxWorkspace = kGemmWorkspaceBytes;
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasStatus_t status = cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &maxWorkspace,
      sizeof(maxWorkspace));
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasLtMatmulAlgoGetHeuristic(handle, g->desc_, g->a_, g->b_, g->c_, g->c_,
                                            preference, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  // NOT_SUPPORTED, and INVALID_VALUE for a combination of types, layouts
  // and epilogue this cuBLASLt does not take, are refusals: the launch then
  // runs elsewhere rather than failing the executor.
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || status == CUBLAS_STATUS_INVALID_VALUE ||
      (status == CUBLAS_STATUS_SUCCESS && !found)) {
    refusal = "cuBLASLt has no algorithm for it (cublasLtMatmulAlgoGetHeuristic: " +
              std::string(cublasLtGetStatusName(status)) + ")";
    return Status::ok();
  }
  DLC_CUBLAS(status, where);
  g->algo_ = result.algo;
  g->workspace_ = result.workspaceSize;
  gemm = std::move(g);
  return Status::ok();
}

Gemm::~Gemm() {
  // Destruction cannot fail usefully; the handles are released regardless.
  if (a_)
    cublasLtMatrixLayoutDestroy(a_);
  if (b_)
    cublasLtMatrixLayoutDestroy(b_);
  if (c_)
    cublasLtMatrixLayoutDestroy(c_);
  if (desc_)
    cublasLtMatmulDescDestroy(desc_);
}

Status Gemm::run(cublasLtHandle_t handle, unsigned char *arena, void *workspace,
                 size_t workspaceBytes, cudaStream_t stream) const {
  if (biasOffset_ >= 0) {
    const void *bias = arena + biasOffset_;
    DLC_CUBLAS(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                              sizeof(bias)),
               where_);
  }
  if (auxOffset_ >= 0) {
    void *aux = arena + auxOffset_;
    DLC_CUBLAS(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER,
                                              &aux, sizeof(aux)),
               where_);
  }
  const float one = 1.0f, zero = 0.0f;
  void *d = arena + dOffset_;
  DLC_CUBLAS(cublasLtMatmul(handle, desc_, &one, arena + aOffset_, a_, arena + bOffset_, b_,
                            &zero, d, c_, d, c_, &algo_, workspace,
                            std::min(workspaceBytes, kGemmWorkspaceBytes), stream),
             where_);
  return Status::ok();
}

} // namespace dlc::rt::cublas
