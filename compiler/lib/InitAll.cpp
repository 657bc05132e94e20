//===- InitAll.cpp - register every dlc dialect and pass ------------------===//

#include "dlc/InitAll.h"

#include "dlc/Dialect/Train/IR/TrainDialect.h"
#include "dlc/Pipelines/Pipelines.h"
#include "dlc/Target/Plan/Passes.h"
#include "dlc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void mlir::dlc::registerAllDialects(DialectRegistry &registry) {
  registry.insert<train::TrainDialect, func::FuncDialect>();
}

void mlir::dlc::registerAllPasses() {
  registerDLCPasses();
  registerDLCTargetPlanPasses();
  registerFusionPipelines();
  registerTrainStepPipeline();
  // canonicalize, cse, symbol-dce and friends, for user-written pipelines.
  mlir::registerTransformsPasses();
}
