//===- LaunchPaths.cpp - which device path runs each launch ---------------===//

#include "dlc/runtime/cuda/LaunchPaths.h"

#include "dlc/runtime/PlanSummary.h"
#include "dlc/runtime/cuda/HandKernels.h"

namespace dlc::rt::cuda {

namespace {

bool isFloatType(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16; }

/// The path of one launch against `launches` (which it is one of), and why
/// it is not on a faster one.
DeviceLaunch choose(const Plan &plan, const Launch &launch, const std::vector<Launch> &launches) {
  DeviceLaunch d;
  d.launch = launch;
  std::string reason;
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
    return "operands that are not 4-d (NCHW)";
  return "";
}

std::vector<DeviceLaunch> planDeviceLaunches(const Plan &plan) {
  // Each launch is decided against the plan's own launches; a group no
  // device kernel computes is split, and its parts are decided against the
  // launches with that split made (which values leave a part depends on it).
  std::vector<Launch> original = planLaunches(plan);
  std::vector<Launch> launches;
  std::vector<std::string> splitReason;
  for (const Launch &launch : original) {
    if (launch.kernels.size() > 1 && choose(plan, launch, original).path == "host-fallback") {
      std::string why = choose(plan, launch, original).reason;
      for (size_t k : launch.kernels) {
        Launch part = launch;
        part.kernels = {k};
        part.implementation = kernelImplementation(plan.kernels[k].op);
        launches.push_back(std::move(part));
        splitReason.push_back("split from its group, which " + why);
      }
      continue;
    }
    launches.push_back(launch);
    splitReason.push_back("");
  }
  for (size_t i = 0; i < launches.size(); ++i)
    launches[i].index = i;

  std::vector<DeviceLaunch> device;
  for (size_t i = 0; i < launches.size(); ++i) {
    DeviceLaunch d = choose(plan, launches[i], launches);
    d.splitFromGroup = !splitReason[i].empty();
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
                                                 "hand-written", "host-fallback"};
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

} // namespace dlc::rt::cuda
