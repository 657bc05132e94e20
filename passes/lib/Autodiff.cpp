//===- Autodiff.cpp - derive the training step from @forward -------------===//
//
// Reverse-mode differentiation over the train dialect. The pass knows no op
// by name: each op emits its own backward ops through
// DifferentiableOpInterface, and this file only orders the walk, sums
// gradients of values used more than once, and appends the optimizer.
//
//===----------------------------------------------------------------------===//

#include "dlc/Transforms/Passes.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>
#include <optional>

#define DEBUG_TYPE "dlc-autodiff"

namespace mlir::dlc {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::train;

namespace {

/// The optimizer recipe: the model's train.optimizer with command-line
/// overrides applied.
struct OptimizerConfig {
  std::string kind;
  DictionaryAttr hyper; // the model's values, possibly empty
  std::optional<double> lrOverride; // 0 is a rate, not "not given"

  float get(StringRef key, float fallback) const {
    if (key == "lr" && lrOverride)
      return static_cast<float>(*lrOverride);
    if (auto value = hyper ? hyper.getAs<FloatAttr>(key) : FloatAttr())
      return static_cast<float>(value.getValueAsDouble());
    return fallback;
  }
  bool nesterov() const {
    auto value = hyper ? hyper.getAs<BoolAttr>("nesterov") : BoolAttr();
    return value && value.getValue();
  }
};

/// Default learning rates when neither the model nor the flags give one:
/// torch.optim's AdamW default, and the ResNet recipe's SGD rate.
constexpr float kDefaultSgdLr = 0.1f;
constexpr float kDefaultAdamWLr = 1e-3f;

struct AutodiffPass final : mlir::dlc::impl::AutodiffPassBase<AutodiffPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult differentiate(func::FuncOp step, OpBuilder &b,
                              DenseMap<Value, Value> &grads);
  FailureOr<OptimizerConfig> optimizerFor(func::FuncOp forward);
};

/// Returns the name of argument `index`, or "#index" if it has none.
std::string argName(func::FuncOp func, unsigned index) {
  if (auto name = func.getArgAttrOfType<StringAttr>(index, TrainDialect::kNameAttr))
    return name.str();
  return "#" + std::to_string(index);
}

LogicalResult checkStatic(func::FuncOp forward) {
  for (auto [i, type] : llvm::enumerate(forward.getArgumentTypes()))
    if (auto shaped = dyn_cast<ShapedType>(type); shaped && !shaped.hasStaticShape())
      return forward.emitOpError()
             << "argument #" << i << " has dynamic shape " << type
             << "; dlc-autodiff needs static shapes (run "
                "dlc-specialize-batch first)";
  WalkResult walk = forward.walk([](Operation *op) {
    for (Type type : op->getResultTypes())
      if (auto shaped = dyn_cast<ShapedType>(type); shaped && !shaped.hasStaticShape()) {
        op->emitOpError() << "has dynamic result type " << type
                          << "; dlc-autodiff needs static shapes";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

FailureOr<OptimizerConfig> AutodiffPass::optimizerFor(func::FuncOp forward) {
  OptimizerConfig config;
  config.hyper = forward->getAttrOfType<DictionaryAttr>(TrainDialect::kOptimizerAttr);
  // The option's default, NaN, is no rate: the model's applies.
  if (!std::isnan(learningRate)) {
    if (!(learningRate >= 0) || std::isinf(learningRate))
      return forward.emitOpError()
             << "expects a finite learning rate >= 0, got " << learningRate;
    config.lrOverride = learningRate;
  }
  if (!optimizer.empty())
    config.kind = optimizer;
  else if (auto kind = config.hyper ? config.hyper.getAs<StringAttr>("kind") : StringAttr())
    config.kind = kind.str();
  if (config.kind.empty())
    return forward.emitOpError()
           << "names no optimizer (train.optimizer) and none was given "
              "(optimizer=sgd|adamw)";
  if (config.kind != "sgd" && config.kind != "adamw")
    return forward.emitOpError() << "unknown optimizer '" << config.kind
                                 << "' (expected sgd or adamw)";
  // Hyperparameters of another kind than the one chosen do not apply.
  auto modelKind = config.hyper ? config.hyper.getAs<StringAttr>("kind") : StringAttr();
  if (modelKind && modelKind.getValue() != config.kind)
    config.hyper = DictionaryAttr();
  return config;
}

LogicalResult AutodiffPass::differentiate(func::FuncOp step, OpBuilder &b,
                                          DenseMap<Value, Value> &grads) {
  Block &body = step.front();
  SmallVector<Operation *> forwardOps;
  for (Operation &op : body.without_terminator())
    forwardOps.push_back(&op);

  // A value computed from constants alone (a stochastic-depth mask's ones)
  // reaches no parameter: it gets no gradient, so nothing is emitted for it.
  DenseSet<Value> varying(body.getArguments().begin(), body.getArguments().end());
  for (Operation *op : forwardOps)
    if (llvm::any_of(op->getOperands(), [&](Value v) { return varying.count(v); }))
      varying.insert(op->getResults().begin(), op->getResults().end());

  for (Operation *op : llvm::reverse(forwardOps)) {
    SmallVector<Value> resultGrads;
    bool anyGrad = false;
    for (Value result : op->getResults()) {
      resultGrads.push_back(grads.lookup(result));
      anyGrad |= static_cast<bool>(resultGrads.back());
    }
    if (!anyGrad)
      continue;
    auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
    if (!differentiable)
      return op->emitOpError()
             << "has no gradient rule, but the loss depends on it";
    SmallVector<Value> operandGrads;
    if (failed(differentiable.emitGradients(b, resultGrads, operandGrads)))
      return failure();
    if (operandGrads.size() != op->getNumOperands())
      return op->emitOpError() << "gradient rule returned "
                               << operandGrads.size() << " gradients for "
                               << op->getNumOperands() << " operands";
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!grad || !varying.count(operand))
        continue;
      Value &slot = grads[operand];
      if (slot) {
        slot = AddOp::create(b, op->getLoc(), slot, grad);
        ++numAccumulations;
      } else {
        slot = grad;
      }
    }
  }
  numBackwardOps += std::distance(body.begin(), body.end()) -
                    static_cast<long>(forwardOps.size()) - 1;
  return success();
}

void AutodiffPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward || forward.isExternal()) {
    module.emitError() << "dlc-autodiff expects a func.func @forward with a body";
    return signalPassFailure();
  }
  if (module.lookupSymbol("train_step")) {
    module.emitError() << "dlc-autodiff: the module already has @train_step";
    return signalPassFailure();
  }
  if (forward.getNumResults() != 1 ||
      forward.getResultTypes()[0] !=
          RankedTensorType::get({}, Float32Type::get(&getContext()))) {
    forward.emitOpError() << "expects one result, the loss, of type tensor<f32>";
    return signalPassFailure();
  }
  if (failed(checkStatic(forward)))
    return signalPassFailure();
  FailureOr<OptimizerConfig> config = optimizerFor(forward);
  if (failed(config))
    return signalPassFailure();

  func::FuncOp step = forward.clone();
  step.setName("train_step");
  step->removeAttr(TrainDialect::kOptimizerAttr);
  module.getBody()->getOperations().insert(std::next(forward->getIterator()),
                                           step);

  Block &body = step.front();
  Operation *ret = body.getTerminator();
  Value loss = ret->getOperand(0);
  Location loc = step.getLoc();
  OpBuilder b(ret);

  // Backward pass, seeded with dloss/dloss = 1.
  DenseMap<Value, Value> grads;
  auto scalar = RankedTensorType::get({}, b.getF32Type());
  auto seed = ConstantOp::create(
      b, loc, DenseElementsAttr::get(scalar, b.getF32FloatAttr(1.0f).getValue()));
  seed->setAttr(TrainDialect::kSeedGradientAttr, b.getUnitAttr());
  grads[loss] = seed;
  if (failed(differentiate(step, b, grads)))
    return signalPassFailure();

  // Optimizer: one update per parameter; its state becomes new arguments.
  SmallVector<Value> results = {loss};
  SmallVector<int64_t> updateOf = {-1};
  auto addStateArg = [&](Type type, StringRef name) {
    unsigned index = step.getNumArguments();
    NamedAttrList attrs;
    attrs.set(TrainDialect::kNameAttr, b.getStringAttr(name));
    attrs.set(TrainDialect::kOptimizerStateAttr,
              b.getDictionaryAttr({b.getNamedAttr("init", b.getStringAttr("zeros"))}));
    (void)step.insertArgument(index, type, attrs.getDictionary(&getContext()), loc);
    return step.getArgument(index);
  };
  unsigned numOriginalArgs = forward.getNumArguments();
  for (unsigned i = 0; i < numOriginalArgs; ++i) {
    if (!step.getArgAttr(i, TrainDialect::kParamAttr))
      continue;
    Value param = step.getArgument(i);
    Value grad = grads.lookup(param);
    if (!grad) {
      step.emitWarning() << "parameter '" << argName(step, i)
                         << "' does not affect the loss; it is not updated";
      continue;
    }
    std::string name = argName(step, i);
    // Optimizer state is float32 whatever the parameter's precision.
    Type stateType = cast<RankedTensorType>(param.getType()).clone(b.getF32Type());
    if (config->kind == "sgd") {
      Value buffer = addStateArg(stateType, name + ".momentum_buffer");
      auto update = SgdUpdateOp::create(
          b, loc, ValueRange{param, grad, buffer},
          {b.getNamedAttr("lr", b.getF32FloatAttr(config->get("lr", kDefaultSgdLr))),
           b.getNamedAttr("momentum", b.getF32FloatAttr(config->get("momentum", 0.0f))),
           b.getNamedAttr("weight_decay",
                          b.getF32FloatAttr(config->get("weight_decay", 0.0f))),
           b.getNamedAttr("nesterov", b.getBoolAttr(config->nesterov()))});
      results.append({update.getNewParam(), update.getNewMomentumBuffer()});
      updateOf.append({int64_t(i), int64_t(cast<BlockArgument>(buffer).getArgNumber())});
    } else {
      Value m = addStateArg(stateType, name + ".exp_avg");
      Value v = addStateArg(stateType, name + ".exp_avg_sq");
      auto update = AdamWUpdateOp::create(
          b, loc, ValueRange{param, grad, m, v},
          {b.getNamedAttr("lr", b.getF32FloatAttr(config->get("lr", kDefaultAdamWLr))),
           b.getNamedAttr("beta1", b.getF32FloatAttr(config->get("beta1", 0.9f))),
           b.getNamedAttr("beta2", b.getF32FloatAttr(config->get("beta2", 0.999f))),
           b.getNamedAttr("epsilon", b.getF32FloatAttr(config->get("epsilon", 1e-8f))),
           b.getNamedAttr("weight_decay",
                          b.getF32FloatAttr(config->get("weight_decay", 0.01f)))});
      results.append({update.getNewParam(), update.getNewExpAvg(),
                      update.getNewExpAvgSq()});
      updateOf.append({int64_t(i), int64_t(cast<BlockArgument>(m).getArgNumber()),
                       int64_t(cast<BlockArgument>(v).getArgNumber())});
    }
    ++numParams;
  }

  // Batch-norm running statistics: the op that reads a buffer returns its
  // next value.
  for (unsigned i = 0; i < numOriginalArgs; ++i) {
    if (!step.getArgAttr(i, TrainDialect::kBufferAttr))
      continue;
    for (OpOperand &use : step.getArgument(i).getUses()) {
      auto bn = dyn_cast<BatchNormOp>(use.getOwner());
      if (!bn)
        continue;
      if (use.get() == bn.getRunningMean())
        results.push_back(bn.getNewRunningMean());
      else if (use.get() == bn.getRunningVar())
        results.push_back(bn.getNewRunningVar());
      else
        continue;
      updateOf.push_back(i);
      break;
    }
  }

  func::ReturnOp::create(b, ret->getLoc(), results);
  ret->erase();

  // Rules emit the gradient of every operand; those of inputs and labels
  // reach no parameter. Drop what nothing uses, in reverse so that chains go.
  SmallVector<Operation *> emitted;
  for (Operation &op : body.without_terminator())
    emitted.push_back(&op);
  for (Operation *op : llvm::reverse(emitted))
    if (op->use_empty() && isMemoryEffectFree(op) && !isa<func::ReturnOp>(op)) {
      op->erase();
      --numBackwardOps;
    }
  step.setType(FunctionType::get(&getContext(), step.getArgumentTypes(),
                                 ValueRange(results).getTypes()));
  for (auto [r, index] : llvm::enumerate(updateOf))
    if (index >= 0)
      step.setResultAttr(r, TrainDialect::kUpdateOfAttr,
                         b.getI64IntegerAttr(index));
}

} // namespace
