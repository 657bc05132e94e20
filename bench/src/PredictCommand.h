//===- PredictCommand.h - --predict, from the driver's side ----*- C++ -*-===//
//
// --predict and its flags (--network, --gpus-per-node, --measured-step-ms,
// --cost-model, --all-reduce-algorithm, --rank-step-variation) are declared
// here. The run command compiles every configuration of the sweep as usual
// and hands each plan here (recordForPrediction) instead of running it; at
// the end writePrediction predicts them all (bench/run/Predict.h) and
// writes the report.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_PREDICTCOMMAND_H
#define DLC_BENCH_PREDICTCOMMAND_H

#include "Report.h"
#include "RunFlags.h"

#include "dlc/runtime/Plan.h"

#include <ostream>
#include <string>

namespace dlc::bench {

struct PredictCommandOptions {
  std::string gpu, network, gpusPerNode, measuredStepMs, costModel, algorithm,
      rankVariation;
  bool tf32 = false, overlap = true;
  Format format = Format::kTable;
  std::string output; ///< "-" for stdout
};

/// Whether --predict was given.
bool predictRequested();

/// --predict's flags, with the run's it shares (--gpu, --tf32,
/// --no-overlap, --format, -o).
PredictCommandOptions predictCommandOptions(const RunFlags &run);

/// Keeps what the cost model needs of one compiled configuration.
void recordForPrediction(const rt::Plan &plan, int64_t gpus);

/// "" when the options can predict, else the error (before any compile).
std::string checkPredictOptions(const PredictCommandOptions &options);

/// Predicts every recorded configuration and writes the report; the exit
/// code.
int writePrediction(const PredictCommandOptions &options, std::ostream &errors);

} // namespace dlc::bench

#endif // DLC_BENCH_PREDICTCOMMAND_H
