//===- dlc-bench.cpp - compile a model's training step and time it --------===//
//
// What is timed: only the training steps themselves. For each repeat the
// parameters are initialized from the seed and a synthetic batch is drawn
// (not timed), `--warmup` steps run untimed, then `--steps` steps run
// back to back between two clock reads; samples/s = batch x steps / elapsed.
// The report gives the median over `--repeats` with min and max.
// What is not timed: parsing, compiling (reported separately as compile
// time), planning, arena allocation, initialization and data synthesis.
// Every repeat starts from the same parameters and batch, so its losses are
// the same sequence: a repeat that trains differently is a bug, not noise.
//
//===----------------------------------------------------------------------===//

#include "Compare.h"
#include "GpuPeaks.h"
#include "Html.h"
#include "Report.h"

#include "dlc/Conversion/TrainToPlan.h"
#include "dlc/InitAll.h"
#include "dlc/Pipelines/Pipelines.h"
#include "dlc/Transforms/Passes.h"
#include "dlc/runtime/Device.h"
#include "dlc/runtime/Npy.h"
#include "dlc/runtime/PlanSummary.h"
#include "dlc/runtime/cpu/CpuExecutor.h"
#include "dlc/runtime/cpu/Parallel.h"
#include "dlc/runtime/Nvml.h"
#include "dlc/runtime/cuda/CudaExecutor.h"
#include "dlc/runtime/cuda/LaunchPaths.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
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

cl::opt<std::string> modelPath(cl::Positional,
                               cl::desc("<model.mlir, or a .plan from --emit-plan>"),
                               cl::Required, cl::cat(category));
cl::opt<std::string> backend("backend", cl::desc("cpu (default) or cuda"),
                             cl::init("cpu"), cl::cat(category));
cl::opt<std::string> batchList("batch",
    cl::desc("samples per step, or a comma-separated list to sweep (default 32)"),
    cl::init("32"), cl::cat(category));
cl::opt<int64_t> warmup("warmup", cl::desc("untimed steps before timing (default 20)"),
                        cl::init(20), cl::cat(category));
cl::opt<int64_t> steps("steps", cl::desc("timed steps per repeat (default 100)"),
                       cl::init(100), cl::cat(category));
cl::opt<int64_t> repeats("repeats", cl::desc("repeats of the timed loop; the median is reported (default 5)"),
                         cl::init(5), cl::cat(category));
cl::opt<uint64_t> seed("seed", cl::desc("seed of parameters and synthetic data (default 0)"),
                       cl::init(0), cl::cat(category));
cl::opt<std::string> optimizer("optimizer", cl::desc("sgd or adamw; default: the model's"),
                               cl::init(""), cl::cat(category));
cl::opt<double> lr("lr", cl::desc("learning rate; default: the model's"),
                   cl::init(0.0), cl::cat(category));
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
             "list to sweep for speed-up and scaling efficiency (default 1); counts "
             "above 1 need the data-parallel work and are refused until it lands"),
    cl::init("1"), cl::cat(category));
cl::opt<bool> ampShortForm("amp", cl::desc("short for --precision amp"),
                           cl::init(false), cl::cat(category));
cl::opt<double> lossScale("loss-scale",
    cl::desc("initial dynamic loss scale of amp and fp16 (default 65536, PyTorch's)"),
    cl::init(65536.0), cl::cat(category));
cl::opt<int64_t> lossScaleGrowthInterval("loss-scale-growth-interval",
    cl::desc("good steps before the loss scale doubles (default 2000, PyTorch's)"),
    cl::init(2000), cl::cat(category));
cl::opt<std::string> fusionList("fusion",
    cl::desc("none (one kernel per op, default), paddle (PaddlePaddle's batch-norm + "
             "activation and element-wise + activation fusions, and one kernel for the "
             "optimizer updates) or xla (GEMM / conv epilogues, greedy loop and reduction "
             "fusion, one kernel for the optimizer updates and one for the weight casts); "
             "a comma-separated list sweeps, e.g. none,paddle,xla"),
    cl::init("none"), cl::cat(category));
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
cl::opt<bool> explainFusion("explain-fusion",
    cl::desc("report every producer-consumer pair the fusion passes did not fuse, and why"),
    cl::init(false), cl::cat(category));
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
             "launch kind and path"),
    cl::init(false), cl::cat(category));
cl::opt<bool> noCudaGraph("no-cuda-graph",
    cl::desc("--backend cuda: launch the step kernel by kernel instead of replaying it "
             "as one captured CUDA graph (to measure what the graph saves)"),
    cl::init(false), cl::cat(category));
cl::opt<bool> tf32("tf32",
    cl::desc("--backend cuda: let fp32 GEMMs and convolutions use TF32 tensor cores "
             "(default off: fp32 is fp32; the report says which)"),
    cl::init(false), cl::cat(category));
cl::opt<double> peakTflops("peak-tflops",
    cl::desc("the device's peak TFLOP/s, for the model-FLOP utilization (MFU = "
             "training FLOPs per second / peak); without it MFU is not reported"),
    cl::init(0.0), cl::cat(category));
cl::opt<std::string> gpuName("gpu",
    cl::desc("the GPU the MFU is against, from the table of known peaks (A100-SXM, "
             "H100-SXM, ...; `dlc-bench gpus` lists them), by the run's precision; "
             "--peak-tflops overrides"),
    cl::value_desc("name"), cl::init(""), cl::cat(category));
cl::opt<std::string> fp32PeakName("fp32-peak",
    cl::desc("with --gpu, the peak of an fp32 run: fp32 (the CUDA cores, default: "
             "fp32 keeps full FP32 arithmetic) or tf32 (the TF32 tensor cores)"),
    cl::init("fp32"), cl::cat(category));
cl::opt<bool> compileOnly("compile-only",
    cl::desc("compile and print the step's counts (parameters, MACs, kernels, arena, "
             "compile time) without running it"),
    cl::init(false), cl::cat(category));
cl::opt<std::string> emitPlan("emit-plan", cl::desc("also write the compiled plan to this file"),
                              cl::value_desc("file"), cl::init(""), cl::cat(category));

int fail(const std::string &message) {
  llvm::errs() << "dlc-bench: error: " << message << "\n";
  return 1;
}

/// --profile on the CUDA backend: device milliseconds per step by launch
/// kind and path, slowest first, then the ten slowest launches.
rt::Status printLaunchProfile(const rt::cuda::CudaExecutor &gpu) {
  auto ms = gpu.launchMsPerStep();
  if (!ms.isOk())
    return ms.status();
  const std::vector<rt::cuda::LaunchPath> &paths = gpu.launchPaths();
  std::map<std::string, std::pair<double, int64_t>> byKind;
  double total = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    // "launch #5 (elewise_act, group 2, ...)": the kind is the first word.
    const std::string &label = paths[i].label;
    size_t open = label.find('(') + 1;
    std::string kind = label.substr(open, label.find_first_of(",)", open) - open);
    auto &entry = byKind[kind + " [" + paths[i].path + "]"];
    entry.first += (*ms)[i];
    ++entry.second;
    total += (*ms)[i];
  }
  std::vector<std::pair<double, std::string>> rows;
  for (auto &[kind, entry] : byKind)
    rows.push_back({entry.first, kind});
  std::sort(rows.rbegin(), rows.rend());
  std::cerr << "device time by launch kind [path] over " << gpu.profiledSteps()
            << " profiled steps (CUDA events around each launch, no graph): " << std::fixed
            << std::setprecision(3) << total << " ms/step\n";
  for (auto &[value, kind] : rows)
    std::cerr << "  " << std::left << std::setw(44) << kind << std::right << std::setw(10)
              << std::setprecision(3) << value << " ms/step  " << std::setw(5)
              << std::setprecision(1) << (total > 0 ? 100 * value / total : 0.0) << "%  ("
              << byKind[kind].second << " launches)\n";
  std::vector<size_t> order(paths.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return (*ms)[a] > (*ms)[b]; });
  std::cerr << "slowest launches:\n";
  for (size_t i = 0; i < std::min<size_t>(10, order.size()); ++i)
    std::cerr << "  " << std::setw(9) << std::setprecision(3) << (*ms)[order[i]] << " ms  "
              << paths[order[i]].path << "  " << paths[order[i]].label << "\n";
  return rt::Status::ok();
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

/// Loads DIR/<name>.npy into every buffer of the given roles; a missing file
/// is an error only when `required`.
rt::Status loadBuffers(rt::Executor &exec, const std::string &dir,
                       std::initializer_list<rt::BufferRole> roles,
                       bool required(rt::BufferRole)) {
  for (const rt::PlanBuffer &b : exec.plan().buffers) {
    if (std::find(roles.begin(), roles.end(), b.role) == roles.end())
      continue;
    std::string path = dir + "/" + b.name + ".npy";
    if (!required(b.role) && !std::ifstream(path))
      continue;
    auto array = rt::readNpy(path);
    if (!array.isOk())
      return array.status();
    // Half-precision buffers (--precision fp16) load from float32 files.
    bool widened = rt::cpu::isHalf(b.dtype) && array->dtype == rt::DType::kF32;
    if ((array->dtype != b.dtype && !widened) || array->shape != b.shape) {
      std::string expected, got;
      for (int64_t d : b.shape)
        expected += std::to_string(d) + " ";
      for (int64_t d : array->shape)
        got += std::to_string(d) + " ";
      return rt::Status(rt::StatusCode::kInvalidArgument,
                        path + ": '" + b.name + "' is " + rt::dtypeName(b.dtype) +
                            " [ " + expected + "], the file holds " +
                            rt::dtypeName(array->dtype) + " [ " + got + "]");
    }
    if (widened) {
      std::string half(b.bytes, '\0');
      rt::cpu::roundFromFloat(reinterpret_cast<const float *>(array->data.data()),
                              b.dtype, half.data(), b.numElements());
      array->data = std::move(half);
    }
    if (rt::Status s = exec.write(b.name, array->data.data(), array->data.size());
        !s.isOk())
      return s;
  }
  return rt::Status::ok();
}

/// A buffer's bytes as float32 values (half precision widened).
std::vector<float> asFloats(const std::string &bytes, rt::DType dtype) {
  size_t n = bytes.size() / rt::dtypeBytes(dtype);
  std::vector<float> values(n);
  if (rt::cpu::isHalf(dtype))
    rt::cpu::widenToFloat(bytes.data(), dtype, values.data(), n);
  else
    std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
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

/// Compiles the model for one configuration (or reads the .plan), runs it
/// and fills `result`; returns a non-zero exit code after an error.
int runConfiguration(const std::string &precision, const std::string &fusion,
                     int64_t batch, bool fromPlan, bool batchGiven,
                     bench::Result &result) {
  // Compile: parse, specialize the batch, differentiate, lower to a plan.
  // A .plan file was compiled already (perhaps on another machine): run it.
  auto compileStart = std::chrono::steady_clock::now();
  rt::Plan plan;
  mlir::dlc::PlanStats stats;
  // The configuration's name in reports: the strategy, then any pipeline.
  std::string named = fusion == "paddle" && paddleRelaxGate ? "paddle-relaxed" : fusion;
  if (fusion != "none" && !disableFusion.empty())
    named += "-no-" + std::string(disableFusion);
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
    // A plan records offsets, not which buffers share storage by design:
    // the no-reuse total and the liveness bound are unknown here.
    stats.kernels = static_cast<int64_t>(plan.kernels.size());
    stats.totalBufferBytes = stats.lowerBoundBytes = -1;
  } else {
    DialectRegistry registry;
    mlir::dlc::registerAllDialects(registry);
    MLIRContext context(registry);
    context.loadAllAvailableDialects();
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
    mlir::dlc::PrecisionPipelineOptions precisionOptions;
    precisionOptions.precision = precision;
    precisionOptions.initLossScale = lossScale;
    precisionOptions.growthInterval = lossScaleGrowthInterval;
    pm.addPass(mlir::dlc::createSpecializeBatchPass({batch}));
    if (failed(mlir::dlc::buildPrecisionPipeline(pm, precisionOptions,
                                                 /*beforeAutodiff=*/true, error)))
      return fail("--precision " + precision + ": " + error);
    pm.addPass(mlir::dlc::createAutodiffPass({optimizer, lr}));
    if (failed(mlir::dlc::buildPrecisionPipeline(pm, precisionOptions,
                                                 /*beforeAutodiff=*/false, error)))
      return fail("--precision " + precision + ": " + error);
    mlir::dlc::FusionPipelineOptions fusionOptions;
    fusionOptions.strategy = fusion;
    fusionOptions.paddleRelaxGate = paddleRelaxGate;
    fusionOptions.explain = explainFusion;
    for (const std::string &kind : splitList(disableFusion))
      if (!kind.empty())
        fusionOptions.disabled.push_back(kind);
    if (std::string error;
        failed(mlir::dlc::buildFusionPipeline(pm, fusionOptions, error)))
      return fail("--fusion " + fusion + ": " + error);
    if (!pipeline.empty()) {
      std::string errors;
      llvm::raw_string_ostream os(errors);
      if (failed(parsePassPipeline(pipeline, pm, os)))
        return fail("cannot parse --pipeline '" + pipeline + "': " + errors);
    }
    if (failed(pm.run(*module)))
      return fail("cannot compile " + modelPath + " (see the errors above)");
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

  std::string optimizerName = optimizer;
  for (const rt::PlanKernel &k : plan.kernels)
    if (k.op == "sgd_update" || k.op == "adamw_update") {
      optimizerName = k.op.substr(0, k.op.find('_'));
      break;
    }
  result.model = plan.model;
  result.backend = backend;
  result.precision = precision;
  result.fusion = fromPlan ? plan.fusion : strategy;
  result.batch = batch;
  result.threads = rt::cpu::cpuThreadCount();
  result.warmup = warmup;
  result.steps = steps;
  result.repeats = repeats;
  result.seed = seed;
  result.optimizer = optimizerName;
  result.compileMs = compileMs;
  result.peakArenaBytes = plan.arenaBytes;
  result.totalBufferBytes = stats.totalBufferBytes;
  result.lowerBoundBytes = stats.lowerBoundBytes;
  rt::PlanSummary summary = rt::summarizePlan(plan);
  result.parameters = summary.parameters;
  result.forwardMacsPerSample = summary.forwardMacs / std::max<int64_t>(batch, 1);
  result.trainFlopsPerStep = 2 * summary.stepMacs;
  result.kernelsPerStep = summary.launches;
  result.memoryBytesPerStep = summary.memoryBytes;
  result.fusedGroups = summary.groupsByKind;
  result.kernelsByKind = summary.launchesByKind;
  bench::ChosenPeak peak;
  if (std::string error;
      !bench::choosePeak(gpuName, precision, fp32Peak(), peakTflops, peak, error))
    return fail(error);
  result.peakTflops = peak.tflops;
  result.peakName = peak.name;

  // The CUDA backend's routing needs no GPU: compile-only runs report it.
  if (backend == "cuda")
    result.launchesByPath = rt::cuda::countByPath(rt::cuda::planDeviceLaunches(plan));

  if (compileOnly)
    return 0;

  // Both backends run the same loop below through rt::Executor.
  std::unique_ptr<rt::Executor> executor;
  rt::cuda::CudaExecutor *gpu = nullptr;
  std::unique_ptr<rt::NvmlMonitor> nvml;
  if (backend == "cuda") {
    rt::cuda::CudaOptions options;
    options.cudaGraph = !noCudaGraph;
    options.allowTf32 = tf32;
    auto created = rt::cuda::CudaExecutor::create(plan, options);
    if (!created.isOk())
      return fail("--backend cuda: " + created.status().toString());
    gpu = created->get();
    executor = std::move(*created);
    result.launchesByPath = executor->launchesByPath();
    result.device = gpu->deviceName();
    result.tf32 = gpu->options().allowTf32;
    auto monitor = rt::NvmlMonitor::open(gpu->pciBusId());
    if (monitor.isOk())
      nvml = std::move(*monitor);
    else
      result.gpuUsageNote = monitor.status().message();
  } else {
    auto created = rt::cpu::CpuExecutor::create(plan);
    if (!created.isOk())
      return fail(created.status().toString());
    executor = std::move(*created);
  }

  bool progress = isatty(STDERR_FILENO);
  rt::Executor &exec = *executor;
  // Gradients die inside the step; capture each as its update reads it.
  // Under loss scaling they are unscaled with the status the update read.
  std::map<std::string, std::vector<float>> lastGrads;
  // --profile: seconds and calls by op, between consecutive kernel ends.
  std::map<std::string, std::pair<double, int64_t>> opTime;
  bool timing = false;
  auto lastMark = std::chrono::steady_clock::now();
  // The CUDA backend times its own launches with events (--profile).
  bool observeProfile = profile && !gpu;
  if (!dumpOut.empty() || observeProfile)
    exec.setKernelObserver([&](size_t k) {
      const rt::PlanKernel &kernel = exec.plan().kernels[k];
      if (!dumpOut.empty() &&
          (kernel.op == "sgd_update" || kernel.op == "adamw_update"))
      {
        const rt::PlanBuffer &grad = exec.plan().buffers[kernel.inputs[1]];
        std::vector<float> values = asFloats(exec.bytesOf(kernel.inputs[1]), grad.dtype);
        size_t statusOperand = kernel.op == "sgd_update" ? 3 : 4;
        if (kernel.inputs.size() > statusOperand) {
          float factor = asFloats(exec.bytesOf(kernel.inputs[statusOperand]),
                                  rt::DType::kF32)[0];
          for (float &v : values)
            v *= factor;
        }
        lastGrads[exec.plan().buffers[kernel.inputs[0]].name] = std::move(values);
      }
      if (observeProfile) {
        auto now = std::chrono::steady_clock::now();
        if (timing) {
          auto &entry = opTime[kernel.op];
          entry.first += std::chrono::duration<double>(now - lastMark).count();
          ++entry.second;
        }
        lastMark = std::chrono::steady_clock::now();
      }
    });
  for (int64_t r = 0; r < repeats; ++r) {
    if (rt::Status s = exec.initialize(seed); !s.isOk())
      return fail(s.toString());
    if (!paramsIn.empty())
      if (rt::Status s = loadBuffers(exec, paramsIn,
                                     {rt::BufferRole::kParam, rt::BufferRole::kState},
                                     [](rt::BufferRole role) {
                                       return role == rt::BufferRole::kParam;
                                     });
          !s.isOk())
        return fail(s.toString());
    if (rt::Status s = inputsIn.empty()
                           ? exec.fillSyntheticBatch(seed + 1)
                           : loadBuffers(exec, inputsIn,
                                         {rt::BufferRole::kInput, rt::BufferRole::kLabel},
                                         [](rt::BufferRole) { return true; });
        !s.isOk())
      return fail(s.toString());
    bench::RepeatResult repeat;
    for (int64_t i = 0; i < warmup; ++i) {
      if (rt::Status s = exec.step(); !s.isOk())
        return fail(s.toString());
      if (i == 0)
        repeat.lossFirst = exec.loss();
    }
    if (rt::Status s = exec.synchronize(); !s.isOk())
      return fail(s.toString());
    if (gpu && profile)
      gpu->setProfiling(true);
    if (nvml)
      nvml->start();
    auto start = std::chrono::steady_clock::now();
    timing = true;
    lastMark = start;
    for (int64_t i = 0; i < steps; ++i) {
      if (rt::Status s = exec.step(); !s.isOk())
        return fail(s.toString());
      if (warmup == 0 && i == 0)
        repeat.lossFirst = exec.loss();
      if (progress && (i + 1) % 10 == 0)
        std::cerr << "\rrepeat " << r + 1 << "/" << repeats << ": step "
                  << i + 1 << "/" << steps << std::flush;
    }
    // A device backend returns before its last steps finish: wait for them.
    if (rt::Status s = exec.synchronize(); !s.isOk())
      return fail(s.toString());
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    timing = false;
    if (gpu) {
      gpu->setProfiling(false);
      result.cudaGraph = gpu->replaysCudaGraph();
      result.cudaGraphNote = gpu->cudaGraphNote();
    }
    if (nvml) {
      rt::GpuUsage usage = nvml->stop();
      // Utilization: the mean over every repeat's samples.
      double total = result.gpuUtilization * result.gpuSamples +
                     usage.gpuUtilizationPercent * usage.samples;
      result.gpuSamples += usage.samples;
      if (result.gpuSamples)
        result.gpuUtilization = total / result.gpuSamples;
      result.gpuMemoryUsedBytes = std::max(result.gpuMemoryUsedBytes, usage.memoryUsedBytes);
    }
    repeat.lossLast = exec.loss();
    repeat.samplesPerSec = batch * steps / seconds;
    repeat.stepMs = seconds * 1000 / steps;
    result.repeatResults.push_back(repeat);
  }
  if (progress)
    std::cerr << "\r\033[K" << std::flush;

  if (profile && gpu) {
    if (rt::Status s = printLaunchProfile(*gpu); !s.isOk())
      return fail(s.toString());
  } else if (profile) {
    std::vector<std::pair<double, std::string>> rows;
    double total = 0;
    for (auto &[op, entry] : opTime) {
      rows.push_back({entry.first, op});
      total += entry.first;
    }
    std::sort(rows.rbegin(), rows.rend());
    std::cerr << "time by kernel op over " << repeats * steps << " timed steps:\n";
    for (auto &[seconds, op] : rows)
      std::cerr << "  " << std::left << std::setw(34) << op << std::right
                << std::setw(10) << std::fixed << std::setprecision(3)
                << seconds * 1000 / (repeats * steps) << " ms/step  "
                << std::setw(5) << std::setprecision(1) << 100 * seconds / total
                << "%  (" << opTime[op].second / (repeats * steps) << " per step)\n";
  }

  if (!dumpOut.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(std::string(dumpOut), ec);
    if (ec)
      return fail("cannot create --dump-out directory " + dumpOut + ": " + ec.message());
    for (const rt::PlanBuffer &b : exec.plan().buffers) {
      bool updated = b.role == rt::BufferRole::kParam || b.role == rt::BufferRole::kState;
      if (!updated && b.role != rt::BufferRole::kLoss)
        continue;
      // Every float buffer is written as float32, half precision widened.
      std::string bytes = exec.bytesOf(&b - exec.plan().buffers.data());
      std::vector<float> widened;
      rt::DType dtype = b.dtype;
      if (rt::cpu::isHalf(dtype)) {
        widened = asFloats(bytes, dtype);
        dtype = rt::DType::kF32;
      }
      if (rt::Status s = rt::writeNpy(dumpOut + "/" + b.name + ".npy", dtype, b.shape,
                                      widened.empty() ? bytes.data()
                                                      : static_cast<const void *>(widened.data()));
          !s.isOk())
        return fail(s.toString());
      auto grad = lastGrads.find(b.name);
      if (grad != lastGrads.end())
        if (rt::Status s = rt::writeNpy(dumpOut + "/" + b.name + ".grad.npy",
                                        rt::DType::kF32, b.shape, grad->second.data());
            !s.isOk())
          return fail(s.toString());
    }
  }

  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
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
  if (argc >= 2 && llvm::StringRef(argv[1]) == "gpus")
    return bench::runGpus(std::vector<std::string>(argv + 2, argv + argc), std::cout,
                          std::cerr);
  mlir::dlc::registerAllPasses();
  registerPassManagerCLOptions();
  registerMLIRContextCLOptions();
  registerAsmPrinterCLOptions();
  cl::HideUnrelatedOptions({&category});
  cl::ParseCommandLineOptions(
      argc, argv,
      "dlc-bench: compile a model's whole training step and time it\n\n"
      "  dlc-bench models/small_convnet.mlir --batch 32 --format json\n"
      "  dlc-bench compare BEFORE.json AFTER.json\n"
      "  dlc-bench report A.json [B.json ...] -o report.html\n"
      "  dlc-bench gpus [PRECISION]   (the known GPU peaks --gpu picks from)\n\n"
      "Reports samples/s (median, min, max over --repeats), step time,\n"
      "kernels per step, arena bytes and the loss at the first and last step.\n");

  auto reportFormat = parseFormat(format);
  if (!reportFormat)
    return fail("unknown --format '" + format + "' (table, json, csv, markdown or html)");
  if (fp32PeakName != "fp32" && fp32PeakName != "tf32")
    return fail("--fp32-peak must be fp32 or tf32, got '" + fp32PeakName + "'");
  if (steps < 1 || repeats < 1 || warmup < 0)
    return fail("--steps and --repeats must be >= 1 and --warmup >= 0");
  std::vector<int64_t> batches;
  for (const std::string &item : splitList(batchList)) {
    char *end = nullptr;
    long long value = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end || value < 1)
      return fail("--batch expects positive integers, got '" + item + "'");
    batches.push_back(value);
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
  if (!(lossScale > 0) || lossScaleGrowthInterval < 1)
    return fail("--loss-scale must be > 0 and --loss-scale-growth-interval >= 1");
  for (const std::string &f : fusions)
    if (!llvm::is_contained(mlir::dlc::kFusionStrategies, llvm::StringRef(f)))
      return fail("unknown --fusion '" + f + "' (none, paddle, xla)");
  // An unknown --gpu, or a precision it has no peak for, fails before any run.
  for (const std::string &p : precisions) {
    bench::ChosenPeak peak;
    std::string error;
    if (!bench::choosePeak(gpuName, p, fp32Peak(), peakTflops, peak, error))
      return fail(error);
  }
  if (backend == "cuda") {
    // Before compiling anything: without a device there is nothing to time.
    auto devices = rt::listCudaDevices();
    if (!devices.isOk() && !compileOnly)
      return fail("--backend cuda: " + devices.status().message());
  }
  if (backend != "cpu" && backend != "cuda")
    return fail("unknown --backend '" + backend + "' (cpu or cuda)");
  for (const std::string &item : splitList(gpusList)) {
    char *end = nullptr;
    long long value = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end || value < 1)
      return fail("--gpus expects positive integers, got '" + item + "'");
    if (value > 1)
      return fail("--gpus " + item +
                  ": running on several GPUs or ranks needs the data-parallel "
                  "work (gradient all-reduce across ranks), which is not "
                  "implemented yet; only --gpus 1 runs");
  }
  size_t configs = batches.size() * precisions.size() * fusions.size();
  bool fromPlan = llvm::StringRef(modelPath).ends_with(".plan");
  if (configs > 1 && (fromPlan || !emitPlan.empty() || !dumpOut.empty()))
    return fail("a sweep of " + std::to_string(configs) +
                " configurations cannot run a .plan, --emit-plan or --dump-out: "
                "give one configuration");

  // Every combination, precision slowest, then fusion, then batch, so that
  // configurations to compare end up side by side.
  std::vector<bench::Result> results;
  for (const std::string &p : precisions)
    for (const std::string &f : fusions)
      for (int64_t b : batches) {
        bench::Result result;
        if (int rc = runConfiguration(p, f, b, fromPlan, batchList.getNumOccurrences() > 0,
                                      result))
          return rc;
        results.push_back(std::move(result));
      }

  std::ofstream file;
  std::ostream *os = &std::cout;
  if (outputPath != "-") {
    file.open(outputPath);
    os = &file;
  }
  // HTML is drawn from the JSON report, so the page shows exactly its numbers.
  bool html = *reportFormat == bench::Format::kHtml;
  std::ostringstream jsonReport;
  std::ostream *page = os;
  if (html) {
    os = &jsonReport;
    reportFormat = bench::Format::kJson;
  }
  bool sideBySide = results.size() > 1 && (*reportFormat == bench::Format::kTable ||
                                            *reportFormat == bench::Format::kCsv ||
                                            *reportFormat == bench::Format::kMarkdown);
  if (compileOnly && sideBySide) {
    bench::writeCompileSweep(*os, results, *reportFormat);
  } else if (compileOnly) {
    bool wrap = *reportFormat == bench::Format::kJson && results.size() > 1;
    if (wrap)
      *os << "{\"results\": [\n";
    for (size_t i = 0; i < results.size(); ++i) {
      if (wrap && i)
        *os << ",\n";
      bench::writeCompileReport(*os, results[i], *reportFormat);
    }
    if (wrap)
      *os << "]}\n";
  } else
    bench::writeReports(*os, results, *reportFormat);
  if (html) {
    std::string error;
    if (!bench::writeHtmlFromJson(*page, jsonReport.str(),
                                  "dlc-bench " + modelName(modelPath), error))
      return fail(error);
    os = page;
  }
  if (!*os)
    return fail("cannot write " + outputPath);
  return 0;
}
