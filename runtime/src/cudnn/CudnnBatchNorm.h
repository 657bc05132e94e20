//===- CudnnBatchNorm.h - training-mode batch norm through cuDNN -*- C++ -*-===//
//
// One BatchNorm per plan kernel (batch_norm, batch_norm_backward), in
// cuDNN's spatial mode over the plan's NCHW buffers, seen as N x C x S x 1
// (S the product of the spatial dimensions, so 2-d [N, C] inputs work too).
// Forward: cudnnBatchNormalizationForwardTraining, the running statistics
// updated in the plan's new_running_* buffers (the old ones are copied in
// first, as cuDNN updates in place), momentum as cuDNN's exponential
// average factor (both PyTorch's convention and an unbiased running
// variance). Backward: cudnnBatchNormalizationBackward with no saved
// statistics, so cuDNN recomputes them from x, as the plan's op does.
//
// What cuDNN takes is decided statically by batchNormRefusal (CudnnCapabilities.h):
// f32 data with f32 statistics, or f16 data with f32 statistics (mixed
// precision). Everything else (bf16, pure fp16 statistics) runs on the
// hand-written kernel.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_SRC_CUDNN_CUDNNBATCHNORM_H
#define DLC_RUNTIME_SRC_CUDNN_CUDNNBATCHNORM_H

#include "CudnnConv.h"

namespace dlc::rt::cudnn {

/// A batch-norm kernel's epsilon and momentum (1e-5 and 0.1 when absent).
void batchNormHyperParameters(const PlanKernel &kernel, double &epsilon, double &momentum);

/// cuDNN updates the running statistics in place: copies the old values
/// into the new_running_* buffers first (unless the planner put them at one
/// place), `bytes` each.
Status copyRunningStatistics(unsigned char *oldMean, unsigned char *newMean,
                             unsigned char *oldVar, unsigned char *newVar, size_t bytes,
                             cudaStream_t stream, const std::string &where);

class BatchNorm {
public:
  /// A batch norm for `kernel`; when cuDNN cannot take it `*bn` stays null
  /// and `refusal` says why. A failing cuDNN call is an error.
  static Status plan(const Plan &plan, const PlanKernel &kernel, const std::string &where,
                     std::unique_ptr<BatchNorm> &bn, std::string &refusal);
  ~BatchNorm();

  /// Enqueues on `stream` (the handle's stream).
  Status run(cudnnHandle_t handle, unsigned char *arena, cudaStream_t stream) const;

private:
  BatchNorm() = default;
  bool backward_ = false;
  std::string where_;
  double epsilon_ = 1e-5, momentum_ = 0.1;
  cudnnTensorDescriptor_t data_ = nullptr, perChannel_ = nullptr;
  /// Arena offsets. Forward: x, scale, bias, running mean / var in, y,
  /// running mean / var out. Backward: dy, x, scale, dx, dscale, dbias.
  std::vector<int64_t> offsets_;
  int64_t channelBytes_ = 0;
};

} // namespace dlc::rt::cudnn

#endif // DLC_RUNTIME_SRC_CUDNN_CUDNNBATCHNORM_H
