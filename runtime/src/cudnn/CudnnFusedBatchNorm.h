//===- CudnnFusedBatchNorm.h - cuDNN's batch norm + relu in one call -*- C++ -*-===//
//
// PaddlePaddle's fused_batch_norm_act and fused_bn_add_activation, forward
// and backward: one FusedBatchNorm per paddle bn_act / bn_add_act group or
// gradient group that fusedBatchNormFor (LaunchPaths.h) accepted, run as
// cudnnBatchNormalizationForwardTrainingEx / BackwardEx with
// CUDNN_BATCHNORM_OPS_BN_ACTIVATION (or _BN_ADD_ACTIVATION) and a ReLU
// activation, in CUDNN_BATCHNORM_SPATIAL_PERSISTENT mode over FP16 NHWC
// data, as PaddlePaddle calls them. A lone FP16 NHWC batch norm (and its
// gradient) runs on the same calls with CUDNN_BATCHNORM_OPS_BN and no
// activation, as PyTorch runs channels-last batch norm: cuDNN's legacy
// calls (CudnnBatchNorm.h) took 12 ms a forward and up to 66 ms a gradient
// over ResNet-50's NHWC activations at batch 256 (H100, 2026-11-25).
//
// The forward call leaves, for its gradient, cuDNN's reserve space (the
// ReLU's mask) and the batch's mean and inverse standard deviation. The plan
// has no buffers for them: the executor keeps one reserve region beside the
// arena, each forward group takes a slice of it (reserveBytes()), and the
// gradient group of the same input reads its forward's slice.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_SRC_CUDNN_CUDNNFUSEDBATCHNORM_H
#define DLC_RUNTIME_SRC_CUDNN_CUDNNFUSEDBATCHNORM_H

#include "CudnnBatchNorm.h"

#include "dlc/runtime/cudnn/CudnnCapabilities.h"

namespace dlc::rt::cudnn {

class FusedBatchNorm {
public:
  /// The call for `group`. When cuDNN reports the shapes unsupported, `*bn`
  /// stays null and `refusal` says so; any other failing call is an error.
  static Status plan(cudnnHandle_t handle, const Plan &plan,
                     const FusedBatchNormGroup &group, const std::string &where,
                     std::unique_ptr<FusedBatchNorm> &bn, std::string &refusal);
  ~FusedBatchNorm();

  bool backward() const { return group_.backward; }
  const FusedBatchNormGroup &group() const { return group_; }
  size_t workspaceBytes() const { return workspace_; }
  /// The slice of the reserve region a forward call writes and its
  /// gradient reads: saved mean, saved inverse std (f32 per channel), then
  /// cuDNN's reserve space.
  size_t reserveBytes() const { return reserveSlice_; }
  /// Where that slice starts in the reserve region (the gradient: its
  /// forward's).
  void setReserveOffset(size_t offset) { reserveOffset_ = offset; }

  /// Enqueues on `stream` (the handle's stream).
  Status run(cudnnHandle_t handle, unsigned char *arena, unsigned char *reserve,
             void *workspace, size_t workspaceBytes, cudaStream_t stream) const;

private:
  FusedBatchNorm() = default;
  FusedBatchNormGroup group_;
  std::string where_;
  double epsilon_ = 1e-5, momentum_ = 0.1;
  int64_t channels_ = 0;
  cudnnTensorDescriptor_t data_ = nullptr, perChannel_ = nullptr;
  cudnnActivationDescriptor_t relu_ = nullptr;
  size_t workspace_ = 0, cudnnReserve_ = 0, reserveSlice_ = 0, reserveOffset_ = 0;
  /// Arena offsets by buffer id (the group's buffers only).
  std::map<int32_t, int64_t> offsets_;
};

} // namespace dlc::rt::cudnn

#endif // DLC_RUNTIME_SRC_CUDNN_CUDNNFUSEDBATCHNORM_H
