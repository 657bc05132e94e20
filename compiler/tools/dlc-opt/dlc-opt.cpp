//===- dlc-opt.cpp - dlc's mlir-opt ---------------------------------------===//
//
// Parses, verifies and transforms train-dialect IR with any dlc pass, e.g.
//   dlc-opt models/small_convnet.mlir --dlc-specialize-batch=batch-size=32
//
//===----------------------------------------------------------------------===//

#include "dlc/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::dlc::registerAllDialects(registry);
  mlir::dlc::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "dlc optimizer driver: the train dialect and dlc passes\n",
      registry));
}
