//===- SpecializeBatch.cpp - set the batch size and re-infer shapes -------===//
//
// Model files keep the batch dimension dynamic so that one file serves every
// batch size of a sweep; the compiler needs static shapes to plan memory and
// pick kernels. This pass bridges the two.
//
//===----------------------------------------------------------------------===//

#include "dlc/Transforms/Passes.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

#define DEBUG_TYPE "dlc-specialize-batch"

namespace mlir::dlc {
#define GEN_PASS_DEF_SPECIALIZEBATCHPASS
#include "dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

FailureOr<SpecializeBatchResult> mlir::dlc::specializeBatch(func::FuncOp func,
                                                            int64_t batchSize) {
  if (batchSize < 1)
    return func.emitOpError() << "expects a batch size >= 1, got " << batchSize;
  SpecializeBatchResult counts;
  if (func.isExternal())
    return counts;

  Block &entry = func.front();
  SmallVector<Type> argTypes;
  for (BlockArgument arg : entry.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (type && !type.hasStaticShape()) {
      for (int64_t d = 1; d < type.getRank(); ++d)
        if (type.isDynamicDim(d))
          return func.emitOpError()
                 << "argument #" << arg.getArgNumber()
                 << " has a dynamic dimension other than the batch (0): "
                 << type;
      SmallVector<int64_t> shape(type.getShape());
      shape[0] = batchSize;
      arg.setType(type.clone(shape));
      ++counts.numArgs;
    }
    argTypes.push_back(arg.getType());
  }

  MLIRContext *context = func.getContext();
  WalkResult walk = func.getBody().walk([&](Operation *op) {
    if (op->getNumResults() == 0)
      return WalkResult::advance();
    auto infer = dyn_cast<InferTypeOpInterface>(op);
    if (!infer) {
      op->emitOpError() << "cannot be batch-specialized: it does not infer "
                           "its result types";
      return WalkResult::interrupt();
    }
    SmallVector<Type> types;
    if (failed(infer.inferReturnTypes(
            context, op->getLoc(), op->getOperands(),
            op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
            op->getRegions(), types))) {
      op->emitRemark() << "while specializing the batch size to "
                       << batchSize;
      return WalkResult::interrupt();
    }
    for (auto [result, type] : llvm::zip_equal(op->getResults(), types))
      result.setType(type);
    ++counts.numOps;
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  // With the batch known, train.expand (a broadcast whose batch is another
  // tensor's) is a broadcast to a static shape.
  SmallVector<train::ExpandOp> expands;
  func.getBody().walk([&](train::ExpandOp op) { expands.push_back(op); });
  for (train::ExpandOp op : expands) {
    OpBuilder b(op);
    auto type = cast<RankedTensorType>(op.getOutput().getType());
    Value spread = train::BroadcastToOp::create(
        b, op.getLoc(), ValueRange{op.getInput()},
        {NamedAttribute(b.getStringAttr("shape"),
                        b.getDenseI64ArrayAttr(type.getShape()))});
    op.getOutput().replaceAllUsesWith(spread);
    op.erase();
  }

  Operation *terminator = entry.getTerminator();
  func.setFunctionType(FunctionType::get(context, argTypes,
                                         terminator->getOperandTypes()));
  return counts;
}

namespace {

struct SpecializeBatchPass final
    : mlir::dlc::impl::SpecializeBatchPassBase<SpecializeBatchPass> {
  using Base::Base;

  void runOnOperation() override {
    if (batchSize < 1) {
      getOperation().emitError()
          << "dlc-specialize-batch expects option batch-size >= 1, got "
          << batchSize;
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      FailureOr<SpecializeBatchResult> counts = specializeBatch(func, batchSize);
      if (failed(counts))
        return signalPassFailure();
      numSpecializedArgs += counts->numArgs;
      numReinferredOps += counts->numOps;
    }
  }
};

} // namespace
