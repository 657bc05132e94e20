//===- ProfileCheck.h - the cost model beside a GPU run's --profile -*- C++ -*-===//
//
// Every GPU run checks the cost model (docs/CostModel.md): --profile on the
// CUDA backend prints, beside each launch kind's measured time, the time
// the model predicts for the same launches on the GPU --gpu names, with the
// calibration the model would use for it, and the error. No MLIR: the plan
// is the one that ran.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_PROFILECHECK_H
#define DLC_BENCH_PROFILECHECK_H

#include "dlc/runtime/Plan.h"
#include "dlc/runtime/Status.h"

#include <ostream>
#include <string>
#include <vector>

namespace dlc::bench {

/// The cost model's parameters for `gpuName` (a `dlc-bench gpus` name): its
/// own calibration <name>.json, else the H100's h100.json (the one GPU
/// measured so far), looked for in ./bench/calibration (the GPU machine
/// runs from a copy of the tree) and then in this build's source tree; ""
/// when there is none (the model's defaults).
std::string calibrationFileFor(const std::string &gpuName);

/// What the model predicts for each device launch of a plan, as --profile
/// times it (CUDA events around each launch).
struct ModelFigures {
  std::string source;            ///< "h100.json, H100-SXM"; "" when not predicted
  std::vector<double> msPerLaunch;
};

/// The model's figures for `plan` on `gpuName` (tf32: fp32 contractions
/// may take TF32 tensor cores, --tf32); an empty gpuName predicts nothing
/// (no error). An unknown GPU or a damaged calibration is an error.
rt::Status predictLaunches(const rt::Plan &plan, const std::string &gpuName, bool tf32,
                           ModelFigures &figures);

/// --profile's table: device time by launch kind [path] over `steps`
/// profiled steps, the kinds largest first, each with its share and launch
/// count, and, where `model` has figures, the predicted ms and the error;
/// then the ten slowest launches. `labels` are the launches' as
/// launchLabel writes them ("launch #5 (kind, ...)"), one per entry of
/// `paths` and `ms`.
void writeLaunchProfile(std::ostream &os, const std::vector<std::string> &labels,
                        const std::vector<std::string> &paths, const std::vector<double> &ms,
                        int64_t steps, const ModelFigures &model);

} // namespace dlc::bench

#endif // DLC_BENCH_PROFILECHECK_H
