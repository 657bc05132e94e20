//===- PlanSummary.cpp - what a plan computes, counted --------------------===//

#include "dlc/runtime/PlanSummary.h"

#include "dlc/runtime/Shape.h"

#include <algorithm>

namespace dlc::rt {

int64_t kernelMacs(const Plan &plan, const PlanKernel &k) {
  auto shape = [&](int32_t id) -> const std::vector<int64_t> & {
    return plan.buffers[id].shape;
  };
  // Each output element of a convolution sums C/groups x KH x KW products;
  // both gradients do the same work as the forward convolution.
  if (k.id == OpId::kConv2d)
    return numElements(shape(k.outputs[0])) * numElements(shape(k.inputs[1]), 1);
  if (k.id == OpId::kConv2dBackwardData)
    return numElements(shape(k.inputs[0])) * numElements(shape(k.inputs[1]), 1);
  if (k.id == OpId::kConv2dBackwardFilter)
    return numElements(shape(k.inputs[0])) * numElements(shape(k.outputs[0]), 1);
  if (k.id == OpId::kMatmul) {
    const std::vector<int64_t> &lhs = shape(k.inputs[0]);
    int64_t contracted = k.flag("transpose_lhs") ? lhs[lhs.size() - 2] : lhs.back();
    return numElements(shape(k.outputs[0])) * contracted;
  }
  if (k.id == OpId::kLinear)
    return numElements(shape(k.outputs[0])) * shape(k.inputs[0]).back();
  // Attention: q k^T and p v, Sq x Sk x (D + Dv) products per batch and
  // head (4 Sq Sk D FLOPs at D = Dv); the backward recomputes q k^T and
  // forms dv, dp, dq and dk: five such products, 2.5x the forward.
  if (k.id == OpId::kAttention || k.id == OpId::kAttentionBackward) {
    const std::vector<int64_t> &q = shape(k.inputs[0]), &v = shape(k.inputs[2]);
    int64_t keys = v[v.size() - 2];
    int64_t forward = numElements(q) / q.back() * keys * (q.back() + v.back());
    return k.id == OpId::kAttention ? forward : forward * 5 / 2;
  }
  return 0;
}

PlanSummary summarizePlan(const Plan &plan) {
  PlanSummary summary;
  for (const PlanBuffer &b : plan.buffers)
    if (b.role == BufferRole::kParam)
      summary.parameters += b.numElements();
  bool forward = true;
  for (const PlanKernel &k : plan.kernels) {
    std::string_view name = opName(k.id);
    if (name.size() > 9 && name.substr(name.size() - 9) == "_backward")
      forward = false;
    int64_t macs = kernelMacs(plan, k);
    summary.stepMacs += macs;
    if (forward)
      summary.forwardMacs += macs;
  }

  // Launches and bytes: consecutive kernels of one group form one launch.
  // Which launches read each buffer, to tell a group's exported values from
  // its internal ones.
  // A group is a library call when it holds a library op (a GEMM with its
  // epilogue, cuDNN's fused batch norm), generated code otherwise.
  std::vector<int64_t> launchOf(plan.kernels.size());
  int64_t launch = -1, previousGroup = -2;
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    int64_t group = plan.kernels[i].fusionGroup();
    if (group < 0 || group != previousGroup) {
      ++launch;
      if (group >= 0) {
        ++summary.groupsByKind[std::string(fusionKindName(plan.kernels[i].fusionKind))];
        bool library = false;
        for (size_t j = i; j < plan.kernels.size() && plan.kernels[j].fusionGroup() == group; ++j)
          library |= std::string(implementationOf(plan.kernels[j].opClass)) == "library";
        ++summary.launchesByKind[library ? "library" : "generated"];
      } else {
        ++summary.launchesByKind[implementationOf(plan.kernels[i].opClass)];
      }
    }
    previousGroup = group;
    launchOf[i] = launch;
  }
  summary.launches = launch + 1;
  summary.memoryBytes = launchMemoryBytes(plan, launchOf);
  return summary;
}

int64_t launchMemoryBytes(const Plan &plan, const std::vector<int64_t> &launchOf) {
  int64_t launches = 0;
  for (int64_t l : launchOf)
    launches = std::max(launches, l + 1);
  // Which launches read each buffer, to tell a launch's exported values
  // from its internal ones; each launch's kernels, in order.
  std::vector<std::vector<int64_t>> readers(plan.buffers.size());
  std::vector<std::vector<size_t>> kernelsOf(launches);
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    for (int32_t id : plan.kernels[i].inputs)
      readers[storageOwner(plan, id)].push_back(launchOf[i]);
    kernelsOf[launchOf[i]].push_back(i);
  }
  int64_t bytes = 0;
  for (int64_t l = 0; l < launches; ++l) {
    std::vector<int32_t> produced, read;
    for (size_t i : kernelsOf[l]) {
      for (int32_t id : plan.kernels[i].inputs)
        if (std::find(produced.begin(), produced.end(), id) == produced.end() &&
            std::find(read.begin(), read.end(), id) == read.end())
          read.push_back(id);
      for (int32_t id : plan.kernels[i].outputs)
        produced.push_back(id);
    }
    for (int32_t id : read)
      bytes += plan.buffers[id].bytes;
    for (int32_t id : produced) {
      const PlanBuffer &b = plan.buffers[id];
      bool leaves = b.role != BufferRole::kTemporary ||
                    std::any_of(readers[storageOwner(plan, id)].begin(),
                                readers[storageOwner(plan, id)].end(),
                                [&](int64_t r) { return r != l; });
      if (leaves)
        bytes += b.bytes;
    }
  }
  return bytes;
}

} // namespace dlc::rt
