//===- ConvertLayout.cpp - NHWC convolutions and batch norm ---------------===//
//
// Layout assignment in two steps, each of which keeps the step's meaning:
//
// 1. Every convolution and batch norm (forward and backward) on 4-d data not
//    in the target layout is rewritten to it between transposes: operands
//    in, results back out.
// 2. Transposes sink through layout-agnostic element-wise ops whose operands
//    are all transposed alike, and a transpose of a transpose composes (to
//    nothing when the two are inverse). So NHWC results flow through the
//    activations and residual adds into the next NHWC op, and the
//    transposes left are the layout's edges.
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
  if (!isa<ReluOp, TanhOp, SigmoidOp, GeluOp, ScaleOp, AddOp, SubOp, MulOp, DivOp, CastOp,
           ReluBackwardOp, TanhBackwardOp, SigmoidBackwardOp, GeluBackwardOp>(op))
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
    numConverted += convertAll<Conv2dOp>(module, layout) +
                    convertAll<Conv2dBackwardDataOp>(module, layout) +
                    convertAll<Conv2dBackwardFilterOp>(module, layout) +
                    convertAll<BatchNormOp>(module, layout) +
                    convertAll<BatchNormBackwardOp>(module, layout);

    RewritePatternSet patterns(&getContext());
    patterns.add<ComposeTransposes, SinkTranspose, HoistTranspose>(&getContext());
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
