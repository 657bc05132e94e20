//===- PlanLaunches.cpp - a plan's launches, as every backend reads them --===//

#include "dlc/runtime/PlanLaunches.h"

#include "dlc/runtime/OpKinds.h"

namespace dlc::rt {

namespace {
std::vector<std::vector<int32_t>> computeResolvedInputs(const Plan &plan) {
  std::vector<bool> written(plan.buffers.size(), false);
  for (const PlanKernel &k : plan.kernels)
    for (int32_t id : k.outputs)
      written[id] = true;
  std::vector<std::vector<int32_t>> inputs;
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    std::vector<int32_t> resolved;
    for (int32_t id : plan.kernels[k].inputs) {
      const PlanBuffer &b = plan.buffers[id];
      int32_t owner = id;
      if (!written[id] && b.role == BufferRole::kTemporary)
        for (size_t w = k; w-- > 0 && owner == id;)
          for (int32_t out : plan.kernels[w].outputs)
            if (plan.buffers[out].offset == b.offset && plan.buffers[out].bytes == b.bytes)
              owner = out;
      resolved.push_back(owner);
    }
    inputs.push_back(std::move(resolved));
  }
  return inputs;
}
} // namespace

ResolvedInputs resolvedInputs(const Plan &plan) {
  // What the answer depends on, compared whole (no hash to collide): every
  // kernel's operands and every buffer's bytes and role. Building it is
  // linear; the answer's view search is not, and HRNet-W18's routing asked
  // for it once per launch (15 s of its 16).
  std::vector<int64_t> key;
  key.reserve(plan.buffers.size() * 3 + plan.kernels.size() * 6);
  for (const PlanBuffer &b : plan.buffers)
    key.insert(key.end(), {b.offset, b.bytes, static_cast<int64_t>(b.role)});
  for (const PlanKernel &k : plan.kernels) {
    key.push_back(-1 - static_cast<int64_t>(k.inputs.size()));
    key.insert(key.end(), k.inputs.begin(), k.inputs.end());
    key.push_back(-1 - static_cast<int64_t>(k.outputs.size()));
    key.insert(key.end(), k.outputs.begin(), k.outputs.end());
  }
  thread_local std::vector<int64_t> lastKey;
  thread_local ResolvedInputs last;
  if (!last || key != lastKey) {
    last = std::make_shared<const std::vector<std::vector<int32_t>>>(
        computeResolvedInputs(plan));
    lastKey = std::move(key);
  }
  return last;
}

std::vector<Launch> planLaunches(const Plan &plan) {
  std::vector<Launch> launches;
  int64_t previous = -2;
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    const PlanKernel &k = plan.kernels[i];
    int64_t g = k.fusionGroup();
    if (g < 0 || g != previous) {
      Launch l;
      l.index = launches.size();
      l.group = g;
      if (g >= 0) {
        l.fusion = k.fusionKind;
        l.kind = k.fusionKind == FusionKind::kNone ? "fused" : std::string(fusionKindName(k.fusionKind));
        l.implementation = "generated";
      } else {
        l.kind = k.op;
        l.implementation = implementationOf(k.opClass);
      }
      launches.push_back(std::move(l));
    }
    launches.back().kernels.push_back(i);
    previous = g;
  }
  return launches;
}

namespace {
/// launchLabel without its closing parenthesis.
std::string openLaunchLabel(const Launch &launch) {
  std::string text = "launch #" + std::to_string(launch.index) + " (" + launch.kind;
  if (launch.group >= 0)
    text += ", group " + std::to_string(launch.group);
  text += launch.kernels.size() > 1 ? ", kernels #" : ", kernel #";
  text += std::to_string(launch.kernels.front());
  if (launch.kernels.size() > 1)
    text += "-#" + std::to_string(launch.kernels.back());
  return text;
}
} // namespace

std::string launchLabel(const Launch &launch) { return openLaunchLabel(launch) + ")"; }

std::string launchLabelWithOps(const Plan &plan, const Launch &launch) {
  std::string text = openLaunchLabel(launch) + ": op";
  text += launch.kernels.size() > 1 ? "s " : " ";
  for (size_t i = 0, run = 1; i < launch.kernels.size(); i += run) {
    const std::string &op = plan.kernels[launch.kernels[i]].op;
    for (run = 1; i + run < launch.kernels.size() &&
                  plan.kernels[launch.kernels[i + run]].op == op;
         ++run) {
    }
    text += (i ? ", " : "") + op + (run > 1 ? " x" + std::to_string(run) : "");
  }
  return text + ")";
}

} // namespace dlc::rt
