//===- SplitGroups.cpp - a plan's launches with refused groups split ------===//

#include "dlc/runtime/codegen/KernelCodegen.h"

#include "dlc/runtime/PlanSummary.h"

namespace dlc::rt::codegen {

std::vector<Launch> splitGroups(const Plan &plan,
                                const std::function<std::string(const Launch &)> &refusal,
                                std::vector<std::string> &splitReason) {
  return splitGroups(plan, planLaunches(plan), refusal, splitReason);
}

std::vector<Launch> splitGroups(const Plan &plan, std::vector<Launch> original,
                                const std::function<std::string(const Launch &)> &refusal,
                                std::vector<std::string> &splitReason) {
  // A group `refusal` refuses is split: its runs of consecutive element-wise
  // / reduction kernels stay together as generated sub-launches, every other
  // kernel goes alone. Which values leave a launch depends on the split, so
  // each run is then checked against the launches as split, and a run the
  // generator refuses there is split further, until none is.
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

void markCallPlusKernel(const std::vector<Launch> &launches,
                        const std::function<PartPath(size_t)> &path,
                        std::vector<std::string> &splitReason, std::vector<bool> &pair) {
  const std::string split = "split from its group";
  pair.assign(launches.size(), false);
  // A split group's parts are consecutive launches of one group, each with
  // a reason.
  for (size_t i = 0; i < launches.size();) {
    size_t end = i + 1;
    if (splitReason[i].empty()) {
      i = end;
      continue;
    }
    while (end < launches.size() && !splitReason[end].empty() &&
           launches[end].group == launches[i].group)
      ++end;
    int calls = 0, generated = 0, other = 0;
    for (size_t j = i; j < end; ++j)
      switch (path(j)) {
      case PartPath::kGenerated: ++generated; break;
      case PartPath::kCall: ++calls; break;
      case PartPath::kOther: ++other; break;
      }
    if (calls == 1 && generated <= 1 && other == 0)
      for (size_t j = i; j < end; ++j) {
        pair[j] = true;
        if (splitReason[j].compare(0, split.size(), split) == 0)
          splitReason[j] = "call + kernel" + splitReason[j].substr(split.size());
      }
    i = end;
  }
}

} // namespace dlc::rt::codegen
