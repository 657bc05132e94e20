//===- TrainShapes.h - shape rules of the train dialect ---------*- C++ -*-===//
//
// Shape rules shared by the ops' type inference and by the passes that build
// new ops (autodiff reduces broadcast gradients with the same rules).
// Dynamic dimensions are ShapedType::kDynamic throughout.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DIALECT_TRAIN_IR_TRAINSHAPES_H
#define DLC_DIALECT_TRAIN_IR_TRAINSHAPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Region.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/LLVM.h"
#include <optional>
#include <string>
#include <type_traits>

namespace mlir::dlc::train {

/// Reports type-inference errors in the voice of emitOpError
/// ("'train.conv2d' op expects ..."), at the op's location when there is one.
class ShapeDiag {
public:
  ShapeDiag(std::optional<Location> loc, StringRef opName)
      : loc(loc), opName(opName) {}

  template <typename... Args>
  LogicalResult error(Args &&...args) const {
    return emitOptionalError(loc, "'", opName, "' op ",
                             std::forward<Args>(args)...);
  }

  /// Returns the operand's type as a ranked tensor, or reports that it is not.
  FailureOr<RankedTensorType> ranked(Value value, StringRef what) const;

  /// Checks a `layout` attribute; true for NHWC.
  FailureOr<bool> layout(StringRef layout) const;

private:
  std::optional<Location> loc;
  StringRef opName;
};

/// Formats a shape as "[?, 3, 224, 224]".
std::string formatShape(ArrayRef<int64_t> shape);

/// True when two dimensions may be equal at run time (either is dynamic).
bool dimsCompatible(int64_t a, int64_t b);

/// NumPy broadcasting of two shapes; nullopt when they do not broadcast.
std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                    ArrayRef<int64_t> b);

/// Output size of a sliding window (convolution or pooling) along one
/// dimension; dynamic in, dynamic out. Returns a value < 1 when the window
/// does not fit.
int64_t slidingWindowSize(int64_t in, int64_t kernel, int64_t stride,
                          int64_t pad, int64_t dilation, bool ceilMode);

/// The `layout` attribute's values (see Train_LayoutAttr).
inline constexpr StringLiteral kLayoutNCHW = "NCHW";
inline constexpr StringLiteral kLayoutNHWC = "NHWC";

/// The permutations between NCHW (OIHW) and NHWC (OHWI) dimension orders:
/// transpose(nchw, kToNHWC) is NHWC, transpose(nhwc, kToNCHW) is NCHW.
inline constexpr int64_t kToNHWC[4] = {0, 2, 3, 1};
inline constexpr int64_t kToNCHW[4] = {0, 3, 1, 2};

/// `shape` permuted as train.transpose permutes: result[i] = shape[perm[i]].
SmallVector<int64_t> permuteShape(ArrayRef<int64_t> shape, ArrayRef<int64_t> perm);

/// A rank-4 shape in the layout's order, reordered to NCHW (or OIHW).
SmallVector<int64_t> shapeAsNCHW(ArrayRef<int64_t> shape, bool nhwc);
/// An NCHW-ordered rank-4 shape reordered to the layout's order.
SmallVector<int64_t> shapeFromNCHW(ArrayRef<int64_t> nchw, bool nhwc);

/// Normalizes a possibly negative dimension index; nullopt if out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

namespace detail {
template <typename OpTy, typename = void>
struct HasProperties : std::false_type {};
template <typename OpTy>
struct HasProperties<OpTy,
                     std::void_t<decltype(OpTy::getPropertiesAsAttr(
                         std::declval<MLIRContext *>(),
                         std::declval<const typename OpTy::Properties &>()))>>
    : std::true_type {};

template <typename OpTy, typename = void>
struct HasDefaultProperties : std::false_type {};
template <typename OpTy>
struct HasDefaultProperties<
    OpTy, std::void_t<decltype(OpTy::populateDefaultProperties(
              std::declval<OperationName>(),
              std::declval<typename OpTy::Properties &>()))>>
    : std::true_type {};

/// The op's properties as a dictionary, empty (never null) when none is set:
/// the generated getPropertiesAsAttr returns a null attribute then, which an
/// op written without its attribute dictionary reaches.
template <typename OpTy>
DictionaryAttr propertiesAsDict(MLIRContext *context,
                                const typename OpTy::Properties &properties) {
  if (auto dict = dyn_cast_if_present<DictionaryAttr>(
          OpTy::getPropertiesAsAttr(context, properties)))
    return dict;
  return DictionaryAttr::get(context);
}
} // namespace detail

/// Makes `adaptor` read what the op's type inference needs: its attributes,
/// with every absent default-valued one filled in. The generated parser
/// infers result types before the op exists, while the inherent attributes
/// are still in the attribute dictionary rather than the properties the
/// adaptor's getters read, before defaults are added, and before required
/// attributes are checked; a missing one is reported here.
template <typename OpTy>
LogicalResult withDefaults(MLIRContext *context, std::optional<Location> loc,
                           typename OpTy::Adaptor &adaptor) {
  if constexpr (detail::HasProperties<OpTy>::value) {
    typename OpTy::Properties properties = adaptor.getProperties();
    if (DictionaryAttr attrs = adaptor.getAttributes();
        attrs && !attrs.empty()) {
      NamedAttrList merged(detail::propertiesAsDict<OpTy>(context, properties));
      for (NamedAttribute attr : attrs)
        merged.set(attr.getName(), attr.getValue());
      if (failed(OpTy::setPropertiesFromAttr(
              properties, merged.getDictionary(context),
              [&] { return emitError(loc ? *loc : UnknownLoc::get(context)); })))
        return failure();
    }
    if constexpr (detail::HasDefaultProperties<OpTy>::value)
      OpTy::populateDefaultProperties(
          OperationName(OpTy::getOperationName(), context), properties);
    // Every train op attribute is required or default-valued.
    DictionaryAttr present = detail::propertiesAsDict<OpTy>(context, properties);
    for (StringRef name : OpTy::getAttributeNames())
      if (!present.contains(name))
        return emitOptionalError(loc, "'", OpTy::getOperationName(),
                                 "' op requires attribute '", name, "'");
    adaptor = typename OpTy::Adaptor(adaptor.getOperands(),
                                     adaptor.getAttributes(), properties,
                                     /*regions=*/::mlir::RegionRange());
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Inference shared by op families (called from the generated op classes)
//===----------------------------------------------------------------------===//

LogicalResult inferSameAsInput(std::optional<Location> loc, StringRef opName,
                               Value input, SmallVectorImpl<Type> &types);
LogicalResult inferBroadcast(std::optional<Location> loc, StringRef opName,
                             Value lhs, Value rhs,
                             SmallVectorImpl<Type> &types);
LogicalResult inferReduce(std::optional<Location> loc, StringRef opName,
                          Value input, ArrayRef<int64_t> axes, bool keepDims,
                          SmallVectorImpl<Type> &types);

LogicalResult inferActivationBackward(std::optional<Location> loc,
                                     StringRef opName, Value grad, Value saved,
                                     SmallVectorImpl<Type> &types);

template <typename Adaptor>
LogicalResult inferActivationBackwardOp(MLIRContext *,
                                        std::optional<Location> loc,
                                        StringRef opName, Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  return inferActivationBackward(loc, opName, adaptor.getGrad(),
                                 adaptor.getSaved(), types);
}

template <typename Adaptor>
LogicalResult inferUnaryOp(MLIRContext *, std::optional<Location> loc,
                           StringRef opName, Adaptor adaptor,
                           SmallVectorImpl<Type> &types) {
  return inferSameAsInput(loc, opName, adaptor.getInput(), types);
}

template <typename Adaptor>
LogicalResult inferBroadcastOp(MLIRContext *, std::optional<Location> loc,
                               StringRef opName, Adaptor adaptor,
                               SmallVectorImpl<Type> &types) {
  return inferBroadcast(loc, opName, adaptor.getLhs(), adaptor.getRhs(),
                        types);
}

template <typename Adaptor>
LogicalResult inferReduceOp(MLIRContext *, std::optional<Location> loc,
                            StringRef opName, Adaptor adaptor,
                            SmallVectorImpl<Type> &types) {
  return inferReduce(loc, opName, adaptor.getInput(), adaptor.getAxes(),
                     adaptor.getKeepDims(), types);
}

} // namespace mlir::dlc::train

#endif // DLC_DIALECT_TRAIN_IR_TRAINSHAPES_H
