//===- LossScaling.cpp - dynamic loss scaling of the training step --------===//
//
// In fp16 small gradients underflow. torch.cuda.amp.GradScaler multiplies
// the loss by a scale S before the backward pass, unscales the gradients
// before the optimizer, skips the step when one overflowed, and adapts S:
// halved after an overflow, doubled after `growth-interval` good steps.
// Here the same runs inside the compiled step:
//
//   - the backward pass is seeded with S instead of 1 (the seed constant
//     dlc-autodiff marks `train.seed_gradient`), so every gradient is S x;
//   - `train.loss_scale_status` reads S and every parameter gradient and
//     gives [1 / S, overflow];
//   - each optimizer update takes that status: it unscales as it reads the
//     gradient and leaves its parameter and state as they were on overflow;
//   - `train.update_loss_scale` computes the next S and good-step count,
//     which are persistent state of the step (arguments `loss_scale` and
//     `loss_scale.good_steps`, marked train.buffer, updated in place).
//
//===----------------------------------------------------------------------===//

#include "dlc/Transforms/Passes.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "dlc-loss-scaling"

namespace mlir::dlc {
#define GEN_PASS_DEF_LOSSSCALINGPASS
#include "dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::train;

namespace {

struct LossScalingPass final
    : mlir::dlc::impl::LossScalingPassBase<LossScalingPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto step = module.lookupSymbol<func::FuncOp>("train_step");
    if (!step || step.isExternal()) {
      module.emitError() << "dlc-loss-scaling expects a func.func @train_step "
                            "with a body (run dlc-autodiff first)";
      return signalPassFailure();
    }
    if (!(initScale > 0) || growthInterval < 1) {
      module.emitError() << "dlc-loss-scaling expects init-scale > 0 and "
                            "growth-interval >= 1, got "
                         << initScale << " and " << growthInterval;
      return signalPassFailure();
    }
    Block &body = step.front();
    ConstantOp seed;
    for (auto constant : body.getOps<ConstantOp>())
      if (constant->hasAttr(TrainDialect::kSeedGradientAttr))
        seed = constant;
    if (!seed) {
      step.emitOpError() << "has no seed gradient (a train.constant marked '"
                         << TrainDialect::kSeedGradientAttr
                         << "'): was it made by dlc-autodiff, and loss scaling "
                            "applied already?";
      return signalPassFailure();
    }
    SmallVector<Operation *> updates;
    for (Operation &op : body)
      if (getOpClass(&op) == ::dlc::rt::OpClass::kOptimizer)
        updates.push_back(&op);
    if (updates.empty()) {
      step.emitOpError() << "has no optimizer update to unscale";
      return signalPassFailure();
    }

    // The scale and the good-step count, persistent across steps.
    Builder builder(&getContext());
    auto scalar = RankedTensorType::get({}, builder.getF32Type());
    auto addState = [&](StringRef name, DictionaryAttr init) {
      unsigned index = step.getNumArguments();
      NamedAttrList attrs;
      attrs.set(TrainDialect::kNameAttr, builder.getStringAttr(name));
      attrs.set(TrainDialect::kBufferAttr, init);
      (void)step.insertArgument(index, scalar, attrs.getDictionary(&getContext()),
                                step.getLoc());
      return step.getArgument(index);
    };
    Value scale = addState(
        "loss_scale",
        builder.getDictionaryAttr(
            {builder.getNamedAttr("init", builder.getStringAttr("constant")),
             builder.getNamedAttr("value", builder.getF64FloatAttr(initScale))}));
    Value good = addState(
        "loss_scale.good_steps",
        builder.getDictionaryAttr(
            {builder.getNamedAttr("init", builder.getStringAttr("zeros"))}));

    // d(S loss)/d loss = S.
    seed.getOutput().replaceAllUsesWith(scale);
    seed->erase();

    OpBuilder b(updates.front());
    // A gradient widened from half precision overflowed iff its half value
    // did (widening is exact): check the half value, which is fewer bytes
    // and leaves the cast to the update alone (dlc-fuse-optimizer-updates
    // can then run it in the update's loop).
    SmallVector<Value> grads;
    for (Operation *update : updates) {
      Value grad = update->getOperand(1);
      if (auto widen = grad.getDefiningOp<CastOp>();
          widen && cast<RankedTensorType>(widen.getInput().getType())
                           .getElementType()
                           .getIntOrFloatBitWidth() < 32 &&
          cast<RankedTensorType>(grad.getType()).getElementType().isF32())
        grad = widen.getInput();
      grads.push_back(grad);
    }
    Value status = LossScaleStatusOp::create(b, step.getLoc(), scale, grads);
    for (Operation *update : updates) {
      if (auto sgd = dyn_cast<SgdUpdateOp>(update))
        sgd.getScaleStatusMutable().assign(status);
      else
        cast<AdamWUpdateOp>(update).getScaleStatusMutable().assign(status);
    }

    auto ret = cast<func::ReturnOp>(body.getTerminator());
    b.setInsertionPoint(ret);
    auto next = UpdateLossScaleOp::create(
        b, step.getLoc(), ValueRange{scale, good, status},
        {b.getNamedAttr("growth_interval", b.getI64IntegerAttr(growthInterval))});
    unsigned firstResult = ret.getNumOperands();
    ret->insertOperands(firstResult, {next.getNewScale(), next.getNewGoodSteps()});
    SmallVector<DictionaryAttr> resultAttrs;
    step.getAllResultAttrs(resultAttrs);
    step.setType(FunctionType::get(&getContext(), step.getArgumentTypes(),
                                   ret.getOperandTypes()));
    resultAttrs.resize(ret.getNumOperands(), builder.getDictionaryAttr({}));
    step.setAllResultAttrs(resultAttrs);
    Value state[] = {scale, good};
    for (auto [r, arg] : llvm::enumerate(state))
      step.setResultAttr(firstResult + r, TrainDialect::kUpdateOfAttr,
                         b.getI64IntegerAttr(cast<BlockArgument>(arg).getArgNumber()));
    numUpdates += updates.size();
  }
};

} // namespace
