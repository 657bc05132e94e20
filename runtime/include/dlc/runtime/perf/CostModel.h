//===- CostModel.h - a routed launch's predicted time on a GPU --*- C++ -*-===//
//
// Each launch of a plan, as the CUDA backend routes it (LaunchPaths.h), gets
// a predicted time on a described GPU:
//
//   t = overhead + max(flops / (peak(dtype) x eff_c(flops)),
//                      bytes / (bandwidth x eff_m(path)))
//   eff_c(F) = maxEff(precision) x F / (F + halfFlops)
//   eff_m(path): one fraction of DRAM bandwidth per path (generated and
//                contractions, generated with a reduction, hand-written,
//                library calls without a contraction)
//
// a roofline with a fixed cost per launch, where the compute ceiling of a
// GEMM or convolution rises with its size (small problems fill few SMs).
// flops: 2 x the launch's multiply-accumulates (kernelMacs); bytes: what it
// reads and writes once (launchMemoryBytes, per launch). Launches without
// a contraction are memory-bound by construction. What is fitted and from
// what data: docs/CostModel.md.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_PERF_COSTMODEL_H
#define DLC_RUNTIME_PERF_COSTMODEL_H

#include "dlc/runtime/Plan.h"
#include "dlc/runtime/Status.h"
#include "dlc/runtime/perf/StepSimulator.h"

#include <map>
#include <string>
#include <vector>

namespace dlc::rt::perf {

/// What the model reads of a GPU; the table behind `dlc-bench gpus` fills it.
struct DeviceSpec {
  std::string name;
  double fp32Flops = 0, tf32Flops = 0, fp16Flops = 0, bf16Flops = 0; ///< dense FLOP/s
  double memoryBandwidth = 0; ///< bytes/s
  double l2Bytes = 0;
  int64_t sms = 0;
};

/// The model's parameters: fitted by `dlc-bench calibrate`, or the defaults
/// below (assumed, for a GPU nothing was measured on).
struct CostParams {
  double launchOverhead = 2e-6;   ///< s per launch (graph replay, prologue, tail)
  double generatedMemEff = 0.9;   ///< of DRAM bandwidth: generated kernels
  double reductionMemEff = 0.5;   ///< generated kernels holding a reduction
  double handWrittenMemEff = 0.5; ///< hand-written kernels
  double libraryMemEff = 0.6;     ///< library calls without a contraction (batch norm)
  double tensorMaxEff = 0.6;      ///< GEMM / convolution ceiling on tensor cores
  double cudaCoreMaxEff = 0.7;    ///< ... on the CUDA cores (fp32 without TF32)
  double halfFlops = 2e9;         ///< the size at which a contraction reaches half its ceiling

  /// The names `calibrate` writes, in this order, and their values.
  static const std::vector<std::string> &names();
  std::vector<double> values() const;
  void setValues(const std::vector<double> &values);
};

/// One device launch, what the model needs of it.
struct LaunchCost {
  int64_t index = 0;
  std::string kind;  ///< its fusion kind's name or its op, as --profile groups launches
  std::string path;  ///< generated, cublaslt, cudnn, hand-written, host-fallback, nccl
  std::string label; ///< launchLabel
  double flops = 0, bytes = 0;
  /// A generated launch holding a reduction (column sums reduce across
  /// threads, a copy's traffic does not).
  bool reduction = false;
  /// The contraction's operand type (f32, f16, bf16); "" without one.
  std::string contractionType;
  /// An all-reduce: the bytes each rank sends, and the launch that waits for
  /// it (launches.size(): the step's end). -1 otherwise.
  double allReduceBytes = -1;
  int64_t waitAt = -1;
};

/// The plan's device launches (LaunchPaths.h) with their FLOPs and bytes.
std::vector<LaunchCost> planLaunchCosts(const Plan &plan);

/// The peak FLOP/s a contraction of `type` runs at (tf32: fp32 GEMMs may use
/// TF32 tensor cores); 0 when the device has no such unit.
double contractionPeak(const DeviceSpec &device, const std::string &type, bool tf32);

/// Seconds one launch takes (0 for an all-reduce: the simulator times it).
double predictSeconds(const LaunchCost &launch, const DeviceSpec &device,
                      const CostParams &params, bool tf32);

/// The launches as the simulator takes them; `scale` multiplies every
/// compute time (--measured-step-ms).
std::vector<SimLaunch> simLaunches(const std::vector<LaunchCost> &launches,
                                   const DeviceSpec &device, const CostParams &params,
                                   bool tf32, double scale = 1);

/// Parameters from a JSON object {"name": value, ...} as `calibrate` writes
/// it (other keys ignored; absent ones keep `params`' value).
Status readCostParams(const std::string &path, CostParams &params);

} // namespace dlc::rt::perf

#endif // DLC_RUNTIME_PERF_COSTMODEL_H
