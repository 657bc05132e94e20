//===- LaunchPaths.cpp - which device path runs each launch ---------------===//

#include "dlc/runtime/cuda/LaunchPaths.h"

#include "dlc/runtime/PlanSummary.h"
#include "dlc/runtime/cuda/HandKernels.h"

#include <algorithm>
#include <cstdlib>
#include <ostream>
#include <set>

namespace dlc::rt::cuda {

namespace {

/// The path of one launch against `launches` (which it is one of), and why
/// it is not on a faster one.
DeviceLaunch choose(const Plan &plan, const Launch &launch, const std::vector<Launch> &launches) {
  DeviceLaunch d;
  d.launch = launch;
  std::string reason;
  // Whether `reason` says why a launch on a fast path is not on a faster
  // one (attention off cuDNN's SDPA), kept where it lands.
  bool keepReason = false;
  // A GEMM-epilogue group (not a run split out of one: those lack the GEMM).
  OpId first = plan.kernels[launch.kernels.front()].id;
  if (plan.kernels[launch.kernels.front()].opClass == OpClass::kCollective) {
    d.path = DevicePath::kCollective;
    d.reason = "a gradient all-reduce over data-parallel ranks";
    return d;
  }
  if (launch.kernels.size() > 1 && (first == OpId::kMatmul || first == OpId::kLinear) &&
      (launch.fusion == FusionKind::kGemmBiasAct || launch.fusion == FusionKind::kGemmDactBgrad)) {
    auto epilogue = gemmEpilogueFor(plan, launch);
    std::string refusal = epilogue.isOk()
                              ? gemmRefusal(plan, plan.kernels[epilogue->gemm])
                              : epilogue.status().message();
    if (refusal.empty()) {
      d.path = DevicePath::kCublasLt;
      return d;
    }
    d.path = DevicePath::kHostFallback;
    d.reason = "no cuBLASLt epilogue: " + refusal;
    return d;
  }
  // A whole paddle batch-norm group (a part split from one, such as its add
  // and relu, takes the paths below).
  if (launch.kernels.size() > 1 && holdsBatchNorm(plan, launch) &&
      isFusedBatchNorm(launch.fusion)) {
    auto fused = fusedBatchNormFor(plan, launch, launches);
    if (fused.isOk()) {
      d.path = DevicePath::kCudnnFusedBatchNorm;
      return d;
    }
    d.path = DevicePath::kHostFallback;
    d.reason = "no cuDNN fused batch norm: " + fused.status().message();
    return d;
  }
  if (launch.implementation == "generated") {
    auto generated = generateKernel(plan, launch, launches);
    if (generated.isOk()) {
      d.path = DevicePath::kGenerated;
      d.blocks = gridBlocks(*generated);
      d.threadsPerBlock = int64_t(generated->blockSize) * generated->blockSizeY;
      return d;
    }
    reason = "not generated: " + generated.status().message();
  } else if (launch.kernels.size() == 1) {
    const PlanKernel &kernel = plan.kernels[launch.kernels.front()];
    if (kernel.id == OpId::kMatmul || kernel.id == OpId::kLinear) {
      std::string refusal = gemmRefusal(plan, kernel);
      if (refusal.empty()) {
        d.path = DevicePath::kCublasLt;
        return d;
      }
      reason = "cuBLASLt refuses it: " + refusal;
    } else if (kernel.id == OpId::kConv2d || kernel.id == OpId::kConv2dBackwardData ||
               kernel.id == OpId::kConv2dBackwardFilter) {
      std::string refusal = convRefusal(plan, kernel);
      if (refusal.empty()) {
        d.path = DevicePath::kCudnnConvolution;
        return d;
      }
      reason = "cuDNN refuses it: " + refusal;
    } else if (kernel.opClass == OpClass::kBatchNormalization) {
      std::string refusal = batchNormRefusal(plan, kernel);
      if (refusal.empty()) {
        // planDeviceLaunches moves it to the fused calls where they take it.
        d.path = DevicePath::kCudnnBatchNorm;
        return d;
      }
      reason = "cuDNN refuses it: " + refusal;
    } else if (kernel.id == OpId::kAttention || kernel.id == OpId::kAttentionBackward) {
      std::string refusal = attentionChoiceRefusal();
      if (refusal.empty()) {
        auto sdpa = sdpaShapeOf(plan, kernel);
        if (sdpa.isOk()) {
          d.path = DevicePath::kCudnnAttention;
          return d;
        }
        refusal = sdpa.status().message();
      }
      // Kept on the launch below, on the flash kernels too: --paths says
      // why attention is not on cuDNN.
      reason = "not on cuDNN's SDPA: " + refusal;
      keepReason = true;
    } else {
      reason = kernel.op + " has no library call yet";
    }
  } else if (launch.implementation == "library") {
    reason = "a library launch of several kernels";
  }
  if (launch.kernels.size() == 1) {
    auto hand = planHandKernel(plan, plan.kernels[launch.kernels.front()]);
    if (hand.isOk()) {
      d.path = DevicePath::kHandWritten;
      d.blocks = hand->blocks;
      d.threadsPerBlock = hand->blockSize;
      if (keepReason)
        d.reason = reason;
      return d;
    }
    reason += (reason.empty() ? "not hand-written: " : "; not hand-written: ") +
              hand.status().message();
  }
  d.path = DevicePath::kHostFallback;
  d.reason = reason;
  return d;
}

} // namespace

int64_t gridBlocks(const codegen::GeneratedKernel &g) {
  int64_t threads = int64_t(g.blockSize) * g.blockSizeY;
  bool perUnit = g.form == codegen::KernelForm::kReduction || g.form == codegen::KernelForm::kRow ||
                 g.form == codegen::KernelForm::kTranspose;
  return perUnit ? g.work : (g.work + threads - 1) / threads;
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

/// One batch_norm (x, scale, bias, mean, var) -> (y, new mean, new var), or
/// one batch_norm_backward (dy, x, scale) -> (dx, dscale, dbias) with the
/// lone batch_norm of the same x before it.
StatusOr<FusedBatchNormGroup> loneBatchNormFor(const Plan &plan, const Launch &launch,
                                               const std::vector<Launch> &launches) {
  const PlanKernel &bn = plan.kernels[launch.kernels.front()];
  FusedBatchNormGroup g;
  g.act = false;
  g.bn = launch.kernels.front();
  if (bn.id == OpId::kBatchNorm && bn.inputs.size() == 5 && bn.outputs.size() == 3) {
    g.x = bn.inputs[0], g.scale = bn.inputs[1], g.bias = bn.inputs[2];
    g.runningMean = bn.inputs[3], g.runningVar = bn.inputs[4];
    g.y = bn.outputs[0], g.newMean = bn.outputs[1], g.newVar = bn.outputs[2];
    if (std::string why = cudnn::fusedBatchNormDataRefusal(
            plan, bn, g.x, {g.y}, {g.scale, g.bias, g.runningMean, g.runningVar, g.newMean, g.newVar});
        !why.empty())
      return notFused(why);
  } else if (bn.id == OpId::kBatchNormBackward && bn.inputs.size() == 3 && bn.outputs.size() == 3) {
    g.backward = true;
    g.dy = bn.inputs[0], g.x = bn.inputs[1], g.scale = bn.inputs[2];
    g.dx = bn.outputs[0], g.dscale = bn.outputs[1], g.dbias = bn.outputs[2];
    if (std::string why = cudnn::fusedBatchNormDataRefusal(plan, bn, g.x, {g.dy, g.dx},
                                                           {g.scale, g.dscale, g.dbias});
        !why.empty())
      return notFused(why);
    // The saved statistics and reserve space come from the forward call:
    // the latest lone batch_norm of this x before it.
    bool found = false;
    for (auto l = launches.rbegin(); l != launches.rend() && !found; ++l) {
      if (l->index >= launch.index || l->kernels.size() != 1)
        continue;
      const PlanKernel &first = plan.kernels[l->kernels.front()];
      if (first.id != OpId::kBatchNorm || first.inputs.empty() || first.inputs[0] != g.x)
        continue;
      auto forward = loneBatchNormFor(plan, *l, launches);
      if (forward.isOk()) {
        g.forwardLaunch = l->index;
        g.y = forward->y; // with x, the key of the forward's reserve slice
        found = true;
      }
    }
    if (!found)
      return notFused("no lone batch_norm of the same input runs before it (the gradient "
                      "reads the forward call's saved statistics)");
  } else {
    return notFused("a " + launch.kind + " launch, not a batch norm");
  }
  if (std::string why = cudnn::epsilonRefusal(bn); !why.empty())
    return notFused(why);
  return g;
}
} // namespace

StatusOr<FusedBatchNormGroup> fusedBatchNormFor(const Plan &plan, const Launch &launch,
                                                const std::vector<Launch> &launches) {
  if (launch.kernels.size() == 1 &&
      plan.kernels[launch.kernels.front()].opClass == OpClass::kBatchNormalization)
    return loneBatchNormFor(plan, launch, launches);
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
    if (std::string why = cudnn::fusedBatchNormDataRefusal(
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
            cudnn::fusedBatchNormDataRefusal(plan, bn, g.x, like, {g.scale, g.dscale, g.dbias});
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
      if (first.id != OpId::kBatchNorm || first.inputs.empty() || first.inputs[0] != g.x)
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
  if (std::string why = cudnn::epsilonRefusal(plan.kernels[g.bn]); !why.empty())
    return notFused(why);
  return g;
}

bool holdsBatchNorm(const Plan &plan, const Launch &launch) {
  return std::any_of(launch.kernels.begin(), launch.kernels.end(), [&](size_t k) {
    return plan.kernels[k].opClass == OpClass::kBatchNormalization;
  });
}

void recogniseFusedBatchNorm(const Plan &plan, Launch &launch, const std::vector<Launch> &launches) {
  if (launch.kernels.size() < 2 || isFusedBatchNorm(launch.fusion) ||
      !holdsBatchNorm(plan, launch))
    return;
  for (FusionKind kind : {FusionKind::kBnAct, FusionKind::kBnAddAct, FusionKind::kBnActGrad,
                          FusionKind::kBnAddActGrad}) {
    Launch as = launch;
    as.fusion = kind;
    if (fusedBatchNormFor(plan, as, launches).isOk()) {
      launch.fusion = kind;
      return;
    }
  }
}

StatusOr<GemmEpilogue> gemmEpilogueFor(const Plan &plan, const Launch &launch) {
  const std::vector<size_t> &ks = launch.kernels;
  GemmEpilogue e;
  if (launch.fusion == FusionKind::kGemmBiasAct) {
    // linear / matmul -> relu | gelu
    if (ks.size() != 2)
      return noEpilogue("a gemm_bias_act group of " + std::to_string(ks.size()) + " kernels");
    const PlanKernel &gemm = plan.kernels[ks[0]], &act = plan.kernels[ks[1]];
    if ((gemm.id != OpId::kLinear && gemm.id != OpId::kMatmul) || (act.id != OpId::kRelu && act.id != OpId::kGelu) ||
        act.inputs.size() != 1 || act.inputs[0] != gemm.outputs[0])
      return noEpilogue(gemm.op + " -> " + act.op + " is not a GEMM feeding its activation");
    if (gemm.id == OpId::kMatmul && batchedGemm(plan, gemm))
      return noEpilogue("a batched GEMM (cuBLASLt's epilogues take one GEMM)");
    bool bias = gemm.id == OpId::kLinear && gemm.inputs.size() == 3;
    bool preNeeded = readOutside(plan, launch, gemm.outputs[0]);
    e.gemm = ks[0];
    e.output = act.outputs[0];
    if (act.id == OpId::kRelu) {
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
    if (gemm.id != OpId::kMatmul || dact.inputs.size() != 2 || dact.inputs[0] != gemm.outputs[0])
      return noEpilogue(gemm.op + " -> " + dact.op + " is not a GEMM feeding its gradient");
    if (dact.id == OpId::kReluBackward)
      return noEpilogue("DRELU needs the forward's RELU_AUX bitmask, which the forward "
                        "does not keep");
    if (dact.id != OpId::kGeluBackward || dact.stringAttr("approximate", "none") != "tanh")
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
      if (sum.id != OpId::kSumToShape || sum.inputs[0] != dact.outputs[0] ||
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

namespace {

/// The launches `original` routes to, groups no device kernel computes
/// split.
std::vector<DeviceLaunch> route(const Plan &plan, const std::vector<Launch> &original) {
  // Each launch is decided against the plan's own launches; a group no
  // device kernel computes (whose whole path would be the host) is split.
  std::vector<std::string> splitReason;
  std::vector<Launch> launches = splitGroups(
      plan, original,
      [&](const Launch &launch) {
        DeviceLaunch whole = choose(plan, launch, original);
        if (whole.path != DevicePath::kHostFallback)
          return std::string();
        return whole.reason.empty() ? std::string("no device kernel computes it") : whole.reason;
      },
      splitReason);

  std::vector<DeviceLaunch> device;
  for (size_t i = 0; i < launches.size(); ++i)
    device.push_back(choose(plan, launches[i], launches));
  std::vector<bool> pair;
  codegen::markCallPlusKernel(
      launches,
      [&](size_t i) {
        // The kernel for the group's element-wise rest: generated, or the
        // hand-written kernel of a lone element-wise op (a dropout).
        const DeviceLaunch &d = device[i];
        if (d.path == DevicePath::kGenerated ||
            (d.path == DevicePath::kHandWritten && d.launch.kernels.size() == 1 &&
             isElemental(plan.kernels[d.launch.kernels.front()].opClass)))
          return codegen::PartPath::kGenerated;
        return d.path == DevicePath::kHostFallback || d.path == DevicePath::kCollective ||
                       d.launch.kernels.size() != 1
                   ? codegen::PartPath::kOther
                   : codegen::PartPath::kCall;
      },
      splitReason, pair);
  for (size_t i = 0; i < launches.size(); ++i) {
    DeviceLaunch &d = device[i];
    d.callPlusKernel = pair[i];
    d.splitFromGroup = !splitReason[i].empty();
    d.splitReason = splitReason[i];
    if (!splitReason[i].empty())
      d.reason = d.reason.empty() ? splitReason[i] : splitReason[i] + "; " + d.reason;
  }
  return device;
}

/// The normalized input of a batch norm or of its gradient.
int32_t batchNormInput(const PlanKernel &k) {
  return k.id == OpId::kBatchNormBackward ? k.inputs.at(1) : k.inputs.at(0);
}

} // namespace

std::vector<DeviceLaunch> planDeviceLaunches(const Plan &plan) {
  std::vector<Launch> original = planLaunches(plan);
  std::vector<FusionKind> planned;
  for (const Launch &launch : original)
    planned.push_back(launch.fusion);
  // In plan order: a gradient group finds its forward group among the
  // launches before it, recognised already.
  for (Launch &launch : original)
    recogniseFusedBatchNorm(plan, launch, original);
  for (;;) {
    std::vector<DeviceLaunch> device = route(plan, original);
    // A recognised forward group whose gradient group is not the pattern
    // (xla's add -> relu_backward -> batch_norm_backward) leaves that
    // gradient's batch norm alone, without the lone forward whose saved
    // statistics the fused calls read: on the plain calls, which are
    // 10-60x slower over NHWC half data (2026-11-25). Such an input's
    // groups keep the strategy's split instead.
    // A lone batch norm cuDNN's fused calls take runs on them.
    std::vector<Launch> all = launchesOf(device);
    std::set<int32_t> plainInputs;
    for (DeviceLaunch &d : device)
      if (d.path == DevicePath::kCudnnBatchNorm) {
        if (fusedBatchNormFor(plan, d.launch, all).isOk())
          d.path = DevicePath::kCudnnFusedBatchNorm;
        else
          plainInputs.insert(batchNormInput(plan.kernels[d.launch.kernels[0]]));
      }
    bool reverted = false;
    for (Launch &launch : original)
      if (launch.fusion != planned[launch.index])
        for (size_t k : launch.kernels)
          if (plan.kernels[k].opClass == OpClass::kBatchNormalization &&
              plainInputs.count(batchNormInput(plan.kernels[k]))) {
            launch.fusion = planned[launch.index];
            reverted = true;
          }
    if (!reverted)
      return device;
  }
}

std::vector<Launch> launchesOf(const std::vector<DeviceLaunch> &device) {
  std::vector<Launch> launches;
  for (const DeviceLaunch &d : device)
    launches.push_back(d.launch);
  return launches;
}

const char *devicePathName(DevicePath path) {
  switch (path) {
  case DevicePath::kGenerated:
    return "generated";
  case DevicePath::kCublasLt:
    return "cublaslt";
  case DevicePath::kCudnnConvolution:
  case DevicePath::kCudnnBatchNorm:
  case DevicePath::kCudnnFusedBatchNorm:
  case DevicePath::kCudnnAttention:
    return "cudnn";
  case DevicePath::kHandWritten:
    return "hand-written";
  case DevicePath::kCollective:
    return "nccl";
  case DevicePath::kHostFallback:
    return "host-fallback";
  }
  return "host-fallback";
}

bool isCudnn(DevicePath path) {
  return path == DevicePath::kCudnnConvolution || path == DevicePath::kCudnnBatchNorm ||
         path == DevicePath::kCudnnFusedBatchNorm;
}

std::vector<DevicePath> fallbacksOf(DevicePath routed, const Launch &launch) {
  const bool single = launch.kernels.size() == 1;
  switch (routed) {
  // Decided from the plan alone, and nothing refuses them later.
  case DevicePath::kGenerated:
  case DevicePath::kCollective:
  case DevicePath::kHostFallback:
    return {routed};
  case DevicePath::kHandWritten:
    return {routed, DevicePath::kHostFallback};
  // A lone batch norm the fused calls refuse takes the plain ones.
  case DevicePath::kCudnnFusedBatchNorm:
    if (single)
      return {routed, DevicePath::kCudnnBatchNorm, DevicePath::kHandWritten,
              DevicePath::kHostFallback};
    return {routed, DevicePath::kHostFallback};
  case DevicePath::kCublasLt:
  case DevicePath::kCudnnConvolution:
  case DevicePath::kCudnnBatchNorm:
  case DevicePath::kCudnnAttention:
    if (single)
      return {routed, DevicePath::kHandWritten, DevicePath::kHostFallback};
    return {routed, DevicePath::kHostFallback};
  }
  return {DevicePath::kHostFallback};
}

std::string attentionChoiceRefusal() {
  const char *choice = std::getenv("DLC_CUDA_ATTENTION");
  if (choice && (std::string(choice) == "flash" || std::string(choice) == "simt"))
    return std::string("DLC_CUDA_ATTENTION=") + choice;
  return "";
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
    ++counts[devicePathName(d.path)];
  return counts;
}

int64_t deviceMemoryBytes(const Plan &plan, const std::vector<DeviceLaunch> &device) {
  std::vector<int64_t> launchOf(plan.kernels.size(), 0);
  for (const DeviceLaunch &d : device)
    for (size_t k : d.launch.kernels)
      launchOf[k] = static_cast<int64_t>(d.launch.index);
  return launchMemoryBytes(plan, launchOf);
}

void printLaunchPaths(std::ostream &os, const std::string &name, const Plan &plan, bool verbose) {
  std::vector<DeviceLaunch> device = planDeviceLaunches(plan);
  std::map<std::string, int64_t> counts = countByPath(device);
  os << "plan " << name << ": " << plan.model << ", batch " << plan.batch << ", fusion "
     << plan.fusion << "\n"
     << "device launches: " << device.size() << " (";
  const char *separator = "";
  for (const std::string &path : devicePathNames()) {
    os << separator << path << " " << counts[path];
    separator = ", ";
  }
  os << ")\n";
  std::map<std::string, std::pair<int64_t, std::string>> fallbacks;
  std::map<std::string, std::pair<int64_t, std::string>> splitKinds;
  std::map<std::string, std::pair<int64_t, std::string>> pairKinds;
  std::set<int64_t> splitGroups, pairGroups;
  for (const DeviceLaunch &d : device) {
    if (d.splitFromGroup && !d.callPlusKernel && splitGroups.insert(d.launch.group).second) {
      auto &entry = splitKinds[d.launch.kind];
      if (entry.first++ == 0)
        entry.second = d.splitReason;
    }
    if (d.callPlusKernel && pairGroups.insert(d.launch.group).second) {
      auto &entry = pairKinds[d.launch.kind];
      if (entry.first++ == 0)
        entry.second = d.splitReason;
    }
    if (d.path != DevicePath::kHostFallback)
      continue;
    std::string op =
        d.launch.kernels.size() == 1 ? plan.kernels[d.launch.kernels.front()].op : d.launch.kind;
    auto &entry = fallbacks[op];
    if (entry.first++ == 0)
      entry.second = d.reason;
  }
  os << "  splits: " << splitGroups.size() << ", call + kernel: " << pairGroups.size() << "\n";
  for (const auto &[kind, entry] : splitKinds)
    os << "  split groups: " << kind << " x" << entry.first << ": " << entry.second << "\n";
  for (const auto &[kind, entry] : pairKinds)
    os << "  call + kernel: " << kind << " x" << entry.first << ": " << entry.second << "\n";
  // cuDNN's batch norms by the calls they take: over NHWC half data the
  // plain calls are 10-60x slower than the fused ones (2026-11-25).
  std::vector<Launch> all = launchesOf(device);
  int64_t grouped = 0, lone = 0;
  std::vector<const DeviceLaunch *> plain;
  for (const DeviceLaunch &d : device) {
    if (!isCudnn(d.path) || !holdsBatchNorm(plan, d.launch))
      continue;
    if (!fusedBatchNormFor(plan, d.launch, all).isOk())
      plain.push_back(&d);
    else
      ++(d.launch.kernels.size() > 1 ? grouped : lone);
  }
  if (grouped + lone + static_cast<int64_t>(plain.size()) > 0) {
    os << "  cudnn batch norms: " << grouped << " fused with their activation, " << lone
       << " alone on the fused calls, " << plain.size() << " on the plain calls";
    if (!plain.empty())
      os << " (first: launch #" << plain.front()->launch.index << ", "
         << fusedBatchNormFor(plan, plain.front()->launch, all).status().message() << ")";
    os << "\n";
  }
  // Attention launches by path: cuDNN's SDPA, the flash kernels
  // (hand-written), or the host, with the first reason for each of the
  // latter two.
  std::map<std::string, int64_t> attention;
  const DeviceLaunch *attentionOnHost = nullptr, *attentionOnFlash = nullptr;
  for (const DeviceLaunch &d : device) {
    if (d.launch.kernels.size() != 1)
      continue;
    OpId id = plan.kernels[d.launch.kernels.front()].id;
    if (id != OpId::kAttention && id != OpId::kAttentionBackward)
      continue;
    ++attention[devicePathName(d.path)];
    if (d.path == DevicePath::kHostFallback && !attentionOnHost)
      attentionOnHost = &d;
    if (d.path == DevicePath::kHandWritten && !attentionOnFlash)
      attentionOnFlash = &d;
  }
  if (!attention.empty()) {
    os << "  attention: " << attention["cudnn"] << " on cuDNN's SDPA, " << attention["hand-written"]
       << " on the flash kernels, " << attention["host-fallback"] << " on the host";
    if (attentionOnFlash)
      os << " (first on the flash kernels: launch #" << attentionOnFlash->launch.index << ", "
         << attentionOnFlash->reason << ")";
    if (attentionOnHost)
      os << " (first: launch #" << attentionOnHost->launch.index << ", "
         << attentionOnHost->reason << ")";
    os << "\n";
  }
  for (const auto &[op, entry] : fallbacks)
    os << "  host-fallback: " << op << " x" << entry.first << ": " << entry.second << "\n";
  if (!verbose)
    return;
  for (const DeviceLaunch &d : device) {
    os << "  #" << d.launch.index << " " << devicePathName(d.path) << " " << d.launch.kind;
    if (d.launch.group >= 0)
      os << " (group " << d.launch.group << ")";
    os << ":";
    for (size_t k : d.launch.kernels) {
      const PlanKernel &kernel = plan.kernels[k];
      os << " " << kernel.op << "(";
      for (size_t i = 0; i < kernel.inputs.size(); ++i)
        os << (i ? ", " : "") << plan.buffers[kernel.inputs[i]].name;
      os << ") ->";
      for (int32_t id : kernel.outputs)
        os << " " << plan.buffers[id].name;
      os << ";";
    }
    os << "\n";
  }
}

} // namespace dlc::rt::cuda
