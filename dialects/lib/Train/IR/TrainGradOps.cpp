//===- TrainGradOps.cpp - backward and optimizer ops ----------------------===//
//
// Type inference of the ops autodiff emits. Their shapes are fixed by the
// forward op they differentiate, so the checks here guard against a pass
// that pairs the wrong values, and against hand-written IR.
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/Train/IR/TrainOps.h"

using namespace mlir;
using namespace mlir::dlc::train;

namespace {

/// Result type `shape` x `element`, after checking the shape is static.
LogicalResult pushShape(const ShapeDiag &diag, StringRef attrName,
                        ArrayRef<int64_t> shape, Type element,
                        SmallVectorImpl<Type> &types) {
  for (int64_t d : shape)
    if (d < 0)
      return diag.error("expects '", attrName, "' to be a static shape, got ",
                        formatShape(shape));
  types.push_back(RankedTensorType::get(shape, element));
  return success();
}

/// The gradient operand, checked for rank.
FailureOr<RankedTensorType> gradOfRank(const ShapeDiag &diag, Value grad,
                                       int64_t rank) {
  auto type = diag.ranked(grad, "the gradient");
  if (failed(type))
    return failure();
  if (rank >= 0 && type->getRank() != rank) {
    (void)diag.error("expects a gradient of rank ", rank, ", got ", *type);
    return failure();
  }
  return type;
}

/// Checks that `value` has exactly `type` (a gradient paired with the value
/// it differentiates).
LogicalResult sameType(const ShapeDiag &diag, Value value, StringRef what,
                       Type type) {
  if (value.getType() != type)
    return diag.error("expects ", what, " of type ", type, ", got ",
                      value.getType());
  return success();
}

} // namespace

#define TRAIN_INFER(Op)                                                        \
  LogicalResult Op::inferReturnTypes(MLIRContext *context,                     \
                                     std::optional<Location> loc,              \
                                     Adaptor adaptor,                          \
                                     SmallVectorImpl<Type> &types) {           \
    if (failed(withDefaults<Op>(context, loc, adaptor)))                       \
      return failure();                                                        \
    ShapeDiag diag(loc, getOperationName());
#define TRAIN_INFER_END }

TRAIN_INFER(SumToShapeOp)
  auto input = gradOfRank(diag, adaptor.getInput(), -1);
  if (failed(input))
    return failure();
  auto shape = broadcastShapes(adaptor.getShape(), input->getShape());
  if (!shape || ArrayRef<int64_t>(*shape) != input->getShape())
    return diag.error("expects ", formatShape(adaptor.getShape()),
                      " to broadcast to the input's shape ",
                      formatShape(input->getShape()));
  return pushShape(diag, "shape", adaptor.getShape(), input->getElementType(),
                   types);
TRAIN_INFER_END

TRAIN_INFER(BroadcastToOp)
  auto input = gradOfRank(diag, adaptor.getInput(), -1);
  if (failed(input))
    return failure();
  auto shape = broadcastShapes(input->getShape(), adaptor.getShape());
  if (!shape || ArrayRef<int64_t>(*shape) != adaptor.getShape())
    return diag.error("expects the input's shape ",
                      formatShape(input->getShape()), " to broadcast to ",
                      formatShape(adaptor.getShape()));
  return pushShape(diag, "shape", adaptor.getShape(), input->getElementType(),
                   types);
TRAIN_INFER_END

TRAIN_INFER(Conv2dBackwardDataOp)
  auto grad = gradOfRank(diag, adaptor.getGrad(), 4);
  if (failed(grad))
    return failure();
  FailureOr<bool> nhwc = diag.layout(adaptor.getLayout());
  if (failed(nhwc))
    return failure();
  if (adaptor.getInputShape().size() != 4)
    return diag.error("expects an ", *nhwc ? "NHWC" : "NCHW", " 'input_shape'");
  return pushShape(diag, "input_shape", adaptor.getInputShape(),
                   grad->getElementType(), types);
TRAIN_INFER_END

TRAIN_INFER(Conv2dBackwardFilterOp)
  auto grad = gradOfRank(diag, adaptor.getGrad(), 4);
  if (failed(grad))
    return failure();
  FailureOr<bool> nhwc = diag.layout(adaptor.getLayout());
  if (failed(nhwc))
    return failure();
  if (adaptor.getFilterShape().size() != 4)
    return diag.error("expects an ", *nhwc ? "OHWI" : "OIHW", " 'filter_shape'");
  return pushShape(diag, "filter_shape", adaptor.getFilterShape(),
                   grad->getElementType(), types);
TRAIN_INFER_END

/// Normalization backward: (dx like the input, dscale and dbias like scale).
template <typename Adaptor>
static LogicalResult inferNormBackward(const ShapeDiag &diag, Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  auto grad = gradOfRank(diag, adaptor.getGrad(), -1);
  if (failed(grad) ||
      failed(sameType(diag, adaptor.getInput(), "the input", *grad)))
    return failure();
  types.push_back(*grad);
  types.push_back(adaptor.getScale().getType());
  types.push_back(adaptor.getScale().getType());
  return success();
}

TRAIN_INFER(BatchNormBackwardOp)
  FailureOr<bool> nhwc = diag.layout(adaptor.getLayout());
  if (failed(nhwc))
    return failure();
  if (*nhwc && cast<RankedTensorType>(adaptor.getInput().getType()).getRank() != 4)
    return diag.error("expects an NHWC input, got ", adaptor.getInput().getType());
  return inferNormBackward(diag, adaptor, types);
TRAIN_INFER_END

TRAIN_INFER(LayerNormBackwardOp)
  return inferNormBackward(diag, adaptor, types);
TRAIN_INFER_END

TRAIN_INFER(MaxPool2dBackwardOp)
  auto grad = gradOfRank(diag, adaptor.getGrad(), 4);
  if (failed(grad) || failed(diag.layout(adaptor.getLayout())))
    return failure();
  types.push_back(adaptor.getInput().getType());
  return success();
TRAIN_INFER_END

TRAIN_INFER(AvgPool2dBackwardOp)
  auto grad = gradOfRank(diag, adaptor.getGrad(), 4);
  if (failed(grad) || failed(diag.layout(adaptor.getLayout())))
    return failure();
  return pushShape(diag, "input_shape", adaptor.getInputShape(),
                   grad->getElementType(), types);
TRAIN_INFER_END

TRAIN_INFER(ResizeBilinearBackwardOp)
  auto grad = gradOfRank(diag, adaptor.getGrad(), 4);
  if (failed(grad) || failed(diag.layout(adaptor.getLayout())))
    return failure();
  return pushShape(diag, "input_shape", adaptor.getInputShape(),
                   grad->getElementType(), types);
TRAIN_INFER_END

TRAIN_INFER(SliceBackwardOp)
  auto grad = gradOfRank(diag, adaptor.getGrad(), -1);
  if (failed(grad))
    return failure();
  if (static_cast<int64_t>(adaptor.getInputShape().size()) != grad->getRank())
    return diag.error("expects 'input_shape' of the gradient's rank");
  return pushShape(diag, "input_shape", adaptor.getInputShape(),
                   grad->getElementType(), types);
TRAIN_INFER_END

TRAIN_INFER(SoftmaxBackwardOp)
  auto grad = gradOfRank(diag, adaptor.getGrad(), -1);
  if (failed(grad) ||
      failed(sameType(diag, adaptor.getOutput(), "the forward output", *grad)))
    return failure();
  types.push_back(*grad);
  return success();
TRAIN_INFER_END

TRAIN_INFER(EmbeddingBackwardOp)
  auto grad = gradOfRank(diag, adaptor.getGrad(), -1);
  if (failed(grad))
    return failure();
  if (grad->getRank() < 1)
    return diag.error("expects a gradient of rank >= 1, got ", *grad);
  int64_t rows = static_cast<int64_t>(adaptor.getNumRows());
  if (rows < 1)
    return diag.error("expects 'num_rows' >= 1");
  types.push_back(RankedTensorType::get({rows, grad->getShape().back()},
                                        grad->getElementType()));
  return success();
TRAIN_INFER_END

TRAIN_INFER(SoftmaxCrossEntropyBackwardOp)
  types.push_back(adaptor.getLogits().getType());
  return success();
TRAIN_INFER_END

namespace {
/// The optional loss-scale status of an update: [1 / scale, overflow].
LogicalResult checkStatus(const ShapeDiag &diag, Value status) {
  if (!status)
    return success();
  // The custom syntax parses any type here, before the verifier checks it.
  auto type = dyn_cast<RankedTensorType>(status.getType());
  if (!type || type.getRank() != 1 || type.getDimSize(0) != 2)
    return diag.error("expects a loss-scale status of 2 elements, got ",
                      status.getType());
  return success();
}

/// Optimizer state has the parameter's type, or its shape in float32 (the
/// state of a half-precision parameter is kept in float32, or Adam's second
/// moment underflows).
LogicalResult stateType(const ShapeDiag &diag, Value state, StringRef what,
                        Type param) {
  auto paramType = cast<RankedTensorType>(param);
  auto type = cast<RankedTensorType>(state.getType());
  if (type == paramType ||
      (type.getShape() == paramType.getShape() && type.getElementType().isF32()))
    return success();
  if (paramType.getElementType().isF32())
    return diag.error("expects ", what, " of type ", param, ", got ",
                      state.getType());
  return diag.error("expects ", what, " of type ", param, " or ",
                    paramType.clone(Float32Type::get(param.getContext())),
                    ", got ", state.getType());
}
} // namespace

TRAIN_INFER(SgdUpdateOp)
  Type param = adaptor.getParam().getType();
  if (failed(checkStatus(diag, adaptor.getScaleStatus())))
    return failure();
  if (failed(sameType(diag, adaptor.getGrad(), "the gradient", param)) ||
      failed(stateType(diag, adaptor.getMomentumBuffer(), "the momentum buffer",
                       param)))
    return failure();
  types.append({param, adaptor.getMomentumBuffer().getType()});
  return success();
TRAIN_INFER_END

TRAIN_INFER(AdamWUpdateOp)
  Type param = adaptor.getParam().getType();
  if (failed(checkStatus(diag, adaptor.getScaleStatus())))
    return failure();
  if (failed(sameType(diag, adaptor.getGrad(), "the gradient", param)) ||
      failed(stateType(diag, adaptor.getExpAvg(), "exp_avg", param)) ||
      failed(stateType(diag, adaptor.getExpAvgSq(), "exp_avg_sq", param)))
    return failure();
  types.append({param, adaptor.getExpAvg().getType(), adaptor.getExpAvgSq().getType()});
  return success();
TRAIN_INFER_END

TRAIN_INFER(LossScaleStatusOp)
  if (adaptor.getGrads().empty())
    return diag.error("expects at least one gradient");
  types.push_back(RankedTensorType::get({2}, Float32Type::get(context)));
  return success();
TRAIN_INFER_END

TRAIN_INFER(AllReduceOp)
  if (adaptor.getGrads().empty())
    return diag.error("expects at least one gradient");
  int64_t ranks = adaptor.getRanksAttr().getInt();
  if (ranks < 2)
    return diag.error("expects 'ranks' >= 2, got ", ranks);
  if (adaptor.getBucketAttr().getInt() < 0)
    return diag.error("expects 'bucket' >= 0, got ", adaptor.getBucketAttr().getInt());
  for (Value grad : adaptor.getGrads())
    types.push_back(grad.getType());
  return success();
TRAIN_INFER_END

TRAIN_INFER(UpdateLossScaleOp)
  if (failed(checkStatus(diag, adaptor.getStatus())))
    return failure();
  if (adaptor.getGrowthInterval() < 1)
    return diag.error("expects a 'growth_interval' >= 1, got ",
                      adaptor.getGrowthInterval());
  if (!(adaptor.getGrowthFactor().convertToFloat() >= 1))
    return diag.error("expects a 'growth_factor' >= 1");
  float backoff = adaptor.getBackoffFactor().convertToFloat();
  if (!(backoff > 0 && backoff < 1))
    return diag.error("expects a 'backoff_factor' in (0, 1)");
  types.append({adaptor.getScale().getType(), adaptor.getGoodSteps().getType()});
  return success();
TRAIN_INFER_END
