//===- Pipelines.h - the named compilation pipelines ------------*- C++ -*-===//
//
// What `dlc-bench --fusion S --precision P` compiles a model with, built in
// one place so that dlc-opt's named pipelines (`--pass-pipeline=
// 'builtin.module(dlc-train-step{fusion=xla precision=amp})'`) and dlc-bench
// run the same passes.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PIPELINES_PIPELINES_H
#define DLC_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <functional>
#include <limits>

#include <string>
#include <vector>

namespace mlir::dlc {

/// The fusion kinds a user may leave out of a strategy (--disable-fusion),
/// with the strategies that form each.
struct FusionKindInfo {
  const char *name;
  const char *strategy; // space-separated
  const char *what;
};
extern const FusionKindInfo kFusionKinds[];
extern const size_t kNumFusionKinds;

struct FusionPipelineOptions {
  std::string strategy = "none"; // a registered strategy: none, paddle, xla, ...
  /// PaddlePaddle's FP16-NHWC gate on batch-norm fusion, lifted.
  bool paddleRelaxGate = false;
  /// Kinds of kFusionKinds not to form.
  std::vector<std::string> disabled;
  /// Fusion passes explain every refusal as a remark.
  bool explain = false;
  /// tvm: the most ops a group holds (Relay's max_fuse_depth).
  int64_t tvmMaxDepth = 256;
  /// inductor: the most ops a group holds (config.max_fusion_size).
  int64_t inductorMaxFusionSize = 64;
  /// xla-priority: the GPU whose cost model prices fusions, and the kernel
  /// budget (operands and outputs of a group).
  std::string gpu = "H100-SXM";
  int64_t priorityMaxOperands = 96;
};

/// Adds the passes of a fusion strategy to `pm` (run on the module after
/// dlc-autodiff). Fails, with `error` set, on an unknown strategy or a kind
/// to disable that the strategy does not form.
LogicalResult buildFusionPipeline(OpPassManager &pm,
                                  const FusionPipelineOptions &options,
                                  std::string &error);

/// Adds a strategy's passes to a pass manager on the module; fails, with
/// `error` set, on an option it cannot honour.
using FusionStrategyBuilder = std::function<LogicalResult(
    OpPassManager &pm, const FusionPipelineOptions &options, std::string &error)>;

/// Registers a fusion strategy by name, beside none, paddle and xla: then
/// `dlc-bench --fusion NAME` sweeps it (its ratios against `none`),
/// `dlc-train-step{fusion=NAME}` builds it, and dlc-opt runs it as the
/// pipeline `dlc-fusion-NAME`. A pass plugin calls this from its
/// registration callback (docs/WritingAFusionPass.md). A name registered
/// twice is a fatal error, as for passes.
void registerFusionStrategy(StringRef name, StringRef description,
                            FusionStrategyBuilder builder);

/// Every registered strategy, in registration order: dlc's own first.
std::vector<std::string> fusionStrategyNames();

/// Whether `name` is a registered strategy.
bool isFusionStrategy(StringRef name);

/// "(none, paddle, xla, ...)": what an error about an unknown strategy lists.
std::string knownFusionStrategies();

/// The precision modes dlc-bench names: fp32, AMP with fp16 and dynamic
/// loss scaling, AMP with bf16 (no scaling), pure fp16 (with scaling).
inline const char *const kPrecisions[] = {"fp32", "amp", "amp-bf16", "fp16"};

struct PrecisionPipelineOptions {
  std::string precision = "fp32";
  double initLossScale = 65536.0;
  int64_t growthInterval = 2000;
};

/// Adds the precision passes that run before dlc-autodiff (autocast of the
/// forward pass) or after it (loss scaling). Fails, with `error` set, on an
/// unknown precision.
LogicalResult buildPrecisionPipeline(OpPassManager &pm,
                                     const PrecisionPipelineOptions &options,
                                     bool beforeAutodiff, std::string &error);

/// The layouts dlc-bench --layout names: `auto`, `nchw` (the models' own)
/// and `nhwc`. `auto` is the target's choice:
///   cuda, reference  NHWC in the half precisions, where cuDNN's tensor-core
///                    convolutions and fused batch norm want it; NCHW in fp32;
///   cpu              NHWC: oneDNN's fast (jit) pooling and batch norm take
///                    channels-last data, its plain-NCHW ones are 4-15x
///                    slower (small_convnet's max pooling, 2 cores).
inline const char *const kLayouts[] = {"auto", "nchw", "nhwc"};

/// The layout convolutions and batch norm run in, "NCHW" or "NHWC", for a
/// --layout name, a precision and a target (cpu, reference or cuda); fails,
/// with `error` set, on an unknown name.
FailureOr<std::string> resolveLayout(StringRef layout, StringRef precision,
                                     StringRef target, std::string &error);

/// Adds dlc-convert-layout (after dlc-autodiff and the precision passes,
/// before fusion) when the resolved layout is not the models' NCHW.
LogicalResult buildLayoutPipeline(OpPassManager &pm, StringRef layout,
                                  StringRef precision, StringRef target,
                                  std::string &error);

/// Everything dlc-bench compiles a model's training step with, from the model
/// file to the IR it lowers to a plan. The defaults are dlc-bench's, and the
/// names its flags' (`ranks` is its --gpus).
struct TrainStepOptions : public PassPipelineOptions<TrainStepOptions> {
  Option<int64_t> batch{*this, "batch",
                        llvm::cl::desc("samples per step (per rank)"),
                        llvm::cl::init(32)};
  Option<std::string> optimizer{
      *this, "optimizer", llvm::cl::desc("sgd or adamw; empty takes the model's"),
      llvm::cl::init("")};
  Option<double> lr{*this, "lr",
                    llvm::cl::desc("learning rate (>= 0); absent takes the model's"),
                    llvm::cl::init(std::numeric_limits<double>::quiet_NaN())};
  Option<std::string> precision{
      *this, "precision", llvm::cl::desc("fp32, amp, amp-bf16 or fp16"),
      llvm::cl::init("fp32")};
  Option<double> lossScale{
      *this, "loss-scale",
      llvm::cl::desc("initial dynamic loss scale of amp and fp16"),
      llvm::cl::init(65536.0)};
  Option<int64_t> lossScaleGrowthInterval{
      *this, "loss-scale-growth-interval",
      llvm::cl::desc("good steps before the loss scale doubles"),
      llvm::cl::init(2000)};
  Option<std::string> layout{
      *this, "layout",
      llvm::cl::desc("auto (the target's choice, see kLayouts), nchw or nhwc"),
      llvm::cl::init("auto")};
  Option<std::string> target{
      *this, "target",
      llvm::cl::desc("the backend the step is compiled for, whose choice "
                     "layout=auto is: cuda, cpu or reference"),
      llvm::cl::init("cpu")};
  Option<int64_t> ranks{
      *this, "ranks",
      llvm::cl::desc("data-parallel ranks; above 1, dlc-data-parallel "
                     "averages the gradients over them"),
      llvm::cl::init(1)};
  Option<double> bucketMb{*this, "bucket-mb",
                          llvm::cl::desc("MiB of gradients per all-reduce"),
                          llvm::cl::init(25.0)};
  Option<double> firstBucketMb{
      *this, "first-bucket-mb",
      llvm::cl::desc("MiB of the first bucket; 0 follows DDP (see "
                     "dlc-data-parallel)"),
      llvm::cl::init(0.0)};
  Option<std::string> gradCompression{
      *this, "grad-compression",
      llvm::cl::desc("send float32 gradients as fp16 or bf16, or none"),
      llvm::cl::init("none")};
  Option<std::string> fusion{*this, "fusion",
                             llvm::cl::desc("none, paddle, xla, tvm, inductor or "
                                            "a strategy a pass plugin registered"),
                             llvm::cl::init("none")};
  ListOption<std::string> disableFusion{
      *this, "disable-fusion",
      llvm::cl::desc("fusion kinds to leave out (see dlc-bench --help)")};
  Option<bool> paddleRelaxGate{
      *this, "paddle-relax-gate",
      llvm::cl::desc("fuse batch norm + activation whatever the precision "
                     "and layout"),
      llvm::cl::init(false)};
  Option<std::string> gpu{
      *this, "gpu",
      llvm::cl::desc("the GPU whose cost model prices xla-priority's fusions "
                     "(dlc/runtime/perf/Gpus.h)"),
      llvm::cl::init("H100-SXM")};
  Option<int64_t> priorityMaxOperands{
      *this, "priority-max-operands",
      llvm::cl::desc("xla-priority's kernel budget: operands and outputs of a "
                     "group (XLA's kMaxOperandsAndOutputsPerFusion)"),
      llvm::cl::init(96)};
  Option<bool> explainFusion{
      *this, "explain-fusion",
      llvm::cl::desc("remark on every pair the fusion passes did not fuse"),
      llvm::cl::init(false)};
  Option<int64_t> tvmMaxDepth{
      *this, "tvm-max-depth",
      llvm::cl::desc("tvm: the most ops a group holds (Relay's max_fuse_depth; 1 turns "
                     "fusion off)"),
      llvm::cl::init(256)};
  Option<int64_t> inductorMaxFusionSize{
      *this, "inductor-max-fusion-size",
      llvm::cl::desc("inductor: the most ops a group holds (config.max_fusion_size)"),
      llvm::cl::init(64)};
  Option<std::string> pipeline{
      *this, "pipeline",
      llvm::cl::desc("a textual pass pipeline to run after the fusion "
                     "strategy"),
      llvm::cl::init("")};
};

/// What buildTrainStepPipeline refused: the option at fault and why, for
/// the caller to say in its own words (a dlc-bench flag, a pipeline option).
struct TrainStepError {
  std::string option;
  std::string message;
};

/// Adds the training-step pipeline to `pm`, a pass manager on the module:
/// dlc-specialize-batch, the precision passes around dlc-autodiff, the
/// layout, dlc-data-parallel (ranks above 1), the fusion strategy and the
/// user's pipeline. Fails, with `error` set, on a value no pass takes.
LogicalResult buildTrainStepPipeline(OpPassManager &pm,
                                     const TrainStepOptions &options,
                                     TrainStepError &error);

/// Registers `dlc-fusion-<strategy>` as a named pipeline for every strategy
/// but none (`dlc-fusion-paddle`, `dlc-fusion-xla`, and those registered
/// later, as they are).
void registerFusionPipelines();

/// Registers `dlc-train-step`, what dlc-bench compiles a step with.
void registerTrainStepPipeline();

} // namespace mlir::dlc

#endif // DLC_PIPELINES_PIPELINES_H
