//===- PipelineFlags.h - the flags that choose how a step compiles -*- C++ -*-===//
//
// Every dlc-bench flag that shapes the compiled training step (precision,
// fusion, layout, the optimizer and its rate, loss scaling, the gradient
// buckets, plugins, --pipeline) is declared once, in PipelineFlags.cpp, and
// bound to mlir::dlc::TrainStepOptions in one function there
// (bindTrainStepOptions). A new pipeline flag touches that file alone: its
// declaration, its check in readPipelineFlags and its line in the binding.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_PIPELINEFLAGS_H
#define DLC_BENCH_PIPELINEFLAGS_H

#include "dlc/Pipelines/Pipelines.h"

#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace dlc::bench {

/// The category every flag of the run command is listed under in --help
/// (a function, so that flags in any file may name it at static
/// initialization).
llvm::cl::OptionCategory &benchCategory();

/// A comma-separated flag value, "a,b,c" -> {"a", "b", "c"}; "" -> {""}.
std::vector<std::string> splitList(const std::string &list);

/// The pipeline axes a sweep crosses, as the flags give them (checked).
struct PipelineAxes {
  std::vector<std::string> precisions, fusions, layouts;
};

/// One configuration as the pipeline sees it.
struct PipelinePoint {
  std::string precision, fusion, layout;
  std::string target; // the --backend the step is compiled for
  int64_t batch = 32, ranks = 1;
  /// Whether the fusion passes' refusals are collected (--explain-fusion,
  /// or --debug-dir's fusion.md).
  bool explainFusion = false;
};

/// Loads --load-pass-plugin and --load-dialect-plugin, before --fusion is
/// checked (a plugin may register strategies); "" or the error.
std::string loadPipelinePlugins();

/// Adds the loaded dialect plugins' dialects to `registry`.
void registerPluginDialects(mlir::DialectRegistry &registry);

/// Checks every pipeline flag, numbers included; the axes to sweep into
/// `axes`. "" when all are valid, else the one-line error.
std::string readPipelineFlags(PipelineAxes &axes);

/// The data-parallel flags (--bucket-mb, --first-bucket-mb,
/// --grad-compression) shape the compiled step's all-reduces: "" when they
/// may apply, else the error for a .plan (`fromPlan`) or one rank.
std::string checkDataParallelFlags(bool fromPlan, bool dataParallel);

/// `point` and the flags, as the dlc-train-step pipeline takes them.
void bindTrainStepOptions(const PipelinePoint &point, mlir::dlc::TrainStepOptions &options);

/// buildTrainStepPipeline's refusal in the words of dlc-bench's flags.
std::string trainStepErrorMessage(const mlir::dlc::TrainStepError &error,
                                  const PipelinePoint &point);

/// The configuration's strategy as reports name it: the fusion strategy
/// (paddle-relaxed, -no-<kinds>, -<layout> when given), then any --pipeline.
std::string strategyName(const std::string &fusion, const std::string &layout);

/// --optimizer as given ("" takes the model's).
std::string optimizerFlag();

/// --pad-rows: whether the lowering pads misaligned rows (PlanOptions).
bool padRowsFlag();

/// --explain-fusion: not given, the summary by reason, or every remark.
enum class ExplainFusion { kOff, kSummary, kAll };
ExplainFusion explainFusionFlag();

} // namespace dlc::bench

#endif // DLC_BENCH_PIPELINEFLAGS_H
