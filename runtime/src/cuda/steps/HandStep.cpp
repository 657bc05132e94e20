//===- HandStep.cpp - a hand-written kernel for a single op ---------------===//
//
// HandKernels.h's kernel for the launch's one plan kernel, compiled once
// per family. It takes one parameter block (DlcHandArgs) and the step
// counter; an operand table and scratch memory, where it has them, sit in
// the tables region; a kernel in phases is launched once per phase.
//
//===----------------------------------------------------------------------===//

#include "LaunchStep.h"

#include "dlc/runtime/cuda/HandKernels.h"

#include <algorithm>
#include <functional>
#include <iterator>

namespace dlc::rt::cuda {

namespace {

class HandStep final : public LaunchStep {
public:
  using LaunchStep::LaunchStep;
  DevicePath path() const override { return DevicePath::kHandWritten; }

  void bind(const StepContext &context, std::string &tables) override {
    for (int i = 0; i < HandKernelArgs::kPointers; ++i)
      handArgs.p[i] = handOffsets[i] < 0 ? nullptr : context.arena + handOffsets[i];
    if (packTable) {
      std::string table = packTable(context.arena);
      tables.replace(tableOffset, table.size(), table);
    }
  }

  Status enqueue(StepContext &context, cudaStream_t stream) override {
    const std::string &where = label();
    void *table = context.tables + tableOffset;
    // (DlcHandArgs a, const long long *step)
    if (handTableSlot >= 0)
      handArgs.p[handTableSlot] = table;
    if (handScratchSlot >= 0)
      handArgs.p[handScratchSlot] = context.tables + scratchOffset;
    std::vector<void *> args = {&handArgs,
                                readsStep ? &context.deviceDropoutCounter : &context.deviceStep};
    // Earlier phases: cudaLaunchKernel copies the parameters, so the phase
    // slot can move on between launches (a graph capture copies them too).
    for (int phase = 0; phase + 1 < handPhases; ++phase) {
      handArgs.i[HandKernel::kPhaseSlot] = phase;
      DLC_RETURN_IF_ERROR(
          cudaCheck(cudaLaunchKernel(reinterpret_cast<const void *>(kernel), grid, block,
                                     args.data(), 0, stream),
                    "cudaLaunchKernel",
                    where + ", kernel " + kernelName + " phase " + std::to_string(phase)));
    }
    handArgs.i[HandKernel::kPhaseSlot] = handPhases - 1;
    return cudaCheck(cudaLaunchKernel(reinterpret_cast<const void *>(kernel), grid, block,
                                      args.data(), 0, stream),
                     "cudaLaunchKernel", where + ", kernel " + kernelName);
  }

  std::string kernelName;
  cudaKernel_t kernel = nullptr;
  dim3 grid, block;
  bool readsStep = false; // the dropout counter, not the step
  // The kernel's one parameter block (pointers filled in).
  HandKernelArgs handArgs;
  size_t tableOffset = 0;   // its operand table in the tables region
  int handTableSlot = -1;   // p slot of its operand table (at tableOffset), or -1
  int handScratchSlot = -1; // p slot of its scratch (at scratchOffset), or -1
  int handPhases = 1;       // launches in a row, the phase in handArgs.i[kPhaseSlot]
  size_t scratchOffset = 0;
  int64_t handOffsets[HandKernelArgs::kPointers]; // p's arena offsets (-1: null)
  /// The launch's operand table for a given arena address.
  std::function<std::string(unsigned char *arena)> packTable;
};

} // namespace

PreparedStep prepareHandStep(Preparation &p) {
  StepContext &context = p.context;
  const Plan &plan = context.plan();
  auto hand = planHandKernel(plan, plan.kernels[p.launch.kernels.front()]);
  if (!hand.isOk()) {
    addReason(p.reason, "not hand-written: " + hand.status().message());
    return std::unique_ptr<LaunchStep>();
  }
  auto step = std::make_unique<HandStep>(p.launch, p.label);
  // One library per family.
  DLC_RETURN_IF_ERROR(context.loadKernel(p.compiler, "dlc_hw_" + hand->family,
                                         handKernelSource(hand->family), hand->name, p.label,
                                         step->kernel));
  step->readsStep = hand->readsDropoutCounter; // the dropout counter, not the step
  step->kernelName = hand->name;
  step->handArgs = hand->args;
  std::fill(std::begin(step->handOffsets), std::end(step->handOffsets), int64_t(-1));
  for (size_t i = 0; i < hand->buffers.size(); ++i)
    step->handOffsets[i] = hand->buffers[i] < 0 ? -1 : plan.buffers[hand->buffers[i]].offset;
  if (hand->tableSlot >= 0) {
    // The operand table joins the optimizer tables; enqueue points
    // p[tableSlot] at it once they are on the device.
    step->handTableSlot = hand->tableSlot;
    step->packTable = [table = hand->table, buffers = hand->tableBuffers,
                       plan = &plan](unsigned char *base) {
      std::vector<HandOperand> bound = table;
      for (size_t i = 0; i < bound.size(); ++i)
        bound[i].p = reinterpret_cast<void *>(reinterpret_cast<uintptr_t>(base) +
                                              uintptr_t(plan->buffers[buffers[i]].offset));
      return std::string(reinterpret_cast<const char *>(bound.data()),
                         bound.size() * sizeof(HandOperand));
    };
    step->tableOffset = p.reserveTable(hand->table.size() * sizeof(HandOperand));
  }
  step->handPhases = hand->phases;
  if (hand->scratchSlot >= 0) {
    // Zeroed with the tables, and left with a zero counter by every launch.
    step->handScratchSlot = hand->scratchSlot;
    step->scratchOffset = p.reserveTable(static_cast<size_t>(hand->scratchBytes));
  }
  int64_t cap = int64_t(context.device.multiprocessors) * kBlocksPerMultiprocessor;
  step->grid = dim3(static_cast<unsigned>(std::clamp<int64_t>(hand->blocks, 1, cap)));
  step->block = dim3(hand->blockSize);
  return std::unique_ptr<LaunchStep>(std::move(step));
}

} // namespace dlc::rt::cuda
