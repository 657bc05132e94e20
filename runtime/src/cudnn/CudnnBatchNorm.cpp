//===- CudnnBatchNorm.cpp - training-mode batch norm through cuDNN --------===//

#include "CudnnBatchNorm.h"

#include "dlc/runtime/cudnn/CudnnCapabilities.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace dlc::rt::cudnn {

void batchNormHyperParameters(const PlanKernel &kernel, double &epsilon, double &momentum) {
  epsilon = kernel.floatAttr("epsilon", 1e-5);
  momentum = kernel.floatAttr("momentum", 0.1);
}

Status copyRunningStatistics(unsigned char *oldMean, unsigned char *newMean,
                             unsigned char *oldVar, unsigned char *newVar, size_t bytes,
                             cudaStream_t stream, const std::string &where) {
  for (auto [from, to] : {std::pair{oldMean, newMean}, {oldVar, newVar}}) {
    if (from == to)
      continue;
    cudaError_t e = cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream);
    if (e != cudaSuccess)
      return Status(StatusCode::kInternal, std::string("cudaMemcpyAsync: ") +
                                               cudaGetErrorString(e) + " in " + where +
                                               ", the running statistics");
  }
  return Status::ok();
}

Status BatchNorm::plan(const Plan &plan, const PlanKernel &kernel, const std::string &where,
                       std::unique_ptr<BatchNorm> &bn, std::string &refusal) {
  bn.reset();
  refusal = batchNormRefusal(plan, kernel);
  if (!refusal.empty())
    return Status::ok();
  std::unique_ptr<BatchNorm> b(new BatchNorm());
  b->where_ = where;
  b->backward_ = kernel.id == OpId::kBatchNormBackward;
  batchNormHyperParameters(kernel, b->epsilon_, b->momentum_);
  const PlanBuffer &x = plan.buffers[kernel.inputs[b->backward_ ? 1 : 0]];
  const cudnnDataType_t type = x.dtype == DType::kF16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
  const int n = static_cast<int>(x.shape[0]);
  const int c = static_cast<int>(batchNormChannels(plan, kernel));
  DLC_CUDNN(cudnnCreateTensorDescriptor(&b->data_), where);
  if (kernelLayout(kernel) == "NHWC") {
    // [n, h, w, c]; batchNormRefusal admits NHWC only at rank 4.
    DLC_CUDNN(cudnnSetTensor4dDescriptor(b->data_, CUDNN_TENSOR_NHWC, type, n, c,
                                         static_cast<int>(x.shape[1]),
                                         static_cast<int>(x.shape[2])),
              where);
  } else {
    // [n, c, ...]: the spatial dimensions as one, so [N, C] works too.
    int spatial = static_cast<int>(x.numElements() / (int64_t(n) * c));
    DLC_CUDNN(cudnnSetTensor4dDescriptor(b->data_, CUDNN_TENSOR_NCHW, type, n, c, spatial, 1),
              where);
  }
  // Scale, bias, mean and variance: float for float and half data.
  DLC_CUDNN(cudnnCreateTensorDescriptor(&b->perChannel_), where);
  DLC_CUDNN(cudnnDeriveBNTensorDescriptor(b->perChannel_, b->data_, CUDNN_BATCHNORM_SPATIAL),
            where);
  for (int32_t id : kernel.inputs)
    b->offsets_.push_back(plan.buffers[id].offset);
  for (int32_t id : kernel.outputs)
    b->offsets_.push_back(plan.buffers[id].offset);
  b->channelBytes_ = int64_t(c) * 4;
  bn = std::move(b);
  return Status::ok();
}

BatchNorm::~BatchNorm() {
  if (data_)
    cudnnDestroyTensorDescriptor(data_);
  if (perChannel_)
    cudnnDestroyTensorDescriptor(perChannel_);
}

Status BatchNorm::run(cudnnHandle_t handle, unsigned char *arena, cudaStream_t stream) const {
  const float one = 1.0f, zero = 0.0f;
  auto at = [&](size_t i) { return arena + offsets_[i]; };
  if (backward_) {
    // (dy, x, scale) -> (dx, dscale, dbias)
    DLC_CUDNN(cudnnBatchNormalizationBackward(handle, CUDNN_BATCHNORM_SPATIAL, &one, &zero,
                                              &one, &zero, data_, at(1), data_, at(0), data_,
                                              at(3), perChannel_, at(2), at(4), at(5),
                                              epsilon_, nullptr, nullptr),
              where_);
    return Status::ok();
  }
  // (x, scale, bias, running mean, running var) -> (y, new mean, new var)
  if (Status s = copyRunningStatistics(at(3), at(6), at(4), at(7), channelBytes_, stream, where_);
      !s.isOk())
    return s;
  DLC_CUDNN(cudnnBatchNormalizationForwardTraining(
                handle, CUDNN_BATCHNORM_SPATIAL, &one, &zero, data_, at(0), data_, at(5),
                perChannel_, at(1), at(2), momentum_, at(6), at(7), epsilon_, nullptr, nullptr),
            where_);
  return Status::ok();
}

} // namespace dlc::rt::cudnn
