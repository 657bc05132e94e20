//===- CompileConfiguration.cpp - one configuration of a sweep ------------===//

#include "CompileConfiguration.h"

#include "DebugDir.h"
#include "FusionExplain.h"
#include "PipelineFlags.h"
#include "PredictCommand.h"
#include "RunPlan.h"

#include "dlc/InitAll.h"
#include "dlc/Pipelines/Pipelines.h"
#include "dlc/Target/Plan/TrainToPlan.h"
#include "dlc/runtime/Collective.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <optional>

using namespace mlir;

namespace dlc::bench {

namespace {

/// Whether an option registered by MLIR (--mlir-*) was given.
bool mlirOptionGiven(llvm::StringRef name) {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find(name);
  return it != options.end() && it->second->getNumOccurrences() > 0;
}

} // namespace

std::string modelName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(0, dot);
}

std::string Configuration::displayName(bool withModel) const {
  return (withModel ? modelName(model) + " " : "") + precision + " " + fusion +
         (layout == "auto" ? "" : " " + layout) + ", batch " + std::to_string(batch) +
         (gpus > 1 ? ", " + std::to_string(gpus) + " GPUs" : "");
}

std::string Configuration::directoryName(bool withModel) const {
  return (withModel ? modelName(model) + "-" : "") + precision + "-" + fusion +
         (layout == "auto" ? "" : "-" + layout) + "-b" + std::to_string(batch) + "-gpus" +
         std::to_string(gpus);
}

int compileConfiguration(const Configuration &c, const RunFlags &flags, bool fromPlan,
                         bool predict, const ConfigurationOutputs &outputs, rt::Plan &plan,
                         Result &result) {
  const std::string &modelPath = c.model, &precision = c.precision, &fusion = c.fusion,
                    &layout = c.layout;
  int64_t batch = c.batch, gpus = c.gpus;
  // Compile: parse, specialize the batch, differentiate, lower to a plan.
  // A .plan file was compiled already (perhaps on another machine): run it.
  auto compileStart = std::chrono::steady_clock::now();
  mlir::dlc::PlanStats stats;
  // The fusion passes' refusals; none for a plan compiled already.
  std::optional<std::vector<FusionRemark>> fusionRemarks;
  // The configuration's name in reports: the strategy, then any pipeline.
  std::string strategy = strategyName(fusion, layout);
  if (fromPlan) {
    auto read = rt::readPlanFile(modelPath);
    if (!read.isOk())
      return fail(read.status().toString());
    plan = std::move(read.value());
    if (flags.batchGiven && batch != plan.batch)
      return fail("--batch " + std::to_string(batch) + " differs from the plan's batch " +
                  std::to_string(plan.batch) + "; compile the model again for another batch");
    batch = plan.batch;
    if (flags.gpusGiven && gpus != rt::planRanks(plan))
      return fail("--gpus " + std::to_string(gpus) + " differs from the " +
                  std::to_string(rt::planRanks(plan)) +
                  " ranks the plan was compiled for; compile the model again");
    // A plan records offsets, not which buffers share storage by design:
    // the no-reuse total and the liveness bound are unknown here.
    stats.kernels = static_cast<int64_t>(plan.kernels.size());
    stats.totalBufferBytes = stats.lowerBoundBytes = stats.paddingBytes = -1;
  } else {
    DialectRegistry registry;
    mlir::dlc::registerAllDialects(registry);
    registerPluginDialects(registry);
    MLIRContext context(registry);
    context.loadAllAvailableDialects();
    // An error names the op and where it is; MLIR's default dump of the IR
    // around it buries that line, so only the flag asks for it.
    if (!mlirOptionGiven("mlir-print-op-on-diagnostic"))
      context.printOpOnDiagnostic(false);
    llvm::SourceMgr sourceMgr;
    SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
    std::string error;
    auto file = openInputFile(modelPath, &error);
    if (!file)
      return fail(error);
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (!module)
      return fail("cannot parse " + modelPath);
    PassManager pm(&context);
    if (failed(applyPassManagerCLOptions(pm)))
      return fail("bad pass manager options");
    ExplainFusion explain = explainFusionFlag();
    PipelinePoint point{precision, fusion, layout, flags.backend, batch, gpus,
                        explain != ExplainFusion::kOff || !outputs.debugDir.empty()};
    mlir::dlc::TrainStepOptions options;
    bindTrainStepOptions(point, options);
    if (mlir::dlc::TrainStepError error;
        failed(mlir::dlc::buildTrainStepPipeline(pm, options, error)))
      return fail(trainStepErrorMessage(error, point));
    bool writes = rt::launchedRank() == 0;
    std::string irError;
    if (!outputs.debugDir.empty() && writes)
      dumpIRAfterEachPass(pm, outputs.debugDir, &irError);
    std::optional<FusionRemarkCollector> collector;
    if (options.explainFusion)
      collector.emplace(context, /*passThrough=*/explain == ExplainFusion::kAll);
    if (failed(pm.run(*module))) {
      if (collector)
        collector->release();
      return fail("cannot compile " + modelPath + " (see the errors above)");
    }
    if (!irError.empty())
      return fail("--debug-dir: " + irError);
    if (collector) {
      fusionRemarks = collector->remarks();
      if (explain == ExplainFusion::kSummary && writes)
        printFusionSummary(llvm::errs(), *fusionRemarks,
                                  outputs.inSweep ? outputs.label : "");
    }
    // As dlc-opt prints it; under mpirun every rank compiles the same step.
    if (!flags.emitMlir.empty() && rt::launchedRank() == 0) {
      auto out = openOutputFile(flags.emitMlir, &error);
      if (!out)
        return fail("--emit-mlir: " + error);
      module->print(out->os());
      out->os() << "\n";
      out->keep();
    }
    FailureOr<rt::Plan> compiled =
        mlir::dlc::lowerToPlan(*module,
                               {modelName(modelPath), precision, strategy, padRowsFlag()},
                               &stats);
    if (failed(compiled))
      return fail("cannot lower " + modelPath + " to a plan");
    plan = std::move(*compiled);
  }
  double compileMs = std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - compileStart)
                         .count();
  if (!flags.emitPlan.empty())
    if (rt::Status status = rt::writePlanFile(plan, flags.emitPlan); !status.isOk())
      return fail(status.toString());
  if (!outputs.kernelDir.empty()) {
    std::string summary;
    if (rt::Status s = writeGeneratedKernels(plan, outputs.kernelDir, summary); !s.isOk())
      return fail("--dump-kernels: " + s.message());
    if (rt::launchedRank() == 0)
      llvm::errs() << "dlc-bench: wrote " << summary << "\n";
  }
  if (!outputs.debugDir.empty() && rt::launchedRank() == 0) {
    if (rt::Status s = writeConfigurationDebugFiles(
            outputs.debugDir, outputs.label, plan, fusionRemarks ? &*fusionRemarks : nullptr);
        !s.isOk())
      return fail("--debug-dir: " + s.message());
    llvm::errs() << "dlc-bench: wrote " << outputs.debugDir
                 << "/index.html and the files it links (IR after each pass, plan, routing, "
                    "kernels, fusion)\n";
  }

  // --predict routes the plan itself: describing it would route it twice.
  if (predict) {
    recordForPrediction(plan, gpus);
    return 0;
  }
  // The plan's own description (its model, precision, strategy, batch,
  // optimizer, counts), then what only the compiler knows.
  result.optimizer = optimizerFlag();
  // The CUDA backend's launch count is a GPU figure: a CPU run routes the
  // plan for it only when --gpu or --debug-dir's routing.txt asks for one.
  describePlan(plan, flags.backend, !flags.gpuName.empty() || !flags.debugDir.empty(),
               result);
  result.compileMs = compileMs;
  result.totalBufferBytes = stats.totalBufferBytes;
  result.lowerBoundBytes = stats.lowerBoundBytes;
  result.paddingBytes = stats.paddingBytes;
  ChosenPeak peak;
  if (std::string error;
      !choosePeak(flags.gpuName, result.precision, flags.fp32Peak,
                  flags.peakTflops.value_or(0), peak, error))
    return fail(error);
  result.peakTflops = peak.tflops;
  result.peakName = peak.name;
  result.confidence = flags.confidence;
  return 0;
}

} // namespace dlc::bench
