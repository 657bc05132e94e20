//===- AttentionMatch.cpp - the attention pattern, legality ---------------===//

#include "dlc/Transforms/AttentionMatch.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::train;

namespace {

/// The op that computes the softmax's scores, through one cast.
Operation *scoresProducer(SoftmaxOp softmax, CastOp *cast) {
  Operation *def = softmax.getInput().getDefiningOp();
  if (auto c = dyn_cast_or_null<CastOp>(def)) {
    if (cast)
      *cast = c;
    def = c.getInput().getDefiningOp();
  }
  return def;
}

std::string opLabel(Operation *op) { return op->getName().getStringRef().str(); }

/// The one reader of `value`, or a refusal naming the value and a reader
/// that the pattern would not take (one of the `next` kinds, else any).
template <typename... Next>
FailureOr<Operation *> onlyReader(Value value, StringRef what, std::string &reason) {
  if (value.use_empty()) {
    reason = (what + " have no reader").str();
    return failure();
  }
  if (!value.hasOneUse()) {
    Operation *other = *value.getUsers().begin();
    for (Operation *user : value.getUsers())
      if (!isa<Next...>(user)) {
        other = user;
        break;
      }
    reason = (what + " have another reader (" + opLabel(other) +
              "): the fused kernel does not write them out")
                 .str();
    return failure();
  }
  return *value.getUsers().begin();
}

} // namespace

bool mlir::dlc::looksLikeAttention(SoftmaxOp softmax) {
  return isa_and_nonnull<MatmulOp>(scoresProducer(softmax, nullptr));
}

FusionDecision mlir::dlc::matchAttention(SoftmaxOp softmax, AttentionPattern &pattern) {
  pattern = AttentionPattern();
  CastOp toSoftmax;
  auto scores = dyn_cast_or_null<MatmulOp>(scoresProducer(softmax, &toSoftmax));
  if (!scores)
    return FusionDecision::refuse("the softmax's input is not a matmul");
  if (scores.getTransposeLhs() || !scores.getTransposeRhs())
    return FusionDecision::refuse("the scores are not matmul(q, k, transpose_rhs)");
  std::string reason;
  if (failed(onlyReader<CastOp, SoftmaxOp>(scores.getOutput(), "the scores", reason)))
    return FusionDecision::refuse(reason);
  if (toSoftmax && failed(onlyReader<SoftmaxOp>(toSoftmax.getOutput(), "the cast scores", reason)))
    return FusionDecision::refuse(reason);
  auto inputType = cast<RankedTensorType>(softmax.getInput().getType());
  int64_t rank = inputType.getRank(), axis = softmax.getAxis();
  if ((axis < 0 ? axis + rank : axis) != rank - 1)
    return FusionDecision::refuse("the softmax is not over the last axis (the keys)");

  pattern.scores = scores;
  pattern.softmax = softmax;
  pattern.ops.push_back(scores);
  if (toSoftmax)
    pattern.ops.push_back(toSoftmax);
  pattern.ops.push_back(softmax);
  // Down to the product: at most one dropout and one cast, in either order.
  Value p = softmax.getOutput();
  bool castBack = false;
  while (true) {
    FailureOr<Operation *> reader = onlyReader<CastOp, DropoutOp, MatmulOp>(p, "the probabilities", reason);
    if (failed(reader))
      return FusionDecision::refuse(reason);
    if (auto c = dyn_cast<CastOp>(*reader); c && !castBack) {
      castBack = true;
      pattern.ops.push_back(c);
      p = c.getOutput();
      continue;
    }
    if (auto d = dyn_cast<DropoutOp>(*reader); d && !pattern.dropout) {
      pattern.dropout = d;
      pattern.ops.push_back(d);
      p = d.getOutput();
      continue;
    }
    auto product = dyn_cast<MatmulOp>(*reader);
    if (!product || product.getLhs() != p)
      return FusionDecision::refuse("the probabilities go to " + opLabel(*reader) +
                                    ", not to the left of a matmul");
    if (product.getTransposeLhs() || product.getTransposeRhs())
      return FusionDecision::refuse("the product p v transposes an operand");
    pattern.product = product;
    pattern.ops.push_back(product);
    break;
  }

  Value q = scores.getLhs(), k = scores.getRhs(), v = pattern.product.getRhs();
  auto qt = cast<RankedTensorType>(q.getType()), kt = cast<RankedTensorType>(k.getType()),
       vt = cast<RankedTensorType>(v.getType());
  if (kt.getElementType() != qt.getElementType() || vt.getElementType() != qt.getElementType())
    return FusionDecision::refuse("q, k and v differ in element type");
  auto outType = cast<RankedTensorType>(pattern.product.getOutput().getType());
  if (outType.getElementType() != qt.getElementType())
    return FusionDecision::refuse("the product's element type is not q's");
  if (qt.getRank() < 2 || kt.getRank() != qt.getRank() || vt.getRank() != qt.getRank() ||
      qt.getShape().drop_back(2) != kt.getShape().drop_back(2) ||
      qt.getShape().drop_back(2) != vt.getShape().drop_back(2))
    return FusionDecision::refuse("q, k and v differ in batch dimensions (a broadcast matmul)");
  return FusionDecision::allow();
}
