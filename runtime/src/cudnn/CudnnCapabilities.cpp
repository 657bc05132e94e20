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

namespace dlc::rt::cudnn {

namespace {

Status noSdpa(const std::string &why) { return Status(StatusCode::kInvalidArgument, why); }

/// cuDNN 9's SDPA kernels take head dimensions that are multiples of 8 up
/// to this (sm80 and sm90 alike).
constexpr int64_t kSdpaMaxHeadDim = 128;

} // namespace

StatusOr<SdpaShape> sdpaShapeOf(const Plan &plan, const PlanKernel &kernel) {
  SdpaShape s;
  s.backward = kernel.id == OpId::kAttentionBackward;
  if (kernel.id != OpId::kAttention && !s.backward)
    return noSdpa(kernel.op + " is not attention");
  const size_t fixed = s.backward ? 6 : 3, results = s.backward ? 3 : 2;
  if (kernel.inputs.size() < fixed || kernel.inputs.size() > fixed + 1 ||
      kernel.outputs.size() != results)
    return noSdpa(kernel.op + " with " + std::to_string(kernel.inputs.size()) +
                  " operands and " + std::to_string(kernel.outputs.size()) + " results");
  s.inputs.assign(kernel.inputs.begin(), kernel.inputs.begin() + fixed);
  s.outputs = kernel.outputs;
  if (kernel.inputs.size() > fixed)
    s.mask = kernel.inputs[fixed];
  const PlanBuffer &q = plan.buffers[s.inputs[0]], &k = plan.buffers[s.inputs[1]],
                   &v = plan.buffers[s.inputs[2]];
  s.type = q.dtype;
  if (s.type != DType::kF16 && s.type != DType::kBF16)
    return noSdpa(std::string("q of ") + dtypeName(s.type) +
                  " (cuDNN's SDPA takes f16 and bf16; f32 runs the flash kernels)");
  // Every operand of q's type but lse, which is f32.
  const int32_t lse = s.backward ? s.inputs[5] : s.outputs[1];
  for (const std::vector<int32_t> *ids : {&s.inputs, &s.outputs})
    for (int32_t id : *ids)
      if (id != lse && plan.buffers[id].dtype != s.type)
        return noSdpa("operands of mixed types (" + plan.buffers[id].name + " is " +
                      dtypeName(plan.buffers[id].dtype) + ", q " + dtypeName(s.type) + ")");
  if (plan.buffers[lse].dtype != DType::kF32)
    return noSdpa("lse is not f32");
  const size_t rank = q.shape.size();
  if (rank < 3 || k.shape.size() != rank || v.shape.size() != rank)
    return noSdpa("q, k and v are not of one rank >= 3 ([B..., S, D])");
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (k.shape[i] != q.shape[i] || v.shape[i] != q.shape[i])
      return noSdpa("q, k and v differ in their batch dimensions");
    (i + 3 == rank ? s.h : s.b) *= q.shape[i];
  }
  s.sq = q.shape[rank - 2], s.sk = k.shape[rank - 2], s.d = q.shape[rank - 1];
  if (k.shape[rank - 1] != s.d || v.shape[rank - 1] != s.d || v.shape[rank - 2] != s.sk)
    return noSdpa("k or v is not [B..., Sk, D] with q's head dimension");
  if (s.sq == 0 || s.sk == 0 || s.d == 0 || s.b == 0 || s.h == 0)
    return noSdpa("an empty q, k or v");
  if (s.d % 8 != 0 || s.d > kSdpaMaxHeadDim)
    return noSdpa("head dimension " + std::to_string(s.d) + " (cuDNN's SDPA takes multiples of 8 up to " +
                  std::to_string(kSdpaMaxHeadDim) + ")");
  // Every result and o / do have the shape cuDNN writes or reads.
  std::vector<int32_t> likeQ = s.backward
                                   ? std::vector<int32_t>{s.inputs[3], s.inputs[4], s.outputs[0]}
                                   : std::vector<int32_t>{s.outputs[0]};
  for (int32_t id : likeQ)
    if (plan.buffers[id].shape != q.shape)
      return noSdpa(plan.buffers[id].name + " is not shaped as q");
  if (s.backward &&
      (plan.buffers[s.outputs[1]].shape != k.shape || plan.buffers[s.outputs[2]].shape != v.shape))
    return noSdpa("dk and dv are not shaped as k and v");
  std::vector<int64_t> lseShape(q.shape.begin(), q.shape.end() - 1);
  if (plan.buffers[lse].shape != lseShape)
    return noSdpa("lse is not [B..., Sq]");
  s.causal = kernel.intAttr("causal", 0) != 0;
  s.scale = kernel.floatAttr("scale", 1.0);
  if (kernel.floatAttr("dropout_rate", 0.0) != 0.0)
    return noSdpa("dropout: cuDNN draws its own Philox mask, not train.dropout's counter-based "
                  "one, so the fused step could not be checked against the unfused one");
  if (s.causal && s.sq > s.sk)
    return noSdpa("causal with more queries than keys: rows that see no key");
  if (s.mask < 0)
    return s;
  // The frontend's rule (its validation says so for sm80 and sm90).
  if (s.causal && s.sq != s.sk)
    return noSdpa("causal with Sq != Sk and a mask (cuDNN's bottom-right diagonal takes no bias)");
  const PlanBuffer &m = plan.buffers[s.mask];
  if (m.dtype != s.type)
    return noSdpa(std::string("a mask of ") + dtypeName(m.dtype) + " (cuDNN's bias is of q's type)");
  if (m.shape.size() > rank)
    return noSdpa("a mask of higher rank than q");
  // The mask aligned to [B..., Sq, Sk] from the right, 1 where it is absent.
  std::vector<int64_t> ms(rank - m.shape.size(), 1);
  ms.insert(ms.end(), m.shape.begin(), m.shape.end());
  if (ms[rank - 2] != s.sq || ms[rank - 1] != s.sk)
    return noSdpa("a mask broadcast over the queries or keys (cuDNN's bias is [B|1, H|1, Sq, Sk])");
  bool allB = true, noneB = true;
  for (size_t i = 0; i + 3 < rank; ++i) {
    allB = allB && ms[i] == q.shape[i];
    noneB = noneB && ms[i] == 1;
  }
  if (!allB && !noneB)
    return noSdpa("a mask broadcast over some batch dimensions but not all");
  s.maskB = noneB ? 1 : s.b;
  if (ms[rank - 3] != 1 && ms[rank - 3] != s.h)
    return noSdpa("the mask does not broadcast to [B..., Sq, Sk]");
  s.maskH = ms[rank - 3];
  return s;
}

} // namespace dlc::rt::cudnn
