//===- ConvertLayout.cpp - NHWC convolutions and batch norm ---------------===//
//
// Layout assignment in steps, each of which keeps the step's meaning:
//
// 0. The training step stores each convolution filter (and its optimizer
//    state) in the target layout: the argument changes type, its readers
//    get the declared order through a transpose, its updates are returned
//    through one, and its initializer's `storage` entry tells the runtime.
// 1. Every convolution, batch norm, bilinear resize and max / average
//    pooling (forward and backward) on 4-d data not in the target layout is rewritten to it between transposes: operands
//    in, results back out.
// 2. Transposes sink through layout-agnostic element-wise ops whose operands
//    are all transposed alike, through ops with an axis (renamed), and
//    through optimizer updates; a transpose of a transpose composes (to
//    nothing when the two are inverse). So NHWC results flow through the
//    activations and residual adds into the next NHWC op, the filters'
//    transposes cancel, and the transposes left are the layout's edges.
//
// Which ops a transpose may cross is decided here, next to the rewrite: it
// is a property of the op's semantics (same-shaped operands, one result
// element from the same element of each operand), not of any fusion.
//
//===----------------------------------------------------------------------===//

#include "dlc/Transforms/Passes.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "dlc-convert-layout"

namespace mlir::dlc {
#define GEN_PASS_DEF_CONVERTLAYOUTPASS
#include "dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::train;

namespace {

bool isRank4(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() == 4;
}

ArrayRef<int64_t> permutationTo(StringRef layout) {
  return layout == kLayoutNHWC ? ArrayRef<int64_t>(kToNHWC) : ArrayRef<int64_t>(kToNCHW);
}

SmallVector<int64_t> inversePermutation(ArrayRef<int64_t> perm) {
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = static_cast<int64_t>(i);
  return inverse;
}

Value transpose(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> perm) {
  return TransposeOp::create(
      b, loc, ValueRange{v},
      {b.getNamedAttr("permutation", b.getDenseI64ArrayAttr(perm))});
}

//===----------------------------------------------------------------------===//
// Step 0: convolution filters stored in the target layout
//===----------------------------------------------------------------------===//

/// The argument `v` is, through casts (AMP's weight cast), or null.
BlockArgument argumentThroughCasts(Value v) {
  while (auto cast = v.getDefiningOp<CastOp>())
    v = cast.getInput();
  return dyn_cast<BlockArgument>(v);
}

/// Changes how argument `arg` of the step is stored: transposed by `perm`.
/// Its readers get the declared order back through one transpose at the
/// entry; every result that updates it is transposed to the stored order.
/// The `storage` entry of its initializer tells the runtime (which draws
/// initial values, and reads and dumps .npy files, in the declared order).
void storeTransposed(func::FuncOp step, BlockArgument arg, ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(arg.getType());
  unsigned index = arg.getArgNumber();
  arg.setType(type.clone(permuteShape(type.getShape(), perm)));
  OpBuilder b = OpBuilder::atBlockBegin(arg.getOwner());
  Value declared = transpose(b, arg.getLoc(), arg, inversePermutation(perm));
  arg.replaceAllUsesExcept(declared, declared.getDefiningOp());

  for (StringRef role : {TrainDialect::kParamAttr, TrainDialect::kOptimizerStateAttr})
    if (auto init = step.getArgAttrOfType<DictionaryAttr>(index, role)) {
      NamedAttrList entries(init);
      entries.set("storage", b.getDenseI64ArrayAttr(perm));
      step.setArgAttr(index, role, entries.getDictionary(step.getContext()));
    }

  auto ret = cast<func::ReturnOp>(step.getBody().front().getTerminator());
  b.setInsertionPoint(ret);
  for (unsigned r = 0; r < step.getNumResults(); ++r) {
    auto updateOf = step.getResultAttrOfType<IntegerAttr>(r, TrainDialect::kUpdateOfAttr);
    if (updateOf && updateOf.getInt() == index)
      ret->setOperand(r, transpose(b, ret.getLoc(), ret->getOperand(r), perm));
  }
  // The function type from the block's (now changed) argument types.
  step.setType(FunctionType::get(step.getContext(),
                                 step.getBody().front().getArgumentTypes(),
                                 ret->getOperandTypes()));
}

/// The step function (one whose results update its arguments) stores the
/// filters of convolutions going to `layout` in that layout, with their
/// optimizer state, as PyTorch's channels_last model does: the per-step
/// transposes of each filter and its gradient then cancel (ResNet-50 has 17
/// filters that are not 1x1, HRNet-W18 267). Returns how many arguments.
int64_t storeFilters(func::FuncOp step, StringRef layout) {
  bool isStep = llvm::any_of(llvm::seq<unsigned>(0, step.getNumResults()), [&](unsigned r) {
    return step.getResultAttr(r, TrainDialect::kUpdateOfAttr) != nullptr;
  });
  if (!isStep || step.isExternal())
    return 0;
  SetVector<BlockArgument> filters;
  auto addFilter = [&](Value filter, StringRef opLayout) {
    BlockArgument arg = argumentThroughCasts(filter);
    if (opLayout != layout && arg && arg.getOwner()->isEntryBlock() &&
        step.getArgAttr(arg.getArgNumber(), TrainDialect::kParamAttr) &&
        !step.getArgAttrOfType<DictionaryAttr>(arg.getArgNumber(), TrainDialect::kParamAttr)
             .get("storage"))
      filters.insert(arg);
  };
  step.walk([&](Conv2dOp op) { addFilter(op.getFilter(), op.getLayout()); });
  step.walk([&](Conv2dBackwardDataOp op) { addFilter(op.getFilter(), op.getLayout()); });
  // The optimizer state of a filter is shaped and updated like it.
  SetVector<BlockArgument> stored = filters;
  step.walk([&](Operation *op) {
    if (getOpClass(op) != ::dlc::rt::OpClass::kOptimizer)
      return;
    auto param = dyn_cast<BlockArgument>(op->getOperand(0));
    if (!param || !filters.contains(param))
      return;
    for (Value state : op->getOperands().drop_front(2))
      if (auto arg = dyn_cast<BlockArgument>(state);
          arg && cast<RankedTensorType>(state.getType()).getShape() ==
                     cast<RankedTensorType>(param.getType()).getShape() &&
          step.getArgAttr(arg.getArgNumber(), TrainDialect::kOptimizerStateAttr))
        stored.insert(arg);
  });
  ArrayRef<int64_t> perm = permutationTo(layout);
  for (BlockArgument arg : stored)
    storeTransposed(step, arg, perm);
  return static_cast<int64_t>(filters.size());
}

//===----------------------------------------------------------------------===//
// Step 1: ops with a layout, rewritten to the target between transposes
//===----------------------------------------------------------------------===//

/// Rewrites `op` to `layout`: rank-4 operands are transposed to it, the
/// shape attributes (`input_shape`, `filter_shape`) permuted, and rank-4
/// results transposed back to what the op's users expect.
template <typename OpTy>
void convert(OpTy op, StringRef layout) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  ArrayRef<int64_t> toTarget = permutationTo(layout);
  SmallVector<int64_t> back = inversePermutation(toTarget);
  SmallVector<Value> operands;
  for (Value v : op->getOperands())
    operands.push_back(isRank4(v) ? transpose(b, loc, v, toTarget) : v);
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute attr : op->getAttrs()) {
    StringRef name = attr.getName().getValue();
    if (name == "layout")
      continue;
    if (name == "input_shape" || name == "filter_shape")
      attr = b.getNamedAttr(
          name, b.getDenseI64ArrayAttr(permuteShape(
                    cast<DenseI64ArrayAttr>(attr.getValue()).asArrayRef(), toTarget)));
    attrs.push_back(attr);
  }
  attrs.push_back(b.getNamedAttr("layout", b.getStringAttr(layout)));
  auto converted = OpTy::create(b, loc, operands, attrs);
  for (auto [old, now] : llvm::zip(op->getResults(), converted->getResults()))
    old.replaceAllUsesWith(isRank4(now) ? transpose(b, loc, now, back) : Value(now));
  op->erase();
}

/// Converts every op of type OpTy under `root` whose 4-d data is not in
/// `layout`; returns how many.
template <typename OpTy>
int64_t convertAll(Operation *root, StringRef layout) {
  SmallVector<OpTy> ops;
  root->walk([&](OpTy op) {
    // Batch norm over [N, C] has no spatial layout.
    if (op.getLayout() != layout && isRank4(op->getOperand(0)))
      ops.push_back(op);
  });
  for (OpTy op : ops)
    convert(op, layout);
  return static_cast<int64_t>(ops.size());
}

//===----------------------------------------------------------------------===//
// Step 2: propagation
//===----------------------------------------------------------------------===//

/// transpose(transpose(x, p), q) = transpose(x, p then q); x when that is
/// the identity.
struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<TransposeOp>();
    if (!inner)
      return failure();
    // op[i] = inner[q[i]] = x[p[q[i]]].
    ArrayRef<int64_t> p = inner.getPermutation(), q = op.getPermutation();
    SmallVector<int64_t> composed = permuteShape(p, q);
    if (llvm::equal(composed, llvm::seq<int64_t>(0, composed.size()))) {
      rewriter.replaceOp(op, inner.getInput());
      return success();
    }
    rewriter.replaceOp(op, transpose(rewriter, op.getLoc(), inner.getInput(), composed));
    return success();
  }
};

/// A transpose that keeps its non-unit dimensions in order moves no data: a
/// 1x1 filter's OIHW -> OHWI, a pooled [N, C, 1, 1] -> [N, 1, 1, C]. It
/// becomes a reshape, which the plan makes a view of the same bytes (36 of
/// ResNet-50's 53 filters are 1x1).
struct TransposeAsReshape : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    ArrayRef<int64_t> in = cast<RankedTensorType>(op.getInput().getType()).getShape();
    if (!type.hasStaticShape())
      return failure();
    int64_t last = -1;
    for (int64_t p : op.getPermutation()) {
      if (in[p] == 1)
        continue;
      if (p < last)
        return failure();
      last = p;
    }
    rewriter.replaceOpWithNewOp<ReshapeOp>(
        op, ValueRange{op.getInput()},
        ArrayRef<NamedAttribute>{
            rewriter.getNamedAttr("shape", rewriter.getDenseI64ArrayAttr(type.getShape()))});
    return success();
  }
};

/// One result element from the same element of every operand, the operands
/// shaped like the result: such an op commutes with any transpose applied
/// to all operands alike. A widening cast is left out: moving a transpose
/// after it would move twice the bytes.
bool isLayoutAgnostic(Operation *op) {
  if (getOpClass(op) != ::dlc::rt::OpClass::kElementwise)
    return false;
  if (auto cast = dyn_cast<CastOp>(op)) {
    Type from = getElementTypeOrSelf(cast.getInput().getType());
    Type to = getElementTypeOrSelf(cast.getType());
    if (!from.isIntOrFloat() || !to.isIntOrFloat() ||
        to.getIntOrFloatBitWidth() > from.getIntOrFloatBitWidth())
      return false;
  }
  if (op->getNumResults() != 1 || op->getNumOperands() == 0)
    return false;
  Type resultType = op->getResult(0).getType();
  auto shape = cast<RankedTensorType>(resultType).getShape();
  return llvm::all_of(op->getOperands(), [&](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type && type.getShape() == shape;
  });
}

/// op(transpose(a, p), transpose(b, p)) = transpose(op(a, b), p).
struct SinkTranspose : RewritePattern {
  SinkTranspose(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}
  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (!isLayoutAgnostic(op))
      return failure();
    ArrayRef<int64_t> perm;
    SmallVector<Value> inputs;
    for (Value v : op->getOperands()) {
      auto t = v.getDefiningOp<TransposeOp>();
      if (!t || (!perm.empty() && t.getPermutation() != perm))
        return failure();
      perm = t.getPermutation();
      inputs.push_back(t.getInput());
    }
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    SmallVector<int64_t> shape = permuteShape(resultType.getShape(), inversePermutation(perm));
    OperationState state(op->getLoc(), op->getName(), inputs,
                         {resultType.clone(shape)}, op->getAttrs());
    Operation *moved = rewriter.create(state);
    rewriter.replaceOp(op, transpose(rewriter, op->getLoc(), moved->getResult(0), perm));
    return success();
  }
};

/// transpose(op(transpose(a, p), b), q) with q the inverse of p =
/// op(a, transpose(b, q)): the transpose after an op moves above it when
/// that cancels at least one operand's and adds at most one. This is what
/// lets a relu gradient computed from an NCHW gradient (one arriving from
/// max pooling) and an NHWC activation feed the NHWC batch-norm gradient
/// directly, next to it, as PaddlePaddle's bn_act_grad fusion needs. It
/// never adds transposes: the one after the op goes, one may come.
///
/// Rooted at the op, not the transpose: the greedy driver revisits an op
/// whose operands changed (a transpose sunk into one), not that op's users.
struct HoistTranspose : RewritePattern {
  HoistTranspose(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}
  LogicalResult matchAndRewrite(Operation *producer,
                                PatternRewriter &rewriter) const override {
    if (!producer->hasOneUse() || !isLayoutAgnostic(producer))
      return failure();
    auto op = dyn_cast<TransposeOp>(*producer->getUsers().begin());
    if (!op)
      return failure();
    ArrayRef<int64_t> q = op.getPermutation();
    int64_t cancelled = 0, added = 0;
    SmallVector<Value> operands;
    for (Value v : producer->getOperands()) {
      auto t = v.getDefiningOp<TransposeOp>();
      if (t && llvm::equal(permuteShape(t.getPermutation(), q),
                           llvm::seq<int64_t>(0, static_cast<int64_t>(q.size())))) {
        ++cancelled;
        operands.push_back(t.getInput());
      } else {
        ++added;
        operands.push_back(Value());
      }
    }
    if (cancelled == 0 || added > 1)
      return failure();
    for (auto [i, v] : llvm::enumerate(operands))
      if (!v)
        v = transpose(rewriter, op.getLoc(), producer->getOperand(i), q);
    OperationState state(producer->getLoc(), producer->getName(), operands,
                         {op.getType()}, producer->getAttrs());
    rewriter.replaceOp(op, rewriter.create(state)->getResults());
    rewriter.eraseOp(producer);
    return success();
  }
};

/// Ops that take an axis (concat, slice, its gradient, reductions, softmax
/// cross-entropy and its gradient) commute
/// with a transpose of their input once the axis is renamed: op(transpose(x,
/// p), axis a) = transpose(op(x, axis p[a]), p). DeepLabV3+'s ASPP concat
/// and its gradient's slices, and a convolution bias's gradient (a
/// reduce_sum over N, H, W), then stay in the layout, and a segmentation
/// net's per-pixel loss reads NHWC logits (class axis 3). A move never adds
/// transposes.
struct SinkTransposeThroughAxisOp : RewritePattern {
  SinkTransposeThroughAxisOp(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    bool crossEntropy = isa<SoftmaxCrossEntropyOp, SoftmaxCrossEntropyBackwardOp>(op);
    if (!crossEntropy &&
        !isa<ConcatOp, SliceOp, SliceBackwardOp, ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(op))
      return failure();
    // The permutation operands are transposed by (the first one's).
    ArrayRef<int64_t> perm;
    int64_t transposed = 0;
    SmallPtrSet<Operation *, 4> removed;
    for (Value v : op->getOperands())
      if (auto t = v.getDefiningOp<TransposeOp>()) {
        if (perm.empty())
          perm = t.getPermutation();
        if (t.getPermutation() != perm)
          continue;
        ++transposed;
        if (llvm::all_of(t->getUsers(), [&](Operation *user) { return user == op; }))
          removed.insert(t);
      }
    if (transposed == 0)
      return failure();
    int64_t rank = static_cast<int64_t>(perm.size());
    // Operands of another rank (the labels, the loss gradient seed) do not
    // take part.
    auto takesPart = [&](Value v) {
      return cast<RankedTensorType>(v.getType()).getRank() == rank;
    };
    // Cross-entropy's labels index the logits' other dimensions in order:
    // the class axis may move, the others must keep their order.
    if (crossEntropy) {
      int64_t axis = cast<IntegerAttr>(op->getAttr("class_axis")).getInt();
      axis = axis < 0 ? axis + rank : axis;
      SmallVector<int64_t> others;
      for (int64_t i = 0; i < rank; ++i)
        if (i != axis)
          others.push_back(perm[i]);
      if (!llvm::is_sorted(others))
        return failure();
    }
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    // What the moved op's result needs to look as before: `perm` again,
    // except for a reduction that drops dimensions, whose kept dimensions
    // come out in the input's order.
    SmallVector<int64_t> after(perm);
    bool reduction = isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(op);
    if (resultType.getRank() == 0) {
      after.clear(); // the loss
    } else if (reduction && resultType.getRank() != rank) {
      auto axes = cast<DenseI64ArrayAttr>(op->getAttr("axes")).asArrayRef();
      SmallVector<int64_t> kept;
      for (int64_t i = 0; i < rank; ++i)
        if (!llvm::is_contained(axes, i) && !llvm::is_contained(axes, i - rank))
          kept.push_back(perm[i]);
      SmallVector<int64_t> sorted(kept);
      llvm::sort(sorted);
      after.clear();
      for (int64_t k : kept)
        after.push_back(llvm::find(sorted, k) - sorted.begin());
    }
    auto isIdentity = [](ArrayRef<int64_t> p) {
      return llvm::equal(p, llvm::seq<int64_t>(0, static_cast<int64_t>(p.size())));
    };
    // The move removes the transposes only this op reads; it adds one
    // after the op (unless every reader of the result undoes it, or it
    // moves nothing) and one for each operand not transposed alike. It
    // must not add more than it removes: a gradient's transpose that four
    // slices read stays where it is, unless each slice's result is
    // transposed back (DeepLabV3+'s concat gradient).
    bool cancelsAfter = !op->getResult(0).use_empty() &&
                        llvm::all_of(op->getResult(0).getUsers(), [&](Operation *user) {
                          auto t = dyn_cast<TransposeOp>(user);
                          return t && isIdentity(permuteShape(after, t.getPermutation()));
                        });
    int64_t added = (cancelsAfter || isIdentity(after) ? 0 : 1) +
                    (llvm::count_if(op->getOperands(), takesPart) - transposed);
    if (static_cast<int64_t>(removed.size()) < added)
      return failure();
    SmallVector<int64_t> inverse = inversePermutation(perm);
    Location loc = op->getLoc();
    SmallVector<Value> operands;
    for (Value v : op->getOperands()) {
      auto t = v.getDefiningOp<TransposeOp>();
      operands.push_back(!takesPart(v) ? v
                         : t && t.getPermutation() == perm
                             ? t.getInput()
                             : transpose(rewriter, loc, v, inverse));
    }
    auto axisOf = [&](int64_t a) { return perm[a < 0 ? a + rank : a]; };
    SmallVector<NamedAttribute> attrs;
    for (NamedAttribute attr : op->getAttrs()) {
      StringRef name = attr.getName().getValue();
      if (name == "axis" || name == "class_axis")
        attr = rewriter.getNamedAttr(
            name, rewriter.getI64IntegerAttr(axisOf(cast<IntegerAttr>(attr.getValue()).getInt())));
      else if (name == "axes") {
        SmallVector<int64_t> axes;
        for (int64_t a : cast<DenseI64ArrayAttr>(attr.getValue()).asArrayRef())
          axes.push_back(axisOf(a));
        llvm::sort(axes);
        attr = rewriter.getNamedAttr(name, rewriter.getDenseI64ArrayAttr(axes));
      } else if (name == "input_shape")
        attr = rewriter.getNamedAttr(
            name, rewriter.getDenseI64ArrayAttr(permuteShape(
                      cast<DenseI64ArrayAttr>(attr.getValue()).asArrayRef(), inverse)));
      attrs.push_back(attr);
    }
    SmallVector<int64_t> shape = permuteShape(resultType.getShape(), inversePermutation(after));
    OperationState state(loc, op->getName(), operands, {resultType.clone(shape)}, attrs);
    Value moved = rewriter.create(state)->getResult(0);
    rewriter.replaceOp(op, isIdentity(after) ? moved : transpose(rewriter, loc, moved, after));
    return success();
  }
};

/// An optimizer update is element-wise over its parameter, gradient and
/// state: update(transpose(p, q), transpose(g, q), transpose(s, q)) =
/// transpose(update(p, g, s), q) for each result. With the filter stored in
/// the layout (step 0) this carries the update into the stored order, where
/// the transposes of its results cancel against those the return adds.
struct SinkTransposeThroughUpdate : RewritePattern {
  SinkTransposeThroughUpdate(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}
  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (getOpClass(op) != ::dlc::rt::OpClass::kOptimizer)
      return failure();
    // Parameter, gradient and state are transposed alike (their element
    // types may differ: pure fp16 keeps f32 state); the loss-scale status
    // is not.
    Value status = isa<SgdUpdateOp>(op) ? cast<SgdUpdateOp>(op).getScaleStatus()
                                        : cast<AdamWUpdateOp>(op).getScaleStatus();
    ArrayRef<int64_t> perm;
    SmallVector<Value> operands;
    for (Value v : op->getOperands()) {
      if (v == status) {
        operands.push_back(v);
        continue;
      }
      auto t = v.getDefiningOp<TransposeOp>();
      if (!t || (!perm.empty() && t.getPermutation() != perm))
        return failure();
      perm = t.getPermutation();
      operands.push_back(t.getInput());
    }
    SmallVector<Type> types;
    for (Type t : op->getResultTypes()) {
      auto tensor = cast<RankedTensorType>(t);
      types.push_back(tensor.clone(permuteShape(tensor.getShape(), inversePermutation(perm))));
    }
    OperationState state(op->getLoc(), op->getName(), operands, types, op->getAttrs());
    Operation *moved = rewriter.create(state);
    SmallVector<Value> results;
    for (Value v : moved->getResults())
      results.push_back(transpose(rewriter, op->getLoc(), v, perm));
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// Whether any element of any gradient overflowed does not depend on the
/// order of the elements: the status reads a transposed gradient's input.
struct LossScaleStatusIgnoresOrder : OpRewritePattern<LossScaleStatusOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LossScaleStatusOp op,
                                PatternRewriter &rewriter) const override {
    auto transposed = [](Value v) { return v.getDefiningOp<TransposeOp>() != nullptr; };
    if (llvm::none_of(op.getGrads(), transposed))
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      for (OpOperand &operand : op.getGradsMutable())
        if (auto t = operand.get().getDefiningOp<TransposeOp>())
          operand.set(t.getInput());
    });
    return success();
  }
};

/// A widening cast of a transposed value that only ops absorbing the
/// transpose read: optimizer updates and the loss-scale status (AMP's f32
/// copy of an f16 filter gradient), softmax cross-entropy and its gradient
/// (AMP's f32 logits of a segmentation net). The transpose moves below the
/// cast, where they take it in, though it would then move f32.
/// isLayoutAgnostic keeps other widening casts where they are.
struct SinkTransposeThroughGradientCast : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp op, PatternRewriter &rewriter) const override {
    auto t = op.getInput().getDefiningOp<TransposeOp>();
    if (!t || op->use_empty() || isLayoutAgnostic(op))
      return failure();
    for (OpOperand &use : op->getUses()) {
      Operation *user = use.getOwner();
      bool asGradient =
          getOpClass(user) == ::dlc::rt::OpClass::kOptimizer && use.getOperandNumber() == 1;
      bool asLogits = isa<SoftmaxCrossEntropyOp, SoftmaxCrossEntropyBackwardOp>(user);
      if (!asGradient && !asLogits && !isa<LossScaleStatusOp>(user))
        return failure();
    }
    auto type = cast<RankedTensorType>(op.getType());
    auto input = cast<RankedTensorType>(t.getInput().getType());
    Value cast = CastOp::create(rewriter, op.getLoc(), input.clone(type.getElementType()),
                                t.getInput(), op->getAttrs());
    rewriter.replaceOp(op, transpose(rewriter, op.getLoc(), cast, t.getPermutation()));
    return success();
  }
};

struct ConvertLayoutPass final
    : mlir::dlc::impl::ConvertLayoutPassBase<ConvertLayoutPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (layout != kLayoutNHWC && layout != kLayoutNCHW) {
      module.emitError() << "dlc-convert-layout: unknown layout '" << layout
                         << "' (NHWC or NCHW)";
      return signalPassFailure();
    }
    for (auto func : module.getOps<func::FuncOp>())
      numStoredFilters += storeFilters(func, layout);
    numConverted += convertAll<Conv2dOp>(module, layout) +
                    convertAll<Conv2dBackwardDataOp>(module, layout) +
                    convertAll<Conv2dBackwardFilterOp>(module, layout) +
                    convertAll<BatchNormOp>(module, layout) +
                    convertAll<BatchNormBackwardOp>(module, layout) +
                    convertAll<ResizeBilinearOp>(module, layout) +
                    convertAll<ResizeBilinearBackwardOp>(module, layout) +
                    convertAll<MaxPool2dOp>(module, layout) +
                    convertAll<MaxPool2dBackwardOp>(module, layout) +
                    convertAll<AvgPool2dOp>(module, layout) +
                    convertAll<AvgPool2dBackwardOp>(module, layout);

    RewritePatternSet patterns(&getContext());
    patterns.add<ComposeTransposes, SinkTranspose, HoistTranspose, SinkTransposeThroughAxisOp,
                 SinkTransposeThroughUpdate,
                 LossScaleStatusIgnoresOrder, SinkTransposeThroughGradientCast>(&getContext());
    FrozenRewritePatternSet frozen(std::move(patterns));
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      // Step 1 transposed a value once for each op reading it (a filter
      // for the forward and the data gradient; a gradient for the batch
      // norm and the residual add): common-subexpression elimination merges
      // those, which gives the single-use ops that hoisting needs. Patterns
      // and merging alternate until merging finds nothing (HRNet-W18 takes
      // 25 rounds, each removing a few transposes; 0.6 s in all).
      for (int round = 0;; ++round) {
        bool merged = false;
        // Every rewrite keeps the step's meaning, so a driver that stops at
        // its iteration limit leaves correct IR; the rounds go on.
        (void)applyPatternsGreedily(func.getBody(), frozen);
        IRRewriter rewriter(&getContext());
        DominanceInfo dominance(func);
        eliminateCommonSubExpressions(rewriter, dominance, func, &merged);
        if (!merged)
          break;
        if (round == 200)
          break;
      }
    }
    // Last, once the transposes have settled: those that move no data
    // become views (earlier, a reshape would stop the propagation).
    RewritePatternSet views(&getContext());
    views.add<TransposeAsReshape>(&getContext());
    if (failed(applyPatternsGreedily(module, std::move(views))))
      return signalPassFailure();
    module.walk([&](TransposeOp) { ++numTransposes; });
  }
};

} // namespace
