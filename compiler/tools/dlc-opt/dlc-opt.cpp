//===- dlc-opt.cpp - dlc's mlir-opt ---------------------------------------===//
//
// Parses, verifies and transforms train-dialect IR with any dlc pass, e.g.
//   dlc-opt models/small_convnet.mlir --dlc-specialize-batch=batch-size=32
//
//===----------------------------------------------------------------------===//

#include "dlc/InitAll.h"

#include "mlir/Debug/Counter.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"

namespace {

/// Hides from --help every option registered before main: those are the
/// static options of the LLVM libraries linked in (code generation, target
/// and debugging flags), hundreds of lines before the first dlc pass.
/// MlirOptMain registers MLIR's own options (the pass list, --mlir-*) after
/// this, so they stay; --help-hidden still lists everything.
void hideLlvmOptions() {
  for (auto &[name, option] : llvm::cl::getRegisteredOptions()) {
    bool generic = false; // --help, --version and their kin
    for (const llvm::cl::OptionCategory *category : option->Categories)
      generic |= category->getName() == "Generic Options";
    if (!generic && option->getOptionHiddenFlag() == llvm::cl::NotHidden)
      option->setHiddenFlag(llvm::cl::Hidden);
  }
}

/// Lists MLIR's options (--mlir-*, --verify-diagnostics, ...) under a
/// heading of their own after the general options, so that --help opens
/// with the passes and pipelines. Registering them here first is what
/// MlirOptMain does (each registration happens once), so it finds them so.
void groupMlirOptions(mlir::DialectRegistry &registry) {
  static llvm::cl::OptionCategory mlirCategory("MLIR options");
  mlir::MlirOptMainConfig::registerCLOptions(registry);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  mlir::tracing::DebugCounter::registerCLOptions();
  auto &options = llvm::cl::getRegisteredOptions();
  // The pass list: one option named by every pass.
  llvm::cl::Option *passes =
      options.count("dlc-train-step") ? options.lookup("dlc-train-step") : nullptr;
  for (auto &[name, option] : options)
    if (option != passes && option->getOptionHiddenFlag() == llvm::cl::NotHidden &&
        option->Categories.front() == &llvm::cl::getGeneralCategory())
      option->addCategory(mlirCategory);
}

} // namespace

int main(int argc, char **argv) {
  hideLlvmOptions();
  mlir::DialectRegistry registry;
  mlir::dlc::registerAllDialects(registry);
  mlir::dlc::registerAllPasses();
  groupMlirOptions(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "dlc optimizer driver: the train dialect and dlc passes\n",
      registry));
}
