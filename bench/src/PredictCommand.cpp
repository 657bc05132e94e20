//===- PredictCommand.cpp - dlc-bench --predict, from the driver's side ---===//

#include "PredictCommand.h"

#include "NumericOption.h"
#include "PipelineFlags.h"
#include "Predict.h"
#include "ProfileCheck.h"

#include "llvm/Support/CommandLine.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace dlc::bench {

namespace {

namespace cl = llvm::cl;

cl::opt<bool> predict("predict",
    cl::desc("predict each configuration's step on --gpu (no GPU needed): the cost model "
             "times the CUDA backend's launches, the data-parallel simulator each --gpus "
             "count over --network; prints samples/s, speed-up, efficiency, exposed "
             "communication and the top launches (docs/CostModel.md)"),
    cl::init(false), cl::cat(benchCategory()));
cl::opt<std::string> networkName("network",
    cl::desc("with --predict: the interconnect (`dlc-bench networks` lists them; default "
             "nvlink, one node)"),
    cl::init("nvlink"), cl::cat(benchCategory()));
cl::opt<std::string> gpusPerNode("gpus-per-node",
    cl::desc("with --predict: GPUs in a node (default 8)"), cl::value_desc("n"),
    cl::init("8"), cl::cat(benchCategory()));
cl::opt<std::string> measuredStepMs("measured-step-ms",
    cl::desc("with --predict: the measured one-GPU step time in ms, replacing the predicted "
             "one (every launch scaled alike), to check the scaling model alone"),
    cl::value_desc("ms"), cl::init(""), cl::cat(benchCategory()));
cl::opt<std::string> costModelFile("cost-model",
    cl::desc("with --predict: the cost model's parameters, as `dlc-bench calibrate` writes "
             "them (default: bench/calibration/<gpu>.json if there, else the defaults)"),
    cl::value_desc("file"), cl::init(""), cl::cat(benchCategory()));
cl::opt<std::string> allReduceAlgorithm("all-reduce-algorithm",
    cl::desc("with --predict: auto (default: as NCCL's tuner, the faster of ring and tree "
             "for each bucket), ring (NCCL's flat ring), hierarchical-ring or tree"),
    cl::init("auto"), cl::cat(benchCategory()));
cl::opt<std::string> rankStepVariation("rank-step-variation",
    cl::desc("with --predict: a measured spread of per-rank step times (standard deviation "
             "over mean), for a straggler term: the slowest of N ranks sets a synchronous "
             "step's pace (default 0, off; give a spread you measured or one published, "
             "with its source)"),
    cl::value_desc("x"), cl::init(""), cl::cat(benchCategory()));

std::vector<PredictInput> &recorded() {
  static std::vector<PredictInput> inputs;
  return inputs;
}

/// The options, checked and resolved; false with `error`.
bool resolve(const PredictCommandOptions &c, PredictOptions &o, std::string &error) {
  if (c.gpu.empty()) {
    error = "--predict needs --gpu NAME (" + knownGpuNames() + ")";
    return false;
  }
  o.gpu = findGpu(c.gpu);
  if (!o.gpu) {
    error = "--gpu: unknown GPU '" + c.gpu + "'; the table knows " + knownGpuNames();
    return false;
  }
  o.network = findNetwork(c.network);
  if (!o.network) {
    error = "--network: unknown network '" + c.network + "'; `dlc-bench networks` lists " +
            knownNetworkNames();
    return false;
  }
  auto perNode = parseIntegerOption("--gpus-per-node", c.gpusPerNode, {1}, error);
  if (!perNode)
    return false;
  o.gpusPerNode = *perNode;
  if (!c.measuredStepMs.empty()) {
    o.measuredStepMs = parseRealOption("--measured-step-ms", c.measuredStepMs, {}, error);
    if (!o.measuredStepMs)
      return false;
  }
  if (!c.rankVariation.empty()) {
    auto v = parseRealOption("--rank-step-variation", c.rankVariation, {0, true, 1}, error);
    if (!v)
      return false;
    o.rankVariation = *v;
  }
  auto algorithm = rt::perf::parseAlgorithm(c.algorithm);
  if (!algorithm) {
    error = "--all-reduce-algorithm: unknown '" + c.algorithm +
            "' (auto, ring, hierarchical-ring, tree)";
    return false;
  }
  o.algorithm = *algorithm;
  o.tf32 = c.tf32;
  o.overlap = c.overlap;
  // The GPU's own calibration, else the H100's (the one GPU measured so
  // far: its fitted efficiencies stand in), else the defaults.
  std::string file = c.costModel.empty() ? calibrationFileFor(o.gpu->name) : c.costModel;
  if (!file.empty()) {
    if (rt::Status s = rt::perf::readCostParams(file, o.params); !s.isOk()) {
      error = "--cost-model: " + s.message();
      return false;
    }
    o.paramsSource = std::filesystem::path(file).filename().string();
  }
  return true;
}

} // namespace

bool predictRequested() { return predict; }

PredictCommandOptions predictCommandOptions(const RunFlags &run) {
  return {run.gpuName,        networkName,       gpusPerNode, measuredStepMs,
          costModelFile,      allReduceAlgorithm, rankStepVariation, run.tf32,
          !run.noOverlap,     run.format,         run.outputPath};
}

void recordForPrediction(const rt::Plan &plan, int64_t gpus) {
  PredictInput in;
  // The layout its convolutions and batch norms run in, as reports name it.
  std::string layout;
  for (const rt::PlanKernel &k : plan.kernels)
    if (k.id == rt::OpId::kConv2d || k.id == rt::OpId::kConv2dBackwardData ||
        k.id == rt::OpId::kConv2dBackwardFilter ||
        k.opClass == rt::OpClass::kBatchNormalization) {
      layout = rt::kernelLayout(k);
      break;
    }
  in.model = plan.model;
  in.precision = plan.precision;
  in.fusion = plan.fusion;
  in.layout = layout;
  in.batch = plan.batch;
  in.gpus = gpus;
  in.launches = rt::perf::planLaunchCosts(plan);
  recorded().push_back(std::move(in));
}

std::string checkPredictOptions(const PredictCommandOptions &options) {
  PredictOptions o;
  std::string error;
  resolve(options, o, error);
  return error;
}

int writePrediction(const PredictCommandOptions &c, std::ostream &errors) {
  PredictOptions o;
  std::string error;
  std::vector<Prediction> predictions;
  if (!resolve(c, o, error) || !predictSweep(recorded(), o, predictions, error)) {
    errors << "dlc-bench: error: " << error << "\n";
    return 1;
  }
  if (c.output == "-") {
    writePredictions(std::cout, predictions, o, c.format);
    return std::cout ? 0 : 1;
  }
  std::ofstream out(c.output);
  writePredictions(out, predictions, o, c.format);
  if (!out) {
    errors << "dlc-bench: error: cannot write " << c.output << "\n";
    return 1;
  }
  return 0;
}

} // namespace dlc::bench
