//===- AutoMixedPrecision.cpp - autocast the forward pass -----------------===//
//
// Mixed precision as torch.autocast and PaddlePaddle's AMP do it, on the
// forward function before dlc-autodiff, so that the backward pass inherits
// each op's precision from the gradient rules (the gradient of a cast is a
// cast back; a GEMM in half precision has half-precision gradients) and the
// parameters' gradients arrive in their own (master) type.
//
// Op lists (documented in the pass description):
//   allow  conv2d, matmul, linear                      -> half precision
//   deny   softmax, softmax_cross_entropy, layer_norm,
//          reduce_sum / mean / max, global_avg_pool     -> float32
//   norm   batch_norm: the input keeps its precision, the statistics and
//          affine parameters stay float32 (cuDNN's mixed batch norm)
//   infer  everything else: the widest float type among its operands
//
// Modes: amp-fp16 and amp-bf16 keep float32 master parameters and cast them
// where an allow-list op reads them; fp16 ("pure" FP16, PaddlePaddle's O2
// without master weights) stores the parameters themselves in fp16, except
// those only normalizations read.
//
//===----------------------------------------------------------------------===//

#include "dlc/Transforms/Passes.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "dlc-auto-mixed-precision"

namespace mlir::dlc {
#define GEN_PASS_DEF_AUTOMIXEDPRECISIONPASS
#include "dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::train;

namespace {

enum class Policy { kAllow, kDeny, kNorm, kInfer };

Policy policyOf(Operation *op) {
  if (isa<Conv2dOp, MatmulOp, LinearOp>(op))
    return Policy::kAllow;
  if (isa<SoftmaxOp, SoftmaxCrossEntropyOp, LayerNormOp, ReduceSumOp,
          ReduceMeanOp, ReduceMaxOp, GlobalAvgPoolOp>(op))
    return Policy::kDeny;
  if (isa<BatchNormOp>(op))
    return Policy::kNorm;
  return Policy::kInfer;
}

bool isFloatTensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && isa<FloatType>(type.getElementType());
}

Type elementOf(Value v) { return cast<RankedTensorType>(v.getType()).getElementType(); }

struct AutoMixedPrecisionPass final
    : mlir::dlc::impl::AutoMixedPrecisionPassBase<AutoMixedPrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Builder builder(&getContext());
    Type half;
    bool pure = false;
    if (mode == "amp-fp16" || mode == "amp") {
      half = builder.getF16Type();
    } else if (mode == "amp-bf16") {
      half = builder.getBF16Type();
    } else if (mode == "fp16") {
      half = builder.getF16Type();
      pure = true;
    } else {
      module.emitError() << "dlc-auto-mixed-precision: unknown mode '" << mode
                         << "' (amp-fp16, amp-bf16, fp16)";
      return signalPassFailure();
    }
    auto forward = module.lookupSymbol<func::FuncOp>("forward");
    if (!forward || forward.isExternal()) {
      module.emitError() << "dlc-auto-mixed-precision expects a func.func "
                            "@forward with a body (run it before dlc-autodiff)";
      return signalPassFailure();
    }
    if (pure)
      storeParamsInHalf(forward, half);
    if (failed(autocast(forward, half)))
      return signalPassFailure();
  }

  /// Pure fp16: every parameter that a non-normalization op reads becomes
  /// an fp16 argument (its initializer still gives float values; the
  /// runtime rounds them).
  void storeParamsInHalf(func::FuncOp forward, Type half) {
    for (BlockArgument arg : forward.getArguments()) {
      if (!forward.getArgAttr(arg.getArgNumber(), TrainDialect::kParamAttr) ||
          !isFloatTensor(arg))
        continue;
      bool normOnly = llvm::all_of(arg.getUsers(), [](Operation *user) {
        return isa<BatchNormOp, LayerNormOp>(user);
      });
      if (normOnly)
        continue;
      arg.setType(cast<RankedTensorType>(arg.getType()).clone(half));
      ++numHalfParams;
    }
    forward.setFunctionType(FunctionType::get(
        forward.getContext(), forward.getBody().getArgumentTypes(),
        forward.getResultTypes()));
  }

  /// Casts each op's float operands to the type its policy computes in, in
  /// order, re-inferring result types as it goes.
  LogicalResult autocast(func::FuncOp forward, Type half) {
    Type f32 = Float32Type::get(&getContext());
    // One cast per value and type, placed right after the value's
    // definition so that every reader can use it.
    DenseMap<std::pair<Value, Type>, Value> casts;
    auto castTo = [&](Value v, Type element) -> Value {
      if (elementOf(v) == element)
        return v;
      auto key = std::make_pair(v, element);
      if (Value done = casts.lookup(key))
        return done;
      OpBuilder b(&getContext());
      if (auto arg = dyn_cast<BlockArgument>(v))
        b.setInsertionPointToStart(arg.getOwner());
      else
        b.setInsertionPointAfter(v.getDefiningOp());
      Value c = CastOp::create(b, v.getLoc(), v, TypeAttr::get(element));
      ++numCasts;
      return casts[key] = c;
    };
    SmallVector<Operation *> ops;
    for (Operation &op : forward.getBody().front().without_terminator())
      ops.push_back(&op);
    for (Operation *op : ops) {
      if (isa<CastOp, ConstantOp>(op))
        continue;
      Policy policy = policyOf(op);
      SmallVector<unsigned> floats;
      for (OpOperand &use : op->getOpOperands())
        if (isFloatTensor(use.get()))
          floats.push_back(use.getOperandNumber());
      if (floats.empty())
        continue;
      auto castOperand = [&](unsigned i, Type element) {
        op->setOperand(i, castTo(op->getOperand(i), element));
      };
      switch (policy) {
      case Policy::kAllow:
        for (unsigned i : floats)
          castOperand(i, half);
        break;
      case Policy::kDeny:
        for (unsigned i : floats)
          castOperand(i, f32);
        break;
      case Policy::kNorm:
        // Statistics and affine parameters in float32; the input as is.
        for (unsigned i : floats)
          if (i != 0)
            castOperand(i, f32);
        break;
      case Policy::kInfer: {
        bool anyF32 = llvm::any_of(floats, [&](unsigned i) {
          return elementOf(op->getOperand(i)).isF32();
        });
        for (unsigned i : floats)
          castOperand(i, anyF32 ? f32 : elementOf(op->getOperand(floats[0])));
        break;
      }
      }
      if (failed(reinfer(op)))
        return failure();
    }
    Operation *ret = forward.getBody().front().getTerminator();
    for (OpOperand &use : ret->getOpOperands())
      if (isFloatTensor(use.get()) && !elementOf(use.get()).isF32())
        use.set(castTo(use.get(), f32));
    return success();
  }

  LogicalResult reinfer(Operation *op) {
    auto infer = dyn_cast<InferTypeOpInterface>(op);
    if (!infer)
      return op->emitOpError() << "cannot be autocast: it does not infer its "
                                  "result types";
    SmallVector<Type> types;
    if (failed(infer.inferReturnTypes(
            &getContext(), op->getLoc(), op->getOperands(),
            op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
            op->getRegions(), types))) {
      op->emitRemark() << "while casting to mixed precision";
      return failure();
    }
    for (auto [result, type] : llvm::zip_equal(op->getResults(), types))
      result.setType(type);
    return success();
  }
};

} // namespace
