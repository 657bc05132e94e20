//===- RunFlags.cpp - the run command's flags, read once ------------------===//

#include "RunFlags.h"

#include "NumericOption.h"
#include "PipelineFlags.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace dlc::bench {

namespace {

cl::list<std::string> modelPaths(cl::Positional,
    cl::desc("<model.mlir... (several run one after another, side by side in one report), "
             "or a .plan from --emit-plan>"),
    cl::OneOrMore, cl::cat(benchCategory()));
cl::opt<std::string> backend("backend",
    cl::desc("cpu (default): generated launches compiled for this host, oneDNN for "
             "convolutions, matmuls, batch norm and pooling; reference: every op on its "
             "own, the numerical truth the others are checked against; cuda: the GPU"),
                             cl::init("cpu"), cl::cat(benchCategory()));
cl::opt<std::string> batchList("batch",
    cl::desc("samples per step, or a comma-separated list to sweep (default 32)"),
    cl::init("32"), cl::cat(benchCategory()));
// Numeric options are read as text and checked by NumericOption.h, so that
// an overflowing, NaN or out-of-range value is refused, never clamped.
cl::opt<std::string> warmup("warmup", cl::desc("untimed steps before timing (default 20)"),
                            cl::value_desc("n"), cl::init("20"), cl::cat(benchCategory()));
cl::opt<std::string> steps("steps", cl::desc("timed steps per repeat (default 100)"),
                           cl::value_desc("n"), cl::init("100"), cl::cat(benchCategory()));
cl::opt<std::string> repeats("repeats",
    cl::desc("repeats of the timed loop; the median is reported (default 5)"),
    cl::value_desc("n"), cl::init("5"), cl::cat(benchCategory()));
cl::opt<std::string> confidence("confidence",
    cl::desc("the level of the bootstrap confidence intervals of medians and speed-ups "
             "(default 0.95)"),
    cl::value_desc("x"), cl::init("0.95"), cl::cat(benchCategory()));
cl::opt<bool> quick("quick",
    cl::desc("a first look: 2 warm-up steps, 10 timed steps, 3 repeats (each still "
             "overridden by --warmup, --steps, --repeats); too few repeats for tight "
             "intervals"),
    cl::init(false), cl::cat(benchCategory()));
cl::opt<std::string> seed("seed", cl::desc("seed of parameters and synthetic data (default 0)"),
                          cl::value_desc("n"), cl::init("0"), cl::cat(benchCategory()));
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
    cl::init("1"), cl::cat(benchCategory()));
cl::opt<std::string> debugDir("debug-dir",
    cl::desc("write what each configuration's compile made to DIR, as TORCH_COMPILE_DEBUG "
             "does: the IR after each pass (000-<pass>.mlir, ...), the plan (plan.txt), "
             "the CUDA backend's launch routing (routing.txt), the generated kernels "
             "(kernels/), the fusion refusals by reason (fusion.md) and an index.html "
             "linking them; a sweep writes one subdirectory per configuration and an "
             "index.html over them. Needs no GPU: works with --compile-only"),
    cl::value_desc("dir"), cl::init(""), cl::cat(benchCategory()));
cl::opt<std::string> formatName("format",
    cl::desc("table (default), json, csv, markdown or html (a self-contained page)"),
                            cl::init("table"), cl::cat(benchCategory()));
cl::opt<std::string> outputPath("o", cl::desc("write the report to this file"),
                                cl::value_desc("file"), cl::init("-"), cl::cat(benchCategory()));
cl::opt<std::string> paramsIn("params-in",
    cl::desc("read every parameter from DIR/<name>.npy (batch-norm state too, if present)"),
    cl::value_desc("dir"), cl::init(""), cl::cat(benchCategory()));
cl::opt<std::string> inputsIn("inputs-in",
    cl::desc("read every input and label from DIR/<name>.npy instead of synthesizing them"),
    cl::value_desc("dir"), cl::init(""), cl::cat(benchCategory()));
cl::opt<std::string> dumpOut("dump-out",
    cl::desc("after the run, write loss.npy, <param>.grad.npy of the last step and every "
             "updated <param>.npy and state to DIR"),
    cl::value_desc("dir"), cl::init(""), cl::cat(benchCategory()));
cl::opt<bool> dumpRelu("dump-relu",
    cl::desc("with --dump-out: also write each ReLU's output of the last step to "
             "DIR/relu/<k>.npy (k: its place among the plan's ReLU kernels, in plan order; "
             "a ReLU fused into a group is left out), so a checker can read which side of "
             "zero each value took (test/Import/import_step.py)"),
    cl::init(false), cl::cat(benchCategory()));
cl::opt<bool> profile("profile",
    cl::desc("also time every kernel (timed steps only) and print the time by op, "
             "slowest first; the clock reads between kernels add a little to step time. "
             "--backend cuda: CUDA events around every launch (no graph), time by "
             "launch kind and path. With --gpus above 1: rank 0's kernels, each "
             "all-reduce in its place (not overlapped). Beside each launch, its floor: its "
             "bytes at the device's bandwidth or its FLOPs at its peak, whichever is "
             "longer (--gpu's datasheet, or the CUDA device's own; on the CPU, this "
             "host's measured copy bandwidth and GEMM rate)"),
    cl::init(false), cl::cat(benchCategory()));
cl::opt<std::string> lossEvery("loss-every",
    cl::desc("record the first repeat's loss after every n-th step, warm-up steps "
             "included, as the JSON's loss_trajectory (the HTML draws it); on a GPU each "
             "read waits for its step"),
    cl::value_desc("n"), cl::init(""), cl::cat(benchCategory()));
cl::opt<bool> noOverlap("no-overlap",
    cl::desc("with --gpus above 1: run each gradient all-reduce in its place instead of "
             "alongside the rest of the backward pass (as PyTorch DDP overlaps them), to "
             "measure what the overlap buys"),
    cl::init(false), cl::cat(benchCategory()));
cl::opt<bool> noCudaGraph("no-cuda-graph",
    cl::desc("--backend cuda: launch the step kernel by kernel instead of replaying it "
             "as one captured CUDA graph (to measure what the graph saves)"),
    cl::init(false), cl::cat(benchCategory()));
cl::opt<bool> tf32("tf32",
    cl::desc("--backend cuda: let fp32 GEMMs and convolutions use TF32 tensor cores "
             "(default off: fp32 is fp32; the report says which)"),
    cl::init(false), cl::cat(benchCategory()));
cl::opt<std::string> peakTflops("peak-tflops",
    cl::desc("the device's peak TFLOP/s, for the model-FLOP utilization (MFU = "
             "training FLOPs per second / peak); without it MFU is not reported"),
    cl::value_desc("x"), cl::init(""), cl::cat(benchCategory()));
cl::opt<std::string> gpuName("gpu",
    cl::desc("the GPU the MFU is against, from the table of known peaks (A100-SXM, "
             "H100-SXM, ...; `dlc-bench gpus` lists them), by the run's precision; "
             "--peak-tflops overrides. With --profile on cuda, the cost model's "
             "prediction for it beside each launch kind"),
    cl::value_desc("name"), cl::init(""), cl::cat(benchCategory()));
cl::opt<std::string> fp32PeakName("fp32-peak",
    cl::desc("with --gpu, the peak of an fp32 run: fp32 (the CUDA cores, default: "
             "fp32 keeps full FP32 arithmetic) or tf32 (the TF32 tensor cores)"),
    cl::init("fp32"), cl::cat(benchCategory()));
cl::opt<bool> compileOnly("compile-only",
    cl::desc("compile and print the step's counts (parameters, MACs, kernels, arena, "
             "compile time) without running it"),
    cl::init(false), cl::cat(benchCategory()));
cl::opt<std::string> dumpKernels("dump-kernels",
    cl::desc("write the CUDA C++ source of every kernel the CUDA backend generates for the "
             "step (fused groups included) to DIR, one .cu file per launch, each starting "
             "with the plan kernels it computes and the buffer each argument binds, and the "
             "host C++ the fast CPU backend compiles to DIR/host (.cpp); a sweep "
             "writes one subdirectory per configuration. Needs no GPU: works with "
             "--compile-only and any --backend"),
    cl::value_desc("dir"), cl::init(""), cl::cat(benchCategory()));
cl::opt<std::string> emitPlan("emit-plan", cl::desc("also write the compiled plan to this file"),
                              cl::value_desc("file"), cl::init(""), cl::cat(benchCategory()));
cl::opt<std::string> emitMlir("emit-mlir",
    cl::desc("also write the training step's IR after the compile pipeline, before its "
             "lowering to the plan, to this file: what `dlc-opt --pass-pipeline="
             "'builtin.module(dlc-train-step{...})'` prints for the same options"),
    cl::value_desc("file"), cl::init(""), cl::cat(benchCategory()));
cl::opt<bool> resume("resume",
    cl::desc("with --format json -o FILE: keep the configurations FILE holds finished "
             "(a sweep that was interrupted, or a smaller one) and run only the others; "
             "the new report holds both, in the sweep's order"),
    cl::init(false), cl::cat(benchCategory()));

cl::opt<bool> allowNonFinite("allow-nonfinite",
    cl::desc("exit 0 even when a loss is NaN or infinite (the report still says "
             "\"loss_finite\": false)"),
    cl::init(false), cl::cat(benchCategory()));


/// --quick: enough steps to see a configuration run and roughly how fast,
/// and the fewest repeats that give an interval at all.
constexpr int64_t kQuickWarmup = 2, kQuickSteps = 10, kQuickRepeats = 3;

std::optional<Format> parseFormat(const std::string &name) {
  if (name == "table") return Format::kTable;
  if (name == "json") return Format::kJson;
  if (name == "csv") return Format::kCsv;
  if (name == "markdown") return Format::kMarkdown;
  if (name == "html") return Format::kHtml;
  return std::nullopt;
}

/// Reads every numeric option with one helper; "" when all are valid, else
/// the one-line error naming the first bad option.
std::string readNumbers(RunFlags &f) {
  std::string error;
  auto integer = [&](const cl::opt<std::string> &option, int64_t min, int64_t &out) {
    if (!error.empty())
      return;
    if (auto v = parseIntegerOption("--" + option.ArgStr.str(), option, {min}, error))
      out = *v;
  };
  auto real = [&](const cl::opt<std::string> &option, RealRange range,
                  std::optional<double> &out) {
    if (!error.empty() || (option.empty() && !option.getNumOccurrences()))
      return;
    out = parseRealOption("--" + option.ArgStr.str(), option, range, error);
  };
  // --quick's preset, where the option itself was not given.
  if (quick) {
    f.warmup = kQuickWarmup;
    f.steps = kQuickSteps;
    f.repeats = kQuickRepeats;
  }
  if (!quick || warmup.getNumOccurrences())
    integer(warmup, 0, f.warmup);
  if (!quick || steps.getNumOccurrences())
    integer(steps, 1, f.steps);
  if (!quick || repeats.getNumOccurrences())
    integer(repeats, 1, f.repeats);
  integer(seed, 0, f.seed);
  if (lossEvery.getNumOccurrences())
    integer(lossEvery, 1, f.lossEvery);
  std::optional<double> level;
  real(confidence, {0, /*minInclusive=*/false, 0.999}, level);
  f.confidence = level.value_or(f.confidence);
  real(peakTflops, {}, f.peakTflops);
  return error;
}

/// A comma-separated list of positive integers (--batch, --gpus).
std::string readCounts(const std::string &flag, const std::string &list,
                       std::vector<int64_t> &out) {
  for (const std::string &item : splitList(list)) {
    std::string error;
    auto value = parseIntegerOption(flag, item, {1, INT64_MAX, /*list=*/true}, error);
    if (!value)
      return error;
    out.push_back(*value);
  }
  return "";
}

} // namespace

std::string readRunFlags(RunFlags &f) {
  auto format = parseFormat(formatName);
  if (!format)
    return "unknown --format '" + formatName + "' (table, json, csv, markdown or html)";
  f.format = *format;
  if (fp32PeakName != "fp32" && fp32PeakName != "tf32")
    return "--fp32-peak must be fp32 or tf32, got '" + fp32PeakName + "'";
  f.fp32Peak = fp32PeakName == "tf32" ? Fp32Peak::kTf32 : Fp32Peak::kFp32;
  if (std::string error = readNumbers(f); !error.empty())
    return error;
  if (std::string error = readCounts("--batch", batchList, f.batches); !error.empty())
    return error;
  if (std::string error = readCounts("--gpus", gpusList, f.gpuCounts); !error.empty())
    return error;
  if (dumpRelu && dumpOut.empty())
    return "--dump-relu writes into --dump-out's directory: give --dump-out DIR too";
  f.models = modelPaths;
  f.backend = backend;
  f.backendGiven = backend.getNumOccurrences() > 0;
  f.batchGiven = batchList.getNumOccurrences() > 0;
  f.gpusGiven = gpusList.getNumOccurrences() > 0;
  f.gpuName = gpuName;
  f.outputPath = outputPath;
  f.paramsIn = paramsIn;
  f.inputsIn = inputsIn;
  f.dumpOut = dumpOut;
  f.debugDir = debugDir;
  f.dumpKernels = dumpKernels;
  f.emitPlan = emitPlan;
  f.emitMlir = emitMlir;
  f.profile = profile;
  f.noOverlap = noOverlap;
  f.noCudaGraph = noCudaGraph;
  f.tf32 = tf32;
  f.compileOnly = compileOnly;
  f.resume = resume;
  f.allowNonFinite = allowNonFinite;
  return "";
}

RunOptions RunFlags::runOptions() const {
  RunOptions o;
  o.backend = backend;
  o.warmup = warmup;
  o.steps = steps;
  o.repeats = repeats;
  o.seed = static_cast<uint64_t>(seed);
  o.paramsIn = paramsIn;
  o.inputsIn = inputsIn;
  o.dumpOut = dumpOut;
  o.dumpRelu = dumpRelu;
  o.profile = profile;
  o.lossEvery = lossEvery;
  o.noCudaGraph = noCudaGraph;
  o.noOverlap = noOverlap;
  o.tf32 = tf32;
  o.gpuName = gpuName;
  o.pointToPredict = true;
  return o;
}

int fail(const std::string &message) {
  // One write: under mpirun another rank's abort banner must not split it.
  llvm::errs() << ("dlc-bench: error: " + message + "\n");
  return 1;
}

std::string gpuFlag() { return gpuName; }

} // namespace dlc::bench
