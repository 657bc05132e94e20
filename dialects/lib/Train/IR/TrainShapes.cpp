//===- TrainShapes.cpp - shape rules of the train dialect -----------------===//

#include "dlc/Dialect/Train/IR/TrainShapes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::dlc::train;

FailureOr<RankedTensorType> ShapeDiag::ranked(Value value,
                                              StringRef what) const {
  if (!value) {
    (void)error("expects a ", what, " operand");
    return failure();
  }
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type) {
    (void)error("expects ", what, " to be a ranked tensor, got ",
                value.getType());
    return failure();
  }
  return type;
}

std::string mlir::dlc::train::formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
  });
  os << "]";
  return text;
}

bool mlir::dlc::train::dimsCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

std::optional<SmallVector<int64_t>>
mlir::dlc::train::broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the trailing dimension; a missing dimension acts as 1.
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == 1)
      result[i] = db;
    else if (db == 1)
      result[i] = da;
    else if (ShapedType::isDynamic(da))
      result[i] = db;
    else if (ShapedType::isDynamic(db) || da == db)
      result[i] = da;
    else
      return std::nullopt;
  }
  return result;
}

FailureOr<bool> ShapeDiag::layout(StringRef layout) const {
  if (layout == kLayoutNCHW)
    return false;
  if (layout == kLayoutNHWC)
    return true;
  (void)error("expects 'layout' to be \"NCHW\" or \"NHWC\", got \"", layout,
              "\"");
  return failure();
}

SmallVector<int64_t> mlir::dlc::train::permuteShape(ArrayRef<int64_t> shape,
                                                    ArrayRef<int64_t> perm) {
  SmallVector<int64_t> out;
  for (int64_t p : perm)
    out.push_back(shape[p]);
  return out;
}

SmallVector<int64_t> mlir::dlc::train::shapeAsNCHW(ArrayRef<int64_t> shape,
                                                  bool nhwc) {
  if (!nhwc || shape.size() != 4)
    return SmallVector<int64_t>(shape);
  return permuteShape(shape, kToNCHW);
}

SmallVector<int64_t> mlir::dlc::train::shapeFromNCHW(ArrayRef<int64_t> nchw,
                                                    bool nhwc) {
  if (!nhwc || nchw.size() != 4)
    return SmallVector<int64_t>(nchw);
  return permuteShape(nchw, kToNHWC);
}

int64_t mlir::dlc::train::slidingWindowSize(int64_t in, int64_t kernel,
                                            int64_t stride, int64_t pad,
                                            int64_t dilation, bool ceilMode) {
  if (ShapedType::isDynamic(in))
    return ShapedType::kDynamic;
  int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1;
  if (span < 0)
    return 0;
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // As in PyTorch: with ceil_mode the last window must start inside the
  // input or its left padding.
  if (ceilMode && (out - 1) * stride >= in + pad)
    --out;
  return out;
}

std::optional<int64_t> mlir::dlc::train::normalizeAxis(int64_t axis,
                                                       int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

LogicalResult mlir::dlc::train::inferSameAsInput(std::optional<Location> loc,
                                                 StringRef opName, Value input,
                                                 SmallVectorImpl<Type> &types) {
  ShapeDiag diag(loc, opName);
  auto type = diag.ranked(input, "the input");
  if (failed(type))
    return failure();
  types.push_back(*type);
  return success();
}

LogicalResult mlir::dlc::train::inferBroadcast(std::optional<Location> loc,
                                               StringRef opName, Value lhs,
                                               Value rhs,
                                               SmallVectorImpl<Type> &types) {
  ShapeDiag diag(loc, opName);
  auto lhsType = diag.ranked(lhs, "the left operand");
  auto rhsType = diag.ranked(rhs, "the right operand");
  if (failed(lhsType) || failed(rhsType))
    return failure();
  if (lhsType->getElementType() != rhsType->getElementType())
    return diag.error("expects operands of one element type, got ",
                      lhsType->getElementType(), " and ",
                      rhsType->getElementType());
  auto shape = broadcastShapes(lhsType->getShape(), rhsType->getShape());
  if (!shape)
    return diag.error("expects broadcast-compatible shapes, got ",
                      formatShape(lhsType->getShape()), " and ",
                      formatShape(rhsType->getShape()));
  types.push_back(RankedTensorType::get(*shape, lhsType->getElementType()));
  return success();
}

LogicalResult mlir::dlc::train::inferReduce(std::optional<Location> loc,
                                            StringRef opName, Value input,
                                            ArrayRef<int64_t> axes,
                                            bool keepDims,
                                            SmallVectorImpl<Type> &types) {
  ShapeDiag diag(loc, opName);
  auto type = diag.ranked(input, "the input");
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  if (axes.empty())
    return diag.error("expects at least one axis to reduce");
  SmallVector<bool> reduced(rank, false);
  for (int64_t axis : axes) {
    auto normalized = normalizeAxis(axis, rank);
    if (!normalized)
      return diag.error("expects axes in [", -rank, ", ", rank, "), got ",
                        axis);
    if (reduced[*normalized])
      return diag.error("expects distinct axes, got ", *normalized,
                        " twice");
    reduced[*normalized] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d])
      shape.push_back(type->getDimSize(d));
    else if (keepDims)
      shape.push_back(1);
  }
  types.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

LogicalResult mlir::dlc::train::inferActivationBackward(
    std::optional<Location> loc, StringRef opName, Value grad, Value saved,
    SmallVectorImpl<Type> &types) {
  ShapeDiag diag(loc, opName);
  auto gradType = diag.ranked(grad, "the gradient");
  auto savedType = diag.ranked(saved, "the saved forward value");
  if (failed(gradType) || failed(savedType))
    return failure();
  if (*gradType != *savedType)
    return diag.error("expects the gradient and the saved forward value of "
                      "one type, got ",
                      *gradType, " and ", *savedType);
  types.push_back(*gradType);
  return success();
}
