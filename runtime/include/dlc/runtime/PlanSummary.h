//===- PlanSummary.h - what a plan computes, counted ------------*- C++ -*-===//

#ifndef DLC_RUNTIME_PLANSUMMARY_H
#define DLC_RUNTIME_PLANSUMMARY_H

#include "dlc/runtime/Plan.h"

#include <map>
#include <vector>
#include <string>

namespace dlc::rt {

struct PlanSummary {
  int64_t parameters = 0;  // trainable elements
  int64_t forwardMacs = 0; // multiply-accumulates of the forward pass
  int64_t stepMacs = 0;    // of the whole step: forward, backward, update
  /// Kernel launches per step: a fused group is one kernel.
  int64_t launches = 0;
  /// Launches by implementation: "library" (cuDNN / cuBLASLt: convolutions,
  /// GEMMs, batch norm, and fused groups holding one of them: epilogues,
  /// fused batch norm), "generated" (other fused groups, element-wise and
  /// broadcast ops, reductions), "hand-written" (pooling, softmax, norms,
  /// embeddings, losses, resizing, dropout, optimizer updates), as the CUDA
  /// backend will lower them; "collective" once gradients are all-reduced.
  std::map<std::string, int64_t> launchesByKind;
  /// Fused groups by kind ("elewise_act", ...).
  std::map<std::string, int64_t> groupsByKind;
  /// Bytes a step moves to and from memory if every kernel reads each input
  /// once and writes each output once; a group's internal values stay on
  /// chip, the values it exports count.
  int64_t memoryBytes = 0;
};

/// Multiply-accumulates of one kernel: convolutions (forward and both
/// gradients), matmuls and linears, the ops that dominate training; 0 for
/// the rest, whose cost is memory traffic.
int64_t kernelMacs(const Plan &plan, const PlanKernel &kernel);

/// The forward pass is every kernel before the first backward kernel
/// (dlc-autodiff emits the whole forward pass first, and the backward pass
/// starts with the loss's `*_backward` op).
PlanSummary summarizePlan(const Plan &plan);

/// The bytes a step moves when kernel i runs in launch launchOf[i]: each
/// launch reads its inputs once and writes the values that leave it (read
/// by another launch, or not temporaries). summarizePlan's memoryBytes is
/// this for the plan's own launches; the CUDA backend's launches, groups
/// split (LaunchPaths.h), give its figure.
int64_t launchMemoryBytes(const Plan &plan, const std::vector<int64_t> &launchOf);

} // namespace dlc::rt

#endif // DLC_RUNTIME_PLANSUMMARY_H
