//===- FuseBatchNormActivation.cpp - PaddlePaddle's bn + act fusions -------===//
//
// PaddlePaddle's fuse_bn_act_ops and fuse_bn_add_act_ops, which lower to
// cuDNN's fused batch-norm modes (CUDNN_BATCHNORM_OPS_BN_ACTIVATION and
// _BN_ADD_ACTIVATION): relu(batch_norm(x)), relu(batch_norm(x) + z), and the
// backward pair relu_backward -> batch_norm_backward. PaddlePaddle applies
// them only to FP16 NHWC training batch norm whose output has one reader;
// that gate is the default here, so the strategy is faithful, and
// `relax-gate` lifts the precision / layout part for study.
//
//===----------------------------------------------------------------------===//

#include "dlc/Transforms/FusionRewrite.h"
#include "dlc/Transforms/FusionUtils.h"
#include "dlc/Transforms/Passes.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"

#define DEBUG_TYPE "dlc-fuse-batch-norm-activation"

namespace mlir::dlc {
#define GEN_PASS_DEF_FUSEBATCHNORMACTIVATIONPASS
#include "dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::train;

namespace {

constexpr llvm::StringLiteral kStrategy = "paddle";

/// PaddlePaddle's gate: cuDNN's fused modes run FP16 NHWC batch norm
/// (dlc-convert-layout makes it NHWC, which dlc-bench does for half
/// precision).
FusionDecision paddleGate(Value bnInput, StringRef layout, bool relaxed) {
  if (relaxed)
    return FusionDecision::allow();
  Type element = cast<RankedTensorType>(bnInput.getType()).getElementType();
  if (element.isF16() && layout == kLayoutNHWC)
    return FusionDecision::allow();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "PaddlePaddle fuses batch norm with an activation only in FP16 NHWC "
        "training; this one is "
     << element << " " << layout << " (relax-gate=true lifts the gate)";
  return FusionDecision::refuse(text);
}

/// The batch norm a bn_add_act group takes from a + b. When both operands
/// are batch norms (a downsampling block's join), the relu gradient will
/// feed both their gradients, and a gradient group can only run before the
/// other reader: so the forward group takes the batch norm whose gradient
/// comes first, and the gradient group the same one (cuDNN's fused
/// gradient reads that forward call's reserve space).
BatchNormOp residualBatchNorm(AddOp add) {
  auto gradientOf = [](BatchNormOp bn) -> Operation * {
    for (Operation *user : bn.getInput().getUsers())
      if (auto backward = dyn_cast<BatchNormBackwardOp>(user))
        return backward;
    return nullptr;
  };
  auto lhs = add.getLhs().getDefiningOp<BatchNormOp>();
  auto rhs = add.getRhs().getDefiningOp<BatchNormOp>();
  if (lhs && rhs) {
    Operation *l = gradientOf(lhs), *r = gradientOf(rhs);
    if (l && r && l->getBlock() == r->getBlock() && r->isBeforeInBlock(l))
      return rhs;
  }
  return lhs ? lhs : rhs;
}

/// The same, from the output of relu(a + b); null when there is no such join.
BatchNormOp residualBatchNorm(Value reluOutput) {
  auto relu = reluOutput.getDefiningOp<ReluOp>();
  auto add = relu ? relu.getInput().getDefiningOp<AddOp>() : AddOp();
  return add ? residualBatchNorm(add) : BatchNormOp();
}

/// Exactly one reader of `value`, `reader` (PaddlePaddle's rule).
FusionDecision onlyReader(Value value, Operation *reader, StringRef what) {
  for (Operation *user : value.getUsers())
    if (user != reader)
      return FusionDecision::refuse(Twine("the ") + what + " has another reader, '" +
                                    user->getName().getStringRef() + "'");
  return FusionDecision::allow();
}

struct FuseBatchNormActivationPass final
    : mlir::dlc::impl::FuseBatchNormActivationPassBase<
          FuseBatchNormActivationPass> {
  using Base::Base;

  void runOnOperation() override {
    GroupCandidates groups(explain);
    bool noBnAct = llvm::is_contained(disabled, "bn-act");
    bool noBnAddAct = llvm::is_contained(disabled, "bn-add-act");
    for (const std::string &kind : disabled)
      if (kind != "bn-act" && kind != "bn-add-act") {
        getOperation().emitError()
            << "dlc-fuse-batch-norm-activation: unknown kind '" << kind
            << "' to disable (bn-act, bn-add-act)";
        return signalPassFailure();
      }
    auto consider = [&](SmallVector<Operation *> ops, ::dlc::rt::FusionKind kind,
                        FusionDecision decision, Operation *at) {
      bool addForm = kind == ::dlc::rt::FusionKind::kBnAddAct ||
                     kind == ::dlc::rt::FusionKind::kBnAddActGrad;
      if (decision && ((addForm && noBnAddAct) || (!addForm && noBnAct)))
        decision = FusionDecision::refuse("disabled by the user");
      groups.consider(std::move(ops), kind, decision, at);
    };

    walkFunctionsToFuse(getOperation(), [&](Operation *op) {
      // Forward: relu(bn) and relu(bn + z).
      if (auto relu = dyn_cast<ReluOp>(op)) {
        Operation *producer = relu.getInput().getDefiningOp();
        if (auto bn = dyn_cast_or_null<BatchNormOp>(producer)) {
          FusionDecision d = paddleGate(bn.getInput(), bn.getLayout(), relaxGate);
          if (d)
            d = onlyReader(bn.getOutput(), relu, "batch-norm output");
          consider({bn, relu}, ::dlc::rt::FusionKind::kBnAct, d, relu);
        } else if (auto add = dyn_cast_or_null<AddOp>(producer)) {
          if (BatchNormOp bn = residualBatchNorm(add)) {
            FusionDecision d = paddleGate(bn.getInput(), bn.getLayout(), relaxGate);
            if (d)
              d = onlyReader(bn.getOutput(), add, "batch-norm output");
            if (d)
              d = onlyReader(add.getOutput(), relu, "sum");
            consider({bn, add, relu}, ::dlc::rt::FusionKind::kBnAddAct, d, relu);
          }
        }
      }
      // Backward: relu_backward feeding batch_norm_backward. With a residual
      // join the relu gradient also flows to the shortcut: the group writes
      // it out, as PaddlePaddle's fused_bn_add_activation_grad does.
      if (auto bnBackward = dyn_cast<BatchNormBackwardOp>(op)) {
        auto reluBackward = bnBackward.getGrad().getDefiningOp<ReluBackwardOp>();
        if (!reluBackward)
          return;
        bool shortcut = !reluBackward.getOutput().hasOneUse();
        FusionDecision d = paddleGate(bnBackward.getInput(), bnBackward.getLayout(), relaxGate);
        // Where both operands of a residual join are batch norms (a
        // downsampling block), the relu gradient feeds both gradients; the
        // group takes the one whose forward the bn_add_act group took, as
        // cuDNN's fused gradient reads that forward call's reserve space.
        if (BatchNormOp forward = residualBatchNorm(reluBackward.getSaved());
            d && forward && forward.getInput() != bnBackward.getInput())
          d = FusionDecision::refuse("the residual join's bn_add_act group took the other "
                                     "batch norm");
        consider({reluBackward, bnBackward}, shortcut ? ::dlc::rt::FusionKind::kBnAddActGrad : ::dlc::rt::FusionKind::kBnActGrad, d,
                 bnBackward);
      }
    });
    numFused += groups.createAll(kStrategy);
  }
};

} // namespace
