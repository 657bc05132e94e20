//===- Pipelines.cpp - the named compilation pipelines --------------------===//

#include "dlc/Pipelines/Pipelines.h"

#include "dlc/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::dlc;

const FusionKindInfo mlir::dlc::kFusionKinds[] = {
    {"bn-act", "paddle", "batch norm + relu, forward and backward"},
    {"bn-add-act", "paddle", "batch norm + add + relu, forward and backward"},
    {"elewise-act", "paddle", "element-wise add / mul + activation"},
    {"gemm-epilogue", "xla xla-priority", "bias and activation in GEMM / convolution epilogues"},
    {"producer-consumer", "xla", "loop and input (reduction) fusion"},
    {"priority", "xla-priority", "loop and input fusion by the cost model, most time saved first"},
    // PaddlePaddle's BuildStrategy.fuse_all_optimizer_ops; XLA's horizontal
    // fusion; Inductor's foreach (combo) kernels of a compiled optimizer step.
    {"optimizer-horizontal", "paddle xla xla-priority inductor", "every optimizer update in one kernel"},
    {"cast-horizontal", "xla xla-priority",
     "every parameter's cast to half precision in one kernel"},
    {"output", "tvm inductor", "a GEMM / convolution with its element-wise epilogue in one group"},
    // XLA's cuDNN fused-MHA rewriter: formed on the model before autodiff
    // (attentionBeforeAutodiff), so the backward recomputes p from lse.
    {"attention", "xla xla-priority",
     "matmul -> softmax -> dropout -> matmul as one flash-style train.attention, forward and "
     "backward"},
};
const size_t mlir::dlc::kNumFusionKinds = std::size(kFusionKinds);

namespace {

bool enabled(const FusionPipelineOptions &options, StringRef kind) {
  return !llvm::is_contained(options.disabled, kind);
}

/// Whether the strategy forms the `attention` kind, which is rewritten on
/// the model before autodiff rather than in the fusion pipeline after it.
bool attentionBeforeAutodiff(StringRef strategy, ArrayRef<std::string> disabled) {
  const auto *info = llvm::find_if(
      kFusionKinds, [](const FusionKindInfo &k) { return StringRef(k.name) == "attention"; });
  SmallVector<StringRef> owners;
  StringRef(info->strategy).split(owners, ' ');
  return llvm::is_contained(owners, strategy) && !llvm::is_contained(disabled, "attention");
}

LogicalResult buildPaddle(OpPassManager &pm, const FusionPipelineOptions &options,
                          std::string &) {
  FuseBatchNormActivationPassOptions bn;
  bn.relaxGate = options.paddleRelaxGate;
  bn.explain = options.explain;
  for (const char *kind : {"bn-act", "bn-add-act"})
    if (!enabled(options, kind))
      bn.disabled.push_back(kind);
  pm.addPass(createFuseBatchNormActivationPass(bn));
  if (enabled(options, "elewise-act"))
    pm.addPass(createFuseElementwiseActivationPass({options.explain}));
  if (enabled(options, "optimizer-horizontal"))
    pm.addPass(createFuseOptimizerUpdatesPass({"paddle", /*fuseGradientCasts=*/false}));
  return success();
}

LogicalResult buildXla(OpPassManager &pm, const FusionPipelineOptions &options,
                       std::string &) {
  // Epilogues first: an activation that belongs in a GEMM's epilogue
  // must not be taken by a loop fusion.
  if (enabled(options, "gemm-epilogue"))
    pm.addPass(createFuseGemmEpiloguePass({options.explain}));
  if (enabled(options, "producer-consumer"))
    pm.addPass(createFuseProducerConsumerPass({options.explain}));
  if (enabled(options, "optimizer-horizontal"))
    pm.addPass(createFuseOptimizerUpdatesPass());
  if (enabled(options, "cast-horizontal"))
    pm.addPass(createFuseParameterCastsPass({options.explain}));
  return success();
}

/// XLA's GPU pipeline since priority fusion (gpu_compiler.cc): the GEMM
/// rewriter's cuBLASLt epilogues first, then PriorityFusion on the cost
/// model, then the horizontal fusions (dlc's optimizer-update and weight-cast
/// passes). Sibling multi-output fusion is left out (docs/FusionStrategies.md).
LogicalResult buildXlaPriority(OpPassManager &pm, const FusionPipelineOptions &options,
                               std::string &) {
  if (enabled(options, "gemm-epilogue"))
    pm.addPass(createFuseGemmEpiloguePass({options.explain}));
  if (enabled(options, "priority")) {
    FusePriorityPassOptions priority;
    priority.explain = options.explain;
    priority.gpu = options.gpu;
    priority.maxOperands = options.priorityMaxOperands;
    pm.addPass(createFusePriorityPass(priority));
  }
  if (enabled(options, "optimizer-horizontal"))
    pm.addPass(createFuseOptimizerUpdatesPass({"xla-priority"}));
  if (enabled(options, "cast-horizontal"))
    pm.addPass(createFuseParameterCastsPass({options.explain}));
  return success();
}

LogicalResult buildTvm(OpPassManager &pm, const FusionPipelineOptions &options,
                       std::string &error) {
  if (options.tvmMaxDepth < 1) {
    error = "tvm-max-depth must be at least 1, got " + std::to_string(options.tvmMaxDepth);
    return failure();
  }
  FuseOpsPassOptions fuse;
  fuse.maxDepth = options.tvmMaxDepth;
  fuse.fuseEpilogues = enabled(options, "output");
  fuse.explain = options.explain;
  pm.addPass(createFuseOpsPass(fuse));
  return success();
}

LogicalResult buildInductor(OpPassManager &pm, const FusionPipelineOptions &options,
                            std::string &error) {
  if (options.inductorMaxFusionSize < 1) {
    error = "inductor-max-fusion-size must be at least 1, got " +
            std::to_string(options.inductorMaxFusionSize);
    return failure();
  }
  FuseNodesPassOptions fuse;
  fuse.maxFusionSize = options.inductorMaxFusionSize;
  fuse.epilogueFusion = enabled(options, "output");
  fuse.explain = options.explain;
  pm.addPass(createFuseNodesPass(fuse));
  // A compiled optimizer step is one foreach (combo) kernel over every
  // parameter: Inductor's ForeachKernelSchedulerNode.
  if (enabled(options, "optimizer-horizontal"))
    pm.addPass(createFuseOptimizerUpdatesPass({"inductor", /*fuseGradientCasts=*/false}));
  return success();
}

struct FusionStrategy {
  std::string name;
  std::string description;
  FusionStrategyBuilder builder;
};

/// The strategies by name, dlc's own from the start; plugins add theirs
/// while the driver loads them, before any pipeline is built.
struct FusionStrategyRegistry {
  std::vector<FusionStrategy> strategies;
  /// Set by registerFusionPipelines: a strategy registered after it gets
  /// its dlc-opt pipeline at once.
  bool pipelinesRegistered = false;

  FusionStrategyRegistry() {
    strategies.push_back({"none", "one kernel per op",
                          [](OpPassManager &, const FusionPipelineOptions &,
                             std::string &) { return success(); }});
    strategies.push_back({"paddle",
                          "PaddlePaddle's batch-norm + activation and element-wise + "
                          "activation fusions, one kernel for the optimizer updates",
                          buildPaddle});
    strategies.push_back({"xla",
                          "GEMM / convolution epilogues, greedy loop and reduction "
                          "fusion, one kernel for the optimizer updates and one for "
                          "the weight casts",
                          buildXla});
    strategies.push_back({"xla-priority",
                          "XLA's priority fusion on dlc's cost model, after GEMM / "
                          "convolution epilogues, then one kernel for the optimizer "
                          "updates and one for the weight casts",
                          buildXlaPriority});
    strategies.push_back({"tvm",
                          "TVM Relay's FuseOps: op patterns, post-dominator groups, "
                          "contraction epilogues first",
                          buildTvm});
    strategies.push_back({"inductor",
                          "TorchInductor's scheduler: scored pairs that share buffers, "
                          "fused in rounds, epilogues into GEMM / convolution templates",
                          buildInductor});
  }

  const FusionStrategy *lookup(StringRef name) const {
    auto it = llvm::find_if(
        strategies, [&](const FusionStrategy &s) { return s.name == name; });
    return it == strategies.end() ? nullptr : &*it;
  }
};

FusionStrategyRegistry &fusionRegistry() {
  // Never destroyed: a plugin's builders are code of its library, which
  // the exit handlers may close before a static registry would go.
  static auto *registry = new FusionStrategyRegistry;
  return *registry;
}

/// `dlc-fusion-<name>`, the strategy alone, for dlc-opt.
void registerFusionPipeline(const FusionStrategy &strategy) {
  std::string name = strategy.name;
  std::string description = "the " + name + " fusion strategy (" + strategy.description +
                            "), as dlc-bench --fusion runs it (after dlc-autodiff)";
  PassPipelineRegistration<>(
      "dlc-fusion-" + name, description, [name](OpPassManager &pm) {
        std::string error;
        FusionPipelineOptions options;
        options.strategy = name;
        (void)buildFusionPipeline(pm, options, error);
      });
}

} // namespace

void mlir::dlc::registerFusionStrategy(StringRef name, StringRef description,
                                       FusionStrategyBuilder builder) {
  FusionStrategyRegistry &registry = fusionRegistry();
  if (registry.lookup(name))
    llvm::report_fatal_error("fusion strategy '" + name + "' registered twice");
  registry.strategies.push_back({name.str(), description.str(), std::move(builder)});
  if (registry.pipelinesRegistered)
    registerFusionPipeline(registry.strategies.back());
}

std::vector<std::string> mlir::dlc::fusionStrategyNames() {
  std::vector<std::string> names;
  for (const FusionStrategy &s : fusionRegistry().strategies)
    names.push_back(s.name);
  return names;
}

bool mlir::dlc::isFusionStrategy(StringRef name) {
  return fusionRegistry().lookup(name) != nullptr;
}

std::string mlir::dlc::knownFusionStrategies() {
  return "(" + llvm::join(fusionStrategyNames(), ", ") + ")";
}

LogicalResult mlir::dlc::buildFusionPipeline(OpPassManager &pm,
                                             const FusionPipelineOptions &options,
                                             std::string &error) {
  const FusionStrategy *strategy = fusionRegistry().lookup(options.strategy);
  if (!strategy) {
    error = "unknown fusion strategy '" + options.strategy + "' " + knownFusionStrategies();
    return failure();
  }
  for (const std::string &kind : options.disabled) {
    const auto *info = llvm::find_if(
        kFusionKinds, [&](const FusionKindInfo &k) { return kind == k.name; });
    if (info == std::end(kFusionKinds)) {
      std::vector<std::string> names;
      for (const FusionKindInfo &k : kFusionKinds)
        names.push_back(k.name);
      error = "unknown fusion kind '" + kind + "' (" + llvm::join(names, ", ") + ")";
      return failure();
    }
    SmallVector<StringRef> owners;
    StringRef(info->strategy).split(owners, ' ');
    if (!llvm::is_contained(owners, StringRef(options.strategy))) {
      error = "fusion kind '" + kind + "' belongs to the " + info->strategy +
              " strategy, not to '" + options.strategy + "'";
      return failure();
    }
  }
  return strategy->builder(pm, options, error);
}

LogicalResult mlir::dlc::buildPrecisionPipeline(OpPassManager &pm,
                                                const PrecisionPipelineOptions &options,
                                                bool beforeAutodiff, std::string &error) {
  StringRef precision = options.precision;
  if (!llvm::is_contained(kPrecisions, precision)) {
    error = "unknown precision '" + options.precision + "' (fp32, amp, amp-bf16, fp16)";
    return failure();
  }
  if (precision == "fp32")
    return success();
  if (beforeAutodiff) {
    AutoMixedPrecisionPassOptions amp;
    amp.mode = precision == "amp" ? "amp-fp16" : options.precision;
    pm.addPass(createAutoMixedPrecisionPass(amp));
    return success();
  }
  // bf16 has float32's exponent range: gradients neither underflow nor
  // overflow, so it needs no scaling.
  if (precision != "amp-bf16") {
    LossScalingPassOptions scaling;
    scaling.initScale = options.initLossScale;
    scaling.growthInterval = options.growthInterval;
    pm.addPass(createLossScalingPass(scaling));
  }
  return success();
}

FailureOr<std::string> mlir::dlc::resolveLayout(StringRef layout,
                                                StringRef precision,
                                                StringRef target,
                                                std::string &error) {
  if (layout == "nchw")
    return std::string("NCHW");
  if (layout == "nhwc")
    return std::string("NHWC");
  if (target != "cuda" && target != "cpu" && target != "reference") {
    error = "unknown target '" + target.str() + "' (cuda, cpu, reference)";
    return failure();
  }
  if (layout == "auto")
    return std::string(target == "cpu" || precision != "fp32" ? "NHWC" : "NCHW");
  error = "unknown layout '" + layout.str() + "' (auto, nchw, nhwc)";
  return failure();
}

LogicalResult mlir::dlc::buildLayoutPipeline(OpPassManager &pm, StringRef layout,
                                             StringRef precision, StringRef target,
                                             std::string &error) {
  FailureOr<std::string> resolved = resolveLayout(layout, precision, target, error);
  if (failed(resolved))
    return failure();
  if (*resolved != "NCHW")
    pm.addPass(createConvertLayoutPass({*resolved}));
  return success();
}

void mlir::dlc::registerFusionPipelines() {
  FusionStrategyRegistry &registry = fusionRegistry();
  if (registry.pipelinesRegistered)
    return;
  registry.pipelinesRegistered = true;
  for (const FusionStrategy &strategy : registry.strategies)
    if (strategy.name != "none")
      registerFusionPipeline(strategy);
}

LogicalResult mlir::dlc::buildTrainStepPipeline(OpPassManager &pm,
                                                const TrainStepOptions &options,
                                                TrainStepError &error) {
  auto refuse = [&](StringRef option, const std::string &message) {
    error = {option.str(), message};
    return failure();
  };
  // Values only a pass would catch, and only when run: refused up front.
  if (options.batch < 1)
    return refuse("batch", "expects a batch >= 1, got " + std::to_string(options.batch));
  if (!(options.lossScale > 0) || options.lossScaleGrowthInterval < 1)
    return refuse("loss-scale", "expects loss-scale > 0 and loss-scale-growth-interval >= 1");
  if (options.ranks < 1)
    return refuse("ranks", "expects ranks >= 1, got " + std::to_string(options.ranks));
  if (!(options.bucketMb > 0) || !(options.firstBucketMb >= 0))
    return refuse("bucket-mb", "expects bucket-mb > 0 and first-bucket-mb >= 0");
  StringRef compression = options.gradCompression;
  if (!llvm::is_contained({"none", "fp16", "bf16"}, compression))
    return refuse("grad-compression", "unknown grad-compression '" + compression.str() +
                                          "' (none, fp16, bf16)");

  std::string message;
  PrecisionPipelineOptions precision;
  precision.precision = options.precision;
  precision.initLossScale = options.lossScale;
  precision.growthInterval = options.lossScaleGrowthInterval;
  pm.addPass(createSpecializeBatchPass({options.batch}));
  if (failed(buildPrecisionPipeline(pm, precision, /*beforeAutodiff=*/true, message)))
    return refuse("precision", message);
  SmallVector<std::string> disabled(options.disableFusion.begin(), options.disableFusion.end());
  if (attentionBeforeAutodiff(options.fusion, disabled))
    pm.addPass(createFuseAttentionPass({options.explainFusion}));
  pm.addPass(createAutodiffPass({options.optimizer, options.lr}));
  if (failed(buildPrecisionPipeline(pm, precision, /*beforeAutodiff=*/false, message)))
    return refuse("precision", message);
  if (failed(buildLayoutPipeline(pm, options.layout, options.precision, options.target, message)))
    return refuse("layout", message);
  // After precision and layout (the all-reduce reads what the update
  // reads), before fusion (which would hide where a gradient is ready).
  if (options.ranks > 1)
    pm.addPass(createDataParallelPass(
        {options.ranks, options.bucketMb, options.firstBucketMb,
         compression == "fp16" ? "f16" : compression == "bf16" ? "bf16" : ""}));
  FusionPipelineOptions fusion;
  fusion.strategy = options.fusion;
  fusion.paddleRelaxGate = options.paddleRelaxGate;
  fusion.explain = options.explainFusion;
  fusion.gpu = options.gpu;
  fusion.priorityMaxOperands = options.priorityMaxOperands;
  fusion.tvmMaxDepth = options.tvmMaxDepth;
  fusion.inductorMaxFusionSize = options.inductorMaxFusionSize;
  fusion.disabled.assign(options.disableFusion.begin(), options.disableFusion.end());
  if (failed(buildFusionPipeline(pm, fusion, message)))
    return refuse(isFusionStrategy(options.fusion) ? "disable-fusion" : "fusion",
                  message);
  if (!options.pipeline.empty()) {
    message.clear();
    llvm::raw_string_ostream os(message);
    if (failed(parsePassPipeline(options.pipeline, pm, os)))
      return refuse("pipeline", message);
  }
  return success();
}

void mlir::dlc::registerTrainStepPipeline() {
  // PassPipelineRegistration's builder cannot fail: registered by hand, so
  // that a bad value is an error on the pipeline, not a half-built one.
  registerPassPipeline(
      "dlc-train-step",
      "what dlc-bench compiles a model's training step with: batch, "
      "precision, autodiff, layout, data parallelism, fusion",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        TrainStepOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        TrainStepError error;
        if (failed(buildTrainStepPipeline(pm, options, error)))
          return errorHandler("dlc-train-step: " + error.option + ": " + error.message);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optionHandler) {
        optionHandler(TrainStepOptions());
      });
}
