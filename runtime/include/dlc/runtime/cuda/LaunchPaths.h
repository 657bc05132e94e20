//===- LaunchPaths.h - which device path runs each launch -------*- C++ -*-===//
//
// The CUDA backend's routing, decided from the plan alone: no device, no
// driver, no vendor library is consulted, so dlc-kernels can print it and
// CI can hold it on a machine without a GPU. For each launch, in order:
//
//   generated     the kernel generator covers it (KernelCodegen.h);
//   cublaslt      a matmul / linear of types and ranks cuBLASLt takes, or a
//                 whole xla GEMM-epilogue group cuBLASLt computes in one
//                 call (gemmEpilogueFor);
//   cudnn         a 2-d convolution (forward, data or filter gradient) or a
//                 training-mode batch norm (or its gradient) of types cuDNN
//                 takes, or a whole paddle batch-norm + relu group cuDNN's
//                 fused batch norm computes in one call (fusedBatchNormFor);
//   cudnn         train.attention or its gradient cuDNN's SDPA graph takes
//                 (sdpaShapeOf: f16 / bf16, no dropout);
//   hand-written  a single op with a hand-written kernel (HandKernels.h),
//                 the flash kernels for every other attention;
//   host-fallback none of these: the CPU backend runs it on a host mirror
//                 of the buffers it touches (correct, and slow).
//
// A fused group that no single device kernel computes (a generated group
// holding an op the generator does not write, such as paddle's bn_act with
// batch_norm inside) is split: its runs of consecutive element-wise /
// reduction kernels stay together as generated launches (split further if
// the generator refuses a run against the split launches), every other
// kernel becomes its own launch and takes its own path, and `splitReason`
// says why the group was split. The group's intermediate values have
// buffers of their own (the planner keeps them live across the group), so
// splitting changes speed, never values.
//
// On a device a library may still refuse what passed here (no cuBLASLt
// algorithm for a shape, a partly broadcast batch, no cuDNN algorithm within
// the workspace limit); the executor then tries the hand-written path, and
// the host, and reports the reason.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CUDA_LAUNCHPATHS_H
#define DLC_RUNTIME_CUDA_LAUNCHPATHS_H

#include "dlc/runtime/Plan.h"
#include "dlc/runtime/cublas/CublasLtCapabilities.h"
#include "dlc/runtime/codegen/KernelCodegen.h"
#include "dlc/runtime/cudnn/CudnnCapabilities.h"

#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace dlc::rt::cuda {

/// The generator is target-neutral (codegen/KernelCodegen.h); the CUDA
/// backend runs its CUDA target.
using codegen::CastSegment;
using codegen::GenerateDecision;
using codegen::GeneratedKernel;
using codegen::KernelForm;
using codegen::KernelTarget;
using codegen::OptimizerSegment;
using codegen::PlanKernels;
using codegen::generateKernel;
using codegen::generatePlanKernels;
using codegen::isGeneratable;
using codegen::kernelFormName;
using codegen::kTransposeRows;
using codegen::kTransposeTile;
using codegen::packCastTable;
using codegen::packOptimizerTable;
using codegen::packSegmentTable;
using codegen::splitGroups;
using codegen::walksSegmentTable;

/// The paths a launch can take on the device (the executor runs each with a
/// step type of its own: docs/AddingALaunchPath.md).
enum class DevicePath {
  kGenerated,           // KernelCodegen's kernel, compiled by NVRTC
  kCublasLt,            // matmul / linear, or a GEMM-epilogue group in one call
  kCudnnConvolution,    // a 2-d convolution or its data or filter gradient
  kCudnnBatchNorm,      // a lone batch norm (or gradient) on cuDNN's plain calls
  kCudnnFusedBatchNorm, // a batch-norm group, or a lone one, on cuDNN's fused calls
  kCudnnAttention,      // attention or its gradient on cuDNN's SDPA graph
  kHandWritten,         // a single op with a HandKernels.h kernel
  kCollective,          // a gradient all-reduce through NCCL
  kHostFallback,        // the CPU backend on a host mirror of its buffers
};

/// The path's name in text output (dlc-kernels --paths, reports): the four
/// cuDNN paths are all "cudnn", the collective one "nccl".
const char *devicePathName(DevicePath path);
/// Whether the path is one of cuDNN's convolution or batch-norm paths (what
/// the cost model prices as cuDNN's; SDPA is priced as the flash kernels).
bool isCudnn(DevicePath path);

/// The paths the executor tries, in order, for a launch routed to
/// `routed`: a library that refuses a shape at run time (no algorithm, a
/// workspace limit, a graph cuDNN does not support) hands the launch on, a
/// lone batch norm from cuDNN's fused calls to its plain ones, a single op
/// (attention from cuDNN's SDPA to the flash kernels) to its hand-written
/// kernel, and every launch at last to the host, which takes them all.
std::vector<DevicePath> fallbacksOf(DevicePath routed, const Launch &launch);

/// One launch as the device runs it.
struct DeviceLaunch {
  Launch launch;      // index: its position among the device launches
  DevicePath path = DevicePath::kHostFallback;
  /// Why it is not on a faster path: a host fallback's reason, or why the
  /// group it came from was split ("" when neither).
  std::string reason;
  /// A part of a group that is not one launch: split, or, with
  /// `callPlusKernel`, run as one library or hand-written call and one
  /// kernel for the rest (codegen::markCallPlusKernel), which is no split.
  bool splitFromGroup = false;
  bool callPlusKernel = false;
  /// Why its group was split ("split from its group (...)") or runs as a
  /// call and a kernel ("call + kernel (...)"), or "".
  std::string splitReason;
  /// A generated or hand-written kernel's grid before the launcher caps it
  /// (gridBlocks), and its threads per block: what the cost model reads of
  /// the launch's parallelism. 0 on the other paths.
  int64_t blocks = 0;
  int64_t threadsPerBlock = 0;
};

/// Blocks a generated or hand-written kernel's grid is capped at, per
/// multiprocessor: a few waves of resident blocks; the kernels' grid-stride
/// loops do the rest.
constexpr int64_t kBlocksPerMultiprocessor = 32;

/// The blocks a generated kernel asks for: one per unit of work for the
/// forms that give a block a row, a column tile or a transpose tile, else
/// one thread per element.
int64_t gridBlocks(const codegen::GeneratedKernel &g);

/// The plan's launches with groups split where needed, each with its path.
std::vector<DeviceLaunch> planDeviceLaunches(const Plan &plan);

/// The launches alone, as KernelCodegen's generateKernel(plan, launch,
/// launches) wants them.
std::vector<Launch> launchesOf(const std::vector<DeviceLaunch> &device);

/// What each library takes is the library's to say (CublasLtCapabilities.h,
/// CudnnCapabilities.h); routing asks it.
using cublas::GemmEpilogue;
using cublas::gemmRefusal;
using cudnn::batchNormChannels;
using cudnn::batchNormRefusal;
using cudnn::convRefusal;
using cudnn::FusedBatchNormGroup;
using cudnn::SdpaShape;
using cudnn::sdpaShapeOf;

/// "flash" or "simt" in DLC_CUDA_ATTENTION keeps attention off cuDNN's SDPA
/// (on the flash kernels, tensor-core or SIMT), so that the paths can be
/// timed against each other in one call; "" when cuDNN may take it.
std::string attentionChoiceRefusal();

/// The epilogue for `launch` (a group of kind gemm_bias_act or
/// gemm_dact_bgrad), or kInvalidArgument saying why cuBLASLt cannot compute
/// the group in one call (exact GELU: cuBLASLt's is the tanh form; ReLU's
/// pre-activation needed later: cuBLASLt keeps only a bitmask of it; ...).
StatusOr<GemmEpilogue> gemmEpilogueFor(const Plan &plan, const Launch &launch);

/// A paddle batch-norm group (bn_act, bn_add_act and their gradients) as
/// cuDNN's fused batch norm computes it in one call, or kInvalidArgument
/// saying why cuDNN cannot run it as one call: not FP16 NHWC data with f32
/// statistics and channels a multiple of 4 (cuDNN's persistent NHWC
/// kernels), a value of the group read outside it that the call does not
/// write, or (backward) no forward group of the same input before it.
/// A launch of one batch_norm or batch_norm_backward under the same
/// conditions is a group without the activation (`act` false), its forward
/// a lone batch_norm of the same input.
StatusOr<FusedBatchNormGroup> fusedBatchNormFor(const Plan &plan, const Launch &launch,
                                                const std::vector<Launch> &launches);

/// Whether one of the launch's kernels is a batch norm or its gradient.
bool holdsBatchNorm(const Plan &plan, const Launch &launch);

/// Gives `launch` the batch-norm FusionKind whose pattern it is, where it is
/// another strategy's group of exactly those ops and fusedBatchNormFor takes
/// it as one: xla's input group batch_norm -> relu runs as cuDNN's fused
/// bn_act, as paddle's does, instead of splitting into a lone batch norm and
/// a generated relu that reads the tensor again (ResNet-50 AMP on an H100,
/// 2026-11-26: xla 57.8 ms a step, paddle 54.9). A gradient group needs its
/// forward group recognised first, among `launches` before it.
void recogniseFusedBatchNorm(const Plan &plan, Launch &launch, const std::vector<Launch> &launches);

/// The path names (devicePathName) in report order, and the launches on each.
const std::vector<std::string> &devicePathNames();
std::map<std::string, int64_t> countByPath(const std::vector<DeviceLaunch> &device);
/// Bytes per step to and from device memory with these launches
/// (launchMemoryBytes): more than the plan's figure where groups split.
int64_t deviceMemoryBytes(const Plan &plan, const std::vector<DeviceLaunch> &device);

/// What `dlc-kernels --paths` prints for the plan (`name` heads it):
/// launches per path, the split groups and host fallbacks by kind with the
/// first one's reason, and with `verbose` every launch, its ops and path.
void printLaunchPaths(std::ostream &os, const std::string &name, const Plan &plan,
                      bool verbose);

} // namespace dlc::rt::cuda

#endif // DLC_RUNTIME_CUDA_LAUNCHPATHS_H
