//===- CompileConfiguration.h - one configuration of a sweep -----*- C++ -*-===//
//
// A sweep is every combination of its models and the pipeline axes, batch
// sizes and GPU counts; each configuration is compiled here (or read from a
// .plan) into the plan the run command times.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_COMPILECONFIGURATION_H
#define DLC_BENCH_COMPILECONFIGURATION_H

#include "Report.h"
#include "RunFlags.h"

#include "dlc/runtime/Plan.h"

#include <cstdint>
#include <string>

namespace dlc::bench {

/// The model name: the file name without its extension.
std::string modelName(const std::string &path);

/// One configuration of a sweep.
struct Configuration {
  std::string model; // the path
  std::string precision, fusion, layout;
  int64_t batch = 0, gpus = 1;

  /// "amp xla nhwc, batch 32, 8 GPUs", the model first if `withModel`.
  std::string displayName(bool withModel) const;
  /// "amp-xla-nhwc-b32-gpus8", the model first if `withModel`.
  std::string directoryName(bool withModel) const;
};

/// Where a configuration's optional files go ("" for none), and what they
/// call it.
struct ConfigurationOutputs {
  std::string kernelDir, debugDir;
  std::string label; ///< "fp32 xla, batch 4"
  bool inSweep = false;
};

/// Compiles the model for one configuration (or reads the .plan,
/// `fromPlan`) into `plan`, and fills `result`'s counts; under --predict,
/// records the plan for the prediction instead. Returns a non-zero exit
/// code after an error.
int compileConfiguration(const Configuration &c, const RunFlags &flags, bool fromPlan,
                         bool predict, const ConfigurationOutputs &outputs, rt::Plan &plan,
                         Result &result);

} // namespace dlc::bench

#endif // DLC_BENCH_COMPILECONFIGURATION_H
