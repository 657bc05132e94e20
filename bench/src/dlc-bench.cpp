//===- dlc-bench.cpp - compile a model's training step and time it --------===//
//
// What is timed: only the training steps themselves. For each repeat the
// parameters are initialized from the seed and a synthetic batch is drawn
// (not timed), `--warmup` steps run untimed, then `--steps` steps run
// back to back between two clock reads; samples/s = batch x steps / elapsed.
// The report gives the median over `--repeats` with its bootstrap confidence
// interval (Stats.h), min and max; speed-ups are called only where the
// interval of their ratio excludes 1. A sweep compiles every configuration
// first, then times its single-rank ones in rounds, one repeat of each per
// round (Rounds.h), and records the host's other load per repeat.
// What is not timed: parsing, compiling (reported separately as compile
// time), planning, arena allocation, initialization and data synthesis.
// Every repeat starts from the same parameters and batch, so its losses are
// the same sequence: a repeat that trains differently is a bug, not noise.
//
//===----------------------------------------------------------------------===//

#include "CalibrateCommand.h"
#include "Compare.h"
#include "DebugDir.h"
#include "FusionExplain.h"
#include "GpuPeaks.h"
#include "Html.h"
#include "Interrupt.h"
#include "Json.h"
#include "Networks.h"
#include "NonFinite.h"
#include "NumericOption.h"
#include "PredictCommand.h"
#include "Report.h"
#include "CpuBackend.h"
#include "RunPlan.h"
#include "Rounds.h"

#include "dlc/InitAll.h"
#include "dlc/Pipelines/Pipelines.h"
#include "dlc/Target/Plan/TrainToPlan.h"
#include "dlc/Transforms/Passes.h"
#include "dlc/runtime/Collective.h"
#include "dlc/runtime/Parallel.h"
#include "dlc/runtime/Device.h"
#include "dlc/runtime/Npy.h"
#include "dlc/runtime/PlanSummary.h"
#include "dlc/runtime/cpu/CpuExecutor.h"
#include "dlc/runtime/Nvml.h"
#include "dlc/runtime/cuda/CudaExecutor.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <sstream>
#include <fstream>
#include <iostream>
#include <unistd.h>

using namespace mlir;
namespace cl = llvm::cl;
namespace rt = ::dlc::rt;
namespace bench = ::dlc::bench;

namespace {

cl::OptionCategory category("dlc-bench options");

cl::list<std::string> modelPaths(cl::Positional,
    cl::desc("<model.mlir... (several run one after another, side by side in one report), "
             "or a .plan from --emit-plan>"),
    cl::OneOrMore, cl::cat(category));
cl::opt<std::string> backend("backend",
    cl::desc("cpu (default): generated launches compiled for this host, oneDNN for "
             "convolutions, matmuls, batch norm and pooling; reference: every op on its "
             "own, the numerical truth the others are checked against; cuda: the GPU"),
                             cl::init("cpu"), cl::cat(category));
cl::opt<std::string> batchList("batch",
    cl::desc("samples per step, or a comma-separated list to sweep (default 32)"),
    cl::init("32"), cl::cat(category));
// Numeric options are read as text and checked by NumericOption.h, so that
// an overflowing, NaN or out-of-range value is refused, never clamped.
cl::opt<std::string> warmup("warmup", cl::desc("untimed steps before timing (default 20)"),
                            cl::value_desc("n"), cl::init("20"), cl::cat(category));
cl::opt<std::string> steps("steps", cl::desc("timed steps per repeat (default 100)"),
                           cl::value_desc("n"), cl::init("100"), cl::cat(category));
cl::opt<std::string> repeats("repeats",
    cl::desc("repeats of the timed loop; the median is reported (default 5)"),
    cl::value_desc("n"), cl::init("5"), cl::cat(category));
cl::opt<std::string> confidence("confidence",
    cl::desc("the level of the bootstrap confidence intervals of medians and speed-ups "
             "(default 0.95)"),
    cl::value_desc("x"), cl::init("0.95"), cl::cat(category));
cl::opt<bool> quick("quick",
    cl::desc("a first look: 2 warm-up steps, 10 timed steps, 3 repeats (each still "
             "overridden by --warmup, --steps, --repeats); too few repeats for tight "
             "intervals"),
    cl::init(false), cl::cat(category));
cl::opt<std::string> seed("seed", cl::desc("seed of parameters and synthetic data (default 0)"),
                          cl::value_desc("n"), cl::init("0"), cl::cat(category));
cl::opt<std::string> optimizer("optimizer", cl::desc("sgd or adamw; default: the model's"),
                               cl::init(""), cl::cat(category));
cl::opt<std::string> lr("lr", cl::desc("learning rate (>= 0); default: the model's"),
                        cl::value_desc("x"), cl::init(""), cl::cat(category));
cl::opt<std::string> precisionList("precision",
    cl::desc("fp32 (default), amp (fp16 compute, fp32 master weights, dynamic loss "
             "scaling), amp-bf16 (bf16 compute, fp32 master weights, no scaling) or fp16 "
             "(pure fp16 parameters and compute, fp32 optimizer state, dynamic loss "
             "scaling); a comma-separated "
             "list sweeps, e.g. fp32,amp. The op lists are in dlc-opt "
             "--help's dlc-auto-mixed-precision and in docs/MixedPrecision.md"),
    cl::init("fp32"), cl::cat(category));
cl::opt<std::string> gpusList("gpus",
    cl::desc("GPUs (data-parallel ranks) per configuration, or a comma-separated "
             "list to sweep for speed-up and scaling efficiency, e.g. 1,2,4,8 "
             "(default 1). --batch is per rank, as in the seed reports; above 1, "
             "dlc-data-parallel averages the gradients over the ranks. --backend "
             "cpu runs the ranks as threads of this process; --backend cuda one "
             "GPU per rank, averaging through NCCL (a rank waits for NCCL at most "
             "DLC_NCCL_TIMEOUT seconds, default 600, 0 for no limit). Under `mpirun -np N` "
             "each process runs one rank (MPI on the CPU, NCCL on GPUs) and --gpus "
             "defaults to N"),
    cl::init("1"), cl::cat(category));
cl::opt<std::string> bucketMb("bucket-mb",
    cl::desc("with --gpus above 1: MiB of gradients per all-reduce (PyTorch DDP's "
             "bucket_cap_mb, default 25)"),
    cl::value_desc("x"), cl::init("25"), cl::cat(category));
cl::opt<std::string> firstBucketMb("first-bucket-mb",
    cl::desc("with --gpus above 1: MiB of the first bucket, the last layers' gradients, "
             "which the backward pass finishes first (DDP's first_bucket_bytes_cap); "
             "default: 1 with the default --bucket-mb, else --bucket-mb, as DDP"),
    cl::value_desc("x"), cl::init(""), cl::cat(category));
cl::opt<std::string> gradCompression("grad-compression",
    cl::desc("with --gpus above 1: send float32 gradients as fp16 or bf16, as PyTorch "
             "DDP's fp16_compress_hook / bf16_compress_hook do (half the bytes; the mean "
             "is rounded to the smaller type), or none (default)"),
    cl::init("none"), cl::cat(category));
cl::opt<bool> ampShortForm("amp", cl::desc("short for --precision amp"),
                           cl::init(false), cl::cat(category));
cl::opt<std::string> lossScale("loss-scale",
    cl::desc("initial dynamic loss scale of amp and fp16 (default 65536, PyTorch's)"),
    cl::value_desc("x"), cl::init("65536"), cl::cat(category));
cl::opt<std::string> lossScaleGrowthInterval("loss-scale-growth-interval",
    cl::desc("good steps before the loss scale doubles (default 2000, PyTorch's)"),
    cl::value_desc("n"), cl::init("2000"), cl::cat(category));
cl::opt<std::string> fusionList("fusion",
    cl::desc("none (one kernel per op, default), paddle (PaddlePaddle's batch-norm + "
             "activation and element-wise + activation fusions, and one kernel for the "
             "optimizer updates) or xla (GEMM / conv epilogues, greedy loop and reduction "
             "fusion, one kernel for the optimizer updates and one for the weight casts), "
             "or a strategy a --load-pass-plugin registers; a comma-separated list sweeps, "
             "e.g. none,paddle,xla"),
    cl::init("none"), cl::cat(category));
cl::list<std::string> passPlugins("load-pass-plugin",
    cl::desc("load passes and fusion strategies from a plugin library, as mlir-opt does "
             "(docs/WritingAFusionPass.md)"),
    cl::value_desc("lib.so"), cl::cat(category));
cl::list<std::string> dialectPlugins("load-dialect-plugin",
    cl::desc("load dialects from a plugin library, as mlir-opt does"),
    cl::value_desc("lib.so"), cl::cat(category));
/// The loaded dialect plugins, which add to every configuration's registry.
std::vector<DialectPlugin> loadedDialectPlugins;
cl::opt<std::string> layoutList("layout",
    cl::desc("the layout convolutions and batch norm run in: auto (default: the "
             "backend's choice; cuda and reference: NHWC in amp, amp-bf16 and fp16, where "
             "cuDNN's tensor-core convolutions and fused batch norm want it, NCHW in fp32; "
             "cpu: NHWC, where oneDNN's fast kernels are), nchw (the model's own) or nhwc; "
             "dlc-convert-layout inserts the transposes and cancels what it can. A "
             "comma-separated list sweeps, e.g. nchw,nhwc; a layout given by name "
             "shows in the configuration's name (xla-nhwc)"),
    cl::init("auto"), cl::cat(category));
cl::opt<std::string> pipeline("pipeline",
    cl::desc("a textual pass pipeline to run on the training step after autodiff and "
             "the --fusion strategy, e.g. 'dlc-fuse-optimizer-updates'; reports name "
             "the configuration after it"),
    cl::init(""), cl::cat(category));
cl::opt<bool> paddleRelaxGate("paddle-relax-gate",
    cl::desc("fuse batch norm + relu and batch norm + add + relu whatever the "
             "precision and layout (PaddlePaddle: FP16 NHWC only)"),
    cl::init(false), cl::cat(category));
cl::opt<std::string> disableFusion("disable-fusion",
    cl::desc("comma-separated fusion kinds to leave out, for ablations: bn-act, "
             "bn-add-act, elewise-act (paddle); gemm-epilogue, producer-consumer, "
             "cast-horizontal (xla); optimizer-horizontal (both)"),
    cl::init(""), cl::cat(category));
cl::opt<std::string> explainFusion("explain-fusion",
    cl::desc("say why the fusion passes left candidates unfused: grouped by reason, with "
             "counts and the first sites of each (a line per configuration of a sweep); "
             "--explain-fusion=all prints every remark instead"),
    cl::ValueOptional, cl::value_desc("all"), cl::init(""), cl::cat(category));
cl::opt<std::string> debugDir("debug-dir",
    cl::desc("write what each configuration's compile made to DIR, as TORCH_COMPILE_DEBUG "
             "does: the IR after each pass (000-<pass>.mlir, ...), the plan (plan.txt), "
             "the CUDA backend's launch routing (routing.txt), the generated kernels "
             "(kernels/), the fusion refusals by reason (fusion.md) and an index.html "
             "linking them; a sweep writes one subdirectory per configuration and an "
             "index.html over them. Needs no GPU: works with --compile-only"),
    cl::value_desc("dir"), cl::init(""), cl::cat(category));
cl::opt<std::string> format("format",
    cl::desc("table (default), json, csv, markdown or html (a self-contained page)"),
                            cl::init("table"), cl::cat(category));
cl::opt<std::string> outputPath("o", cl::desc("write the report to this file"),
                                cl::value_desc("file"), cl::init("-"), cl::cat(category));
cl::opt<std::string> paramsIn("params-in",
    cl::desc("read every parameter from DIR/<name>.npy (batch-norm state too, if present)"),
    cl::value_desc("dir"), cl::init(""), cl::cat(category));
cl::opt<std::string> inputsIn("inputs-in",
    cl::desc("read every input and label from DIR/<name>.npy instead of synthesizing them"),
    cl::value_desc("dir"), cl::init(""), cl::cat(category));
cl::opt<std::string> dumpOut("dump-out",
    cl::desc("after the run, write loss.npy, <param>.grad.npy of the last step and every "
             "updated <param>.npy and state to DIR"),
    cl::value_desc("dir"), cl::init(""), cl::cat(category));
cl::opt<bool> profile("profile",
    cl::desc("also time every kernel (timed steps only) and print the time by op, "
             "slowest first; the clock reads between kernels add a little to step time. "
             "--backend cuda: CUDA events around every launch (no graph), time by "
             "launch kind and path. With --gpus above 1: rank 0's kernels, each "
             "all-reduce in its place (not overlapped)"),
    cl::init(false), cl::cat(category));
cl::opt<std::string> lossEvery("loss-every",
    cl::desc("record the first repeat's loss after every n-th step, warm-up steps "
             "included, as the JSON's loss_trajectory (the HTML draws it); on a GPU each "
             "read waits for its step"),
    cl::value_desc("n"), cl::init(""), cl::cat(category));
cl::opt<bool> noOverlap("no-overlap",
    cl::desc("with --gpus above 1: run each gradient all-reduce in its place instead of "
             "alongside the rest of the backward pass (as PyTorch DDP overlaps them), to "
             "measure what the overlap buys"),
    cl::init(false), cl::cat(category));
cl::opt<bool> noCudaGraph("no-cuda-graph",
    cl::desc("--backend cuda: launch the step kernel by kernel instead of replaying it "
             "as one captured CUDA graph (to measure what the graph saves)"),
    cl::init(false), cl::cat(category));
cl::opt<bool> tf32("tf32",
    cl::desc("--backend cuda: let fp32 GEMMs and convolutions use TF32 tensor cores "
             "(default off: fp32 is fp32; the report says which)"),
    cl::init(false), cl::cat(category));
cl::opt<std::string> peakTflops("peak-tflops",
    cl::desc("the device's peak TFLOP/s, for the model-FLOP utilization (MFU = "
             "training FLOPs per second / peak); without it MFU is not reported"),
    cl::value_desc("x"), cl::init(""), cl::cat(category));
cl::opt<std::string> gpuName("gpu",
    cl::desc("the GPU the MFU is against, from the table of known peaks (A100-SXM, "
             "H100-SXM, ...; `dlc-bench gpus` lists them), by the run's precision; "
             "--peak-tflops overrides. With --profile on cuda, the cost model's "
             "prediction for it beside each launch kind"),
    cl::value_desc("name"), cl::init(""), cl::cat(category));
cl::opt<std::string> fp32PeakName("fp32-peak",
    cl::desc("with --gpu, the peak of an fp32 run: fp32 (the CUDA cores, default: "
             "fp32 keeps full FP32 arithmetic) or tf32 (the TF32 tensor cores)"),
    cl::init("fp32"), cl::cat(category));
cl::opt<bool> compileOnly("compile-only",
    cl::desc("compile and print the step's counts (parameters, MACs, kernels, arena, "
             "compile time) without running it"),
    cl::init(false), cl::cat(category));
cl::opt<std::string> dumpKernels("dump-kernels",
    cl::desc("write the CUDA C++ source of every kernel the CUDA backend generates for the "
             "step (fused groups included) to DIR, one .cu file per launch, each starting "
             "with the plan kernels it computes and the buffer each argument binds, and the "
             "host C++ the fast CPU backend compiles to DIR/host (.cpp); a sweep "
             "writes one subdirectory per configuration. Needs no GPU: works with "
             "--compile-only and any --backend"),
    cl::value_desc("dir"), cl::init(""), cl::cat(category));
cl::opt<std::string> emitPlan("emit-plan", cl::desc("also write the compiled plan to this file"),
                              cl::value_desc("file"), cl::init(""), cl::cat(category));
cl::opt<std::string> emitMlir("emit-mlir",
    cl::desc("also write the training step's IR after the compile pipeline, before its "
             "lowering to the plan, to this file: what `dlc-opt --pass-pipeline="
             "'builtin.module(dlc-train-step{...})'` prints for the same options"),
    cl::value_desc("file"), cl::init(""), cl::cat(category));
cl::opt<bool> resume("resume",
    cl::desc("with --format json -o FILE: keep the configurations FILE holds finished "
             "(a sweep that was interrupted, or a smaller one) and run only the others; "
             "the new report holds both, in the sweep's order"),
    cl::init(false), cl::cat(category));

// --predict and its options: PredictCommand.cpp.
cl::opt<bool> predict("predict",
    cl::desc("predict each configuration's step on --gpu (no GPU needed): the cost model "
             "times the CUDA backend's launches, the data-parallel simulator each --gpus "
             "count over --network; prints samples/s, speed-up, efficiency, exposed "
             "communication and the top launches (docs/CostModel.md)"),
    cl::init(false), cl::cat(category));
cl::opt<std::string> networkName("network",
    cl::desc("with --predict: the interconnect (`dlc-bench networks` lists them; default "
             "nvlink, one node)"),
    cl::init("nvlink"), cl::cat(category));
cl::opt<std::string> gpusPerNode("gpus-per-node",
    cl::desc("with --predict: GPUs in a node (default 8)"), cl::value_desc("n"),
    cl::init("8"), cl::cat(category));
cl::opt<std::string> measuredStepMs("measured-step-ms",
    cl::desc("with --predict: the measured one-GPU step time in ms, replacing the predicted "
             "one (every launch scaled alike), to check the scaling model alone"),
    cl::value_desc("ms"), cl::init(""), cl::cat(category));
cl::opt<std::string> costModelFile("cost-model",
    cl::desc("with --predict: the cost model's parameters, as `dlc-bench calibrate` writes "
             "them (default: bench/calibration/<gpu>.json if there, else the defaults)"),
    cl::value_desc("file"), cl::init(""), cl::cat(category));
cl::opt<std::string> allReduceAlgorithm("all-reduce-algorithm",
    cl::desc("with --predict: ring (default, NCCL's flat ring), hierarchical-ring or tree"),
    cl::init("ring"), cl::cat(category));
cl::opt<std::string> rankStepVariation("rank-step-variation",
    cl::desc("with --predict: the spread of per-rank step times (standard deviation over "
             "mean); the slowest of N ranks sets a synchronous step's pace (default: the "
             "fitted constant of docs/CostModel.md)"),
    cl::value_desc("x"), cl::init(""), cl::cat(category));

cl::opt<bool> allowNonFinite("allow-nonfinite",
    cl::desc("exit 0 even when a loss is NaN or infinite (the report still says "
             "\"loss_finite\": false)"),
    cl::init(false), cl::cat(category));

/// --quick: enough steps to see a configuration run and roughly how fast,
/// and the fewest repeats that give an interval at all.
constexpr int64_t kQuickWarmup = 2, kQuickSteps = 10, kQuickRepeats = 3;

/// The numeric options, checked (readNumbers); absent optional ones empty.
struct Numbers {
  int64_t warmup = 20, steps = 100, repeats = 5, seed = 0;
  std::optional<double> lr, firstBucketMb, peakTflops;
  double bucketMb = 25, lossScale = 65536, confidence = bench::kConfidenceLevel;
  int64_t lossScaleGrowthInterval = 2000;
  int64_t lossEvery = 0; // --loss-every; 0 when not given
};
Numbers numbers;

/// Reads every numeric option with one helper; "" when all are valid, else
/// the one-line error naming the first bad option.
std::string readNumbers() {
  std::string error;
  auto integer = [&](const cl::opt<std::string> &option, int64_t min, int64_t &out) {
    if (!error.empty())
      return;
    if (auto v = bench::parseIntegerOption("--" + option.ArgStr.str(), option, {min}, error))
      out = *v;
  };
  auto real = [&](const cl::opt<std::string> &option, bench::RealRange range,
                  std::optional<double> &out) {
    if (!error.empty() || (option.empty() && !option.getNumOccurrences()))
      return;
    out = bench::parseRealOption("--" + option.ArgStr.str(), option, range, error);
  };
  // --quick's preset, where the option itself was not given.
  if (quick) {
    numbers.warmup = kQuickWarmup;
    numbers.steps = kQuickSteps;
    numbers.repeats = kQuickRepeats;
  }
  if (!quick || warmup.getNumOccurrences())
    integer(warmup, 0, numbers.warmup);
  if (!quick || steps.getNumOccurrences())
    integer(steps, 1, numbers.steps);
  if (!quick || repeats.getNumOccurrences())
    integer(repeats, 1, numbers.repeats);
  integer(seed, 0, numbers.seed);
  integer(lossScaleGrowthInterval, 1, numbers.lossScaleGrowthInterval);
  if (lossEvery.getNumOccurrences())
    integer(lossEvery, 1, numbers.lossEvery);
  std::optional<double> bucket, scale, level;
  real(confidence, {0, /*minInclusive=*/false, 0.999}, level);
  numbers.confidence = level.value_or(numbers.confidence);
  real(lr, {0, /*minInclusive=*/true}, numbers.lr);
  real(bucketMb, {}, bucket);
  real(firstBucketMb, {}, numbers.firstBucketMb);
  real(lossScale, {}, scale);
  real(peakTflops, {}, numbers.peakTflops);
  numbers.bucketMb = bucket.value_or(numbers.bucketMb);
  numbers.lossScale = scale.value_or(numbers.lossScale);
  return error;
}

/// Whether an option registered by MLIR (--mlir-*) was given.
bool mlirOptionGiven(llvm::StringRef name) {
  auto &options = cl::getRegisteredOptions();
  auto it = options.find(name);
  return it != options.end() && it->second->getNumOccurrences() > 0;
}

int fail(const std::string &message) {
  // One write: under mpirun another rank's abort banner must not split it.
  llvm::errs() << ("dlc-bench: error: " + message + "\n");
  return 1;
}

bench::RunOptions runOptions() {
  bench::RunOptions o;
  o.backend = backend;
  o.warmup = numbers.warmup;
  o.steps = numbers.steps;
  o.repeats = numbers.repeats;
  o.seed = static_cast<uint64_t>(numbers.seed);
  o.paramsIn = paramsIn;
  o.inputsIn = inputsIn;
  o.dumpOut = dumpOut;
  o.profile = profile;
  o.lossEvery = numbers.lossEvery;
  o.noCudaGraph = noCudaGraph;
  o.noOverlap = noOverlap;
  o.tf32 = tf32;
  o.gpuName = gpuName;
  return o;
}

bench::Fp32Peak fp32Peak() {
  return fp32PeakName == "tf32" ? bench::Fp32Peak::kTf32 : bench::Fp32Peak::kFp32;
}

std::optional<bench::Format> parseFormat(const std::string &name) {
  if (name == "table") return bench::Format::kTable;
  if (name == "json") return bench::Format::kJson;
  if (name == "csv") return bench::Format::kCsv;
  if (name == "markdown") return bench::Format::kMarkdown;
  if (name == "html") return bench::Format::kHtml;
  return std::nullopt;
}

/// The model name: the file name without its extension.
std::string modelName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(0, dot);
}

/// "a,b,c" -> {"a", "b", "c"}.
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

/// One configuration of a sweep.
struct Configuration {
  std::string model; // the path
  std::string precision, fusion, layout;
  int64_t batch = 0, gpus = 1;

  /// "amp xla nhwc, batch 32, 8 GPUs", the model first if `withModel`.
  std::string displayName(bool withModel) const {
    return (withModel ? modelName(model) + " " : "") + precision + " " + fusion +
           (layout == "auto" ? "" : " " + layout) + ", batch " + std::to_string(batch) +
           (gpus > 1 ? ", " + std::to_string(gpus) + " GPUs" : "");
  }
  /// "amp-xla-nhwc-b32-gpus8", the model first if `withModel`.
  std::string directoryName(bool withModel) const {
    return (withModel ? modelName(model) + "-" : "") + precision + "-" + fusion +
           (layout == "auto" ? "" : "-" + layout) + "-b" + std::to_string(batch) + "-gpus" +
           std::to_string(gpus);
  }
};

/// Where a configuration's optional files go ("" for none), and what they
/// call it.
struct ConfigurationOutputs {
  std::string kernelDir, debugDir;
  std::string label; ///< "fp32 xla, batch 4"
  bool inSweep = false;
};

/// runConfiguration's answer when SIGINT or SIGTERM stopped the steps; the
/// result's status says where.
constexpr int kInterrupted = -1;

/// Compiles the model for one configuration (or reads the .plan) into
/// `plan`, and fills `result`'s counts; returns a non-zero exit code after
/// an error.
int compileConfiguration(const Configuration &c, bool fromPlan, bool batchGiven,
                         const ConfigurationOutputs &outputs, rt::Plan &plan,
                         bench::Result &result) {
  const std::string &modelPath = c.model, &precision = c.precision, &fusion = c.fusion,
                    &layout = c.layout;
  int64_t batch = c.batch, gpus = c.gpus;
  // Compile: parse, specialize the batch, differentiate, lower to a plan.
  // A .plan file was compiled already (perhaps on another machine): run it.
  auto compileStart = std::chrono::steady_clock::now();
  mlir::dlc::PlanStats stats;
  // The fusion passes' refusals; none for a plan compiled already.
  std::optional<std::vector<bench::FusionRemark>> fusionRemarks;
  // The configuration's name in reports: the strategy, then any pipeline.
  std::string named = fusion == "paddle" && paddleRelaxGate ? "paddle-relaxed" : fusion;
  if (fusion != "none" && !disableFusion.empty())
    named += "-no-" + std::string(disableFusion);
  if (layout != "auto")
    named += "-" + layout;
  std::string strategy = pipeline.empty() ? named
                         : fusion == "none" ? std::string(pipeline)
                                            : named + "+" + std::string(pipeline);
  if (fromPlan) {
    auto read = rt::readPlanFile(modelPath);
    if (!read.isOk())
      return fail(read.status().toString());
    plan = std::move(read.value());
    if (batchGiven && batch != plan.batch)
      return fail("--batch " + std::to_string(batch) + " differs from the plan's batch " +
                  std::to_string(plan.batch) + "; compile the model again for another batch");
    batch = plan.batch;
    if (gpusList.getNumOccurrences() && gpus != rt::planRanks(plan))
      return fail("--gpus " + std::to_string(gpus) + " differs from the " +
                  std::to_string(rt::planRanks(plan)) +
                  " ranks the plan was compiled for; compile the model again");
    // A plan records offsets, not which buffers share storage by design:
    // the no-reuse total and the liveness bound are unknown here.
    stats.kernels = static_cast<int64_t>(plan.kernels.size());
    stats.totalBufferBytes = stats.lowerBoundBytes = -1;
  } else {
    DialectRegistry registry;
    mlir::dlc::registerAllDialects(registry);
    for (const DialectPlugin &plugin : loadedDialectPlugins)
      plugin.registerDialectRegistryCallbacks(registry);
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
    mlir::dlc::TrainStepOptions options;
    options.batch = batch;
    options.optimizer = optimizer;
    // Absent, the model's rate applies; 0 is a rate like any other.
    if (numbers.lr)
      options.lr = *numbers.lr;
    options.precision = precision;
    options.lossScale = numbers.lossScale;
    options.lossScaleGrowthInterval = numbers.lossScaleGrowthInterval;
    options.layout = layout;
    options.target = backend;
    options.ranks = gpus;
    options.bucketMb = numbers.bucketMb;
    // DDP's rule: a 1 MiB first bucket unless the bucket size was given.
    options.firstBucketMb = numbers.firstBucketMb  ? *numbers.firstBucketMb
                            : bucketMb.getNumOccurrences() ? numbers.bucketMb
                                                           : 1.0;
    options.gradCompression = gradCompression;
    options.fusion = fusion;
    for (const std::string &kind : splitList(disableFusion))
      if (!kind.empty())
        options.disableFusion.push_back(kind);
    options.paddleRelaxGate = paddleRelaxGate;
    options.explainFusion = explainFusion.getNumOccurrences() > 0 || !outputs.debugDir.empty();
    options.pipeline = pipeline;
    if (mlir::dlc::TrainStepError error;
        failed(mlir::dlc::buildTrainStepPipeline(pm, options, error))) {
      if (error.option == "pipeline")
        return fail("cannot parse --pipeline '" + pipeline + "': " + error.message);
      if (error.option == "fusion" || error.option == "disable-fusion")
        return fail("--fusion " + fusion + ": " + error.message);
      if (error.option == "precision")
        return fail("--precision " + precision + ": " + error.message);
      return fail("--" + error.option + ": " + error.message);
    }
    bool writes = rt::launchedRank() == 0;
    std::string irError;
    if (!outputs.debugDir.empty() && writes)
      bench::dumpIRAfterEachPass(pm, outputs.debugDir, &irError);
    std::optional<bench::FusionRemarkCollector> collector;
    if (options.explainFusion)
      collector.emplace(context, /*passThrough=*/explainFusion == "all");
    if (failed(pm.run(*module))) {
      if (collector)
        collector->release();
      return fail("cannot compile " + modelPath + " (see the errors above)");
    }
    if (!irError.empty())
      return fail("--debug-dir: " + irError);
    if (collector) {
      fusionRemarks = collector->remarks();
      if (explainFusion.getNumOccurrences() && explainFusion != "all" && writes)
        bench::printFusionSummary(llvm::errs(), *fusionRemarks,
                                  outputs.inSweep ? outputs.label : "");
    }
    // As dlc-opt prints it; under mpirun every rank compiles the same step.
    if (!emitMlir.empty() && rt::launchedRank() == 0) {
      auto out = openOutputFile(emitMlir, &error);
      if (!out)
        return fail("--emit-mlir: " + error);
      module->print(out->os());
      out->os() << "\n";
      out->keep();
    }
    FailureOr<rt::Plan> compiled =
        mlir::dlc::lowerToPlan(*module, {modelName(modelPath), precision, strategy}, &stats);
    if (failed(compiled))
      return fail("cannot lower " + modelPath + " to a plan");
    plan = std::move(*compiled);
  }
  double compileMs = std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - compileStart)
                         .count();
  if (!emitPlan.empty())
    if (rt::Status status = rt::writePlanFile(plan, emitPlan); !status.isOk())
      return fail(status.toString());
  if (!outputs.kernelDir.empty()) {
    std::string summary;
    if (rt::Status s = bench::writeGeneratedKernels(plan, outputs.kernelDir, summary); !s.isOk())
      return fail("--dump-kernels: " + s.message());
    if (rt::launchedRank() == 0)
      llvm::errs() << "dlc-bench: wrote " << summary << "\n";
  }
  if (!outputs.debugDir.empty() && rt::launchedRank() == 0) {
    if (rt::Status s = bench::writeConfigurationDebugFiles(
            outputs.debugDir, outputs.label, plan, fusionRemarks ? &*fusionRemarks : nullptr);
        !s.isOk())
      return fail("--debug-dir: " + s.message());
    llvm::errs() << "dlc-bench: wrote " << outputs.debugDir
                 << "/index.html and the files it links (IR after each pass, plan, routing, "
                    "kernels, fusion)\n";
  }

  // --predict routes the plan itself: describing it would route it twice.
  if (predict) {
    bench::recordForPrediction(plan, gpus);
    return 0;
  }
  // The plan's own description (its model, precision, strategy, batch,
  // optimizer, counts), then what only the compiler knows.
  result.optimizer = optimizer;
  bench::describePlan(plan, backend, result);
  result.compileMs = compileMs;
  result.totalBufferBytes = stats.totalBufferBytes;
  result.lowerBoundBytes = stats.lowerBoundBytes;
  bench::ChosenPeak peak;
  if (std::string error;
      !bench::choosePeak(gpuName, result.precision, fp32Peak(),
                         numbers.peakTflops.value_or(0), peak, error))
    return fail(error);
  result.peakTflops = peak.tflops;
  result.peakName = peak.name;
  result.confidence = numbers.confidence;
  return 0;
}

/// Runs a compiled configuration, all its repeats in a row, into `result`;
/// returns a non-zero exit code after an error, or kInterrupted.
int runConfiguration(const rt::Plan &plan, const std::string &progressLabel,
                     bench::Result &result) {
  bench::RunOptions options = runOptions();
  options.progressLabel = progressLabel;
  rt::Status ran = bench::runPlan(plan, options, result);
  if (!ran.isOk() && bench::interruptSignal()) {
    result.status = ran.message();
    return kInterrupted;
  }
  if (!ran.isOk())
    return fail(ran.message());
  if (std::string warning = bench::nonFiniteLossWarning(result);
      !warning.empty() && rt::launchedRank() == 0)
    llvm::errs() << ("dlc-bench: warning: " + warning + "\n");
  return 0;
}

} // namespace

int benchMain(int argc, char **argv) {
  // dlc-bench compare BEFORE.json AFTER.json
  if (argc >= 2 && llvm::StringRef(argv[1]) == "compare") {
    if (argc != 4) {
      std::cerr << "usage: dlc-bench compare BEFORE.json AFTER.json\n";
      return 1;
    }
    return bench::runCompare(argv[2], argv[3], std::cout, std::cerr);
  }
  // dlc-bench report A.json [B.json ...] [-o report.html]; dlc-bench gpus
  if (argc >= 2 && llvm::StringRef(argv[1]) == "report")
    return bench::runReport(std::vector<std::string>(argv + 2, argv + argc), std::cerr);
  if (argc >= 2 && llvm::StringRef(argv[1]) == "calibrate") {
    mlir::dlc::registerAllPasses();
    return bench::runCalibrate(std::vector<std::string>(argv + 2, argv + argc), std::cout,
                               std::cerr);
  }
  if (argc >= 2 && llvm::StringRef(argv[1]) == "networks")
    return bench::runNetworks(std::cout);
  if (argc >= 2 && llvm::StringRef(argv[1]) == "gpus")
    return bench::runGpus(std::vector<std::string>(argv + 2, argv + argc), std::cout,
                          std::cerr);
  mlir::dlc::registerAllPasses();
  registerPassManagerCLOptions();
  registerMLIRContextCLOptions();
  registerAsmPrinterCLOptions();
  cl::HideUnrelatedOptions({&category});
  cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "dlc revision " << bench::dlcRevision() << "\n";
  });
  cl::ParseCommandLineOptions(
      argc, argv,
      "dlc-bench: compile a model's whole training step and time it\n\n"
      "  dlc-bench models/small_convnet.mlir --batch 32 --format json\n"
      "  dlc-bench compare BEFORE.json AFTER.json\n"
      "  dlc-bench report A.json [B.json ...] -o report.html\n"
      "  dlc-bench gpus [PRECISION]   (the known GPU peaks --gpu picks from)\n\n"
      "Reports samples/s (median over --repeats with its bootstrap confidence\n"
      "interval, min and max), step time,\n"
      "kernels per step, arena bytes and the loss at the first and last step.\n");

  // Before --fusion is checked: a plugin may register strategies.
  for (const std::string &path : passPlugins) {
    auto plugin = PassPlugin::load(path);
    if (!plugin)
      return fail("--load-pass-plugin " + path + ": " + llvm::toString(plugin.takeError()));
    plugin->registerPassRegistryCallbacks();
  }
  for (const std::string &path : dialectPlugins) {
    auto plugin = DialectPlugin::load(path);
    if (!plugin)
      return fail("--load-dialect-plugin " + path + ": " + llvm::toString(plugin.takeError()));
    loadedDialectPlugins.push_back(std::move(*plugin));
  }

  auto reportFormat = parseFormat(format);
  if (!reportFormat)
    return fail("unknown --format '" + format + "' (table, json, csv, markdown or html)");
  if (fp32PeakName != "fp32" && fp32PeakName != "tf32")
    return fail("--fp32-peak must be fp32 or tf32, got '" + fp32PeakName + "'");
  if (std::string error = readNumbers(); !error.empty())
    return fail(error);
  if (!optimizer.empty() && optimizer != "sgd" && optimizer != "adamw")
    return fail("unknown --optimizer '" + optimizer + "' (sgd or adamw)");
  std::vector<int64_t> batches;
  for (const std::string &item : splitList(batchList)) {
    std::string error;
    auto value = bench::parseIntegerOption("--batch", item, {1, INT64_MAX, /*list=*/true}, error);
    if (!value)
      return fail(error);
    batches.push_back(*value);
  }
  std::vector<std::string> precisions = splitList(precisionList);
  std::vector<std::string> fusions = splitList(fusionList);
  for (std::string &p : precisions) {
    if (p == "fp16-amp" || p == "amp-fp16")
      p = "amp";
    if (!llvm::is_contained(mlir::dlc::kPrecisions, llvm::StringRef(p)))
      return fail("unknown --precision '" + p + "' (fp32, amp, amp-bf16, fp16)");
  }
  if (ampShortForm) {
    if (precisionList.getNumOccurrences())
      return fail("--amp is short for --precision amp: give one of them");
    precisions = {"amp"};
  }
  for (const std::string &f : fusions)
    if (!mlir::dlc::isFusionStrategy(f))
      return fail("unknown --fusion '" + f + "' " + mlir::dlc::knownFusionStrategies());
  std::vector<std::string> layouts = splitList(layoutList);
  for (const std::string &l : layouts)
    if (!llvm::is_contained(mlir::dlc::kLayouts, llvm::StringRef(l)))
      return fail("--layout: unknown layout '" + l + "' (auto, nchw, nhwc)");
  // An unknown --gpu, or a precision it has no peak for, fails before any run.
  for (const std::string &p : precisions) {
    bench::ChosenPeak peak;
    std::string error;
    if (!bench::choosePeak(gpuName, p, fp32Peak(), numbers.peakTflops.value_or(0), peak,
                           error))
      return fail(error);
  }
  if (predict) {
    // Predictions route every launch as the CUDA backend would.
    if (backend.getNumOccurrences() && backend != "cuda")
      return fail("--predict predicts the CUDA backend's step; leave out --backend " + backend);
    backend = "cuda";
    if (std::string error = bench::checkPredictOptions(
            {gpuName, networkName, gpusPerNode, measuredStepMs, costModelFile,
             allReduceAlgorithm, rankStepVariation, tf32, !noOverlap, *reportFormat,
             outputPath});
        !error.empty())
      return fail(error);
  }
  if (backend == "cuda") {
    // Before compiling anything: without a device there is nothing to time.
    auto devices = rt::listCudaDevices();
    if (!devices.isOk() && !compileOnly && !predict)
      return fail("--backend cuda: " + devices.status().message());
  }
  if (!bench::isCpuBackend(backend) && backend != "cuda")
    return fail("unknown --backend '" + backend + "' (cpu, reference or cuda)");
  std::vector<int64_t> gpuCounts;
  for (const std::string &item : splitList(gpusList)) {
    std::string error;
    auto value = bench::parseIntegerOption("--gpus", item, {1, INT64_MAX, /*list=*/true}, error);
    if (!value)
      return fail(error);
    gpuCounts.push_back(*value);
  }
  // Under mpirun the ranks are the processes it started, one each.
  if (int launched = rt::launchedProcesses(); launched > 1) {
    if (!gpusList.getNumOccurrences())
      gpuCounts = {launched};
    else if (gpuCounts != std::vector<int64_t>{launched})
      return fail("mpirun started " + std::to_string(launched) +
                  " processes, one per rank: --gpus must be " + std::to_string(launched) +
                  " (or left out); sweep GPU counts with one mpirun each, or without "
                  "mpirun, where the ranks run as threads");
  }
  // --predict compares each GPU count with one GPU: compile that too.
  if (predict && !llvm::is_contained(gpuCounts, 1))
    gpuCounts.insert(gpuCounts.begin(), 1);
  if (gradCompression != "none" && gradCompression != "fp16" && gradCompression != "bf16")
    return fail("unknown --grad-compression '" + gradCompression + "' (none, fp16, bf16)");
  // Every combination, model slowest, then precision, then fusion, then
  // layout, then batch, then GPUs, so that configurations to compare end up
  // side by side (a GPU sweep's rows next to their one-GPU row, for scaling
  // efficiency).
  std::vector<Configuration> sweep;
  for (const std::string &m : modelPaths)
    for (const std::string &p : precisions)
      for (const std::string &f : fusions)
        for (const std::string &l : layouts)
          for (int64_t b : batches)
            for (int64_t g : gpuCounts)
              sweep.push_back({m, p, f, l, b, g});
  bool fromPlan = llvm::any_of(modelPaths, [](const std::string &path) {
    return llvm::StringRef(path).ends_with(".plan");
  });
  if (predict && fromPlan)
    return fail("--predict compiles the model for every --gpus count: give the model file, "
                "not a .plan");
  if (predict && resume)
    return fail("--resume keeps timed configurations; --predict times none");
  // Every model is there before the first one runs for an hour.
  for (const std::string &path : modelPaths)
    if (!std::ifstream(path))
      return fail("cannot open " + path + ": " + std::strerror(errno));
  if (explainFusion != "" && explainFusion != "all")
    return fail("--explain-fusion: unknown value '" + explainFusion +
                "' (give none for the refusals grouped by reason, or =all for every one)");
  if (!debugDir.empty() && rt::launchedRank() == 0)
    if (std::string error = bench::checkWritableDirectory(debugDir); !error.empty())
      return fail("--debug-dir: " + error);
  if (modelPaths.size() > 1 && (!paramsIn.empty() || !inputsIn.empty()))
    return fail("--params-in and --inputs-in hold one model's tensors: give one model");
  // The data-parallel compile options do nothing to one rank or to a plan
  // compiled already: say so rather than time something else.
  bool dataParallel = llvm::any_of(gpuCounts, [](int64_t g) { return g > 1; });
  for (const cl::Option *option :
       std::initializer_list<const cl::Option *>{&bucketMb, &firstBucketMb, &gradCompression}) {
    if (!option->getNumOccurrences())
      continue;
    if (fromPlan)
      return fail("--" + option->ArgStr.str() +
                  " shapes the compiled step; a .plan is compiled already");
    if (!dataParallel)
      return fail("--" + option->ArgStr.str() +
                  " shapes the gradient all-reduces of --gpus above 1; this run has one rank");
  }
  if (sweep.size() > 1 && (fromPlan || !emitPlan.empty() || !dumpOut.empty()))
    return fail("a sweep of " + std::to_string(sweep.size()) +
                " configurations cannot run a .plan, --emit-plan or --dump-out: "
                "give one configuration");
  if (!emitMlir.empty() && (fromPlan || sweep.size() > 1))
    return fail(fromPlan ? "--emit-mlir: a .plan is compiled already; give the model file"
                         : "--emit-mlir writes one configuration's IR; this sweep has " +
                               std::to_string(sweep.size()));

  bool models = modelPaths.size() > 1;
  std::vector<bench::Result> results;
  // The report of `results`. A file is rewritten after every configuration
  // of a sweep, through a temporary one, so that an interrupt or a crash
  // keeps every finished configuration and never leaves half a report.
  auto writeOutputs = [&]() -> int {
    // Every process of an mpirun job ran its rank; rank 0 reports.
    if (rt::launchedRank() != 0)
      return 0;
    std::ofstream file;
    std::ostream *os = &std::cout;
    std::string partial = outputPath + ".partial";
    if (outputPath != "-") {
      file.open(partial);
      os = &file;
    }
    auto format = reportFormat;
    // HTML is drawn from the JSON report, so the page shows exactly its numbers.
    bool html = *format == bench::Format::kHtml;
    std::ostringstream jsonReport;
    std::ostream *page = os;
    if (html) {
      os = &jsonReport;
      format = bench::Format::kJson;
    }
    bool sideBySide = results.size() > 1 && (*format == bench::Format::kTable ||
                                              *format == bench::Format::kCsv ||
                                              *format == bench::Format::kMarkdown);
    if (compileOnly && sideBySide) {
      bench::writeCompileSweep(*os, results, *format);
    } else if (compileOnly) {
      bool wrap = *format == bench::Format::kJson && results.size() > 1;
      if (wrap)
        *os << "{\"results\": [\n";
      for (size_t i = 0; i < results.size(); ++i) {
        if (wrap && i)
          *os << ",\n";
        bench::writeCompileReport(*os, results[i], *format);
      }
      if (wrap)
        *os << "]}\n";
    } else
      bench::writeReports(*os, results, *format);
    if (html) {
      std::string title, error;
      for (const std::string &path : modelPaths)
        title += (title.empty() ? "" : ", ") + modelName(path);
      if (!bench::writeHtmlFromJson(*page, jsonReport.str(), "dlc-bench " + title, error))
        return fail(error);
      os = page;
    }
    if (!*os)
      return fail("cannot write " + (outputPath == "-" ? std::string("the report") : partial));
    if (outputPath != "-") {
      file.close();
      if (std::rename(partial.c_str(), outputPath.c_str()) != 0)
        return fail("cannot write " + outputPath + ": " + std::strerror(errno));
    }
    return 0;
  };
  // SIGINT / SIGTERM: the configuration running stops after its step (a
  // single rank) or at its end (several), nothing new starts, and the
  // report lists what finished, what was interrupted and what never ran.
  // Under mpirun, mpirun's SIGTERM ends a job one of whose ranks died: it
  // must end this rank, saying so.
  if (rt::launchedProcesses() > 1)
    bench::sayWhenMpirunEndsThisRank("dlc-bench", rt::launchedRank());
  else
    bench::catchInterrupts();
  if (compileOnly && numbers.lossEvery)
    return fail("--loss-every records the losses of the steps run; --compile-only runs none");
  // --resume: the finished configurations of the report already there.
  std::vector<llvm::json::Object> finished;
  if (resume) {
    if (outputPath == "-" || *reportFormat != bench::Format::kJson)
      return fail("--resume reads the finished configurations back from the report: give "
                  "--format json -o FILE");
    if (compileOnly)
      return fail("--resume skips configurations timed already; --compile-only times none");
    std::string error;
    if (std::ifstream(outputPath) && !bench::readReport(outputPath, finished, error))
      return fail("--resume: " + error);
  }
  // The finished configuration of `finished` that is `c`, as its JSON text;
  // "" when there is none. An auto layout matches the one the run chose.
  auto finishedRun = [&](const Configuration &c) -> std::string {
    for (llvm::json::Object &r : finished) {
      std::string layout = r.getString("layout").value_or("").str();
      if (r.getString("model").value_or("") != modelName(c.model) ||
          r.getString("backend").value_or("") != backend ||
          r.getString("precision").value_or("") != c.precision ||
          r.getString("fusion").value_or("") != c.fusion ||
          r.getInteger("batch").value_or(-1) != c.batch ||
          r.getInteger("gpus").value_or(1) != c.gpus ||
          (c.layout != "auto" && !llvm::StringRef(layout).equals_insensitive(c.layout)))
        continue;
      std::string text;
      llvm::raw_string_ostream os(text);
      os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object(r))) << "\n";
      return text;
    }
    return "";
  };
  size_t resumed = 0;
  auto notRun = [&](const Configuration &c) {
    bench::Result r;
    r.model = modelName(c.model);
    r.backend = backend;
    r.precision = c.precision;
    r.fusion = c.fusion;
    r.layout = c.layout == "auto" ? "" : c.layout;
    r.batch = c.batch;
    r.gpus = c.gpus;
    r.status = "not run (" + bench::interruptName() + ")";
    return r;
  };
  // Each configuration's slot in the report, in the sweep's order; `done`
  // once its figures are final (finished, carried over, or compiled only).
  std::vector<bench::Result> slots(sweep.size());
  std::vector<bool> done(sweep.size(), false);
  // The report so far: what is done, for the file rewritten during a sweep.
  auto writeDone = [&]() -> int {
    if (sweep.size() < 2 || outputPath == "-")
      return 0;
    results.clear();
    for (size_t i = 0; i < sweep.size(); ++i)
      if (done[i])
        results.push_back(slots[i]);
    return writeOutputs();
  };
  auto label = [&](size_t i) {
    return sweep.size() > 1 ? "[" + std::to_string(i + 1) + "/" +
                                  std::to_string(sweep.size()) + "] " +
                                  sweep[i].displayName(models) + ": "
                            : std::string();
  };
  // Compile every configuration first, so that a sweep fails before any
  // timing if one of them does not compile.
  std::vector<rt::Plan> plans(sweep.size());
  std::vector<bench::DebugEntry> debugEntries;
  bool stopped = false;
  for (size_t i = 0; i < sweep.size(); ++i) {
    const Configuration &c = sweep[i];
    if (bench::interruptSignal()) {
      for (size_t j = i; j < sweep.size(); ++j)
        slots[j] = notRun(sweep[j]);
      stopped = true;
      break;
    }
    if (std::string finishedJson = finishedRun(c); !finishedJson.empty()) {
      slots[i].json = std::move(finishedJson);
      done[i] = true;
      ++resumed;
      continue;
    }
    // A sweep dumps each configuration's kernels and debug files apart.
    ConfigurationOutputs outputs{dumpKernels, debugDir, c.displayName(models),
                                 sweep.size() > 1};
    std::string subdirectory = bench::safeDirectoryName(c.directoryName(models));
    if (outputs.inSweep && !dumpKernels.empty())
      outputs.kernelDir += "/" + c.directoryName(models);
    if (outputs.inSweep && !debugDir.empty()) {
      outputs.debugDir += "/" + subdirectory;
      if (rt::launchedRank() == 0)
        if (std::string error = bench::checkWritableDirectory(outputs.debugDir);
            !error.empty())
          return fail("--debug-dir: " + error);
    }
    slots[i].provenance = bench::currentProvenance(argc, argv);
    if (int rc = compileConfiguration(c, fromPlan, batchList.getNumOccurrences() > 0,
                                      outputs, plans[i], slots[i]))
      return rc;
    if (outputs.inSweep && !debugDir.empty() && rt::launchedRank() == 0) {
      debugEntries.push_back({outputs.label, subdirectory});
      if (rt::Status s = bench::writeSweepDebugIndex(debugDir, debugEntries); !s.isOk())
        return fail("--debug-dir: " + s.message());
    }
    if (compileOnly) {
      done[i] = true;
      if (i + 1 < sweep.size())
        if (int written = writeDone())
          return written;
    }
  }
  // --predict times nothing: every configuration is compiled and recorded.
  if (predict && !stopped)
    return bench::writePrediction({gpuName, networkName, gpusPerNode, measuredStepMs,
                                   costModelFile, allReduceAlgorithm, rankStepVariation, tf32,
                                   !noOverlap, *reportFormat, outputPath},
                                  std::cerr);
  // Then time them: single-rank configurations of a sweep in rounds
  // (Rounds.h), data-parallel ones after, each's repeats in a row.
  std::vector<size_t> inRounds, inRow;
  for (size_t i = 0; i < sweep.size() && !compileOnly && !stopped; ++i)
    if (!done[i])
      (rt::planRanks(plans[i]) == 1 && rt::launchedProcesses() <= 1 ? inRounds : inRow)
          .push_back(i);
  if (inRounds.size() < 2) {
    inRow.insert(inRow.end(), inRounds.begin(), inRounds.end());
    std::sort(inRow.begin(), inRow.end());
    inRounds.clear();
  }
  if (!inRounds.empty()) {
    std::vector<bench::RoundEntry> entries;
    for (size_t i : inRounds) {
      bench::RoundEntry e;
      e.plan = &plans[i];
      e.result = &slots[i];
      e.options = runOptions();
      e.options.progressLabel = label(i);
      e.name = sweep[i].displayName(models);
      entries.push_back(std::move(e));
    }
    rt::Status ran = bench::runInRounds(entries, numbers.repeats, [&](size_t k) {
      size_t i = inRounds[k];
      done[i] = true;
      if (std::string warning = bench::nonFiniteLossWarning(slots[i]);
          !warning.empty() && rt::launchedRank() == 0)
        llvm::errs() << ("dlc-bench: warning: " + warning + "\n");
      if (writeDone())
        return rt::Status(rt::StatusCode::kInvalidArgument, "");
      return rt::Status::ok();
    });
    if (!ran.isOk() && !bench::interruptSignal())
      return ran.message().empty() ? 1 : fail(ran.message());
    if (!ran.isOk()) {
      stopped = true;
      for (size_t i : inRow)
        slots[i] = notRun(sweep[i]);
    }
  }
  for (size_t i : inRow) {
    if (stopped)
      break;
    if (bench::interruptSignal()) {
      for (size_t j : inRow)
        if (!done[j])
          slots[j] = notRun(sweep[j]);
      break;
    }
    int rc = runConfiguration(plans[i], label(i), slots[i]);
    if (rc == kInterrupted) {
      for (size_t j : inRow)
        if (!done[j] && j != i)
          slots[j] = notRun(sweep[j]);
      break;
    }
    if (rc)
      return rc;
    done[i] = true;
    if (i != inRow.back())
      if (int written = writeDone())
        return written;
  }
  results = std::move(slots);
  if (resume && rt::launchedRank() == 0)
    llvm::errs() << "dlc-bench: --resume: " << resumed << " of " << sweep.size()
                 << " configurations were finished in " << outputPath << " and kept\n";
  if (int written = writeOutputs())
    return written;
  if (int signal = bench::interruptSignal()) {
    size_t finished = llvm::count_if(results, [](const bench::Result &r) {
      return r.status.empty();
    });
    if (rt::launchedRank() == 0)
      llvm::errs() << "dlc-bench: stopped by " << bench::interruptName() << ": " << finished
                   << " of " << sweep.size() << " configurations finished"
                   << (outputPath != "-" ? ", written to " + outputPath : std::string())
                   << "\n";
    return 128 + signal;
  }
  // The report is written, then a NaN or infinite loss fails the run.
  if (!allowNonFinite && !llvm::all_of(results, bench::lossFinite))
    return 1;
  return 0;
}

int main(int argc, char **argv) {
  rt::pinOpenMpThreads(argv);
  llvm::InitLLVM init(argc, argv);
  int rc = benchMain(argc, argv);
  // Under mpirun: MPI_Finalize, or MPI_Abort after an error so that no other
  // rank waits for this one.
  rt::leaveProcessRankGroup(rc != 0);
  return rc;
}
