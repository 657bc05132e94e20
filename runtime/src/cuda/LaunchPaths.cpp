//===- LaunchPaths.cpp - which device path runs each launch ---------------===//

#include "dlc/runtime/cuda/LaunchPaths.h"

#include "dlc/runtime/PlanSummary.h"
#include "dlc/runtime/cuda/HandKernels.h"

#include <algorithm>
#include <cstdlib>

namespace dlc::rt::cuda {

namespace {

/// cuDNN 9's CUDNN_BN_MIN_EPSILON is 0: any epsilon the op allows.
std::string epsilonRefusal(const PlanKernel &kernel) {
  const double *epsilon = findAttr<double>(kernel.attrs, "epsilon");
  if (epsilon && !(*epsilon > 0))
    return "epsilon " + std::to_string(*epsilon) + ", not positive";
  return "";
}

bool isFloatType(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16; }

/// The path of one launch against `launches` (which it is one of), and why
/// it is not on a faster one.
DeviceLaunch choose(const Plan &plan, const Launch &launch, const std::vector<Launch> &launches) {
  DeviceLaunch d;
  d.launch = launch;
  std::string reason;
  // A GEMM-epilogue group (not a run split out of one: those lack the GEMM).
  const std::string &first = plan.kernels[launch.kernels.front()].op;
  if (plan.kernels[launch.kernels.front()].opClass == OpClass::kCollective) {
    d.path = "nccl";
    d.reason = "a gradient all-reduce over data-parallel ranks";
    return d;
  }
  if (launch.kernels.size() > 1 && (first == "matmul" || first == "linear") &&
      (launch.fusion == FusionKind::kGemmBiasAct || launch.fusion == FusionKind::kGemmDactBgrad)) {
    auto epilogue = gemmEpilogueFor(plan, launch);
    std::string refusal = epilogue.isOk()
                              ? gemmRefusal(plan, plan.kernels[epilogue->gemm])
                              : epilogue.status().message();
    if (refusal.empty()) {
      d.path = "cublaslt";
      return d;
    }
    d.path = "host-fallback";
    d.reason = "no cuBLASLt epilogue: " + refusal;
    return d;
  }
  // A whole paddle batch-norm group (a part split from one, such as its add
  // and relu, takes the paths below).
  bool holdsBatchNorm = std::any_of(launch.kernels.begin(), launch.kernels.end(), [&](size_t k) {
    return plan.kernels[k].opClass == OpClass::kBatchNormalization;
  });
  if (launch.kernels.size() > 1 && holdsBatchNorm && isFusedBatchNorm(launch.fusion)) {
    auto fused = fusedBatchNormFor(plan, launch, launches);
    if (fused.isOk()) {
      d.path = "cudnn";
      return d;
    }
    d.path = "host-fallback";
    d.reason = "no cuDNN fused batch norm: " + fused.status().message();
    return d;
  }
  if (launch.implementation == "generated") {
    auto generated = generateKernel(plan, launch, launches);
    if (generated.isOk()) {
      d.path = "generated";
      return d;
    }
    reason = "not generated: " + generated.status().message();
  } else if (launch.kernels.size() == 1) {
    const PlanKernel &kernel = plan.kernels[launch.kernels.front()];
    if (kernel.op == "matmul" || kernel.op == "linear") {
      std::string refusal = gemmRefusal(plan, kernel);
      if (refusal.empty()) {
        d.path = "cublaslt";
        return d;
      }
      reason = "cuBLASLt refuses it: " + refusal;
    } else if (kernel.op.rfind("conv2d", 0) == 0) {
      std::string refusal = convRefusal(plan, kernel);
      if (refusal.empty()) {
        d.path = "cudnn";
        return d;
      }
      reason = "cuDNN refuses it: " + refusal;
    } else if (kernel.opClass == OpClass::kBatchNormalization) {
      std::string refusal = batchNormRefusal(plan, kernel);
      if (refusal.empty()) {
        d.path = "cudnn";
        return d;
      }
      reason = "cuDNN refuses it: " + refusal;
    } else {
      reason = kernel.op + " has no library call yet";
    }
  } else if (launch.implementation == "library") {
    reason = "a library launch of several kernels";
  }
  if (launch.kernels.size() == 1) {
    auto hand = planHandKernel(plan, plan.kernels[launch.kernels.front()]);
    if (hand.isOk()) {
      d.path = "hand-written";
      return d;
    }
    reason += (reason.empty() ? "not hand-written: " : "; not hand-written: ") +
              hand.status().message();
  }
  d.path = "host-fallback";
  d.reason = reason;
  return d;
}

} // namespace

std::string gemmRefusal(const Plan &plan, const PlanKernel &kernel) {
  bool linear = kernel.op == "linear";
  if ((kernel.op != "matmul" && !linear) || kernel.outputs.size() != 1 ||
      kernel.inputs.size() < 2 || kernel.inputs.size() > (linear ? 3u : 2u))
    return kernel.op + " is not a matmul or linear of two operands";
  const PlanBuffer &lhs = plan.buffers[kernel.inputs[0]];
  const PlanBuffer &rhs = plan.buffers[kernel.inputs[1]];
  const PlanBuffer &out = plan.buffers[kernel.outputs[0]];
  const PlanBuffer *bias = kernel.inputs.size() > 2 ? &plan.buffers[kernel.inputs[2]] : nullptr;
  if (!isFloatType(lhs.dtype) || rhs.dtype != lhs.dtype || !isFloatType(out.dtype) ||
      (bias && !isFloatType(bias->dtype)))
    return std::string("operands of ") + dtypeName(lhs.dtype) + " and " +
           dtypeName(rhs.dtype) + ", result " + dtypeName(out.dtype);
  if (lhs.shape.size() < 2 || rhs.shape.size() < 2 || out.shape.size() < 2)
    return "an operand of rank below 2";
  return "";
}

std::string convRefusal(const Plan &plan, const PlanKernel &kernel) {
  int32_t x, w, y;
  if (kernel.op == "conv2d" && kernel.inputs.size() >= 2 && kernel.inputs.size() <= 3 &&
      kernel.outputs.size() == 1)
    x = kernel.inputs[0], w = kernel.inputs[1], y = kernel.outputs[0];
  else if (kernel.op == "conv2d_backward_data" && kernel.inputs.size() == 2 &&
           kernel.outputs.size() == 1)
    y = kernel.inputs[0], w = kernel.inputs[1], x = kernel.outputs[0];
  else if (kernel.op == "conv2d_backward_filter" && kernel.inputs.size() == 2 &&
           kernel.outputs.size() == 1)
    y = kernel.inputs[0], x = kernel.inputs[1], w = kernel.outputs[0];
  else
    return kernel.op + " with " + std::to_string(kernel.inputs.size()) + " operands and " +
           std::to_string(kernel.outputs.size()) + " results";
  const PlanBuffer &X = plan.buffers[x], &W = plan.buffers[w], &Y = plan.buffers[y];
  const PlanBuffer *bias = kernel.op == "conv2d" && kernel.inputs.size() > 2
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
      plan.buffers[kernel.inputs[kernel.op == "batch_norm_backward" ? 1 : 0]];
  return kernelLayout(kernel) == "NHWC" ? x.shape.back() : x.shape[1];
}

std::string batchNormRefusal(const Plan &plan, const PlanKernel &kernel) {
  // An experiment switch: cuDNN's f32 batch norm was 7.6e-5 from the CPU
  // on an H100 where the hand-written kernel is exact; this runs the
  // hand-written one everywhere, to compare accuracy and speed in one call.
  if (const char *choice = std::getenv("DLC_CUDA_BATCH_NORM");
      choice && std::string(choice) == "hand-written")
    return "DLC_CUDA_BATCH_NORM=hand-written";
  bool backward = kernel.op == "batch_norm_backward";
  if (!(kernel.op == "batch_norm" && kernel.inputs.size() == 5 && kernel.outputs.size() == 3) &&
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

namespace {
Status noEpilogue(const std::string &why) { return Status(StatusCode::kInvalidArgument, why); }

/// A matmul cuBLASLt runs as several GEMMs: its right operand has batch
/// dimensions, or its left one is transposed (so stacked rows cannot fold
/// the batches into one GEMM; CublasLtGemm.cpp).
bool batchedGemm(const Plan &plan, const PlanKernel &matmul) {
  bool ta = matmul.flag("transpose_lhs");
  const PlanBuffer &lhs = plan.buffers[matmul.inputs[0]];
  return plan.buffers[matmul.inputs[1]].shape.size() != 2 || (ta && lhs.shape.size() > 2);
}

/// Whether a kernel outside `launch` reads `id`, directly or through a view.
bool readOutside(const Plan &plan, const Launch &launch, int32_t id) {
  ResolvedInputs resolved = resolvedInputs(plan);
  const std::vector<std::vector<int32_t>> &inputs = *resolved;
  for (size_t k = 0; k < plan.kernels.size(); ++k)
    if (std::find(launch.kernels.begin(), launch.kernels.end(), k) == launch.kernels.end() &&
        std::find(inputs[k].begin(), inputs[k].end(), id) != inputs[k].end())
      return true;
  return false;
}
} // namespace

namespace {
Status notFused(const std::string &why) { return Status(StatusCode::kInvalidArgument, why); }

/// cuDNN's fused batch norm: FP16 NHWC data, f32 per-channel operands, C a
/// multiple of 4 (its persistent NHWC kernels; PaddlePaddle's gate).
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
} // namespace

StatusOr<FusedBatchNormGroup> fusedBatchNormFor(const Plan &plan, const Launch &launch,
                                                const std::vector<Launch> &launches) {
  if (!isFusedBatchNorm(launch.fusion))
    return notFused("a " + launch.kind + " launch, not a batch-norm + relu group");
  const std::vector<size_t> &ks = launch.kernels;
  std::vector<std::string> ops;
  for (size_t k : ks)
    ops.push_back(plan.kernels[k].op);
  FusedBatchNormGroup g;
  g.backward = launch.fusion == FusionKind::kBnActGrad || launch.fusion == FusionKind::kBnAddActGrad;
  g.add = launch.fusion == FusionKind::kBnAddAct || launch.fusion == FusionKind::kBnAddActGrad;
  // The values the call writes; anything else of the group read outside it
  // would be lost.
  std::vector<int32_t> written;
  if (!g.backward) {
    // batch_norm -> [add ->] relu
    std::vector<std::string> want = g.add ? std::vector<std::string>{"batch_norm", "add", "relu"}
                                          : std::vector<std::string>{"batch_norm", "relu"};
    if (ops != want)
      return notFused("a " + launch.kind + " group of other ops than batch_norm" +
                      (g.add ? ", add" : "") + " and relu");
    const PlanKernel &bn = plan.kernels[ks[0]], &relu = plan.kernels[ks.back()];
    if (bn.inputs.size() != 5 || bn.outputs.size() != 3 || relu.inputs.size() != 1)
      return notFused("a batch_norm or relu of unexpected arity");
    g.bn = ks[0];
    g.x = bn.inputs[0], g.scale = bn.inputs[1], g.bias = bn.inputs[2];
    g.runningMean = bn.inputs[3], g.runningVar = bn.inputs[4];
    g.newMean = bn.outputs[1], g.newVar = bn.outputs[2];
    g.y = relu.outputs[0];
    int32_t normalized = bn.outputs[0];
    if (g.add) {
      const PlanKernel &add = plan.kernels[ks[1]];
      if (add.inputs.size() != 2 || (add.inputs[0] != normalized && add.inputs[1] != normalized) ||
          relu.inputs[0] != add.outputs[0])
        return notFused("a bn_add_act group whose add does not join the batch norm to relu");
      g.z = add.inputs[0] == normalized ? add.inputs[1] : add.inputs[0];
    } else if (relu.inputs[0] != normalized) {
      return notFused("a bn_act group whose relu does not read the batch norm");
    }
    written = {g.y, g.newMean, g.newVar};
    std::vector<int32_t> like = {g.y};
    if (g.add)
      like.push_back(g.z);
    if (std::string why = fusedBatchNormDataRefusal(
            plan, bn, g.x, like, {g.scale, g.bias, g.runningMean, g.runningVar, g.newMean, g.newVar});
        !why.empty())
      return notFused(why);
  } else {
    // relu_backward(dy, y) -> batch_norm_backward(., x, scale)
    if (ops != std::vector<std::string>{"relu_backward", "batch_norm_backward"})
      return notFused("a " + launch.kind +
                      " group of other ops than relu_backward and batch_norm_backward");
    const PlanKernel &dact = plan.kernels[ks[0]], &bn = plan.kernels[ks[1]];
    if (dact.inputs.size() != 2 || bn.inputs.size() != 3 || bn.outputs.size() != 3 ||
        bn.inputs[0] != dact.outputs[0])
      return notFused("a relu_backward that does not feed the batch-norm gradient");
    g.bn = ks[1];
    g.dy = dact.inputs[0], g.y = dact.inputs[1];
    g.x = bn.inputs[1], g.scale = bn.inputs[2];
    g.dx = bn.outputs[0], g.dscale = bn.outputs[1], g.dbias = bn.outputs[2];
    if (g.add)
      g.dz = dact.outputs[0];
    written = {g.dx, g.dscale, g.dbias};
    if (g.add)
      written.push_back(g.dz);
    std::vector<int32_t> like = {g.dy, g.y, g.dx};
    if (g.add)
      like.push_back(g.dz);
    if (std::string why =
            fusedBatchNormDataRefusal(plan, bn, g.x, like, {g.scale, g.dscale, g.dbias});
        !why.empty())
      return notFused(why);
    // Its forward group: the reserve space (the relu's mask) and the saved
    // statistics come from there, and its bias is the one cuDNN reads.
    // The latest such group before this one: searched backwards, and only
    // groups whose batch norm reads this x are worked out in full (each is
    // a readOutside per value; every earlier group made routing quadratic).
    bool found = false;
    for (auto l = launches.rbegin(); l != launches.rend() && !found; ++l) {
      if (l->index >= launch.index)
        continue;
      if ((l->fusion != FusionKind::kBnAct && l->fusion != FusionKind::kBnAddAct) ||
          (l->fusion == FusionKind::kBnAddAct) != g.add)
        continue;
      const PlanKernel &first = plan.kernels[l->kernels.front()];
      if (first.op != "batch_norm" || first.inputs.empty() || first.inputs[0] != g.x)
        continue;
      auto forward = fusedBatchNormFor(plan, *l, launches);
      if (forward.isOk() && forward->x == g.x && forward->y == g.y) {
        g.forwardLaunch = l->index;
        g.bias = forward->bias;
        found = true;
      }
    }
    if (!found)
      return notFused(std::string("no ") + (g.add ? "bn_add_act" : "bn_act") +
                      " group of the same input and output runs before it (cuDNN's fused "
                      "gradient reads the forward call's reserve space)");
    // cuDNN reads the forward's bias, which this group's kernels do not
    // list: the memory planner keeps it only if it lives all step (the
    // step's arguments and constants do; temporaries, gradients and
    // in-place updates may share their bytes).
    BufferRole role = plan.buffers[g.bias].role;
    if (role == BufferRole::kTemporary || role == BufferRole::kGradient ||
        role == BufferRole::kUpdate || role == BufferRole::kLoss)
      return notFused("cuDNN's fused gradient reads the forward's bias '" +
                      plan.buffers[g.bias].name + "', a " + bufferRoleName(role) +
                      " buffer the planner may reuse before it");
  }
  for (size_t k : ks)
    for (int32_t id : plan.kernels[k].outputs)
      if (std::find(written.begin(), written.end(), id) == written.end() &&
          readOutside(plan, launch, id))
        return notFused("'" + plan.buffers[id].name +
                        "' is read outside the group, and the fused call does not write it");
  if (std::string why = epsilonRefusal(plan.kernels[g.bn]); !why.empty())
    return notFused(why);
  return g;
}

StatusOr<GemmEpilogue> gemmEpilogueFor(const Plan &plan, const Launch &launch) {
  const std::vector<size_t> &ks = launch.kernels;
  GemmEpilogue e;
  if (launch.fusion == FusionKind::kGemmBiasAct) {
    // linear / matmul -> relu | gelu
    if (ks.size() != 2)
      return noEpilogue("a gemm_bias_act group of " + std::to_string(ks.size()) + " kernels");
    const PlanKernel &gemm = plan.kernels[ks[0]], &act = plan.kernels[ks[1]];
    if ((gemm.op != "linear" && gemm.op != "matmul") || (act.op != "relu" && act.op != "gelu") ||
        act.inputs.size() != 1 || act.inputs[0] != gemm.outputs[0])
      return noEpilogue(gemm.op + " -> " + act.op + " is not a GEMM feeding its activation");
    if (gemm.op == "matmul" && batchedGemm(plan, gemm))
      return noEpilogue("a batched GEMM (cuBLASLt's epilogues take one GEMM)");
    bool bias = gemm.op == "linear" && gemm.inputs.size() == 3;
    bool preNeeded = readOutside(plan, launch, gemm.outputs[0]);
    e.gemm = ks[0];
    e.output = act.outputs[0];
    if (act.op == "relu") {
      if (preNeeded)
        return noEpilogue("the ReLU's input is read later, and cuBLASLt's RELU_AUX keeps only "
                          "a bitmask of it");
      e.epilogue = bias ? "relu_bias" : "relu";
    } else {
      if (act.stringAttr("approximate", "none") != "tanh")
        return noEpilogue("an exact (erf) GELU; cuBLASLt's GELU epilogue is the tanh form");
      e.epilogue = std::string(preNeeded ? "gelu_aux" : "gelu") + (bias ? "_bias" : "");
      if (preNeeded)
        e.aux = gemm.outputs[0];
    }
  } else if (launch.fusion == FusionKind::kGemmDactBgrad) {
    // matmul -> gelu_backward(., pre) [-> sum_to_shape]
    if (ks.size() != 2 && ks.size() != 3)
      return noEpilogue("a gemm_dact_bgrad group of " + std::to_string(ks.size()) + " kernels");
    const PlanKernel &gemm = plan.kernels[ks[0]], &dact = plan.kernels[ks[1]];
    if (gemm.op != "matmul" || dact.inputs.size() != 2 || dact.inputs[0] != gemm.outputs[0])
      return noEpilogue(gemm.op + " -> " + dact.op + " is not a GEMM feeding its gradient");
    if (dact.op == "relu_backward")
      return noEpilogue("DRELU needs the forward's RELU_AUX bitmask, which the forward "
                        "does not keep");
    if (dact.op != "gelu_backward" || dact.stringAttr("approximate", "none") != "tanh")
      return noEpilogue(dact.op + " with approximate = '" +
                        dact.stringAttr("approximate", "none") +
                        "'; cuBLASLt's DGELU is the tanh form's gradient");
    if (readOutside(plan, launch, gemm.outputs[0]))
      return noEpilogue("the GEMM's own result is read later");
    if (batchedGemm(plan, gemm))
      return noEpilogue("a batched GEMM (the epilogue's bias gradient would be per batch)");
    e.gemm = ks[0];
    e.output = dact.outputs[0];
    e.aux = dact.inputs[1];
    e.epilogue = "dgelu";
    if (ks.size() == 3) {
      const PlanKernel &sum = plan.kernels[ks[2]];
      if (sum.op != "sum_to_shape" || sum.inputs[0] != dact.outputs[0] ||
          plan.buffers[sum.outputs[0]].shape.size() != 1)
        return noEpilogue(sum.op + " is not the bias gradient of the activation gradient");
      e.epilogue = "dgelu_bgrad";
      e.biasGrad = sum.outputs[0];
      if (plan.buffers[e.biasGrad].dtype != plan.buffers[e.output].dtype)
        return noEpilogue("a bias gradient of another type than the activation gradient");
    }
  } else {
    return noEpilogue(launch.kind + " is not a GEMM-epilogue group");
  }
  if (e.aux >= 0 && plan.buffers[e.aux].dtype != plan.buffers[e.output].dtype)
    return noEpilogue("a pre-activation of another type than the result");
  // cuBLASLt's GELU input matrix is laid out as D (column-major, ld = the
  // row-major result's last dimension), and CUBLASLT_MATMUL_DESC_EPILOGUE_
  // AUX_LD must be divisible by 8 (cublasLt.h).
  if (e.aux >= 0 && !plan.buffers[e.output].shape.empty() &&
      plan.buffers[e.output].shape.back() % 8 != 0)
    return noEpilogue("a pre-activation whose rows of " +
                      std::to_string(plan.buffers[e.output].shape.back()) +
                      " are not a multiple of 8 (cuBLASLt's EPILOGUE_AUX_LD)");
  return e;
}

std::vector<Launch> splitGroups(const Plan &plan,
                                const std::function<std::string(const Launch &)> &refusal,
                                std::vector<std::string> &splitReason) {
  // A group `refusal` refuses is split: its runs of consecutive element-wise
  // / reduction kernels stay together as generated sub-launches, every other
  // kernel goes alone. Which values leave a launch depends on the split, so
  // each run is then checked against the launches as split, and a run the
  // generator refuses there is split further, until none is.
  std::vector<Launch> original = planLaunches(plan);
  std::vector<Launch> launches;
  splitReason.clear();
  auto generatedOp = [&](size_t k) {
    OpClass c = plan.kernels[k].opClass;
    return isElemental(c) || c == OpClass::kReduction;
  };
  for (const Launch &launch : original) {
    std::string whole = launch.kernels.size() > 1 ? refusal(launch) : "";
    if (whole.empty()) {
      launches.push_back(launch);
      splitReason.push_back("");
      continue;
    }
    std::string why = "split from its group (" + whole + ")";
    for (size_t i = 0; i < launch.kernels.size();) {
      Launch part = launch;
      part.kernels = {launch.kernels[i++]};
      if (generatedOp(part.kernels.front()))
        while (i < launch.kernels.size() && generatedOp(launch.kernels[i]))
          part.kernels.push_back(launch.kernels[i++]);
      part.implementation = part.kernels.size() > 1
                                ? "generated"
                                : implementationOf(plan.kernels[part.kernels[0]].opClass);
      launches.push_back(std::move(part));
      splitReason.push_back(why);
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < launches.size(); ++i)
      launches[i].index = i;
    for (size_t i = 0; i < launches.size() && !changed; ++i) {
      if (splitReason[i].empty() || launches[i].kernels.size() < 2 ||
          generateKernel(plan, launches[i], launches).isOk())
        continue;
      // This run is not one kernel against the split launches: its kernels
      // go alone.
      Launch run = launches[i];
      std::string why = splitReason[i];
      launches.erase(launches.begin() + i);
      splitReason.erase(splitReason.begin() + i);
      for (size_t j = 0; j < run.kernels.size(); ++j) {
        Launch part = run;
        part.kernels = {run.kernels[j]};
        part.implementation = implementationOf(plan.kernels[run.kernels[j]].opClass);
        launches.insert(launches.begin() + i + j, part);
        splitReason.insert(splitReason.begin() + i + j, why);
      }
      changed = true;
    }
  }
  return launches;
}

std::vector<DeviceLaunch> planDeviceLaunches(const Plan &plan) {
  // Each launch is decided against the plan's own launches; a group no
  // device kernel computes (whose whole path would be the host) is split.
  std::vector<Launch> original = planLaunches(plan);
  std::vector<std::string> splitReason;
  std::vector<Launch> launches = splitGroups(
      plan,
      [&](const Launch &launch) {
        DeviceLaunch whole = choose(plan, launch, original);
        if (whole.path != "host-fallback")
          return std::string();
        return whole.reason.empty() ? std::string("no device kernel computes it") : whole.reason;
      },
      splitReason);

  std::vector<DeviceLaunch> device;
  for (size_t i = 0; i < launches.size(); ++i) {
    DeviceLaunch d = choose(plan, launches[i], launches);
    d.splitFromGroup = !splitReason[i].empty();
    d.splitReason = splitReason[i];
    if (d.splitFromGroup)
      d.reason = d.reason.empty() ? splitReason[i] : splitReason[i] + "; " + d.reason;
    device.push_back(std::move(d));
  }
  return device;
}

std::vector<Launch> launchesOf(const std::vector<DeviceLaunch> &device) {
  std::vector<Launch> launches;
  for (const DeviceLaunch &d : device)
    launches.push_back(d.launch);
  return launches;
}

const std::vector<std::string> &devicePathNames() {
  static const std::vector<std::string> names = {"generated", "cublaslt", "cudnn",
                                                 "hand-written", "nccl", "host-fallback"};
  return names;
}

std::map<std::string, int64_t> countByPath(const std::vector<DeviceLaunch> &device) {
  std::map<std::string, int64_t> counts;
  for (const std::string &name : devicePathNames())
    counts[name] = 0;
  for (const DeviceLaunch &d : device)
    ++counts[d.path];
  return counts;
}

int64_t deviceMemoryBytes(const Plan &plan, const std::vector<DeviceLaunch> &device) {
  std::vector<int64_t> launchOf(plan.kernels.size(), 0);
  for (const DeviceLaunch &d : device)
    for (size_t k : d.launch.kernels)
      launchOf[k] = static_cast<int64_t>(d.launch.index);
  return launchMemoryBytes(plan, launchOf);
}

} // namespace dlc::rt::cuda
