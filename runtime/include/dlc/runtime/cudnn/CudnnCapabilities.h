//===- CudnnCapabilities.h - what cuDNN takes -------------------*- C++ -*-===//
//
// What the cuDNN wrappers (src/cudnn/) compute, decided from the plan alone:
// no CUDA header and no GPU, so that the CUDA backend's routing
// (LaunchPaths.h) asks here on any machine.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CUDNN_CUDNNCAPABILITIES_H
#define DLC_RUNTIME_CUDNN_CUDNNCAPABILITIES_H

#include "dlc/runtime/Plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dlc::rt::cudnn {

/// "" when cuDNN can take `kernel`, one of the three convolution ops, as
/// far as its types, ranks, operand count and layout go; otherwise why not.
std::string convRefusal(const Plan &plan, const PlanKernel &kernel);
/// The same for cuDNN's training-mode batch norm and its gradient: f32 data
/// with f32 statistics or f16 data with f32 statistics, a positive epsilon,
/// fewer than 2^31 elements per dimension.
std::string batchNormRefusal(const Plan &plan, const PlanKernel &kernel);
/// A batch norm's channel count: dimension 1, or the last one under NHWC.
int64_t batchNormChannels(const Plan &plan, const PlanKernel &kernel);
/// "" when a batch norm's epsilon is one cuDNN takes; otherwise why not.
std::string epsilonRefusal(const PlanKernel &kernel);

/// A paddle batch-norm group (bn_act, bn_add_act and their gradients) as
/// cuDNN's fused batch norm computes it in one call
/// (cudnnBatchNormalizationForwardTrainingEx / BackwardEx with
/// CUDNN_BATCHNORM_OPS_BN_ACTIVATION or _BN_ADD_ACTIVATION). Buffer ids;
/// -1 where the form has none.
struct FusedBatchNormGroup {
  bool backward = false;
  bool add = false;    // the residual form: y = relu(bn(x) + z)
  /// false: a lone batch_norm or batch_norm_backward, run by the same calls
  /// with CUDNN_BATCHNORM_OPS_BN (no activation). The legacy calls over NHWC
  /// data took 12-66 ms a launch on ResNet-50 (H100, 2026-11-25); PyTorch
  /// runs channels-last batch norm this way.
  bool act = true;
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
/// "" when the fused call takes the group's data: FP16 NHWC data `x`, the
/// buffers `like` shaped and typed as it, the `perChannel` ones f32 with one
/// value per channel, channels a multiple of 4 (cuDNN's persistent NHWC
/// kernels; PaddlePaddle's gate); otherwise why not.
std::string fusedBatchNormDataRefusal(const Plan &plan, const PlanKernel &bn, int32_t x,
                                      const std::vector<int32_t> &like,
                                      const std::vector<int32_t> &perChannel);

/// train.attention or train.attention_backward as cuDNN's SDPA graph
/// (the frontend's `sdpa` / `sdpa_backward`, FlashAttention-2's algorithm)
/// takes it: q, k and v of [B..., S, D] seen as cuDNN's [b, h, s, d] (the
/// last batch dimension is h, the others are b), and the additive mask as
/// its bias of [b or 1, h or 1, Sq, Sk].
struct SdpaShape {
  bool backward = false;
  DType type = DType::kF16; // q's, and every operand's but lse
  int64_t b = 1, h = 1, sq = 0, sk = 0, d = 0;
  bool causal = false;
  double scale = 1.0;
  /// Forward: q, k, v, [mask] -> o, lse. Backward: q, k, v, o, do, lse,
  /// [mask] -> dq, dk, dv. Buffer ids; mask -1 when there is none.
  std::vector<int32_t> inputs, outputs;
  int32_t mask = -1;
  int64_t maskB = 1, maskH = 1;
};
/// The kernel as cuDNN's SDPA takes it, or kInvalidArgument saying why not:
/// f16 or bf16 operands of one type (f32 runs the flash kernels), one head
/// dimension for q, k and v, a multiple of 8 up to 128; no dropout (cuDNN
/// draws its own Philox mask, not train.dropout's counter-based one, so the
/// fused step could not be checked against the unfused one); no causal
/// rows that see no key (Sq > Sk); a mask of q's type broadcast over none
/// of Sq and Sk, and not with a causal Sq < Sk (cuDNN's bottom-right
/// diagonal takes no bias). Decided from the plan alone; cuDNN may still refuse a
/// graph at run time (the flash kernels then take it).
StatusOr<SdpaShape> sdpaShapeOf(const Plan &plan, const PlanKernel &kernel);
/// What the cuDNN frontend's own validation says of the SDPA graph dlc
/// builds for `shape` ("" when it passes), for a device of compute
/// capability `smVersion` (80: A100, 90: H100): the graph's attributes and
/// the frontend's support rules for that SM, checked on the host without a
/// device (the device's own support is checked when the executor builds the
/// graph). CUDA builds only (src/cudnn/CudnnAttention.cpp).
std::string sdpaGraphProblem(const SdpaShape &shape, int smVersion);

} // namespace dlc::rt::cudnn

#endif // DLC_RUNTIME_CUDNN_CUDNNCAPABILITIES_H
