//===- TrainGradients.cpp - gradient rules of the train ops ---------------===//
//
// Each differentiable op's DifferentiableOpInterface::emitGradients. Rules
// emit train ops only (forward ops where the math allows it, backward ops
// otherwise), so every later pass sees the backward pass as ordinary IR.
// Autodiff runs after batch specialization: shapes here are static.
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/Train/IR/TrainOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::dlc::train;

namespace {

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

NamedAttribute named(OpBuilder &b, StringRef name, Attribute value) {
  return b.getNamedAttr(name, value);
}

NamedAttribute namedShape(OpBuilder &b, StringRef name, ArrayRef<int64_t> shape) {
  return b.getNamedAttr(name, b.getDenseI64ArrayAttr(shape));
}

/// Sums a gradient of the broadcast shape down to `like`'s shape.
Value sumTo(OpBuilder &b, Location loc, Value grad, Value like) {
  if (shapeOf(grad) == shapeOf(like))
    return grad;
  return SumToShapeOp::create(b, loc, ValueRange{grad},
                              {namedShape(b, "shape", shapeOf(like))});
}

Value scaleBy(OpBuilder &b, Location loc, Value value, float factor) {
  return ScaleOp::create(b, loc, ValueRange{value},
                         {named(b, "scale", b.getF32FloatAttr(factor))});
}

/// The gradient of a reduction: dy reshaped to keep the reduced dimensions
/// as 1, then broadcast back to the input's shape.
Value broadcastBack(OpBuilder &b, Location loc, Value grad, Value input,
                    ArrayRef<int64_t> axes) {
  ArrayRef<int64_t> inShape = shapeOf(input);
  SmallVector<int64_t> kept(inShape);
  for (int64_t axis : axes)
    kept[*normalizeAxis(axis, inShape.size())] = 1;
  Value reshaped = ReshapeOp::create(b, loc, ValueRange{grad},
                                     {namedShape(b, "shape", kept)});
  return BroadcastToOp::create(b, loc, ValueRange{reshaped},
                               {namedShape(b, "shape", inShape)});
}

/// Copies the attributes `names` of `op` (the forward op) for its backward op.
SmallVector<NamedAttribute> copyAttrs(Operation *op, ArrayRef<StringRef> names) {
  SmallVector<NamedAttribute> attrs;
  for (StringRef name : names)
    if (Attribute value = op->getAttr(name))
      attrs.push_back(NamedAttribute(StringAttr::get(op->getContext(), name), value));
  return attrs;
}

} // namespace

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

LogicalResult ReluOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                    SmallVectorImpl<Value> &dx) {
  // From the output (x > 0 exactly where relu(x) > 0): the input then has
  // no reader in the backward pass, so whatever produced it (batch norm, a
  // residual add) can fuse with the relu, as cuDNN's and PaddlePaddle's
  // fused batch-norm + activation do.
  dx.push_back(ReluBackwardOp::create(b, getLoc(), dy[0], getOutput()));
  return success();
}

LogicalResult TanhOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                    SmallVectorImpl<Value> &dx) {
  dx.push_back(TanhBackwardOp::create(b, getLoc(), dy[0], getOutput()));
  return success();
}

LogicalResult SigmoidOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                       SmallVectorImpl<Value> &dx) {
  dx.push_back(SigmoidBackwardOp::create(b, getLoc(), dy[0], getOutput()));
  return success();
}

LogicalResult SiluOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                    SmallVectorImpl<Value> &dx) {
  dx.push_back(SiluBackwardOp::create(b, getLoc(), dy[0], getInput()));
  return success();
}

LogicalResult Relu6Op::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                     SmallVectorImpl<Value> &dx) {
  dx.push_back(Relu6BackwardOp::create(b, getLoc(), dy[0], getInput()));
  return success();
}

LogicalResult HardswishOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                         SmallVectorImpl<Value> &dx) {
  dx.push_back(HardswishBackwardOp::create(b, getLoc(), dy[0], getInput()));
  return success();
}

LogicalResult HardsigmoidOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                           SmallVectorImpl<Value> &dx) {
  dx.push_back(HardsigmoidBackwardOp::create(b, getLoc(), dy[0], getInput()));
  return success();
}

LogicalResult GeluOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                    SmallVectorImpl<Value> &dx) {
  dx.push_back(GeluBackwardOp::create(b, getLoc(), ValueRange{dy[0], getInput()},
                                      copyAttrs(*this, {"approximate"})));
  return success();
}

LogicalResult ScaleOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                     SmallVectorImpl<Value> &dx) {
  dx.push_back(scaleBy(b, getLoc(), dy[0], getScale().convertToFloat()));
  return success();
}

LogicalResult DropoutOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                       SmallVectorImpl<Value> &dx) {
  // The mask is a function of (seed, step, index): dropout of dy with the
  // same seed applies exactly the forward mask and scale.
  dx.push_back(DropoutOp::create(b, getLoc(), ValueRange{dy[0]},
                                 copyAttrs(*this, {"rate", "seed"})));
  return success();
}

LogicalResult AddOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                   SmallVectorImpl<Value> &dx) {
  dx.push_back(sumTo(b, getLoc(), dy[0], getLhs()));
  dx.push_back(sumTo(b, getLoc(), dy[0], getRhs()));
  return success();
}

LogicalResult SubOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                   SmallVectorImpl<Value> &dx) {
  dx.push_back(sumTo(b, getLoc(), dy[0], getLhs()));
  dx.push_back(sumTo(b, getLoc(), scaleBy(b, getLoc(), dy[0], -1.0f), getRhs()));
  return success();
}

LogicalResult MulOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                   SmallVectorImpl<Value> &dx) {
  Location loc = getLoc();
  dx.push_back(sumTo(b, loc, MulOp::create(b, loc, dy[0], getRhs()), getLhs()));
  dx.push_back(sumTo(b, loc, MulOp::create(b, loc, dy[0], getLhs()), getRhs()));
  return success();
}

LogicalResult DivOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                   SmallVectorImpl<Value> &dx) {
  // d(l/r)/dl = 1/r; d(l/r)/dr = -l/r^2 = -y/r.
  Location loc = getLoc();
  Value dyOverR = DivOp::create(b, loc, dy[0], getRhs());
  dx.push_back(sumTo(b, loc, dyOverR, getLhs()));
  Value dr = MulOp::create(b, loc, dyOverR, getOutput());
  dx.push_back(sumTo(b, loc, scaleBy(b, loc, dr, -1.0f), getRhs()));
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution, normalization, pooling, resizing
//===----------------------------------------------------------------------===//

LogicalResult Conv2dOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                      SmallVectorImpl<Value> &dx) {
  Location loc = getLoc();
  SmallVector<NamedAttribute> attrs =
      copyAttrs(*this, {"stride", "padding", "dilation", "groups", "layout"});
  SmallVector<NamedAttribute> dataAttrs(attrs), filterAttrs(attrs);
  dataAttrs.push_back(namedShape(b, "input_shape", shapeOf(getInput())));
  filterAttrs.push_back(namedShape(b, "filter_shape", shapeOf(getFilter())));
  dx.push_back(Conv2dBackwardDataOp::create(
      b, loc, ValueRange{dy[0], getFilter()}, dataAttrs));
  dx.push_back(Conv2dBackwardFilterOp::create(
      b, loc, ValueRange{dy[0], getInput()}, filterAttrs));
  if (getBias())
    dx.push_back(ReduceSumOp::create(
        b, loc, ValueRange{dy[0]},
        {named(b, "axes", getLayout() == kLayoutNHWC
                               ? b.getDenseI64ArrayAttr({0, 1, 2})
                               : b.getDenseI64ArrayAttr({0, 2, 3}))}));
  return success();
}

LogicalResult BatchNormOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                         SmallVectorImpl<Value> &dx) {
  if (dy[1] || dy[2])
    return emitOpError() << "cannot differentiate through the running "
                            "statistics it returns";
  auto backward = BatchNormBackwardOp::create(
      b, getLoc(), ValueRange{dy[0], getInput(), getScale()},
      copyAttrs(*this, {"epsilon", "layout"}));
  dx.append({backward.getInputGrad(), backward.getScaleGrad(),
             backward.getBiasGrad(), Value(), Value()});
  return success();
}

LogicalResult LayerNormOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                         SmallVectorImpl<Value> &dx) {
  auto backward = LayerNormBackwardOp::create(
      b, getLoc(), ValueRange{dy[0], getInput(), getScale()},
      copyAttrs(*this, {"epsilon"}));
  dx.append({backward.getInputGrad(), backward.getScaleGrad(),
             backward.getBiasGrad()});
  return success();
}

LogicalResult MaxPool2dOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                         SmallVectorImpl<Value> &dx) {
  dx.push_back(MaxPool2dBackwardOp::create(
      b, getLoc(), ValueRange{dy[0], getInput()},
      copyAttrs(*this, {"kernel_size", "stride", "padding", "ceil_mode", "layout"})));
  return success();
}

LogicalResult AvgPool2dOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                         SmallVectorImpl<Value> &dx) {
  SmallVector<NamedAttribute> attrs = copyAttrs(
      *this,
      {"kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "layout"});
  attrs.push_back(namedShape(b, "input_shape", shapeOf(getInput())));
  dx.push_back(AvgPool2dBackwardOp::create(b, getLoc(), ValueRange{dy[0]}, attrs));
  return success();
}

LogicalResult GlobalAvgPoolOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                             SmallVectorImpl<Value> &dx) {
  ArrayRef<int64_t> in = shapeOf(getInput());
  Value spread = BroadcastToOp::create(b, getLoc(), ValueRange{dy[0]},
                                       {namedShape(b, "shape", in)});
  dx.push_back(scaleBy(b, getLoc(), spread, 1.0f / float(in[2] * in[3])));
  return success();
}

LogicalResult ResizeBilinearOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                              SmallVectorImpl<Value> &dx) {
  SmallVector<NamedAttribute> attrs = copyAttrs(*this, {"align_corners", "layout"});
  attrs.push_back(namedShape(b, "input_shape", shapeOf(getInput())));
  dx.push_back(
      ResizeBilinearBackwardOp::create(b, getLoc(), ValueRange{dy[0]}, attrs));
  return success();
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                      SmallVectorImpl<Value> &dx) {
  // With op(X) = X or X^T: C = op(A) op(B), dop(A) = dC op(B)^T and
  // dop(B) = op(A)^T dC; a transposed operand takes the transpose of its
  // dop, which is again one matmul with the flags rearranged.
  Location loc = getLoc();
  bool ta = getTransposeLhs(), tb = getTransposeRhs();
  auto matmul = [&](Value lhs, Value rhs, bool tl, bool tr) -> Value {
    return MatmulOp::create(b, loc, ValueRange{lhs, rhs},
                            {named(b, "transpose_lhs", b.getBoolAttr(tl)),
                             named(b, "transpose_rhs", b.getBoolAttr(tr))});
  };
  Value a = getLhs(), bb = getRhs(), g = dy[0];
  Value da = ta ? matmul(bb, g, tb, true) : matmul(g, bb, false, !tb);
  Value db = tb ? matmul(g, a, true, ta) : matmul(a, g, !ta, false);
  dx.push_back(sumTo(b, loc, da, a));
  dx.push_back(sumTo(b, loc, db, bb));
  return success();
}

LogicalResult LinearOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                      SmallVectorImpl<Value> &dx) {
  Location loc = getLoc();
  ArrayRef<int64_t> in = shapeOf(getInput());
  if (in.size() < 2)
    return emitOpError() << "gradient of a rank-1 input is not supported yet";
  int64_t out = shapeOf(getWeight())[0], features = in.back();
  // dx = dy W: [..., out] x [out, in].
  dx.push_back(MatmulOp::create(b, loc, ValueRange{dy[0], getWeight()}));
  // dW = dy^T x over every leading dimension, as one [out, M] x [M, in].
  Value dy2 = ReshapeOp::create(b, loc, ValueRange{dy[0]},
                                {namedShape(b, "shape", {-1, out})});
  Value x2 = ReshapeOp::create(b, loc, ValueRange{getInput()},
                               {namedShape(b, "shape", {-1, features})});
  dx.push_back(MatmulOp::create(
      b, loc, ValueRange{dy2, x2},
      {named(b, "transpose_lhs", b.getBoolAttr(true))}));
  if (getBias())
    dx.push_back(SumToShapeOp::create(b, loc, ValueRange{dy[0]},
                                      {namedShape(b, "shape", {out})}));
  return success();
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                       SmallVectorImpl<Value> &dx) {
  dx.push_back(ReshapeOp::create(b, getLoc(), ValueRange{dy[0]},
                                 {namedShape(b, "shape", shapeOf(getInput()))}));
  return success();
}

LogicalResult TransposeOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                         SmallVectorImpl<Value> &dx) {
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  dx.push_back(TransposeOp::create(b, getLoc(), ValueRange{dy[0]},
                                   {namedShape(b, "permutation", inverse)}));
  return success();
}

LogicalResult ConcatOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                      SmallVectorImpl<Value> &dx) {
  int64_t axis = *normalizeAxis(static_cast<int64_t>(getAxis()),
                                shapeOf(getOutput()).size());
  int64_t offset = 0;
  for (Value input : getInputs()) {
    int64_t size = shapeOf(input)[axis];
    dx.push_back(SliceOp::create(
        b, getLoc(), ValueRange{dy[0]},
        {named(b, "axis", b.getI64IntegerAttr(axis)),
         named(b, "start", b.getI64IntegerAttr(offset)),
         named(b, "end", b.getI64IntegerAttr(offset + size))}));
    offset += size;
  }
  return success();
}

LogicalResult BroadcastToOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                           SmallVectorImpl<Value> &dx) {
  dx.push_back(sumTo(b, getLoc(), dy[0], getInput()));
  return success();
}

LogicalResult ExpandOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                      SmallVectorImpl<Value> &dx) {
  dx.push_back(sumTo(b, getLoc(), dy[0], getInput()));
  dx.push_back(Value()); // batch_of: only its size is read
  return success();
}

LogicalResult SliceOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                     SmallVectorImpl<Value> &dx) {
  SmallVector<NamedAttribute> attrs =
      copyAttrs(*this, {"axis", "start", "end", "step"});
  attrs.push_back(namedShape(b, "input_shape", shapeOf(getInput())));
  dx.push_back(SliceBackwardOp::create(b, getLoc(), ValueRange{dy[0]}, attrs));
  return success();
}

LogicalResult CastOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                    SmallVectorImpl<Value> &dx) {
  Type from = cast<RankedTensorType>(getInput().getType()).getElementType();
  if (!isa<FloatType>(from)) {
    dx.push_back(Value());
    return success();
  }
  dx.push_back(CastOp::create(b, getLoc(), ValueRange{dy[0]},
                              {named(b, "to", TypeAttr::get(from))}));
  return success();
}

//===----------------------------------------------------------------------===//
// Attention, embeddings, losses, reductions
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                       SmallVectorImpl<Value> &dx) {
  dx.push_back(SoftmaxBackwardOp::create(b, getLoc(),
                                         ValueRange{dy[0], getOutput()},
                                         copyAttrs(*this, {"axis", "scale"})));
  // The additive mask is data (padding, causality), not a parameter.
  if (getMask())
    dx.push_back(Value());
  return success();
}

LogicalResult AttentionOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                         SmallVectorImpl<Value> &dx) {
  if (dy[1])
    return emitOpError() << "cannot differentiate through the softmax statistics (lse) it "
                            "returns";
  // The backward recomputes the probabilities from lse (and the dropout mask
  // from its seed) rather than reading a saved score tensor.
  SmallVector<Value> operands = {getQuery(), getKey(), getValue(), getOutput(), dy[0],
                                 getLse()};
  if (getMask())
    operands.push_back(getMask());
  auto backward = AttentionBackwardOp::create(
      b, getLoc(), operands, copyAttrs(*this, {"scale", "causal", "dropout_rate", "seed"}));
  dx.append({backward.getQueryGrad(), backward.getKeyGrad(), backward.getValueGrad()});
  // The additive mask is data (padding, causality), not a parameter.
  if (getMask())
    dx.push_back(Value());
  return success();
}

LogicalResult EmbeddingOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                         SmallVectorImpl<Value> &dx) {
  int64_t rows = shapeOf(getTable())[0];
  dx.push_back(EmbeddingBackwardOp::create(
      b, getLoc(), ValueRange{dy[0], getIndices()},
      {named(b, "num_rows", b.getI64IntegerAttr(rows))}));
  dx.push_back(Value());
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::emitGradients(OpBuilder &b,
                                                   ArrayRef<Value> dy,
                                                   SmallVectorImpl<Value> &dx) {
  dx.push_back(SoftmaxCrossEntropyBackwardOp::create(
      b, getLoc(), ValueRange{dy[0], getLogits(), getLabels()},
      copyAttrs(*this, {"class_axis", "ignore_index"})));
  dx.push_back(Value());
  return success();
}

LogicalResult ReduceSumOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                         SmallVectorImpl<Value> &dx) {
  dx.push_back(broadcastBack(b, getLoc(), dy[0], getInput(), getAxes()));
  return success();
}

LogicalResult ReduceMeanOp::emitGradients(OpBuilder &b, ArrayRef<Value> dy,
                                          SmallVectorImpl<Value> &dx) {
  ArrayRef<int64_t> in = shapeOf(getInput());
  int64_t count = 1;
  for (int64_t axis : getAxes())
    count *= in[*normalizeAxis(axis, in.size())];
  Value spread = broadcastBack(b, getLoc(), dy[0], getInput(), getAxes());
  dx.push_back(scaleBy(b, getLoc(), spread, 1.0f / float(count)));
  return success();
}

LogicalResult ReduceMaxOp::emitGradients(OpBuilder &, ArrayRef<Value>,
                                         SmallVectorImpl<Value> &) {
  return emitOpError() << "has no gradient rule yet (no seed model "
                          "differentiates through a max reduction)";
}
