//===- Pipelines.cpp - the named compilation pipelines --------------------===//

#include "dlc/Pipelines/Pipelines.h"

#include "dlc/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::dlc;

const FusionKindInfo mlir::dlc::kFusionKinds[] = {
    {"bn-act", "paddle", "batch norm + relu, forward and backward"},
    {"bn-add-act", "paddle", "batch norm + add + relu, forward and backward"},
    {"elewise-act", "paddle", "element-wise add / mul + activation"},
    {"gemm-epilogue", "xla", "bias and activation in GEMM / convolution epilogues"},
    {"producer-consumer", "xla", "loop and input (reduction) fusion"},
    // PaddlePaddle's BuildStrategy.fuse_all_optimizer_ops; XLA's horizontal
    // fusion.
    {"optimizer-horizontal", "paddle xla", "every optimizer update in one kernel"},
    {"cast-horizontal", "xla", "every parameter's cast to half precision in one kernel"},
};
const size_t mlir::dlc::kNumFusionKinds = std::size(kFusionKinds);

LogicalResult mlir::dlc::buildFusionPipeline(OpPassManager &pm,
                                             const FusionPipelineOptions &options,
                                             std::string &error) {
  StringRef strategy = options.strategy;
  if (!llvm::is_contained(kFusionStrategies, strategy)) {
    error = "unknown fusion strategy '" + options.strategy + "' (none, paddle, xla)";
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
    if (!llvm::is_contained(owners, strategy)) {
      error = "fusion kind '" + kind + "' belongs to the " + info->strategy +
              " strategy, not to '" + options.strategy + "'";
      return failure();
    }
  }
  auto enabled = [&](StringRef kind) {
    return !llvm::is_contained(options.disabled, kind);
  };
  if (strategy == "paddle") {
    FuseBatchNormActivationPassOptions bn;
    bn.relaxGate = options.paddleRelaxGate;
    bn.explain = options.explain;
    for (const char *kind : {"bn-act", "bn-add-act"})
      if (!enabled(kind))
        bn.disabled.push_back(kind);
    pm.addPass(createFuseBatchNormActivationPass(bn));
    if (enabled("elewise-act"))
      pm.addPass(createFuseElementwiseActivationPass({options.explain}));
    if (enabled("optimizer-horizontal"))
      pm.addPass(createFuseOptimizerUpdatesPass({"paddle", /*fuseGradientCasts=*/false}));
  } else if (strategy == "xla") {
    // Epilogues first: an activation that belongs in a GEMM's epilogue
    // must not be taken by a loop fusion.
    if (enabled("gemm-epilogue"))
      pm.addPass(createFuseGemmEpiloguePass({options.explain}));
    if (enabled("producer-consumer"))
      pm.addPass(createFuseProducerConsumerPass({options.explain}));
    if (enabled("optimizer-horizontal"))
      pm.addPass(createFuseOptimizerUpdatesPass());
    if (enabled("cast-horizontal"))
      pm.addPass(createFuseParameterCastsPass({options.explain}));
  }
  return success();
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
  for (const char *strategy : {"paddle", "xla"}) {
    std::string name = std::string("dlc-fusion-") + strategy;
    std::string description =
        std::string("the ") + strategy +
        " fusion strategy, as dlc-bench --fusion runs it (after dlc-autodiff)";
    PassPipelineRegistration<>(
        name, description, [strategy](OpPassManager &pm) {
          std::string error;
          FusionPipelineOptions options;
          options.strategy = strategy;
          (void)buildFusionPipeline(pm, options, error);
        });
  }
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
  fusion.disabled.assign(options.disableFusion.begin(), options.disableFusion.end());
  if (failed(buildFusionPipeline(pm, fusion, message)))
    return refuse(llvm::is_contained(kFusionStrategies, StringRef(options.fusion))
                      ? "disable-fusion"
                      : "fusion",
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
