//===- CudnnCapabilities.cpp - what cuDNN takes ---------------------------===//

#include "dlc/runtime/cudnn/CudnnCapabilities.h"

#include <cstdlib>

namespace dlc::rt::cudnn {

// cuDNN 9's CUDNN_BN_MIN_EPSILON is 0: any epsilon the op allows.
std::string epsilonRefusal(const PlanKernel &kernel) {
  const double *epsilon = findAttr<double>(kernel.attrs, "epsilon");
  if (epsilon && !(*epsilon > 0))
    return "epsilon " + std::to_string(*epsilon) + ", not positive";
  return "";
}

std::string convRefusal(const Plan &plan, const PlanKernel &kernel) {
  int32_t x, w, y;
  if (kernel.id == OpId::kConv2d && kernel.inputs.size() >= 2 && kernel.inputs.size() <= 3 &&
      kernel.outputs.size() == 1)
    x = kernel.inputs[0], w = kernel.inputs[1], y = kernel.outputs[0];
  else if (kernel.id == OpId::kConv2dBackwardData && kernel.inputs.size() == 2 &&
           kernel.outputs.size() == 1)
    y = kernel.inputs[0], w = kernel.inputs[1], x = kernel.outputs[0];
  else if (kernel.id == OpId::kConv2dBackwardFilter && kernel.inputs.size() == 2 &&
           kernel.outputs.size() == 1)
    y = kernel.inputs[0], x = kernel.inputs[1], w = kernel.outputs[0];
  else
    return kernel.op + " with " + std::to_string(kernel.inputs.size()) + " operands and " +
           std::to_string(kernel.outputs.size()) + " results";
  const PlanBuffer &X = plan.buffers[x], &W = plan.buffers[w], &Y = plan.buffers[y];
  const PlanBuffer *bias = kernel.id == OpId::kConv2d && kernel.inputs.size() > 2
                               ? &plan.buffers[kernel.inputs[2]]
                               : nullptr;
  if (!isFloatType(X.dtype) || W.dtype != X.dtype || Y.dtype != X.dtype ||
      (bias && bias->dtype != X.dtype))
    return std::string("operands of mixed or unsupported types (") + dtypeName(X.dtype) +
           ", " + dtypeName(W.dtype) + ", " + dtypeName(Y.dtype) + ")";
  if (X.shape.size() != 4 || W.shape.size() != 4 || Y.shape.size() != 4)
    return "operands that are not 4-d (NCHW or NHWC)";
  if (std::string layout = kernelLayout(kernel); layout != "NCHW" && layout != "NHWC")
    return "layout '" + layout + "'";
  return "";
}

int64_t batchNormChannels(const Plan &plan, const PlanKernel &kernel) {
  const PlanBuffer &x =
      plan.buffers[kernel.inputs[kernel.id == OpId::kBatchNormBackward ? 1 : 0]];
  return kernelLayout(kernel) == "NHWC" ? x.shape.back() : x.shape[1];
}

std::string batchNormRefusal(const Plan &plan, const PlanKernel &kernel) {
  // An experiment switch: cuDNN's f32 batch norm was 7.6e-5 from the CPU
  // on an H100 where the hand-written kernel is exact; this runs the
  // hand-written one everywhere, to compare accuracy and speed in one call.
  if (const char *choice = std::getenv("DLC_CUDA_BATCH_NORM");
      choice && std::string(choice) == "hand-written")
    return "DLC_CUDA_BATCH_NORM=hand-written";
  bool backward = kernel.id == OpId::kBatchNormBackward;
  if (!(kernel.id == OpId::kBatchNorm && kernel.inputs.size() == 5 && kernel.outputs.size() == 3) &&
      !(backward && kernel.inputs.size() == 3 && kernel.outputs.size() == 3))
    return kernel.op + " with " + std::to_string(kernel.inputs.size()) + " operands and " +
           std::to_string(kernel.outputs.size()) + " results";
  const PlanBuffer &x = plan.buffers[kernel.inputs[backward ? 1 : 0]];
  if (x.dtype != DType::kF32 && x.dtype != DType::kF16)
    return std::string("data of ") + dtypeName(x.dtype) + " (cuDNN's batch norm: f32 or f16)";
  std::string layout = kernelLayout(kernel);
  if (layout != "NCHW" && !(layout == "NHWC" && x.shape.size() == 4))
    return "layout " + layout + " over data of rank " + std::to_string(x.shape.size());
  if (x.shape.size() < 2 || x.numElements() == 0)
    return "an input not of shape [N, C, ...]";
  const int64_t limit = int64_t(1) << 31;
  const int64_t channels = batchNormChannels(plan, kernel);
  int64_t spatial = x.numElements() / (x.shape[0] * channels);
  if (x.shape[0] >= limit || channels >= limit || spatial >= limit)
    return "a dimension of 2^31 or more elements";
  // Data-shaped operands in x's type; per-channel ones f32, one per channel.
  std::vector<int32_t> data = backward ? std::vector<int32_t>{kernel.inputs[0], kernel.outputs[0]}
                                       : std::vector<int32_t>{kernel.outputs[0]};
  std::vector<int32_t> channel =
      backward ? std::vector<int32_t>{kernel.inputs[2], kernel.outputs[1], kernel.outputs[2]}
               : std::vector<int32_t>{kernel.inputs[1], kernel.inputs[2], kernel.inputs[3],
                                      kernel.inputs[4], kernel.outputs[1], kernel.outputs[2]};
  for (int32_t id : data)
    if (plan.buffers[id].dtype != x.dtype || plan.buffers[id].numElements() != x.numElements())
      return "'" + plan.buffers[id].name + "' is not of the input's type and size";
  for (int32_t id : channel)
    if (plan.buffers[id].dtype != DType::kF32 ||
        plan.buffers[id].numElements() != channels)
      return "'" + plan.buffers[id].name + "' is not one f32 value per channel";
  return epsilonRefusal(kernel);
}

std::string fusedBatchNormDataRefusal(const Plan &plan, const PlanKernel &bn, int32_t x,
                                      const std::vector<int32_t> &like,
                                      const std::vector<int32_t> &perChannel) {
  const PlanBuffer &X = plan.buffers[x];
  if (kernelLayout(bn) != "NHWC" || X.shape.size() != 4)
    return "cuDNN's fused batch norm runs NHWC data; this is " + kernelLayout(bn) +
           " of rank " + std::to_string(X.shape.size());
  if (X.dtype != DType::kF16)
    return std::string("cuDNN's fused batch norm runs f16 data; this is ") +
           dtypeName(X.dtype);
  int64_t channels = X.shape[3];
  if (channels % 4 != 0)
    return "cuDNN's fused batch norm needs channels a multiple of 4; this has " +
           std::to_string(channels);
  for (int32_t id : like)
    if (plan.buffers[id].dtype != X.dtype || plan.buffers[id].shape != X.shape)
      return "'" + plan.buffers[id].name + "' is not shaped and typed as the input";
  for (int32_t id : perChannel)
    if (plan.buffers[id].dtype != DType::kF32 || plan.buffers[id].numElements() != channels)
      return "'" + plan.buffers[id].name + "' is not one f32 value per channel";
  if (const int64_t limit = int64_t(1) << 31;
      X.shape[0] >= limit || X.shape[1] * X.shape[2] >= limit || channels >= limit)
    return "a dimension of 2^31 or more elements";
  return "";
}

} // namespace dlc::rt::cudnn
