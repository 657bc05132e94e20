//===- Predict.h - step time on GPUs we do not have ------------*- C++ -*-===//
//
// Each configuration of a sweep, compiled for the CUDA backend's routing,
// gets its launches' predicted times on `--gpu` (CostModel.h), and each GPU
// count of `--gpus` a simulated data-parallel step over `--network`
// (StepSimulator.h). `--measured-step-ms` replaces the predicted one-GPU
// step by a measured one (every compute launch scaled alike), so that the
// scaling model can be checked alone against published tables.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_PREDICT_H
#define DLC_BENCH_PREDICT_H

#include "GpuPeaks.h"
#include "Networks.h"
#include "Report.h"

#include "dlc/runtime/perf/CostModel.h"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace dlc::bench {

/// The spread of per-rank step times, as a fraction of the step, that the
/// straggler term takes (`--rank-step-variation`): off. The slowest of N
/// ranks sets the pace of a synchronous step, about 1 + cv x E[max of N
/// normals] times the one-GPU step, but cv is a measured spread to give with
/// its source, not a constant fitted to a throughput table.
constexpr double kRankStepVariation = 0;

/// The GPU and the interconnect a CPU run's hint predicts for
/// (predictedStepHint): the one GPU whose cost model is fitted to measured
/// runs (bench/calibration/h100.json), and --network's default.
constexpr const char *kDefaultPredictGpu = "H100-SXM";
constexpr const char *kDefaultPredictNetwork = "nvlink";

/// One compiled configuration, as the cost model sees it.
struct PredictInput {
  std::string model, precision, fusion, layout;
  int64_t batch = 0, gpus = 1;
  std::vector<rt::perf::LaunchCost> launches;
};

struct PredictOptions {
  const GpuPeak *gpu = nullptr;
  const NetworkSpec *network = nullptr;
  int64_t gpusPerNode = 8;
  std::optional<double> measuredStepMs;
  rt::perf::CostParams params;
  std::string paramsSource = "defaults"; ///< the calibration file, or "defaults"
  bool tf32 = false, overlap = true;
  rt::perf::AllReduceAlgorithm algorithm = rt::perf::AllReduceAlgorithm::kAuto;
  double rankVariation = kRankStepVariation;
  int topLaunches = 5;
};

struct PredictedLaunch {
  std::string label, kind, path;
  double ms = 0;
};

struct Prediction {
  std::string model, precision, fusion, layout;
  int64_t batch = 0, gpus = 1, nodes = 1;
  double stepMs = 0, computeMs = 0, commMs = 0, exposedCommMs = 0;
  double samplesPerSec = 0, speedUp = 1, efficiency = 1;
  /// The efficiency with every all-reduce exposed (compute + all the
  /// all-reduces, as --no-overlap runs them): no schedule of the step's
  /// all-reduces on this cluster predicts less.
  double allExposedEfficiency = 1;
  int64_t allReduces = 0;
  double allReduceBytes = 0;
  /// The bucket charged the most exposed communication (its ordinal among
  /// the step's all-reduces, 0 the first to start), its bytes and its
  /// charge; -1 when nothing is exposed.
  int64_t exposedBucket = -1;
  double exposedBucketBytes = 0, exposedBucketMs = 0;
  std::vector<PredictedLaunch> top;
  rt::perf::StepTimeline timeline;
};

/// What the cost model reads of a GPU of the table (dlc/runtime/perf/Gpus.h).
using rt::perf::deviceSpecOf;

/// Predictions for every input, each against the one-GPU input of the same
/// model, precision, fusion, layout and batch (which must be among them).
bool predictSweep(const std::vector<PredictInput> &inputs, const PredictOptions &options,
                  std::vector<Prediction> &predictions, std::string &error);

/// What a run without a GPU says to point at --predict: "--predict --gpu
/// H100-SXM answers for the GPU without one: a step of 41.2 ms on 8 x
/// H100-SXM, predicted", the plan routed as the CUDA backend would and its
/// ranks simulated as --predict does on kDefaultPredictGpu; "" when the cost
/// model cannot say.
std::string predictedStepHint(const rt::Plan &plan);

void writePredictions(std::ostream &os, const std::vector<Prediction> &predictions,
                      const PredictOptions &options, Format format);

} // namespace dlc::bench

#endif // DLC_BENCH_PREDICT_H
