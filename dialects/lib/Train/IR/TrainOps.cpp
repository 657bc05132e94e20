//===- TrainOps.cpp - train dialect ops -----------------------------------===//
//
// Type inference of the train ops. Inference is also the verifier: the
// InferTypeOpAdaptor trait checks at verification that the result types are
// the inferred ones, so every shape error below is reported for parsed
// models and for ops built through the C++ API alike.
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/Train/IR/TrainOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::dlc::train;

namespace {

/// Checks a [h, w] attribute of a 2-D op: two entries, each >= `minimum`.
LogicalResult checkPair(const ShapeDiag &diag, StringRef name,
                        ArrayRef<int64_t> pair, int64_t minimum) {
  if (pair.size() != 2)
    return diag.error("expects '", name, "' to have 2 entries [h, w], got ",
                      pair.size());
  if (pair[0] < minimum || pair[1] < minimum)
    return diag.error("expects '", name, "' entries >= ", minimum, ", got [",
                      pair[0], ", ", pair[1], "]");
  return success();
}

/// Checks that an operand is a ranked tensor of the given rank.
FailureOr<RankedTensorType> rankedOfRank(const ShapeDiag &diag, Value value,
                                         StringRef what, int64_t rank) {
  auto type = diag.ranked(value, what);
  if (failed(type))
    return failure();
  if (type->getRank() != rank) {
    (void)diag.error("expects ", what, " of rank ", rank, ", got ", *type);
    return failure();
  }
  return type;
}

/// Checks that a per-channel operand (scale, bias, statistics) has shape [c]
/// and, unless `elementType` is null, that element type.
LogicalResult checkVector(const ShapeDiag &diag, Value value, StringRef what,
                          int64_t size, Type elementType) {
  auto type = rankedOfRank(diag, value, what, 1);
  if (failed(type))
    return failure();
  if (!dimsCompatible(type->getDimSize(0), size))
    return diag.error("expects ", what, " of shape [", size, "], got ",
                      formatShape(type->getShape()));
  if (elementType && type->getElementType() != elementType)
    return diag.error("expects ", what, " of element type ", elementType,
                      ", got ", type->getElementType());
  return success();
}

/// Shape of a 2-D pooling op over an NCHW (or NHWC) input.
LogicalResult inferPool2d(const ShapeDiag &diag, Value input,
                          ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
                          ArrayRef<int64_t> padding, bool ceilMode, StringRef layout,
                          SmallVectorImpl<Type> &types) {
  FailureOr<bool> nhwc = diag.layout(layout);
  if (failed(nhwc))
    return failure();
  auto type = rankedOfRank(diag, input, *nhwc ? "an NHWC input" : "an NCHW input", 4);
  if (failed(type) || failed(checkPair(diag, "kernel_size", kernel, 1)) ||
      failed(checkPair(diag, "stride", stride, 1)) ||
      failed(checkPair(diag, "padding", padding, 0)))
    return failure();
  for (int i = 0; i < 2; ++i)
    if (padding[i] * 2 > kernel[i])
      return diag.error("expects padding at most half the kernel size, got "
                        "padding ",
                        padding[i], " for kernel ", kernel[i]);
  SmallVector<int64_t> in = shapeAsNCHW(type->getShape(), *nhwc);
  SmallVector<int64_t> shape(in);
  for (int i = 0; i < 2; ++i) {
    shape[2 + i] = slidingWindowSize(in[2 + i], kernel[i], stride[i], padding[i], 1, ceilMode);
    if (!ShapedType::isDynamic(shape[2 + i]) && shape[2 + i] < 1)
      return diag.error("expects the window to fit the input, got kernel ",
                        kernel[i], " over ", in[2 + i], " (padding ", padding[i], ")");
  }
  types.push_back(RankedTensorType::get(shapeFromNCHW(shape, *nhwc), type->getElementType()));
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *context,
    std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<ConstantOp>(context, loc, adaptor)))
    return failure();
  ShapeDiag diag(loc, getOperationName());
  auto value = adaptor.getValueAttr();
  if (!value)
    return diag.error("expects a 'value' attribute");
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return diag.error("expects a value of static tensor type, got ",
                      value.getType());
  types.push_back(type);
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

LogicalResult CastOp::inferReturnTypes(MLIRContext *context,
    std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<CastOp>(context, loc, adaptor)))
    return failure();
  ShapeDiag diag(loc, getOperationName());
  auto type = diag.ranked(adaptor.getInput(), "the input");
  if (failed(type))
    return failure();
  Type to = adaptor.getTo();
  if (!to || !(isa<Float32Type, Float16Type, BFloat16Type>(to) ||
               to.isSignlessInteger(32) || to.isSignlessInteger(64)))
    return diag.error("expects 'to' to be f32, f16, bf16, i32 or i64, got ",
                      to);
  types.push_back(type->clone(to));
  return success();
}

//===----------------------------------------------------------------------===//
// Conv2dOp
//===----------------------------------------------------------------------===//

LogicalResult Conv2dOp::inferReturnTypes(MLIRContext *context,
    std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<Conv2dOp>(context, loc, adaptor)))
    return failure();
  ShapeDiag diag(loc, getOperationName());
  FailureOr<bool> nhwc = diag.layout(adaptor.getLayout());
  if (failed(nhwc))
    return failure();
  auto input = rankedOfRank(diag, adaptor.getInput(),
                            *nhwc ? "an NHWC input" : "an NCHW input", 4);
  auto filter = rankedOfRank(diag, adaptor.getFilter(),
                             *nhwc ? "an OHWI filter" : "an OIHW filter", 4);
  if (failed(input) || failed(filter))
    return failure();
  ArrayRef<int64_t> stride = adaptor.getStride(), padding = adaptor.getPadding(),
                    dilation = adaptor.getDilation();
  if (failed(checkPair(diag, "stride", stride, 1)) ||
      failed(checkPair(diag, "padding", padding, 0)) ||
      failed(checkPair(diag, "dilation", dilation, 1)))
    return failure();
  int64_t groups = adaptor.getGroups();
  if (groups < 1)
    return diag.error("expects 'groups' >= 1, got ", groups);
  if (input->getElementType() != filter->getElementType())
    return diag.error("expects input and filter of one element type, got ",
                      input->getElementType(), " and ",
                      filter->getElementType());
  if (!filter->hasStaticShape())
    return diag.error("expects a filter of static shape, got ",
                      formatShape(filter->getShape()));
  // The rules below are NCHW / OIHW's; NHWC shapes are reordered to them.
  SmallVector<int64_t> x = shapeAsNCHW(input->getShape(), *nhwc);
  SmallVector<int64_t> w = shapeAsNCHW(filter->getShape(), *nhwc);
  int64_t inChannels = x[1];
  int64_t outChannels = w[0];
  if (ShapedType::isDynamic(inChannels))
    return diag.error("expects a static input channel count");
  if (inChannels % groups != 0 || outChannels % groups != 0)
    return diag.error("expects input channels (", inChannels,
                      ") and output channels (", outChannels,
                      ") divisible by groups (", groups, ")");
  if (w[1] != inChannels / groups)
    return diag.error("expects the filter's input-channel dimension (",
                      *nhwc ? 3 : 1, ") to be input channels / groups = ",
                      inChannels / groups, ", got ", w[1]);
  if (Value bias = adaptor.getBias())
    if (failed(checkVector(diag, bias, "bias", outChannels,
                           input->getElementType())))
      return failure();
  SmallVector<int64_t> shape = {x[0], outChannels, 0, 0};
  for (int i = 0; i < 2; ++i) {
    shape[2 + i] = slidingWindowSize(x[2 + i], w[2 + i], stride[i],
                                     padding[i], dilation[i], false);
    if (!ShapedType::isDynamic(shape[2 + i]) && shape[2 + i] < 1)
      return diag.error("expects the dilated filter to fit the padded input, "
                        "got filter ",
                        formatShape(filter->getShape()), " over input ",
                        formatShape(input->getShape()));
  }
  types.push_back(RankedTensorType::get(shapeFromNCHW(shape, *nhwc),
                                        input->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *context,
    std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<BatchNormOp>(context, loc, adaptor)))
    return failure();
  ShapeDiag diag(loc, getOperationName());
  auto input = diag.ranked(adaptor.getInput(), "the input");
  FailureOr<bool> nhwc = diag.layout(adaptor.getLayout());
  if (failed(input) || failed(nhwc))
    return failure();
  if (*nhwc && input->getRank() != 4)
    return diag.error("expects an NHWC input, got ", *input);
  if (input->getRank() != 2 && input->getRank() != 4)
    return diag.error("expects an NC or NCHW input, got ", *input);
  int64_t channels = input->getDimSize(*nhwc ? 3 : 1);
  // The statistics stay in the parameters' type, which AMP keeps in f32
  // while the activations are in half precision.
  auto scaleType = diag.ranked(adaptor.getScale(), "scale");
  if (failed(scaleType))
    return failure();
  Type statElement = scaleType->getElementType();
  if (failed(checkVector(diag, adaptor.getScale(), "scale", channels,
                         /*elementType=*/nullptr)) ||
      failed(checkVector(diag, adaptor.getBias(), "bias", channels,
                         statElement)) ||
      failed(checkVector(diag, adaptor.getRunningMean(), "running_mean",
                         channels, statElement)) ||
      failed(checkVector(diag, adaptor.getRunningVar(), "running_var",
                         channels, statElement)))
    return failure();
  float epsilon = adaptor.getEpsilon().convertToFloat();
  float momentum = adaptor.getMomentum().convertToFloat();
  if (!(epsilon > 0))
    return diag.error("expects a positive 'epsilon', got ", epsilon);
  if (!(momentum >= 0 && momentum <= 1))
    return diag.error("expects 'momentum' in [0, 1], got ", momentum);
  types.push_back(*input);
  types.push_back(adaptor.getRunningMean().getType());
  types.push_back(adaptor.getRunningVar().getType());
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *context,
    std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<LayerNormOp>(context, loc, adaptor)))
    return failure();
  ShapeDiag diag(loc, getOperationName());
  auto input = diag.ranked(adaptor.getInput(), "the input");
  if (failed(input))
    return failure();
  if (input->getRank() < 1)
    return diag.error("expects an input of rank >= 1");
  int64_t features = input->getShape().back();
  auto scaleType = diag.ranked(adaptor.getScale(), "scale");
  if (failed(scaleType))
    return failure();
  if (failed(checkVector(diag, adaptor.getScale(), "scale", features,
                         /*elementType=*/nullptr)) ||
      failed(checkVector(diag, adaptor.getBias(), "bias", features,
                         scaleType->getElementType())))
    return failure();
  if (!(adaptor.getEpsilon().convertToFloat() > 0))
    return diag.error("expects a positive 'epsilon'");
  types.push_back(*input);
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling and resizing
//===----------------------------------------------------------------------===//

LogicalResult MaxPool2dOp::inferReturnTypes(MLIRContext *context,
    std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<MaxPool2dOp>(context, loc, adaptor)))
    return failure();
  return inferPool2d(ShapeDiag(loc, getOperationName()), adaptor.getInput(),
                     adaptor.getKernelSize(), adaptor.getStride(),
                     adaptor.getPadding(), adaptor.getCeilMode(), adaptor.getLayout(), types);
}

LogicalResult AvgPool2dOp::inferReturnTypes(MLIRContext *context,
    std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<AvgPool2dOp>(context, loc, adaptor)))
    return failure();
  return inferPool2d(ShapeDiag(loc, getOperationName()), adaptor.getInput(),
                     adaptor.getKernelSize(), adaptor.getStride(),
                     adaptor.getPadding(), adaptor.getCeilMode(), adaptor.getLayout(), types);
}

LogicalResult GlobalAvgPoolOp::inferReturnTypes(MLIRContext *context,
    std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<GlobalAvgPoolOp>(context, loc, adaptor)))
    return failure();
  ShapeDiag diag(loc, getOperationName());
  auto input = rankedOfRank(diag, adaptor.getInput(), "an NCHW input", 4);
  if (failed(input))
    return failure();
  types.push_back(RankedTensorType::get(
      {input->getDimSize(0), input->getDimSize(1), 1, 1},
      input->getElementType()));
  return success();
}

LogicalResult ResizeBilinearOp::inferReturnTypes(MLIRContext *context,
    std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<ResizeBilinearOp>(context, loc, adaptor)))
    return failure();
  ShapeDiag diag(loc, getOperationName());
  FailureOr<bool> nhwc = diag.layout(adaptor.getLayout());
  if (failed(nhwc))
    return failure();
  auto input = rankedOfRank(diag, adaptor.getInput(),
                            *nhwc ? "an NHWC input" : "an NCHW input", 4);
  if (failed(input) || failed(checkPair(diag, "size", adaptor.getSize(), 1)))
    return failure();
  SmallVector<int64_t> x = shapeAsNCHW(input->getShape(), *nhwc);
  types.push_back(RankedTensorType::get(
      shapeFromNCHW({x[0], x[1], adaptor.getSize()[0], adaptor.getSize()[1]}, *nhwc),
      input->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *context,
    std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<MatmulOp>(context, loc, adaptor)))
    return failure();
  ShapeDiag diag(loc, getOperationName());
  auto lhs = diag.ranked(adaptor.getLhs(), "the left operand");
  auto rhs = diag.ranked(adaptor.getRhs(), "the right operand");
  if (failed(lhs) || failed(rhs))
    return failure();
  if (lhs->getRank() < 2 || rhs->getRank() < 2)
    return diag.error("expects operands of rank >= 2, got ", *lhs, " and ",
                      *rhs);
  if (lhs->getElementType() != rhs->getElementType())
    return diag.error("expects operands of one element type, got ",
                      lhs->getElementType(), " and ", rhs->getElementType());
  ArrayRef<int64_t> a = lhs->getShape(), b = rhs->getShape();
  int64_t m = a[a.size() - 2], k = a[a.size() - 1];
  if (adaptor.getTransposeLhs())
    std::swap(m, k);
  int64_t k2 = b[b.size() - 2], n = b[b.size() - 1];
  if (adaptor.getTransposeRhs())
    std::swap(k2, n);
  if (!dimsCompatible(k, k2))
    return diag.error("expects contracting dimensions to match, got ", k,
                      " and ", k2, " (shapes ", formatShape(a), " and ",
                      formatShape(b), ")");
  auto batch = broadcastShapes(a.drop_back(2), b.drop_back(2));
  if (!batch)
    return diag.error("expects broadcast-compatible batch dimensions, got ",
                      formatShape(a.drop_back(2)), " and ",
                      formatShape(b.drop_back(2)));
  SmallVector<int64_t> shape = *batch;
  shape.push_back(m);
  shape.push_back(n);
  types.push_back(RankedTensorType::get(shape, lhs->getElementType()));
  return success();
}

LogicalResult LinearOp::inferReturnTypes(MLIRContext *context,
    std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<LinearOp>(context, loc, adaptor)))
    return failure();
  ShapeDiag diag(loc, getOperationName());
  auto input = diag.ranked(adaptor.getInput(), "the input");
  auto weight = rankedOfRank(diag, adaptor.getWeight(), "an [out, in] weight", 2);
  if (failed(input) || failed(weight))
    return failure();
  if (input->getRank() < 1)
    return diag.error("expects an input of rank >= 1");
  if (input->getElementType() != weight->getElementType())
    return diag.error("expects input and weight of one element type, got ",
                      input->getElementType(), " and ",
                      weight->getElementType());
  int64_t in = input->getShape().back();
  if (!dimsCompatible(in, weight->getDimSize(1)))
    return diag.error("expects the input's last dimension (", in,
                      ") to match the weight's in-features (",
                      weight->getDimSize(1), ")");
  int64_t out = weight->getDimSize(0);
  if (Value bias = adaptor.getBias())
    if (failed(checkVector(diag, bias, "bias", out, input->getElementType())))
      return failure();
  SmallVector<int64_t> shape(input->getShape());
  shape.back() = out;
  types.push_back(RankedTensorType::get(shape, input->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::inferReturnTypes(MLIRContext *context,
    std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<ReshapeOp>(context, loc, adaptor)))
    return failure();
  ShapeDiag diag(loc, getOperationName());
  auto input = diag.ranked(adaptor.getInput(), "the input");
  if (failed(input))
    return failure();
  ArrayRef<int64_t> target = adaptor.getShape();
  int64_t inferred = -1, known = 1;
  for (auto [i, d] : llvm::enumerate(target)) {
    if (d == -1) {
      if (inferred != -1)
        return diag.error("expects at most one -1 in 'shape'");
      inferred = i;
    } else if (d < 1) {
      return diag.error("expects 'shape' entries >= 1 or -1, got ", d);
    } else if (llvm::MulOverflow(known, d, known)) {
      return diag.error("expects 'shape' to have fewer than 2^63 elements");
    }
  }
  SmallVector<int64_t> shape(target);
  if (!input->hasStaticShape()) {
    if (inferred == -1)
      return diag.error("expects a -1 in 'shape' to absorb the dynamic "
                        "dimension of ",
                        formatShape(input->getShape()));
    // The -1 dimension absorbs the batch; the element count is checked
    // exactly once the batch is specialized.
    shape[inferred] = ShapedType::kDynamic;
  } else {
    int64_t count = input->getNumElements();
    if (inferred != -1) {
      if (count % known != 0)
        return diag.error("cannot reshape ", formatShape(input->getShape()),
                          " (", count, " elements) to ", formatShape(target));
      shape[inferred] = count / known;
    } else if (count != known) {
      return diag.error("expects the same element count, got ",
                        formatShape(input->getShape()), " (", count,
                        ") and ", formatShape(target), " (", known, ")");
    }
  }
  types.push_back(RankedTensorType::get(shape, input->getElementType()));
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *context,
    std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<TransposeOp>(context, loc, adaptor)))
    return failure();
  ShapeDiag diag(loc, getOperationName());
  auto input = diag.ranked(adaptor.getInput(), "the input");
  if (failed(input))
    return failure();
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  int64_t rank = input->getRank();
  if (static_cast<int64_t>(perm.size()) != rank)
    return diag.error("expects a permutation of ", rank, " entries, got ",
                      perm.size());
  SmallVector<bool> seen(rank, false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return diag.error("expects a permutation of [0, ", rank, "), got ",
                        formatShape(perm));
    seen[p] = true;
    shape.push_back(input->getDimSize(p));
  }
  types.push_back(RankedTensorType::get(shape, input->getElementType()));
  return success();
}

LogicalResult ExpandOp::inferReturnTypes(MLIRContext *context,
    std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<ExpandOp>(context, loc, adaptor)))
    return failure();
  ShapeDiag diag(loc, getOperationName());
  auto input = diag.ranked(adaptor.getInput(), "the input");
  auto batchOf = diag.ranked(adaptor.getBatchOf(), "'batch_of'");
  if (failed(input) || failed(batchOf))
    return failure();
  SmallVector<int64_t> shape(adaptor.getShape());
  if (batchOf->getRank() < 1)
    return diag.error("expects 'batch_of' of rank >= 1, got ", *batchOf);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < (i == 0 ? -1 : 1))
      return diag.error("expects 'shape' of sizes >= 1 (dimension 0 may be -1, "
                        "the batch), got ", formatShape(adaptor.getShape()));
  if (!shape.empty() && shape[0] == -1)
    shape[0] = batchOf->getDimSize(0);
  auto target = broadcastShapes(input->getShape(), shape);
  if (!target || ArrayRef<int64_t>(*target) != ArrayRef<int64_t>(shape))
    return diag.error("expects the input's shape ", formatShape(input->getShape()),
                      " to broadcast to ", formatShape(shape));
  types.push_back(RankedTensorType::get(shape, input->getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *context,
    std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<ConcatOp>(context, loc, adaptor)))
    return failure();
  ShapeDiag diag(loc, getOperationName());
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return diag.error("expects at least one input");
  auto first = diag.ranked(inputs.front(), "every input");
  if (failed(first))
    return failure();
  auto axis = normalizeAxis(static_cast<int64_t>(adaptor.getAxis()), first->getRank());
  if (!axis)
    return diag.error("expects 'axis' in [", -first->getRank(), ", ",
                      first->getRank(), "), got ", static_cast<int64_t>(adaptor.getAxis()));
  SmallVector<int64_t> shape(first->getShape());
  shape[*axis] = 0;
  for (Value input : inputs) {
    auto type = diag.ranked(input, "every input");
    if (failed(type))
      return failure();
    if (type->getRank() != first->getRank() ||
        type->getElementType() != first->getElementType())
      return diag.error("expects inputs of one rank and element type, got ",
                        *first, " and ", *type);
    for (int64_t d = 0; d < first->getRank(); ++d) {
      int64_t size = type->getDimSize(d);
      if (d == *axis) {
        shape[d] = ShapedType::isDynamic(size) || ShapedType::isDynamic(shape[d])
                       ? ShapedType::kDynamic
                       : shape[d] + size;
      } else if (!dimsCompatible(shape[d], size)) {
        return diag.error("expects inputs to agree in dimension ", d,
                          ", got ", formatShape(first->getShape()), " and ",
                          formatShape(type->getShape()));
      } else if (ShapedType::isDynamic(shape[d])) {
        shape[d] = size;
      }
    }
  }
  types.push_back(RankedTensorType::get(shape, first->getElementType()));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *context,
    std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<SliceOp>(context, loc, adaptor)))
    return failure();
  ShapeDiag diag(loc, getOperationName());
  auto input = diag.ranked(adaptor.getInput(), "the input");
  if (failed(input))
    return failure();
  auto axis = normalizeAxis(static_cast<int64_t>(adaptor.getAxis()), input->getRank());
  if (!axis)
    return diag.error("expects 'axis' in [", -input->getRank(), ", ",
                      input->getRank(), "), got ", static_cast<int64_t>(adaptor.getAxis()));
  int64_t start = adaptor.getStart(), end = adaptor.getEnd(),
          step = adaptor.getStep();
  int64_t size = input->getDimSize(*axis);
  if (step < 1)
    return diag.error("expects 'step' >= 1, got ", step);
  if (start < 0 || start >= end ||
      (!ShapedType::isDynamic(size) && end > size))
    return diag.error("expects 0 <= start < end <= ", formatShape({size}),
                      ", got start ", start, " and end ", end);
  SmallVector<int64_t> shape(input->getShape());
  shape[*axis] = (end - start - 1) / step + 1;
  types.push_back(RankedTensorType::get(shape, input->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Attention and embeddings
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::inferReturnTypes(MLIRContext *context,
    std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<SoftmaxOp>(context, loc, adaptor)))
    return failure();
  ShapeDiag diag(loc, getOperationName());
  auto input = diag.ranked(adaptor.getInput(), "the input");
  if (failed(input))
    return failure();
  int64_t rank = input->getRank();
  auto axis = normalizeAxis(static_cast<int64_t>(adaptor.getAxis()), rank);
  if (!axis)
    return diag.error("expects 'axis' in [", -rank, ", ", rank, "), got ",
                      static_cast<int64_t>(adaptor.getAxis()));
  if (adaptor.getCausal()) {
    if (rank < 2 || *axis != rank - 1)
      return diag.error("expects a causal softmax over the last dimension of "
                        "an input of rank >= 2");
    int64_t queries = input->getDimSize(rank - 2),
            keys = input->getDimSize(rank - 1);
    if (!ShapedType::isDynamic(queries) && !ShapedType::isDynamic(keys) &&
        queries > keys)
      return diag.error("expects no more queries (", queries, ") than keys (",
                        keys, ") in a causal softmax");
  }
  if (Value mask = adaptor.getMask()) {
    auto maskType = diag.ranked(mask, "the mask");
    if (failed(maskType))
      return failure();
    if (maskType->getElementType() != input->getElementType())
      return diag.error("expects a mask of the input's element type, got ",
                        maskType->getElementType());
    auto shape = broadcastShapes(input->getShape(), maskType->getShape());
    if (!shape || !llvm::equal(*shape, input->getShape(), dimsCompatible))
      return diag.error("expects a mask that broadcasts to the input, got ",
                        formatShape(maskType->getShape()), " for ",
                        formatShape(input->getShape()));
  }
  types.push_back(*input);
  return success();
}

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *context,
    std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<EmbeddingOp>(context, loc, adaptor)))
    return failure();
  ShapeDiag diag(loc, getOperationName());
  auto table = rankedOfRank(diag, adaptor.getTable(), "a [rows, features] table", 2);
  auto indices = diag.ranked(adaptor.getIndices(), "the indices");
  if (failed(table) || failed(indices))
    return failure();
  SmallVector<int64_t> shape(indices->getShape());
  shape.push_back(table->getDimSize(1));
  types.push_back(RankedTensorType::get(shape, table->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxCrossEntropyOp::inferReturnTypes(MLIRContext *context,
    std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<SoftmaxCrossEntropyOp>(context, loc, adaptor)))
    return failure();
  ShapeDiag diag(loc, getOperationName());
  auto logits = diag.ranked(adaptor.getLogits(), "the logits");
  auto labels = diag.ranked(adaptor.getLabels(), "the labels");
  if (failed(logits) || failed(labels))
    return failure();
  int64_t rank = logits->getRank();
  if (rank < 2)
    return diag.error("expects logits of rank >= 2 (batch and classes), got ",
                      *logits);
  auto axis = normalizeAxis(static_cast<int64_t>(adaptor.getClassAxis()), rank);
  if (!axis || *axis == 0)
    return diag.error("expects 'class_axis' in [1, ", rank, "), got ",
                      static_cast<int64_t>(adaptor.getClassAxis()));
  SmallVector<int64_t> expected(logits->getShape());
  expected.erase(expected.begin() + *axis);
  if (!llvm::equal(expected, labels->getShape(), dimsCompatible))
    return diag.error("expects labels of shape ", formatShape(expected),
                      " (the logits without the class dimension), got ",
                      formatShape(labels->getShape()));
  types.push_back(RankedTensorType::get({}, Float32Type::get(context)));
  return success();
}

//===----------------------------------------------------------------------===//
// FusedOp
//===----------------------------------------------------------------------===//

LogicalResult FusedOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "expects one block argument per input, got "
                         << body.getNumArguments() << " for "
                         << getInputs().size() << " inputs";
  for (auto [arg, input] : llvm::zip(body.getArguments(), getInputs()))
    if (arg.getType() != input.getType())
      return emitOpError() << "expects block argument #" << arg.getArgNumber()
                           << " of type " << input.getType() << ", got "
                           << arg.getType();
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().getTypes() != getOutputs().getTypes())
    return emitOpError() << "expects the yielded types to be the result types";
  for (Operation &op : body.without_terminator())
    if (isa<FusedOp>(op) || op.getDialect() != getOperation()->getDialect())
      return op.emitOpError() << "cannot be inside a train.fused group";
  if (getKind().empty())
    return emitOpError() << "expects a non-empty kind";
  return success();
}

namespace {
template <size_t... I>
std::optional<::dlc::rt::OpClass> opClassOf(OperationName name, std::index_sequence<I...>) {
  std::optional<::dlc::rt::OpClass> found;
  ((name.hasTrait<OpClassIs<static_cast<::dlc::rt::OpClass>(I)>::template Impl>()
        ? (void)(found = static_cast<::dlc::rt::OpClass>(I))
        : (void)0),
   ...);
  return found;
}
} // namespace

std::optional<::dlc::rt::OpClass> mlir::dlc::train::getOpClass(OperationName name) {
  constexpr size_t kClasses = static_cast<size_t>(::dlc::rt::OpClass::kCollective) + 1;
  return opClassOf(name, std::make_index_sequence<kClasses>());
}

#define GET_OP_CLASSES
#include "dlc/Dialect/Train/IR/TrainOps.cpp.inc"
