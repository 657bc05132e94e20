//===- PlanSummary.cpp - what a plan computes, counted --------------------===//

#include "dlc/runtime/PlanSummary.h"

namespace dlc::rt {

namespace {
int64_t product(const std::vector<int64_t> &shape, size_t from) {
  int64_t n = 1;
  for (size_t i = from; i < shape.size(); ++i)
    n *= shape[i];
  return n;
}
} // namespace

int64_t kernelMacs(const Plan &plan, const PlanKernel &k) {
  auto shape = [&](int32_t id) -> const std::vector<int64_t> & {
    return plan.buffers[id].shape;
  };
  auto flag = [&](const char *name) {
    auto it = k.attrs.find(name);
    return it != k.attrs.end() && std::get<int64_t>(it->second) != 0;
  };
  // Each output element of a convolution sums C/groups x KH x KW products;
  // both gradients do the same work as the forward convolution.
  if (k.op == "conv2d")
    return product(shape(k.outputs[0]), 0) * product(shape(k.inputs[1]), 1);
  if (k.op == "conv2d_backward_data")
    return product(shape(k.inputs[0]), 0) * product(shape(k.inputs[1]), 1);
  if (k.op == "conv2d_backward_filter")
    return product(shape(k.inputs[0]), 0) * product(shape(k.outputs[0]), 1);
  if (k.op == "matmul") {
    const std::vector<int64_t> &lhs = shape(k.inputs[0]);
    int64_t contracted = flag("transpose_lhs") ? lhs[lhs.size() - 2] : lhs.back();
    return product(shape(k.outputs[0]), 0) * contracted;
  }
  if (k.op == "linear")
    return product(shape(k.outputs[0]), 0) * shape(k.inputs[0]).back();
  return 0;
}

PlanSummary summarizePlan(const Plan &plan) {
  PlanSummary summary;
  for (const PlanBuffer &b : plan.buffers)
    if (b.role == BufferRole::kParam)
      summary.parameters += b.numElements();
  bool forward = true;
  for (const PlanKernel &k : plan.kernels) {
    if (k.op.size() > 9 && k.op.compare(k.op.size() - 9, 9, "_backward") == 0)
      forward = false;
    int64_t macs = kernelMacs(plan, k);
    summary.stepMacs += macs;
    if (forward)
      summary.forwardMacs += macs;
  }
  return summary;
}

} // namespace dlc::rt
