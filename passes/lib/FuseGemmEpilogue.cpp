//===- FuseGemmEpilogue.cpp - bias and activation epilogues of GEMMs ------===//
//
// cuBLASLt runs a GEMM's bias add and activation in the GEMM's epilogue
// (CUBLASLT_EPILOGUE_RELU_BIAS, GELU_AUX_BIAS), and on the way back the
// activation's gradient together with the bias gradient (DRELU_BGRAD,
// DGELU_BGRAD); cuDNN does the same for a convolution with bias and relu
// (cudnnConvolutionBiasActivationForward). XLA's GPU backend rewrites such
// chains into one library call; this pass forms those groups:
//
//   forward   linear (bias) -> relu | gelu               gemm_bias_act
//             conv2d (bias) -> relu                       conv_bias_act
//   backward  matmul -> relu_backward | gelu_backward
//             [-> sum_to_shape, the bias gradient]        gemm_dact_bgrad
//
// GELU's backward needs the GEMM's pre-activation output: the group writes
// it out as cuBLASLt's auxiliary output does. cuDNN's fused convolution has
// no such output, so a conv whose pre-activation is read elsewhere is not
// fused.
//
//===----------------------------------------------------------------------===//

#include "dlc/Transforms/FusionRewrite.h"
#include "dlc/Transforms/FusionUtils.h"
#include "dlc/Transforms/Passes.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#define DEBUG_TYPE "dlc-fuse-gemm-epilogue"

namespace mlir::dlc {
#define GEN_PASS_DEF_FUSEGEMMEPILOGUEPASS
#include "dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::train;

namespace {

constexpr llvm::StringLiteral kStrategy = "xla";

/// The bias gradient of an activation gradient: a sum_to_shape of it down to
/// its last dimension, as LinearOp's gradient rule emits it.
SumToShapeOp biasGradientOf(Value grad) {
  auto type = cast<RankedTensorType>(grad.getType());
  for (Operation *user : grad.getUsers())
    if (auto sum = dyn_cast<SumToShapeOp>(user)) {
      auto out = cast<RankedTensorType>(sum.getType());
      if (out.getRank() == 1 && out.getDimSize(0) == type.getShape().back())
        return sum;
    }
  return nullptr;
}

struct FuseGemmEpiloguePass final
    : mlir::dlc::impl::FuseGemmEpiloguePassBase<FuseGemmEpiloguePass> {
  using Base::Base;

  void runOnOperation() override {
    GroupCandidates groups(explain);
    walkFunctionsToFuse(getOperation(), [&](Operation *op) {
      if (op->getParentOfType<FusedOp>())
        return;
      // Forward: the activation of a GEMM or a biased convolution.
      if (isa<ReluOp, GeluOp>(op)) {
        Operation *producer = op->getOperand(0).getDefiningOp();
        if (isa_and_nonnull<LinearOp>(producer)) {
          // cuBLASLt writes the pre-activation as its auxiliary output.
          groups.consider({producer, op}, ::dlc::rt::FusionKind::kGemmBiasAct,
                          canFuseProducerIntoConsumer(producer, op, /*allowMultiOutput=*/true),
                          op);
        } else if (auto conv = dyn_cast_or_null<Conv2dOp>(producer);
                   conv && conv.getBias() && isa<ReluOp>(op)) {
          groups.consider({conv, op}, ::dlc::rt::FusionKind::kConvBiasAct,
                          canFuseProducerIntoConsumer(conv, op, /*allowMultiOutput=*/false),
                          op);
        }
        return;
      }
      // Backward: the activation gradient of a GEMM's output gradient, with
      // the bias gradient when there is one.
      if (isa<ReluBackwardOp, GeluBackwardOp>(op)) {
        auto matmul = op->getOperand(0).getDefiningOp<MatmulOp>();
        if (!matmul)
          return;
        FusionDecision decision =
            canFuseProducerIntoConsumer(matmul, op, /*allowMultiOutput=*/false);
        SmallVector<Operation *> ops = {matmul, op};
        if (SumToShapeOp bias = biasGradientOf(op->getResult(0)); bias && decision) {
          // The epilogue computes the bias gradient as the GEMM finishes:
          // schedule the sum right after the activation gradient, which is
          // its only operand, so the other readers of the gradient follow
          // the group.
          bias->moveAfter(op);
          ops.push_back(bias);
        }
        groups.consider(ops, ::dlc::rt::FusionKind::kGemmDactBgrad, decision, op);
      }
    });
    numGroups += groups.createAll(kStrategy);
  }
};

} // namespace
