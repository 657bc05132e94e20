//===- KernelCodegen.cpp - a launch's kernel form, picked -----------------===//
//
// Dispatch only: which form computes a launch (generate), and the public
// entry points over it. The forms are one file each (FormSupport.h lists
// them), the values they compute come from the emitter (Emitter.h), and
// what CUDA and the host write differently from the target
// (KernelTargets.h).
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/codegen/KernelCodegen.h"

#include "FormSupport.h"

#include <algorithm>

namespace dlc::rt::codegen {

const char *kernelFormName(KernelForm form) {
  switch (form) {
  case KernelForm::kLoop: return "loop";
  case KernelForm::kReduction: return "reduction";
  case KernelForm::kRow: return "row";
  case KernelForm::kOptimizer: return "optimizer";
  case KernelForm::kHorizontalCast: return "horizontal_cast";
  case KernelForm::kTranspose: return "transpose";
  }
  return "?";
}

bool walksSegmentTable(KernelForm form) {
  return form == KernelForm::kOptimizer || form == KernelForm::kHorizontalCast;
}

namespace {
/// Every op of the launch is an optimizer update or a cast whose result
/// only an update of the launch reads, as its gradient.
bool onlyUpdatesAndTheirGradientCasts(const Launch &launch, const Plan &plan) {
  for (size_t k : launch.kernels) {
    const PlanKernel &kernel = plan.kernels[k];
    if (kernel.opClass == OpClass::kOptimizer)
      continue;
    if (kernel.id != OpId::kCast)
      return false;
    int32_t out = kernel.outputs[0];
    for (size_t j = 0; j < plan.kernels.size(); ++j) {
      const PlanKernel &reader = plan.kernels[j];
      for (size_t i = 0; i < reader.inputs.size(); ++i)
        if (reader.inputs[i] == out &&
            (reader.opClass != OpClass::kOptimizer || i != 1 ||
             std::find(launch.kernels.begin(), launch.kernels.end(), j) ==
                 launch.kernels.end()))
          return false;
    }
  }
  return true;
}

StatusOr<GeneratedKernel> generate(const Plan &plan, const Launch &launch,
                                   const PlanIndex &index,
                                   KernelTarget target = KernelTarget::kCuda) {
  if (launch.kernels.empty())
    return Status(StatusCode::kInvalidArgument, "an empty launch");
  bool allOptimizer = true, anyOptimizer = false;
  std::vector<size_t> reductions, rowOps;
  for (size_t k : launch.kernels) {
    const PlanKernel &kernel = plan.kernels[k];
    const std::string &op = kernel.op;
    bool optimizer = kernel.opClass == OpClass::kOptimizer;
    bool reduction = kernel.opClass == OpClass::kReduction;
    if (!isElemental(kernel.opClass) && !reduction && !optimizer && !isRowOp(kernel))
      return Status(StatusCode::kInvalidArgument,
                    op + " is a " + implementationOf(kernel.opClass) +
                        " op, not one the generator covers (element-wise, broadcast, "
                        "data movement, dropout, reductions, softmax / layer_norm / "
                        "softmax_backward / layer_norm_backward rows, optimizer updates)");
    allOptimizer &= optimizer;
    anyOptimizer |= optimizer;
    if (reduction)
      reductions.push_back(k);
    if (isRowOp(kernel))
      rowOps.push_back(k);
  }
  // Mixed precision: a horizontal update group may hold the casts of its
  // half-precision gradients (dlc-fuse-optimizer-updates).
  bool castsForUpdates = anyOptimizer && onlyUpdatesAndTheirGradientCasts(launch, plan);
  if (allOptimizer || castsForUpdates)
    return generateOptimizer(plan, launch, target);
  if (anyOptimizer)
    return Status(StatusCode::kInvalidArgument,
                  "mixes optimizer updates with other ops; only a horizontal group of "
                  "updates has a generated kernel");
  Dataflow flow = dataflowOf(plan, launch, index);
  if (flow.exported.empty())
    return Status(StatusCode::kInvalidArgument, "computes nothing that is read later");
  if (!rowOps.empty()) {
    const std::string &first = plan.kernels[rowOps[0]].op;
    if (rowOps.size() > 1)
      return Status(StatusCode::kInvalidArgument,
                    "holds " + std::to_string(rowOps.size()) + " row ops (" + first + " and " +
                        plan.kernels[rowOps[1]].op + "); the row form computes one per launch");
    if (!reductions.empty())
      return Status(StatusCode::kInvalidArgument,
                    "holds a row op (" + first + ") and a reduction (" +
                        plan.kernels[reductions[0]].op + "); the row form computes no other "
                        "reduction");
    // A lone layer_norm_backward keeps its own kernel (the hand-written
    // one, the CPU's FastNorm): the row form is for its fused producers
    // and consumers.
    if (launch.kernels.size() == 1 && plan.kernels[rowOps[0]].id == OpId::kLayerNormBackward)
      return Status(StatusCode::kInvalidArgument,
                    "a lone layer_norm_backward takes its own kernel; the row form computes "
                    "it with producers or consumers");
    return generateRow(plan, launch, flow, rowOps[0], target);
  }
  if (!reductions.empty())
    return generateReduction(plan, launch, flow, reductions, target);
  // Casts whose results differ in shape (mixed precision's weight casts,
  // fused by FuseParameterCasts) are no loop: the horizontal cast kernel
  // takes them when they are independent.
  bool allCasts = launch.kernels.size() > 1 &&
                  std::all_of(launch.kernels.begin(), launch.kernels.end(),
                              [&](size_t k) { return plan.kernels[k].id == OpId::kCast; });
  bool oneShape = std::all_of(flow.exported.begin(), flow.exported.end(), [&](int32_t id) {
    return plan.buffers[id].shape == plan.buffers[flow.exported.front()].shape;
  });
  if (allCasts && !oneShape) {
    std::string refusal = horizontalCastRefusal(plan, launch, index);
    if (!refusal.empty())
      return Status(StatusCode::kInvalidArgument,
                    "casts of different shapes, which only a horizontal group of independent "
                    "casts computes in one launch, but " + refusal);
    return generateHorizontalCast(plan, launch, flow, target);
  }
  if (auto transposed = generateTranspose(plan, launch, flow, target))
    return std::move(*transposed);
  return generateLoop(plan, launch, flow, target);
}

} // namespace

GenerateDecision isGeneratable(const Plan &plan, const Launch &launch) {
  auto launches = planLaunches(plan);
  auto g = generate(plan, launch, indexPlan(plan, launches));
  return g.isOk() ? GenerateDecision{true, ""}
                  : GenerateDecision{false, g.status().message()};
}

StatusOr<GeneratedKernel> generateKernel(const Plan &plan, const Launch &launch) {
  return generateKernel(plan, launch, planLaunches(plan));
}

StatusOr<GeneratedKernel> generateKernel(const Plan &plan, const Launch &launch,
                                         const std::vector<Launch> &launches,
                                         KernelTarget target) {
  auto g = generate(plan, launch, indexPlan(plan, launches), target);
  if (!g.isOk())
    return Status(g.status().code(),
                  launchLabel(launch) + " is not generated: " + g.status().message());
  g->launch = launch.index;
  g->kernels = launch.kernels;
  return g;
}

PlanKernels generatePlanKernels(const Plan &plan, KernelTarget target) {
  PlanKernels result;
  auto launches = planLaunches(plan);
  PlanIndex index = indexPlan(plan, launches);
  for (const Launch &launch : launches) {
    if (launch.implementation != "generated")
      continue;
    auto g = generate(plan, launch, index, target);
    if (!g.isOk()) {
      result.refused.emplace_back(launch, g.status().message());
      continue;
    }
    g->launch = launch.index;
    g->kernels = launch.kernels;
    result.kernels.push_back(std::move(*g));
  }
  return result;
}

} // namespace dlc::rt::codegen
