//===- TrainAttention.cpp - train.attention and its gradient --------------===//
//
// Type inference (and so verification) of the fused attention ops, both
// from one rule: q [B..., Sq, D], k [B..., Sk, D], v [B..., Sk, Dv] of one
// float type, an additive mask that broadcasts to [B..., Sq, Sk], a finite
// scale and a dropout rate in [0, 1).
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/Train/IR/TrainOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dlc::train;

namespace {

/// What the forward's operands fix: the output's type and the lse's shape.
struct AttentionShape {
  RankedTensorType output;
  SmallVector<int64_t> lse;
};

FailureOr<AttentionShape> checkAttention(const ShapeDiag &diag, Value q, Value k, Value v,
                                         Value mask, float scale, bool causal, float rate) {
  auto query = diag.ranked(q, "the query");
  auto key = diag.ranked(k, "the key");
  auto value = diag.ranked(v, "the value");
  if (failed(query) || failed(key) || failed(value))
    return failure();
  int64_t rank = query->getRank();
  if (rank < 2 || key->getRank() != rank || value->getRank() != rank) {
    (void)diag.error("expects query, key and value of one rank >= 2 ([B..., S, D]), got ",
                     formatShape(query->getShape()), ", ", formatShape(key->getShape()),
                     " and ", formatShape(value->getShape()));
    return failure();
  }
  Type element = query->getElementType();
  if (key->getElementType() != element || value->getElementType() != element) {
    (void)diag.error("expects query, key and value of one element type, got ", element,
                     ", ", key->getElementType(), " and ", value->getElementType());
    return failure();
  }
  ArrayRef<int64_t> qs = query->getShape(), ks = key->getShape(), vs = value->getShape();
  for (int64_t d = 0; d + 2 < rank; ++d)
    if (!dimsCompatible(qs[d], ks[d]) || !dimsCompatible(qs[d], vs[d])) {
      (void)diag.error("expects query, key and value with the same batch dimensions, got ",
                       formatShape(qs), ", ", formatShape(ks), " and ", formatShape(vs));
      return failure();
    }
  if (!dimsCompatible(qs[rank - 1], ks[rank - 1])) {
    (void)diag.error("expects query and key with the same head dimension, got ",
                     formatShape(qs), " and ", formatShape(ks));
    return failure();
  }
  if (!dimsCompatible(ks[rank - 2], vs[rank - 2])) {
    (void)diag.error("expects key and value with the same number of keys, got ",
                     formatShape(ks), " and ", formatShape(vs));
    return failure();
  }
  int64_t queries = qs[rank - 2], keys = ks[rank - 2];
  if (causal && !ShapedType::isDynamic(queries) && !ShapedType::isDynamic(keys) &&
      queries > keys) {
    (void)diag.error("expects no more queries (", queries, ") than keys (", keys,
                     ") in a causal attention");
    return failure();
  }
  if (!std::isfinite(scale)) {
    (void)diag.error("expects a finite 'scale', got ", scale);
    return failure();
  }
  if (!(rate >= 0.0f && rate < 1.0f)) {
    (void)diag.error("expects 'dropout_rate' in [0, 1), got ", rate);
    return failure();
  }
  SmallVector<int64_t> scores(qs.drop_back());
  scores.push_back(keys);
  if (mask) {
    auto maskType = diag.ranked(mask, "the mask");
    if (failed(maskType))
      return failure();
    auto shape = broadcastShapes(scores, maskType->getShape());
    if (!shape || !llvm::equal(*shape, scores, dimsCompatible)) {
      (void)diag.error("expects a mask that broadcasts to the scores ", formatShape(scores),
                       ", got ", formatShape(maskType->getShape()));
      return failure();
    }
  }
  AttentionShape result;
  SmallVector<int64_t> out(qs);
  out.back() = vs[rank - 1];
  result.output = RankedTensorType::get(out, element);
  result.lse.assign(qs.begin(), qs.end() - 1);
  return result;
}

/// Checks that `value` has exactly `type`.
LogicalResult checkExact(const ShapeDiag &diag, Value value, StringRef what,
                         RankedTensorType type) {
  auto actual = diag.ranked(value, what);
  if (failed(actual))
    return failure();
  if (actual->getElementType() != type.getElementType() ||
      actual->getRank() != type.getRank() ||
      !llvm::equal(actual->getShape(), type.getShape(), dimsCompatible))
    return diag.error("expects ", what, " of type ", type, ", got ", *actual);
  return success();
}

} // namespace

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> loc, Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<AttentionOp>(context, loc, adaptor)))
    return failure();
  ShapeDiag diag(loc, getOperationName());
  auto shape = checkAttention(diag, adaptor.getQuery(), adaptor.getKey(), adaptor.getValue(),
                              adaptor.getMask(), adaptor.getScale().convertToFloat(),
                              adaptor.getCausal(), adaptor.getDropoutRate().convertToFloat());
  if (failed(shape))
    return failure();
  types.push_back(shape->output);
  types.push_back(RankedTensorType::get(shape->lse, Float32Type::get(context)));
  return success();
}

LogicalResult AttentionBackwardOp::inferReturnTypes(MLIRContext *context,
                                                    std::optional<Location> loc,
                                                    Adaptor adaptor,
                                                    SmallVectorImpl<Type> &types) {
  if (failed(withDefaults<AttentionBackwardOp>(context, loc, adaptor)))
    return failure();
  ShapeDiag diag(loc, getOperationName());
  auto shape = checkAttention(diag, adaptor.getQuery(), adaptor.getKey(), adaptor.getValue(),
                              adaptor.getMask(), adaptor.getScale().convertToFloat(),
                              adaptor.getCausal(), adaptor.getDropoutRate().convertToFloat());
  if (failed(shape))
    return failure();
  auto lse = RankedTensorType::get(shape->lse, Float32Type::get(context));
  if (failed(checkExact(diag, adaptor.getOutput(), "the forward output", shape->output)) ||
      failed(checkExact(diag, adaptor.getGrad(), "the output gradient", shape->output)) ||
      failed(checkExact(diag, adaptor.getLse(), "an f32 lse", lse)))
    return failure();
  for (Value operand : {adaptor.getQuery(), adaptor.getKey(), adaptor.getValue()})
    types.push_back(operand.getType());
  return success();
}
