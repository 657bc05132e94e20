//===- PlanLaunches.h - a plan's launches, as every backend reads them -*- C++ -*-===//
//
// Plan analysis that routing (cuda/LaunchPaths.h), the cost model
// (perf/CostModel.h), the CPU backend (cpu/HostKernels.h) and the kernel
// generator (codegen/KernelCodegen.h) share: which kernels run as one
// launch, how messages name a launch, and each kernel's inputs with views
// resolved. It reads the plan alone, so none of them has to reach into the
// generator for it.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_PLANLAUNCHES_H
#define DLC_RUNTIME_PLANLAUNCHES_H

#include "dlc/runtime/Plan.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dlc::rt {

/// One kernel launch of a plan, as PlanSummary counts them: consecutive
/// kernels of one fused group, or a single kernel.
struct Launch {
  size_t index = 0;            // launch number in plan order
  std::vector<size_t> kernels; // indices into Plan::kernels
  int64_t group = -1;          // fusion.group, or -1
  FusionKind fusion = FusionKind::kNone;
  std::string kind;            // the fusion kind's name, or the op of a single kernel
  std::string implementation;  // "generated", "library" or "hand-written"
};

/// The plan's launches in order.
std::vector<Launch> planLaunches(const Plan &plan);

/// "launch #5 (elewise_act, group 2, kernels #7-#8)": how messages name a
/// launch.
std::string launchLabel(const Launch &launch);
/// The same with the ops it runs, a run of one op counted (a horizontal
/// group has hundreds): "launch #5 (elewise_act, group 2, kernels #7-#8:
/// ops add, relu)", "launch #9 (horizontal_cast, ...: ops cast x151)".
std::string launchLabelWithOps(const Plan &plan, const Launch &launch);

/// Each kernel's inputs with views resolved: a reshape is a buffer no
/// kernel writes, sharing the bytes of the value it reshapes, which is the
/// last kernel output written at its offset (and size) before the reader.
/// Routing and generating a plan's launches ask for it once per launch, so
/// the last plan's answer is kept (per thread) and given again while the
/// plan's kernels and buffers are the same.
using ResolvedInputs = std::shared_ptr<const std::vector<std::vector<int32_t>>>;
ResolvedInputs resolvedInputs(const Plan &plan);

} // namespace dlc::rt

#endif // DLC_RUNTIME_PLANLAUNCHES_H
