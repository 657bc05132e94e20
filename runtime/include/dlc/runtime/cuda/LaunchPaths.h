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
//   hand-written  a single op with a hand-written kernel (HandKernels.h);
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
#include "dlc/runtime/cuda/KernelCodegen.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace dlc::rt::cuda {

/// One launch as the device runs it.
struct DeviceLaunch {
  Launch launch;      // index: its position among the device launches
  std::string path;   // "generated", "cublaslt", "cudnn", "hand-written", "host-fallback"
  /// Why it is not on a faster path: a host fallback's reason, or why the
  /// group it came from was split ("" when neither).
  std::string reason;
  bool splitFromGroup = false;
  /// Why its group was split ("split from its group (...)"), or "".
  std::string splitReason;
};

/// The plan's launches with groups split where needed, each with its path.
std::vector<DeviceLaunch> planDeviceLaunches(const Plan &plan);

/// The plan's launches with every group of several kernels that `refusal`
/// refuses (a non-empty reason) split as planDeviceLaunches splits them:
/// runs of consecutive element-wise / reduction kernels, split further
/// where the generator refuses a run against the split launches, and the
/// other kernels alone. `splitReason[i]`: "split from its group (reason)"
/// for a part of a split group, "" otherwise. The CPU backend's fast mode
/// splits the groups the generator refuses.
std::vector<Launch> splitGroups(const Plan &plan,
                                const std::function<std::string(const Launch &)> &refusal,
                                std::vector<std::string> &splitReason);

/// The launches alone, as KernelCodegen's generateKernel(plan, launch,
/// launches) wants them.
std::vector<Launch> launchesOf(const std::vector<DeviceLaunch> &device);

/// "" when cuBLASLt can take `kernel` as far as its types, ranks and
/// operand count go; otherwise why not.
std::string gemmRefusal(const Plan &plan, const PlanKernel &kernel);
/// The same for cuDNN and the three convolution ops.
std::string convRefusal(const Plan &plan, const PlanKernel &kernel);
/// The same for cuDNN's training-mode batch norm and its gradient: f32 data
/// with f32 statistics or f16 data with f32 statistics, a positive epsilon,
/// fewer than 2^31 elements per dimension.
std::string batchNormRefusal(const Plan &plan, const PlanKernel &kernel);
/// A batch norm's channel count: dimension 1, or the last one under NHWC.
int64_t batchNormChannels(const Plan &plan, const PlanKernel &kernel);

/// A whole gemm_bias_act / gemm_dact_bgrad group (xla's GEMM epilogues) as
/// one cuBLASLt call: which epilogue, the GEMM kernel, and the buffers the
/// epilogue writes besides D.
struct GemmEpilogue {
  /// relu, relu_bias, gelu, gelu_bias, gelu_aux, gelu_aux_bias (forward),
  /// dgelu, dgelu_bgrad (backward): CUBLASLT_EPILOGUE_* of the same name.
  std::string epilogue;
  size_t gemm = 0;        // the matmul / linear kernel
  int32_t output = -1;    // D: the activation (or its gradient)
  int32_t aux = -1;       // the pre-activation: written (gelu_aux*) or read (dgelu*)
  int32_t biasGrad = -1;  // dgelu_bgrad: the bias gradient
};
/// The epilogue for `launch` (a group of kind gemm_bias_act or
/// gemm_dact_bgrad), or kInvalidArgument saying why cuBLASLt cannot compute
/// the group in one call (exact GELU: cuBLASLt's is the tanh form; ReLU's
/// pre-activation needed later: cuBLASLt keeps only a bitmask of it; ...).
StatusOr<GemmEpilogue> gemmEpilogueFor(const Plan &plan, const Launch &launch);

/// A paddle batch-norm group (bn_act, bn_add_act and their gradients) as
/// cuDNN's fused batch norm computes it in one call
/// (cudnnBatchNormalizationForwardTrainingEx / BackwardEx with
/// CUDNN_BATCHNORM_OPS_BN_ACTIVATION or _BN_ADD_ACTIVATION). Buffer ids;
/// -1 where the form has none.
struct FusedBatchNormGroup {
  bool backward = false;
  bool add = false;    // the residual form: y = relu(bn(x) + z)
  size_t bn = 0;       // the batch_norm / batch_norm_backward kernel
  int32_t x = -1;      // the batch norm's input
  int32_t y = -1;      // the relu's output (forward writes it, backward reads it)
  int32_t scale = -1;
  // forward
  int32_t z = -1, bias = -1, runningMean = -1, runningVar = -1, newMean = -1, newVar = -1;
  // backward: dy is the gradient of y; dz (the add form) the gradient that
  // flows to the shortcut, which is the relu gradient the group writes out
  int32_t dy = -1, dx = -1, dz = -1, dscale = -1, dbias = -1;
  /// Backward: the forward group (a launch index into `launches`) whose
  /// reserve space and saved statistics it reads, and that group.
  size_t forwardLaunch = 0;
};
/// The group's fused form, or kInvalidArgument saying why cuDNN cannot run
/// it as one call: not FP16 NHWC data with f32 statistics and channels a
/// multiple of 4 (cuDNN's persistent NHWC kernels), a value of the group
/// read outside it that the call does not write, or (backward) no forward
/// group of the same input before it.
StatusOr<FusedBatchNormGroup> fusedBatchNormFor(const Plan &plan, const Launch &launch,
                                                const std::vector<Launch> &launches);

/// The path names in report order, and the launches on each.
const std::vector<std::string> &devicePathNames();
std::map<std::string, int64_t> countByPath(const std::vector<DeviceLaunch> &device);
/// Bytes per step to and from device memory with these launches
/// (launchMemoryBytes): more than the plan's figure where groups split.
int64_t deviceMemoryBytes(const Plan &plan, const std::vector<DeviceLaunch> &device);

} // namespace dlc::rt::cuda

#endif // DLC_RUNTIME_CUDA_LAUNCHPATHS_H
