//===- CudnnFusedBatchNorm.cpp - cuDNN's batch norm + relu in one call ----===//

#include "CudnnFusedBatchNorm.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace dlc::rt::cudnn {

namespace {

constexpr cudnnBatchNormMode_t kMode = CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
constexpr size_t kSliceAlignment = 256;

size_t alignUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

cudnnBatchNormOps_t opsOf(const FusedBatchNormGroup &g) {
  if (!g.act)
    return CUDNN_BATCHNORM_OPS_BN;
  return g.add ? CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION : CUDNN_BATCHNORM_OPS_BN_ACTIVATION;
}

} // namespace

Status FusedBatchNorm::plan(cudnnHandle_t handle, const Plan &plan,
                            const FusedBatchNormGroup &group, const std::string &where,
                            std::unique_ptr<FusedBatchNorm> &bn, std::string &refusal) {
  bn.reset();
  std::unique_ptr<FusedBatchNorm> b(new FusedBatchNorm());
  b->group_ = group;
  b->where_ = where;
  const PlanKernel &kernel = plan.kernels[group.bn];
  batchNormHyperParameters(kernel, b->epsilon_, b->momentum_);
  // fusedBatchNormFor admitted only [n, h, w, c] f16 data.
  const std::vector<int64_t> &shape = plan.buffers[group.x].shape;
  b->channels_ = shape[3];
  DLC_CUDNN(cudnnCreateTensorDescriptor(&b->data_), where);
  DLC_CUDNN(cudnnSetTensor4dDescriptor(b->data_, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF,
                                       static_cast<int>(shape[0]), static_cast<int>(shape[3]),
                                       static_cast<int>(shape[1]), static_cast<int>(shape[2])),
            where);
  DLC_CUDNN(cudnnCreateTensorDescriptor(&b->perChannel_), where);
  DLC_CUDNN(cudnnDeriveBNTensorDescriptor(b->perChannel_, b->data_, kMode), where);
  // A lone batch norm passes no activation (and no y to its gradient), as
  // PyTorch's channels-last batch norm calls these functions.
  if (group.act) {
    DLC_CUDNN(cudnnCreateActivationDescriptor(&b->relu_), where);
    DLC_CUDNN(cudnnSetActivationDescriptor(b->relu_, CUDNN_ACTIVATION_RELU,
                                           CUDNN_NOT_PROPAGATE_NAN, 0.0),
              where);
  }
  const cudnnBatchNormOps_t ops = opsOf(group);
  // Unsupported shapes are a refusal (the split path runs them); anything
  // else is an error.
  auto sized = [&](cudnnStatus_t status, const char *call) -> Status {
    if (status == CUDNN_STATUS_NOT_SUPPORTED || status == CUDNN_STATUS_BAD_PARAM) {
      refusal = std::string(call) + ": " + cudnnGetErrorString(status);
      return Status::ok();
    }
    return cudnnCheck(status, call, where);
  };
  DLC_RETURN_IF_ERROR(sized(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(
                                handle, kMode, ops, b->relu_, b->data_, &b->cudnnReserve_),
                            "cudnnGetBatchNormalizationTrainingExReserveSpaceSize"));
  if (!refusal.empty())
    return Status::ok();
  if (!group.backward)
    DLC_RETURN_IF_ERROR(sized(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
                                  handle, kMode, ops, b->data_, group.add ? b->data_ : nullptr,
                                  b->data_, b->perChannel_, b->relu_, &b->workspace_),
                              "cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize"));
  else
    DLC_RETURN_IF_ERROR(sized(cudnnGetBatchNormalizationBackwardExWorkspaceSize(
                                  handle, kMode, ops, b->data_, b->data_, b->data_,
                                  group.add ? b->data_ : nullptr, b->data_, b->perChannel_,
                                  b->relu_, &b->workspace_),
                              "cudnnGetBatchNormalizationBackwardExWorkspaceSize"));
  if (!refusal.empty())
    return Status::ok();
  b->reserveSlice_ = alignUp(2 * size_t(b->channels_) * sizeof(float), kSliceAlignment) +
                     alignUp(b->cudnnReserve_, kSliceAlignment);
  for (int32_t id : {group.x, group.y, group.scale, group.z, group.bias, group.runningMean,
                     group.runningVar, group.newMean, group.newVar, group.dy, group.dx,
                     group.dz, group.dscale, group.dbias})
    if (id >= 0)
      b->offsets_[id] = plan.buffers[id].offset;
  bn = std::move(b);
  return Status::ok();
}

FusedBatchNorm::~FusedBatchNorm() {
  if (data_)
    cudnnDestroyTensorDescriptor(data_);
  if (perChannel_)
    cudnnDestroyTensorDescriptor(perChannel_);
  if (relu_)
    cudnnDestroyActivationDescriptor(relu_);
}

Status FusedBatchNorm::run(cudnnHandle_t handle, unsigned char *arena, unsigned char *reserve,
                           void *workspace, size_t workspaceBytes, cudaStream_t stream) const {
  const float one = 1.0f, zero = 0.0f;
  const FusedBatchNormGroup &g = group_;
  auto at = [&](int32_t id) -> unsigned char * {
    return id < 0 ? nullptr : arena + offsets_.at(id);
  };
  unsigned char *slice = reserve + reserveOffset_;
  float *savedMean = reinterpret_cast<float *>(slice);
  float *savedInvStd = savedMean + channels_;
  unsigned char *cudnnReserve =
      slice + alignUp(2 * size_t(channels_) * sizeof(float), kSliceAlignment);
  const cudnnBatchNormOps_t ops = opsOf(g);
  // The gradient of a lone batch norm reads neither y nor the bias.
  const int32_t y = g.backward && !g.act ? -1 : g.y;
  const int32_t bias = g.backward && !g.act ? -1 : g.bias;
  if (workspace_ > workspaceBytes)
    return Status(StatusCode::kInternal, where_ + ": the workspace holds " +
                                             std::to_string(workspaceBytes) + " bytes, " +
                                             std::to_string(workspace_) + " needed");
  if (g.backward) {
    DLC_CUDNN(cudnnBatchNormalizationBackwardEx(
                  handle, kMode, ops, &one, &zero, &one, &zero, data_, at(g.x),
                  y < 0 ? nullptr : data_, at(y), data_, at(g.dy), g.add ? data_ : nullptr,
                  at(g.dz), data_, at(g.dx), perChannel_, at(g.scale), at(bias), at(g.dscale),
                  at(g.dbias), epsilon_,
                  savedMean, savedInvStd, relu_, workspace, workspace_, cudnnReserve,
                  cudnnReserve_),
              where_);
    return Status::ok();
  }
  if (Status s = copyRunningStatistics(at(g.runningMean), at(g.newMean), at(g.runningVar),
                                       at(g.newVar), size_t(channels_) * sizeof(float), stream,
                                       where_);
      !s.isOk())
    return s;
  DLC_CUDNN(cudnnBatchNormalizationForwardTrainingEx(
                handle, kMode, ops, &one, &zero, data_, at(g.x), g.add ? data_ : nullptr,
                at(g.z), data_, at(g.y), perChannel_, at(g.scale), at(g.bias), momentum_,
                at(g.newMean), at(g.newVar), epsilon_, savedMean, savedInvStd, relu_, workspace,
                workspace_, cudnnReserve, cudnnReserve_),
            where_);
  return Status::ok();
}

} // namespace dlc::rt::cudnn
