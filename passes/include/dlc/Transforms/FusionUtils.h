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

/// The elements of a statically shaped tensor value, 0 otherwise.
int64_t tensorElements(Value v);
/// Its bytes, each element rounded up to whole bytes; 0 when not static.
/// What the fusion strategies' scores and costs count a buffer as.
int64_t tensorBytes(Value v);

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

/// Ops with Train_Activation in ODS (relu, gelu, ..., and their gradients):
/// the activations of PaddlePaddle's element-wise + activation fusion.
bool isFusibleActivation(Operation *op);

/// train.add and train.mul, forward or as gradient accumulation: the ops
/// PaddlePaddle's fuse_elewise_add_act_pass names.
bool isFusibleElementwise(Operation *op);

/// How an op takes part in XLA-style fusion (the `xla` strategy), from its
/// op class (dlc/runtime/OpKinds.h, Train_OpClass in ODS).
enum class FusionClass {
  /// Not fused by the loop / input fusion pass: contractions (library
  /// calls), optimizer updates, collectives and opaque ops.
  kOpaque,
  /// Element-wise, random and data-movement ops: one output element from
  /// the same element of each input, or a fixed gather of them. XLA's loop
  /// fusion computes chains of these in registers.
  kElementwise,
  /// A reduction that can only end a group (XLA's input fusion: producers
  /// fuse into the reduction's loop).
  kReduction,
  /// Row and batch normalizations: a reduction followed by an element-wise
  /// map. Element-wise producers fuse into its input and element-wise
  /// consumers into its output, as XLA fuses the decomposed forms.
  kNormalization,
};
FusionClass classifyForFusion(Operation *op);
StringRef fusionClassName(FusionClass kind);

/// Whether `producer` can join the group `members` (ops of one block; the
/// group reads the producer's results) under XLA's producer-consumer rules:
/// the producer is element-wise or a normalization, a group holds at most
/// one reduction or normalization, and the group can still run where its
/// last op is (canFormGroup). Results of the producer read outside the group
/// are written out (multi-output fusion).
FusionDecision canFuseIntoGroup(Operation *producer, ArrayRef<Operation *> members);

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

//===----------------------------------------------------------------------===//
// TVM Relay's FuseOps (the `tvm` strategy, FuseOps.cpp)
//===----------------------------------------------------------------------===//

/// Relay's op patterns (include/tvm/relay/op_attr_types.h, OpPatternKind),
/// with its numbering: a group absorbs ops of a lower pattern, and combining
/// two patterns takes the higher.
enum class TvmPattern : uint8_t {
  kElemWise = 0,
  kBroadcast = 1,
  kInjective = 2,
  kCommReduce = 3,
  kOutEWiseFusable = 4,
  kTuple = 7,
  kOpaque = 8,
};
StringRef tvmPatternName(TvmPattern pattern);

/// An op's pattern, from its op class in ODS as Relay registers the
/// counterparts: element-wise ops are kElemWise, or kBroadcast when an
/// operand's shape differs from the result's; dropout's counter-based mask
/// is element-wise; data movement (transpose, slice, concat, broadcast_to)
/// kInjective; reductions kCommReduce; contractions (conv2d, dense,
/// batch_matmul and their gradients) kOutEWiseFusable; softmax, layer and
/// batch norm kOpaque (Relay's nn.softmax is OPAQUE, and its norms are
/// single ops only until SimplifyInference, which training never runs);
/// optimizer updates, collectives, reshape (a view in dlc's plan) and
/// constants kOpaque.
TvmPattern tvmOpPattern(Operation *op);

/// The pattern of the edge from an operand to the op that reads it, as
/// IndexedForwardGraph records it: the reader's pattern, kBroadcast taken
/// as kElemWise where the operand has the result's shape.
TvmPattern tvmEdgePattern(OpOperand &use);

/// Whether a group of pattern `group` tries to fuse into its immediate
/// post-dominator in fuse_ops.cc's phase `phase` (0: contractions with
/// their element-wise epilogues, and element-wise ops; 1: injective ops too;
/// 2: into tuples, which dlc does not have), the post-dominator reached
/// through edges of combined pattern `dominatorEdges` and being itself of
/// pattern `dominator`.
FusionDecision tvmMayFuseIntoPostDominator(TvmPattern group, TvmPattern dominatorEdges,
                                           TvmPattern dominator, int phase);

/// CheckPath's condition: whether an op of pattern `node` may lie on the
/// path from a group of pattern `group` to its post-dominator (`isSink`: the
/// post-dominator itself).
FusionDecision tvmPathAllows(TvmPattern group, TvmPattern node, bool isSink);

//===----------------------------------------------------------------------===//
// Inductor's scheduler (the `inductor` strategy, FuseNodes.cpp)
//===----------------------------------------------------------------------===//

/// How Inductor's scheduler sees one op: a pointwise node (numel output
/// elements, rnumel 1), a reduction node (numel outputs, each over rnumel
/// inputs), a template (a GEMM or convolution whose epilogue can be fused,
/// numel output elements) or an extern kernel that fuses with nothing.
struct InductorNode {
  enum Kind : uint8_t { kPointwise, kReduction, kTemplate, kExtern } kind = kExtern;
  int64_t numel = 0;
  int64_t rnumel = 1;
  /// The library calls the node holds (ops whose class isLibraryCall: a
  /// batch norm, a contraction); a fused node holds its members' sum.
  int64_t libraryCalls = 0;
};
/// From the op class in ODS: element-wise, random and data-movement ops are
/// pointwise; reductions, softmax, layer norm and batch norm (and their
/// gradients) reductions over their reduced axes (Inductor lowers the norms
/// to reductions and a pointwise map, which it fuses back into one
/// reduction kernel); contractions templates when `epilogueFusion`, else
/// extern; the rest extern. `tensor` types with a static shape only.
InductorNode inductorNodeOf(Operation *op, bool epilogueFusion);
StringRef inductorKindName(InductorNode::Kind kind);

/// Whether the scheduler's can_fuse accepts two groups, `first` running
/// before `second`, with `sizeOfFused` ops together: neither extern, at
/// most one library call between them (Inductor never fuses two extern
/// kernels; dlc's batch norms are reductions to the scheduler but cuDNN
/// calls at run time), at most `maxFusionSize` ops, a template only as the
/// first node with
/// pointwise epilogues of its output size, and (numel, rnumel) compatible
/// as the Triton scheduling's can_fuse_vertical / can_fuse_horizontal
/// require: equal for two pointwise or two reduction groups, a pointwise
/// group of numel x rnumel elements before or after a reduction.
/// `vertical`: `second` reads a buffer `first` writes, at the index it was
/// written (`sameIndex`); otherwise they must share a read buffer.
FusionDecision inductorCanFuse(InductorNode first, InductorNode second, bool vertical,
                               bool sameIndex, bool sharesBuffer, int64_t sizeOfFused,
                               int64_t maxFusionSize);

//===----------------------------------------------------------------------===//
// Priority fusion (XLA's PriorityFusion, the `xla-priority` strategy)
//===----------------------------------------------------------------------===//
//
// A producer fuses into ALL its consumers or none, recomputed in each
// (priority_fusion.cc, CanFuseWithAllNonBitcastUsers); a producer or a
// consumer is a group of ops given as a list, its first-formed op its root.

/// The values `ops` read from outside them, each once, in op order.
SmallVector<Value> groupInputs(ArrayRef<Operation *> ops);

/// XLA's IsFusible for priority fusion: element-wise, random and
/// data-movement ops, reductions and normalizations fuse; contractions
/// (library calls), optimizer updates, collectives and opaque ops do not.
FusionDecision isPriorityFusible(Operation *op);

/// The producer's own conditions for fusing into all the readers of
/// `root`'s results, `numConsumers` groups: it has readers, none is the
/// function's terminator (XLA: "not fusing into the output of the root
/// instruction") or in another block, and it holds no random op when it
/// would be recomputed in several consumers (XLA: an rng with more than
/// one user is not fusible).
FusionDecision canFuseIntoAllConsumers(ArrayRef<Operation *> producer, Operation *root,
                                       size_t numConsumers);

/// XLA's CanFuse(producer, consumer) for priority fusion: the consumer is
/// fusible; the producer holds no reduction (fusing into a reduction's
/// output would make its input fusion a loop fusion); not both reduce
/// (a reduction or a normalization each: "both the producer and the
/// consumer contain a reduce"); and the merged group keeps within XLA's
/// kernel budget, at most `maxOperands` operands and outputs
/// (FusionFitsInBudget's kMaxOperandsAndOutputsPerFusion).
FusionDecision canFusePriorityPair(ArrayRef<Operation *> producer,
                                   ArrayRef<Operation *> consumer, int64_t maxOperands);

/// XLA's producer-consumer multi-output fusion (multi_output_fusion.cc),
/// run after priority fusion: `producer` joins `consumer` and the group
/// also writes the producer's results for its other readers. CanFuse's
/// rules on reductions, the budget counting both groups' outputs, and
/// canFormGroup (the other readers must come after the group: no cycle).
FusionDecision canFuseMultiOutput(ArrayRef<Operation *> producer,
                                  ArrayRef<Operation *> consumer, int64_t maxOperands);

} // namespace mlir::dlc

#endif // DLC_TRANSFORMS_FUSIONUTILS_H
