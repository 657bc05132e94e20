//===- AttentionMatch.h - the attention pattern, legality -------*- C++ -*-===//
//
// Whether a softmax is the middle of an attention that train.attention can
// compute (dlc-fuse-attention rewrites it), decided apart from the rewrite
// and with the reason when it cannot.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TRANSFORMS_ATTENTIONMATCH_H
#define DLC_TRANSFORMS_ATTENTIONMATCH_H

#include "dlc/Dialect/Train/IR/TrainOps.h"
#include "dlc/Transforms/FusionUtils.h"

namespace mlir::dlc {

/// matmul(q, k, transpose_rhs) -> [cast] -> softmax -> [dropout] [cast]
/// (either order) -> matmul(p, v).
struct AttentionPattern {
  train::MatmulOp scores;
  train::SoftmaxOp softmax;
  train::DropoutOp dropout; // null without one
  train::MatmulOp product;
  /// Every op of the pattern, in block order, scores first, product last.
  SmallVector<Operation *> ops;
};

/// Whether the softmax's input is (a cast of) a matmul: the patterns
/// worth a word when they are not fused.
bool looksLikeAttention(train::SoftmaxOp softmax);

/// Matches the pattern around `softmax` into `pattern`; refuses, with the
/// reason, when an intermediate value has another reader (the backward of
/// train.attention does not produce it), the softmax is not over the last
/// axis, a matmul transposes other than q k^T, q, k and v differ in element
/// type or batch dimensions, or the product's type is not q's.
FusionDecision matchAttention(train::SoftmaxOp softmax, AttentionPattern &pattern);

} // namespace mlir::dlc

#endif // DLC_TRANSFORMS_ATTENTIONMATCH_H
