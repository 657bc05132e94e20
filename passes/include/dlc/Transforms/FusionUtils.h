//===- FusionUtils.h - fusion legality, shared by every strategy -*- C++ -*-===//
//
// Whether two ops may share a kernel is decided here, apart from any
// rewriting, and every decision carries its reason, so that a pass can say
// why a producer and a consumer were not fused (as XLA's FusionDecision).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TRANSFORMS_FUSIONUTILS_H
#define DLC_TRANSFORMS_FUSIONUTILS_H

#include "mlir/IR/Operation.h"

#include <string>

namespace mlir::dlc {

/// A yes, or a no with the reason.
class FusionDecision {
public:
  static FusionDecision allow() { return FusionDecision(""); }
  static FusionDecision refuse(const Twine &reason) {
    return FusionDecision(reason.str().empty() ? "refused" : reason.str());
  }
  explicit operator bool() const { return reason_.empty(); }
  const std::string &reason() const { return reason_; }

private:
  explicit FusionDecision(std::string reason) : reason_(std::move(reason)) {}
  std::string reason_;
};

/// relu, tanh, sigmoid, gelu and scale, and their backward ops: the
/// activations of PaddlePaddle's element-wise + activation fusion.
bool isFusibleActivation(Operation *op);

/// train.add and train.mul, forward or as gradient accumulation.
bool isFusibleElementwise(Operation *op);

/// Whether `producer` can be computed inside `consumer`'s kernel: both in one
/// block, neither already in a fused group, one result. When the producer's
/// result has other readers (in training, usually the backward op that needs
/// the activation's input), the group must also write it out:
/// `allowMultiOutput` says whether the strategy does (PaddlePaddle's fused
/// op saves its intermediate output for the backward pass); the group runs
/// where the consumer is, so those readers must all come after it.
FusionDecision canFuseProducerIntoConsumer(Operation *producer,
                                           Operation *consumer,
                                           bool allowMultiOutput);

/// Whether independent ops can run as one kernel placed where the last of
/// them is: one block, and no op reads another's result.
FusionDecision canFuseHorizontally(ArrayRef<Operation *> ops);

/// Whether `ops` (in block order) can become one group placed where the last
/// of them is: one block, none already grouped, and every reader of a
/// group result outside the group after the last op.
FusionDecision canFormGroup(ArrayRef<Operation *> ops);

} // namespace mlir::dlc

#endif // DLC_TRANSFORMS_FUSIONUTILS_H
