//===- FuseAttention.cpp - attention as one op ----------------------------===//
//
// The `attention` fusion kind of the xla strategies: the pattern of
// AttentionMatch.h becomes one train.attention, before dlc-autodiff, so that
// the backward is train.attention_backward (FlashAttention-2's, from the
// saved log-sum-exp) instead of softmax_backward over saved probabilities.
//
//===----------------------------------------------------------------------===//

#include "dlc/Transforms/AttentionMatch.h"
#include "dlc/Transforms/FusionRewrite.h"
#include "dlc/Transforms/Passes.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"

#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "dlc-fuse-attention"

namespace mlir::dlc {
#define GEN_PASS_DEF_FUSEATTENTIONPASS
#include "dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::train;

namespace {

void rewrite(AttentionPattern &m) {
  OpBuilder b(m.product);
  SmallVector<Value> operands = {m.scores.getLhs(), m.scores.getRhs(), m.product.getRhs()};
  if (Value mask = m.softmax.getMask())
    operands.push_back(mask);
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("scale", m.softmax.getScaleAttr()),
      b.getNamedAttr("causal", m.softmax.getCausalAttr())};
  if (m.dropout)
    attrs.append({b.getNamedAttr("dropout_rate", m.dropout.getRateAttr()),
                  b.getNamedAttr("seed", m.dropout.getSeedAttr())});
  auto attention = AttentionOp::create(b, m.product.getLoc(), operands, attrs);
  m.product.getOutput().replaceAllUsesWith(attention.getOutput());
  for (Operation *op : llvm::reverse(m.ops))
    op->erase();
}

struct FuseAttentionPass final : mlir::dlc::impl::FuseAttentionPassBase<FuseAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<AttentionPattern> patterns;
    walkFunctionsToFuse(getOperation(), [&](SoftmaxOp softmax) {
      if (softmax->getParentOfType<FusedOp>() || !looksLikeAttention(softmax))
        return;
      AttentionPattern pattern;
      FusionDecision decision = matchAttention(softmax, pattern);
      if (decision)
        patterns.push_back(pattern);
      else if (explain)
        softmax->emitRemark() << "not fused (attention): " << decision.reason();
    });
    for (AttentionPattern &pattern : patterns)
      rewrite(pattern);
    numFused += patterns.size();
  }
};

} // namespace
