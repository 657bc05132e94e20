//===- CostModel.h - a routed launch's predicted time on a GPU --*- C++ -*-===//
//
// Each launch of a plan, as the CUDA backend routes it (LaunchPaths.h), gets
// a predicted time on a described GPU:
//
//   t = overhead + max(flops / (peak(dtype) x maxEff(unit) x waves)
//                        + contractionLatency,
//                      passBytes / min(bandwidth x eff_m(access),
//                                      inFlight / dramLatency))
//   waves:   output tiles / (ceil(tiles / SMs) x SMs), the GEMM's or
//            convolution's last wave's idle multiprocessors
//   maxEff:  the unit's ceiling (tensor cores or CUDA cores), times, for a
//            convolution's data or filter gradient, that pass's fraction of
//            the forward convolution's ceiling on the same unit
//   eff_m:   one fraction of DRAM bandwidth per access pattern (streaming,
//            reductions, normalizations, gathers and windows), and one for
//            the batch norms cuDNN runs on its plain (not NHWC FP16) calls
//   inFlight: resident threads x the bytes each thread's loop iteration
//            reads (Little's law: a small grid cannot keep enough loads in
//            flight to cover DRAM's latency)
//
// a roofline with a fixed cost per launch. flops: 2 x the launch's
// multiply-accumulates (kernelMacs); bytes: what it reads and writes once
// (launchMemoryBytes, per launch); passBytes adds the second read of a
// normalization's input (statistics, then the map). The access pattern
// comes from the launch's op classes (OpKinds.h), the grid from its routing
// (LaunchPaths.h), never from a kernel's name. What is fitted and from what
// data: docs/CostModel.md.
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
  int64_t threadsPerSm = 2048; ///< resident threads a multiprocessor holds
};

/// The model's parameters: fitted by `dlc-bench calibrate`, or the defaults
/// below (assumed, for a GPU nothing was measured on).
struct CostParams {
  double launchOverhead = 2e-6;   ///< s per launch (graph replay, prologue, tail)
  double streamMemEff = 0.9;      ///< of DRAM bandwidth: element-wise streams, copies, updates
  double reductionMemEff = 0.5;   ///< generated reductions (bias gradients, pooling means)
  double normMemEff = 0.5;        ///< normalizations (batch, layer norm, softmax), per pass
  /// A batch norm on cuDNN's plain calls (cudnnBatchNormalizationForwardTraining
  /// and its backward: any batch norm but FP16 NHWC), per pass: other
  /// kernels than the persistent NHWC ones normMemEff covers.
  double legacyNormMemEff = 0.5;
  double gatherMemEff = 0.5;      ///< gathers and windows (embeddings, pooling, losses)
  double tensorMaxEff = 0.6;      ///< GEMM / convolution ceiling on tensor cores
  double cudaCoreMaxEff = 0.7;    ///< ... on the CUDA cores (fp32 without TF32)
  /// The tensor-core ceiling of a cuBLASLt GEMM whose operand rows are only
  /// 2-byte aligned (an odd dimension in a 16-bit type): without 16-byte
  /// aligned rows it cannot take the kernels that load 16 bytes at once, and
  /// its ceiling grows with the alignment (x2 at 4 bytes), up to tensorMaxEff.
  double misalignedTensorEff = 0.075; ///< tensorMaxEff x 2 / 16: proportional to the alignment
  /// s a GEMM or convolution takes beyond its FLOPs (prologue, pipeline
  /// fill, epilogue): what makes small problems slow.
  double contractionLatency = 5e-6;
  double dramLatency = 600e-9;    ///< s a load waits for DRAM (Little's law)
  /// s one pass over a row takes a block that owns the row (a dependent
  /// load, then a block-wide reduction through shared memory).
  double rowPassLatency = 1.5e-6;
  /// s --profile's CUDA events add to each launch it times one by one,
  /// beyond the graph replay the step time measures: only `calibrate`
  /// reads it, to compare per-kind profiles with the model.
  double profileEventOverhead = 2e-6;
  /// A convolution's gradients run other kernels than its forward pass
  /// (cuDNN's dgrad and wgrad): their ceilings as fractions of the
  /// forward's, per unit. On the H100's CUDA cores (fp32, first run) the
  /// forward convolutions reached 62% of the FP32 peak, the data gradients
  /// 47% and the filter gradients 31%; on its tensor cores the three were
  /// within 20% of each other. 1 (the default): as fast as the forward.
  double convDgradTensorRel = 1, convWgradTensorRel = 1;
  double convDgradCudaCoreRel = 1, convWgradCudaCoreRel = 1;

  /// The names `calibrate` writes, in this order, and their values.
  static const std::vector<std::string> &names();
  std::vector<double> values() const;
  void setValues(const std::vector<double> &values);
};

/// How a launch touches memory, from its op classes (OpKinds.h).
enum class Access : uint8_t {
  kStream,        ///< element-wise, copies, random masks, optimizer updates
  kReduction,     ///< sums over axes (a generated reduction)
  kNormalization, ///< statistics over a row or a channel, then a map over it
  kGather,        ///< opaque ops: embeddings, pooling windows, losses
  kContraction,   ///< GEMMs and convolutions (their operands stream)
};
const char *accessName(Access access);

/// Which pass of a convolution a contraction is (kNone: a GEMM, or no
/// contraction).
enum class ConvPass : uint8_t { kNone, kForward, kBackwardData, kBackwardFilter };

/// One device launch, what the model needs of it.
struct LaunchCost {
  int64_t index = 0;
  std::string kind;  ///< its fusion kind's name or its op, as --profile groups launches
  std::string path;  ///< generated, cublaslt, cudnn, hand-written, host-fallback, nccl
  std::string label; ///< launchLabel
  double flops = 0, bytes = 0;
  Access access = Access::kStream;
  /// bytes, plus a second read of a normalization's full-size inputs; for
  /// a batch norm on cuDNN's plain calls, as if its elements were 4 bytes.
  double passBytes = 0;
  /// A generated or hand-written kernel's grid (before the launcher's cap)
  /// and block; 0 where the library picks its own.
  int64_t blocks = 0, threadsPerBlock = 0;
  /// Bytes one thread reads per loop iteration: an element of each input.
  double bytesPerThread = 0;
  /// A contraction's output elements (the GEMM's M x N, summed over a
  /// batch): its tiles.
  double outputElements = 0;
  /// A convolution cuDNN runs on NCHW data: on tensor cores it converts
  /// every operand to NHWC and the result back (cuDNN's "Tensor
  /// Transformations"), extra passes over the operands.
  bool nchwLibraryContraction = false;
  /// A batch norm cuDNN runs on its plain calls, because fusedBatchNormFor
  /// (LaunchPaths.h) refuses it the persistent FP16 NHWC ones.
  bool legacyLibraryNorm = false;
  /// A normalization over rows whose kernel gives a block each row: the
  /// rows (0 otherwise).
  double rows = 0;
  /// A cuBLASLt GEMM's operand alignment: the largest power of two, up to
  /// 16, of bytes that divides the row of each operand and of the result.
  double operandAlignment = 16;
  /// The contraction's operand type (f32, f16, bf16); "" without one.
  std::string contractionType;
  ConvPass convPass = ConvPass::kNone;
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

/// The fraction of the multiprocessors a contraction's output tiles keep
/// busy over its waves (1 for a launch without a contraction).
double waveEfficiency(const LaunchCost &launch, const DeviceSpec &device);

/// Seconds one launch takes (0 for an all-reduce: the simulator times it).
double predictSeconds(const LaunchCost &launch, const DeviceSpec &device,
                      const CostParams &params, bool tf32);

/// Seconds --profile would measure for the launch: between CUDA events,
/// without the graph, so predictSeconds plus the fitted per-launch event
/// overhead (0 for an all-reduce).
double profiledSeconds(const LaunchCost &launch, const DeviceSpec &device,
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
