//===- DataParallel.cpp - gradient all-reduce for data-parallel ranks -----===//
//
// PyTorch's DistributedDataParallel inside the compiled step. Every rank runs
// this same step on its own slice of the global batch; before any reader
// sees a parameter's gradient, it is replaced by its mean over the ranks, so
// every rank's optimizer applies the same update to the same parameters.
//
//   - The gradients are the values the optimizer updates read (sgd_update,
//     adamw_update); one read by several updates is averaged once.
//   - They are grouped into buckets of about `bucket-mb` MiB in the order the
//     backward pass computes them (DDP fills its buckets in the same order,
//     from the last layer back), and each bucket becomes one
//     `train.all_reduce` placed right after its last gradient, where a
//     runtime can start it while the backward pass goes on.
//   - Every other reader of a gradient (the loss-scale overflow check, the
//     updates) reads the averaged value: all ranks then agree on whether
//     the step overflowed.
//   - reduce-dtype=f16|bf16 sends float32 gradients in half precision, as
//     DDP's compression hooks do: cast down before the all-reduce, the
//     means cast back up after it.
//
//===----------------------------------------------------------------------===//

#include "dlc/Transforms/Passes.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "dlc-data-parallel"

namespace mlir::dlc {
#define GEN_PASS_DEF_DATAPARALLELPASS
#include "dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::train;

namespace {

/// The gradient an optimizer update reads, or null for another op.
Value gradientOf(Operation *op) {
  if (auto sgd = dyn_cast<SgdUpdateOp>(op))
    return sgd.getGrad();
  if (auto adamw = dyn_cast<AdamWUpdateOp>(op))
    return adamw.getGrad();
  return {};
}

int64_t bytesOf(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return type.getNumElements() *
         static_cast<int64_t>(type.getElementTypeBitWidth() / 8);
}

struct DataParallelPass final
    : mlir::dlc::impl::DataParallelPassBase<DataParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto step = module.lookupSymbol<func::FuncOp>("train_step");
    if (!step || step.isExternal()) {
      module.emitError() << "dlc-data-parallel expects a func.func @train_step "
                            "with a body (run dlc-autodiff first)";
      return signalPassFailure();
    }
    Type reduceType;
    if (reduceDtype == "f16")
      reduceType = Float16Type::get(module.getContext());
    else if (reduceDtype == "bf16")
      reduceType = BFloat16Type::get(module.getContext());
    else if (!reduceDtype.empty()) {
      module.emitError() << "dlc-data-parallel: reduce-dtype must be f16 or bf16 "
                            "(or empty, to send gradients as they are), got '"
                         << reduceDtype << "'";
      return signalPassFailure();
    }
    if (ranks < 2 || !(bucketMb > 0) || !(firstBucketMb >= 0)) {
      module.emitError() << "dlc-data-parallel expects ranks >= 2 (one rank "
                            "averages nothing), bucket-mb > 0 and first-bucket-mb "
                            ">= 0, got ranks="
                         << static_cast<int64_t>(ranks) << ", bucket-mb="
                         << static_cast<double>(bucketMb) << " and first-bucket-mb="
                         << static_cast<double>(firstBucketMb);
      return signalPassFailure();
    }

    Block &body = step.front();
    llvm::SetVector<Value> grads;
    bool failedWalk = false;
    step.walk([&](Operation *op) {
      if (isa<AllReduceOp>(op)) {
        op->emitOpError() << "is already in @train_step: dlc-data-parallel "
                             "runs once";
        failedWalk = true;
        return;
      }
      Value grad = gradientOf(op);
      if (!grad)
        return;
      if (op->getBlock() != &body) {
        op->emitOpError() << "is inside a fused group: run dlc-data-parallel "
                             "before the fusion passes, which cannot see "
                             "where a gradient is ready once its update is fused";
        failedWalk = true;
        return;
      }
      grads.insert(grad);
    });
    if (failedWalk)
      return signalPassFailure();
    if (grads.empty()) {
      step.emitError() << "dlc-data-parallel found no optimizer update in "
                          "@train_step: nothing to average";
      return signalPassFailure();
    }

    // Under AMP the updates read float32 copies of half-precision
    // gradients, which the precision passes put next to the updates, after
    // the whole backward pass: every bucket would then be ready only at its
    // end, leaving nothing to overlap. A cast is pure: it moves up to its
    // operand, where the gradient is really ready.
    for (Value grad : grads)
      if (auto widening = grad.getDefiningOp<CastOp>())
        if (Operation *source = widening.getInput().getDefiningOp();
            source && source->getBlock() == &body)
          widening->moveAfter(source);

    // The backward pass's order: where each gradient becomes ready.
    llvm::DenseMap<Operation *, int64_t> position;
    int64_t next = 0;
    for (Operation &op : body)
      position[&op] = next++;
    auto readyAt = [&](Value grad) -> int64_t {
      Operation *def = grad.getDefiningOp();
      return def ? position.lookup(def) : -1;
    };
    SmallVector<Value> ordered(grads.begin(), grads.end());
    llvm::stable_sort(ordered, [&](Value a, Value b) {
      return readyAt(a) < readyAt(b);
    });

    // Buckets: close one once it holds bucket-mb MiB; the first once it
    // holds first-bucket-mb (DDP's first_bucket_bytes_cap: 1 MiB when
    // bucket_cap_mb is left at its default, else bucket_cap_mb).
    int64_t cap = static_cast<int64_t>(bucketMb * (1 << 20));
    double firstMb = firstBucketMb > 0 ? static_cast<double>(firstBucketMb)
                     : bucketMb == 25.0 ? 1.0
                                        : static_cast<double>(bucketMb);
    int64_t firstCap = static_cast<int64_t>(firstMb * (1 << 20));
    SmallVector<SmallVector<Value>> buckets(1);
    int64_t filled = 0;
    for (Value grad : ordered) {
      if (filled >= (buckets.size() == 1 ? firstCap : cap)) {
        buckets.emplace_back();
        filled = 0;
      }
      buckets.back().push_back(grad);
      filled += bytesOf(grad);
    }

    OpBuilder builder(module.getContext());
    for (auto [index, bucket] : llvm::enumerate(buckets)) {
      Value last = bucket.back();
      if (Operation *def = last.getDefiningOp())
        builder.setInsertionPointAfter(def);
      else
        builder.setInsertionPointToStart(&body);
      // What is sent: each gradient, or its cast to reduce-dtype; `sender`
      // is the op that reads the gradient to send it.
      SmallVector<Value> sent;
      SmallVector<Operation *> senders;
      for (Value grad : bucket) {
        auto type = cast<RankedTensorType>(grad.getType());
        auto widened = grad.getDefiningOp<CastOp>();
        if (reduceType && type.getElementType().isF32() && widened &&
            getElementTypeOrSelf(widened.getInput().getType()) == reduceType) {
          // AMP's float32 copy of a gradient computed in reduce-dtype: the
          // widening is exact, so its cast back down is the gradient itself.
          sent.push_back(widened.getInput());
          senders.push_back(widened);
          ++numSentAsComputed;
        } else if (reduceType && type.getElementType().isF32()) {
          auto down = CastOp::create(builder, grad.getLoc(), grad, TypeAttr::get(reduceType));
          sent.push_back(down);
          senders.push_back(down);
        } else {
          sent.push_back(grad);
          senders.push_back(nullptr); // the all-reduce, created next
        }
      }
      auto allReduce = AllReduceOp::create(
          builder, last.getLoc(), TypeRange(ValueRange(sent)), sent,
          builder.getI64IntegerAttr(ranks),
          builder.getI64IntegerAttr(static_cast<int64_t>(index)));
      for (Operation *&sender : senders)
        if (!sender)
          sender = allReduce;
      for (auto [grad, mean, sender] : llvm::zip(bucket, allReduce.getResults(), senders)) {
        // What the readers get: the mean, cast back where it was sent cast.
        Value reduced = mean;
        if (mean.getType() != grad.getType())
          reduced = CastOp::create(builder, grad.getLoc(), mean,
                                   TypeAttr::get(getElementTypeOrSelf(grad.getType())));
        for (OpOperand &use : grad.getUses()) {
          Operation *user = body.findAncestorOpInBlock(*use.getOwner());
          if (user == sender || !user->isBeforeInBlock(allReduce))
            continue;
          InFlightDiagnostic diag =
              use.getOwner()->emitOpError()
              << "reads a gradient before its bucket's all-reduce: every "
                 "reader of a gradient must follow the last gradient of its "
                 "bucket";
          diag.attachNote(allReduce.getLoc()) << "the all-reduce of bucket " << index;
          return signalPassFailure();
        }
        grad.replaceUsesWithIf(reduced,
                               [&](OpOperand &use) { return use.getOwner() != sender; });
        // The overflow check reads the mean as sent: widening is exact and
        // keeps every inf and NaN, and the update is then the cast's one
        // reader (xla runs such a cast inside the optimizer's loop). A value
        // too large for f16 overflows when it is sent, as in DDP's hook,
        // and the check sees it.
        auto isCheck = [](OpOperand &use) { return isa<LossScaleStatusOp>(use.getOwner()); };
        if (reduced != mean) {
          reduced.replaceUsesWithIf(mean, isCheck);
          // The cast back up goes just before its first reader (the
          // update): right after the all-reduce it would be the first op to
          // touch the bucket's bytes, and a runtime would wait for the
          // all-reduce there, leaving nothing to overlap.
          Operation *first = nullptr;
          for (Operation *user : reduced.getUsers())
            if (Operation *op = body.findAncestorOpInBlock(*user);
                op && (!first || op->isBeforeInBlock(first)))
              first = op;
          if (first)
            reduced.getDefiningOp()->moveBefore(first);
        }
        // Under AMP the check reads the half-precision gradient the update's
        // float32 copy was widened from: it must read the mean too, or ranks
        // could disagree on whether the step overflowed (GradScaler checks
        // the all-reduced gradients).
        if (auto widening = grad.getDefiningOp<CastOp>()) {
          Value source = widening.getInput();
          for (OpOperand &use : source.getUses())
            if (isCheck(use) && !allReduce->isBeforeInBlock(use.getOwner())) {
              use.getOwner()->emitOpError()
                  << "checks a gradient for overflow before its bucket's all-reduce";
              return signalPassFailure();
            }
          source.replaceUsesWithIf(mean, isCheck);
        }
        // AMP's widening cast, once the mean replaced every reader.
        if (auto widened = dyn_cast<CastOp>(sender);
            widened && widened.getResult() == grad && grad.use_empty())
          widened.erase();
      }
      numGradients += bucket.size();
      ++numBuckets;
    }
  }
};

} // namespace
