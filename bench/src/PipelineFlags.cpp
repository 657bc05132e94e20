//===- PipelineFlags.cpp - the flags that choose how a step compiles ------===//

#include "PipelineFlags.h"

#include "NumericOption.h"
#include "RunFlags.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/ADT/STLExtras.h"

#include <optional>
#include <sstream>

namespace cl = llvm::cl;

namespace dlc::bench {

cl::OptionCategory &benchCategory() {
  static cl::OptionCategory category("dlc-bench options");
  return category;
}

namespace {

cl::opt<std::string> optimizer("optimizer", cl::desc("sgd or adamw; default: the model's"),
                               cl::init(""), cl::cat(benchCategory()));
// Numeric options are read as text and checked by NumericOption.h, so that
// an overflowing, NaN or out-of-range value is refused, never clamped.
cl::opt<std::string> lr("lr", cl::desc("learning rate (>= 0); default: the model's"),
                        cl::value_desc("x"), cl::init(""), cl::cat(benchCategory()));
cl::opt<std::string> precisionList("precision",
    cl::desc("fp32 (default), amp (fp16 compute, fp32 master weights, dynamic loss "
             "scaling), amp-bf16 (bf16 compute, fp32 master weights, no scaling) or fp16 "
             "(pure fp16 parameters and compute, fp32 optimizer state, dynamic loss "
             "scaling); a comma-separated "
             "list sweeps, e.g. fp32,amp. The op lists are in dlc-opt "
             "--help's dlc-auto-mixed-precision and in docs/MixedPrecision.md"),
    cl::init("fp32"), cl::cat(benchCategory()));
cl::opt<std::string> bucketMb("bucket-mb",
    cl::desc("with --gpus above 1: MiB of gradients per all-reduce (PyTorch DDP's "
             "bucket_cap_mb, default 25)"),
    cl::value_desc("x"), cl::init("25"), cl::cat(benchCategory()));
cl::opt<std::string> firstBucketMb("first-bucket-mb",
    cl::desc("with --gpus above 1: MiB of the first bucket, the last layers' gradients, "
             "which the backward pass finishes first (DDP's first_bucket_bytes_cap); "
             "default: 1 with the default --bucket-mb, else --bucket-mb, as DDP"),
    cl::value_desc("x"), cl::init(""), cl::cat(benchCategory()));
cl::opt<std::string> gradCompression("grad-compression",
    cl::desc("with --gpus above 1: send float32 gradients as fp16 or bf16, as PyTorch "
             "DDP's fp16_compress_hook / bf16_compress_hook do (half the bytes; the mean "
             "is rounded to the smaller type), or none (default)"),
    cl::init("none"), cl::cat(benchCategory()));
cl::opt<bool> ampShortForm("amp", cl::desc("short for --precision amp"),
                           cl::init(false), cl::cat(benchCategory()));
cl::opt<std::string> lossScale("loss-scale",
    cl::desc("initial dynamic loss scale of amp and fp16 (default 65536, PyTorch's)"),
    cl::value_desc("x"), cl::init("65536"), cl::cat(benchCategory()));
cl::opt<std::string> lossScaleGrowthInterval("loss-scale-growth-interval",
    cl::desc("good steps before the loss scale doubles (default 2000, PyTorch's)"),
    cl::value_desc("n"), cl::init("2000"), cl::cat(benchCategory()));
cl::opt<std::string> fusionList("fusion",
    cl::desc("none (one kernel per op, default), paddle (PaddlePaddle's batch-norm + "
             "activation and element-wise + activation fusions, and one kernel for the "
             "optimizer updates), xla (XLA's older pipeline: GEMM / conv epilogues, greedy "
             "loop and reduction fusion, one kernel for the optimizer updates and one for "
             "the weight casts), xla-priority (XLA's priority fusion, priced by the cost "
             "model on --gpu), tvm (TVM Relay's FuseOps), inductor (TorchInductor's "
             "scheduler), or a strategy a --load-pass-plugin registers "
             "(docs/FusionStrategies.md); a comma-separated list sweeps, e.g. "
             "none,paddle,xla,xla-priority,tvm,inductor"),
    cl::init("none"), cl::cat(benchCategory()));
cl::opt<std::string> tvmMaxDepth("tvm-max-depth",
    cl::desc("tvm: the most ops a group holds (Relay's max_fuse_depth, default 256; 1 "
             "turns fusion off)"),
    cl::value_desc("n"), cl::init("256"), cl::cat(benchCategory()));
cl::opt<std::string> inductorMaxFusionSize("inductor-max-fusion-size",
    cl::desc("inductor: the most ops a group holds (config.max_fusion_size, default 64)"),
    cl::value_desc("n"), cl::init("64"), cl::cat(benchCategory()));
cl::opt<std::string> priorityMaxOperands("priority-max-operands",
    cl::desc("xla-priority: the kernel budget, operands and outputs of a group (XLA's "
             "kMaxOperandsAndOutputsPerFusion, default 96)"),
    cl::value_desc("n"), cl::init("96"), cl::cat(benchCategory()));
cl::list<std::string> passPlugins("load-pass-plugin",
    cl::desc("load passes and fusion strategies from a plugin library, as mlir-opt does "
             "(docs/WritingAFusionPass.md)"),
    cl::value_desc("lib.so"), cl::cat(benchCategory()));
cl::list<std::string> dialectPlugins("load-dialect-plugin",
    cl::desc("load dialects from a plugin library, as mlir-opt does"),
    cl::value_desc("lib.so"), cl::cat(benchCategory()));
cl::opt<std::string> layoutList("layout",
    cl::desc("the layout convolutions and batch norm run in: auto (default: the "
             "backend's choice; cuda and reference: NHWC in amp, amp-bf16 and fp16, where "
             "cuDNN's tensor-core convolutions and fused batch norm want it, NCHW in fp32; "
             "cpu: NHWC, where oneDNN's fast kernels are), nchw (the model's own) or nhwc; "
             "dlc-convert-layout inserts the transposes and cancels what it can. A "
             "comma-separated list sweeps, e.g. nchw,nhwc; a layout given by name "
             "shows in the configuration's name (xla-nhwc)"),
    cl::init("auto"), cl::cat(benchCategory()));
cl::opt<std::string> pipeline("pipeline",
    cl::desc("a textual pass pipeline to run on the training step after autodiff and "
             "the --fusion strategy, e.g. 'dlc-fuse-optimizer-updates'; reports name "
             "the configuration after it"),
    cl::init(""), cl::cat(benchCategory()));
cl::opt<bool> paddleRelaxGate("paddle-relax-gate",
    cl::desc("fuse batch norm + relu and batch norm + add + relu whatever the "
             "precision and layout (PaddlePaddle: FP16 NHWC only)"),
    cl::init(false), cl::cat(benchCategory()));
cl::opt<bool> padRows("pad-rows",
    cl::desc("pad the rows of a large temporary whose rows break 16-byte alignment (GPT-2's "
             "50,257-wide and BERT's 30,522-wide logits) to the next aligned stride, where "
             "every kernel on it takes a row stride, so cuBLASLt runs its aligned GEMMs "
             "(default true; --pad-rows=false for the ablation; the report's padding_bytes "
             "counts what it adds)"),
    cl::init(true), cl::cat(benchCategory()));
cl::opt<std::string> disableFusion("disable-fusion",
    cl::desc("comma-separated fusion kinds to leave out, for ablations: bn-act, "
             "bn-add-act, elewise-act (paddle); gemm-epilogue, cast-horizontal (xla, "
             "xla-priority); attention (xla, xla-priority, before autodiff); producer-consumer (xla); "
             "priority (xla-priority); output "
             "(tvm, inductor); optimizer-horizontal (paddle, xla, xla-priority, inductor)"),
    cl::init(""), cl::cat(benchCategory()));
cl::opt<std::string> explainFusion("explain-fusion",
    cl::desc("say why the fusion passes left candidates unfused: grouped by reason, with "
             "counts and the first sites of each (a line per configuration of a sweep); "
             "--explain-fusion=all prints every remark instead"),
    cl::ValueOptional, cl::value_desc("all"), cl::init(""), cl::cat(benchCategory()));

/// The loaded dialect plugins, which add to every configuration's registry.
std::vector<mlir::DialectPlugin> &loadedDialectPlugins() {
  static std::vector<mlir::DialectPlugin> plugins;
  return plugins;
}

/// The numeric pipeline flags, checked (readPipelineFlags).
struct Numbers {
  std::optional<double> lr, firstBucketMb;
  double bucketMb = 25, lossScale = 65536;
  int64_t lossScaleGrowthInterval = 2000;
  int64_t tvmMaxDepth = 256, inductorMaxFusionSize = 64, priorityMaxOperands = 96;
};
Numbers numbers;

std::string readNumbers() {
  std::string error;
  if (auto v = parseIntegerOption("--" + lossScaleGrowthInterval.ArgStr.str(),
                                  lossScaleGrowthInterval, {1}, error))
    numbers.lossScaleGrowthInterval = *v;
  for (auto [option, out] : {std::pair{&tvmMaxDepth, &numbers.tvmMaxDepth},
                             std::pair{&inductorMaxFusionSize, &numbers.inductorMaxFusionSize},
                             std::pair{&priorityMaxOperands, &numbers.priorityMaxOperands}})
    if (error.empty())
      if (auto v = parseIntegerOption("--" + option->ArgStr.str(), *option, {1}, error))
        *out = *v;
  auto real = [&](const cl::opt<std::string> &option, RealRange range,
                  std::optional<double> &out) {
    if (!error.empty() || (option.empty() && !option.getNumOccurrences()))
      return;
    out = parseRealOption("--" + option.ArgStr.str(), option, range, error);
  };
  std::optional<double> bucket, scale;
  real(lr, {0, /*minInclusive=*/true}, numbers.lr);
  real(bucketMb, {}, bucket);
  real(firstBucketMb, {}, numbers.firstBucketMb);
  real(lossScale, {}, scale);
  numbers.bucketMb = bucket.value_or(numbers.bucketMb);
  numbers.lossScale = scale.value_or(numbers.lossScale);
  return error;
}

} // namespace

std::vector<std::string> splitList(const std::string &list) {
  std::vector<std::string> items;
  std::string item;
  std::istringstream in(list);
  while (std::getline(in, item, ','))
    items.push_back(item);
  if (items.empty())
    items.push_back("");
  return items;
}

std::string loadPipelinePlugins() {
  for (const std::string &path : passPlugins) {
    auto plugin = mlir::PassPlugin::load(path);
    if (!plugin)
      return "--load-pass-plugin " + path + ": " + llvm::toString(plugin.takeError());
    plugin->registerPassRegistryCallbacks();
  }
  for (const std::string &path : dialectPlugins) {
    auto plugin = mlir::DialectPlugin::load(path);
    if (!plugin)
      return "--load-dialect-plugin " + path + ": " + llvm::toString(plugin.takeError());
    loadedDialectPlugins().push_back(std::move(*plugin));
  }
  return "";
}

void registerPluginDialects(mlir::DialectRegistry &registry) {
  for (const mlir::DialectPlugin &plugin : loadedDialectPlugins())
    plugin.registerDialectRegistryCallbacks(registry);
}

std::string readPipelineFlags(PipelineAxes &axes) {
  if (std::string error = readNumbers(); !error.empty())
    return error;
  if (!optimizer.empty() && optimizer != "sgd" && optimizer != "adamw")
    return "unknown --optimizer '" + optimizer + "' (sgd or adamw)";
  axes.precisions = splitList(precisionList);
  axes.fusions = splitList(fusionList);
  for (std::string &p : axes.precisions) {
    if (p == "fp16-amp" || p == "amp-fp16")
      p = "amp";
    if (!llvm::is_contained(mlir::dlc::kPrecisions, llvm::StringRef(p)))
      return "unknown --precision '" + p + "' (fp32, amp, amp-bf16, fp16)";
  }
  if (ampShortForm) {
    if (precisionList.getNumOccurrences())
      return "--amp is short for --precision amp: give one of them";
    axes.precisions = {"amp"};
  }
  for (const std::string &f : axes.fusions)
    if (!mlir::dlc::isFusionStrategy(f))
      return "unknown --fusion '" + f + "' " + mlir::dlc::knownFusionStrategies();
  axes.layouts = splitList(layoutList);
  for (const std::string &l : axes.layouts)
    if (!llvm::is_contained(mlir::dlc::kLayouts, llvm::StringRef(l)))
      return "--layout: unknown layout '" + l + "' (auto, nchw, nhwc)";
  if (gradCompression != "none" && gradCompression != "fp16" && gradCompression != "bf16")
    return "unknown --grad-compression '" + gradCompression + "' (none, fp16, bf16)";
  if (explainFusion != "" && explainFusion != "all")
    return "--explain-fusion: unknown value '" + explainFusion +
           "' (give none for the refusals grouped by reason, or =all for every one)";
  return "";
}

std::string checkDataParallelFlags(bool fromPlan, bool dataParallel) {
  // They do nothing to one rank or to a plan compiled already: say so
  // rather than time something else.
  for (const cl::Option *option :
       std::initializer_list<const cl::Option *>{&bucketMb, &firstBucketMb, &gradCompression}) {
    if (!option->getNumOccurrences())
      continue;
    if (fromPlan)
      return "--" + option->ArgStr.str() +
             " shapes the compiled step; a .plan is compiled already";
    if (!dataParallel)
      return "--" + option->ArgStr.str() +
             " shapes the gradient all-reduces of --gpus above 1; this run has one rank";
  }
  return "";
}

void bindTrainStepOptions(const PipelinePoint &point, mlir::dlc::TrainStepOptions &options) {
  options.batch = point.batch;
  options.optimizer = optimizer;
  // Absent, the model's rate applies; 0 is a rate like any other.
  if (numbers.lr)
    options.lr = *numbers.lr;
  options.precision = point.precision;
  options.lossScale = numbers.lossScale;
  options.lossScaleGrowthInterval = numbers.lossScaleGrowthInterval;
  options.layout = point.layout;
  options.target = point.target;
  options.ranks = point.ranks;
  options.bucketMb = numbers.bucketMb;
  // DDP's rule: a 1 MiB first bucket unless the bucket size was given.
  options.firstBucketMb = numbers.firstBucketMb        ? *numbers.firstBucketMb
                          : bucketMb.getNumOccurrences() ? numbers.bucketMb
                                                         : 1.0;
  options.gradCompression = gradCompression;
  options.fusion = point.fusion;
  for (const std::string &kind : splitList(disableFusion))
    if (!kind.empty())
      options.disableFusion.push_back(kind);
  options.paddleRelaxGate = paddleRelaxGate;
  options.tvmMaxDepth = numbers.tvmMaxDepth;
  options.inductorMaxFusionSize = numbers.inductorMaxFusionSize;
  options.priorityMaxOperands = numbers.priorityMaxOperands;
  // xla-priority prices fusions on the GPU the run names, else on an H100.
  options.gpu = gpuFlag().empty() ? std::string("H100-SXM") : gpuFlag();
  options.explainFusion = point.explainFusion;
  options.pipeline = pipeline;
}

std::string trainStepErrorMessage(const mlir::dlc::TrainStepError &error,
                                  const PipelinePoint &point) {
  if (error.option == "pipeline")
    return "cannot parse --pipeline '" + pipeline + "': " + error.message;
  if (error.option == "fusion" || error.option == "disable-fusion")
    return "--fusion " + point.fusion + ": " + error.message;
  if (error.option == "precision")
    return "--precision " + point.precision + ": " + error.message;
  return "--" + error.option + ": " + error.message;
}

std::string strategyName(const std::string &fusion, const std::string &layout) {
  std::string named = fusion == "paddle" && paddleRelaxGate ? "paddle-relaxed" : fusion;
  // A strategy's knob away from its default names the configuration.
  if (fusion == "tvm" && tvmMaxDepth.getNumOccurrences())
    named += "-max-depth-" + std::to_string(numbers.tvmMaxDepth);
  if (fusion == "inductor" && inductorMaxFusionSize.getNumOccurrences())
    named += "-max-fusion-size-" + std::to_string(numbers.inductorMaxFusionSize);
  if (fusion == "xla-priority" && priorityMaxOperands.getNumOccurrences())
    named += "-max-operands-" + std::to_string(numbers.priorityMaxOperands);
  if (fusion != "none" && !disableFusion.empty())
    named += "-no-" + std::string(disableFusion);
  if (layout != "auto")
    named += "-" + layout;
  if (!padRows)
    named += "-no-pad-rows";
  return pipeline.empty()    ? named
         : fusion == "none" ? std::string(pipeline)
                            : named + "+" + std::string(pipeline);
}

std::string optimizerFlag() { return optimizer; }

bool padRowsFlag() { return padRows; }

ExplainFusion explainFusionFlag() {
  if (!explainFusion.getNumOccurrences())
    return ExplainFusion::kOff;
  return explainFusion == "all" ? ExplainFusion::kAll : ExplainFusion::kSummary;
}

} // namespace dlc::bench
