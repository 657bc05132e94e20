//===- GeneratedStep.cpp - a generated kernel, compiled by NVRTC ----------===//
//
// KernelCodegen's kernel for the launch, compiled for the device's sm_XY
// and loaded once per source. Loop, reduction and row kernels take their
// buffers' addresses as parameters; the optimizer and cast kernels walk a
// segment table in the tables region.
//
//===----------------------------------------------------------------------===//

#include "LaunchStep.h"

#include <algorithm>
#include <functional>

namespace dlc::rt::cuda {

namespace {

class GeneratedStep final : public LaunchStep {
public:
  using LaunchStep::LaunchStep;
  DevicePath path() const override { return DevicePath::kGenerated; }

  void bind(const StepContext &context, std::string &tables) override {
    for (int64_t offset : pointerOffsets)
      pointers.push_back(context.arena + offset);
    if (packTable) {
      std::string table = packTable(context.arena);
      tables.replace(tableOffset, table.size(), table);
    }
  }

  Status enqueue(StepContext &context, cudaStream_t stream) override {
    std::vector<void *> args;
    void *table = context.tables + tableOffset;
    if (walksSegmentTable(form)) {
      // (const DlcSegment / DlcCastSegment *table, int segments, const long long *step)
      args = {&table, &segments, &context.deviceStep};
    } else {
      for (void *&pointer : pointers)
        args.push_back(&pointer);
      if (readsStep)
        args.push_back(&context.deviceDropoutCounter);
      if (hasScratch) {
        scratch = context.tables + scratchOffset;
        args.push_back(&scratch);
      }
    }
    return cudaCheck(cudaLaunchKernel(reinterpret_cast<const void *>(kernel), grid, block,
                                      args.data(), 0, stream),
                     "cudaLaunchKernel", label() + ", kernel " + kernelName);
  }

  KernelForm form = KernelForm::kLoop;
  std::string kernelName;
  cudaKernel_t kernel = nullptr;
  dim3 grid, block;
  std::vector<void *> pointers;        // loop, reduction and row kernels' parameters
  std::vector<int64_t> pointerOffsets; // their arena offsets, until bound
  bool readsStep = false;              // ... then the dropout counter
  bool hasScratch = false;             // ... then the scratch (a row kernel's column sums)
  size_t scratchOffset = 0;            // in the tables region, zeroed with it
  void *scratch = nullptr;
  size_t tableOffset = 0;              // the optimizer's table in the tables region
  int segments = 0;
  /// The launch's segment table for a given arena address.
  std::function<std::string(unsigned char *arena)> packTable;
};

} // namespace

PreparedStep prepareGeneratedStep(Preparation &p) {
  StepContext &context = p.context;
  const Plan &plan = context.plan();
  auto generated = generateKernel(plan, p.launch, p.all);
  if (!generated.isOk())
    return generated.status(); // LaunchPaths said it was generated
  const GeneratedKernel &g = *generated;
  auto step = std::make_unique<GeneratedStep>(p.launch, p.label);
  step->form = g.form;
  step->kernelName = g.name;
  DLC_RETURN_IF_ERROR(
      context.loadKernel(p.compiler, g.name, g.source, g.name, p.label, step->kernel));
  int64_t blocks = gridBlocks(g);
  int64_t cap = int64_t(context.device.multiprocessors) * kBlocksPerMultiprocessor;
  step->grid = dim3(static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, cap)));
  step->block = dim3(g.blockSize, g.blockSizeY);
  if (walksSegmentTable(g.form)) {
    step->segments = static_cast<int>(g.tableSegments());
    step->packTable = [g, plan = &plan](unsigned char *base) {
      return packSegmentTable(g, [&](int32_t id) {
        return reinterpret_cast<uint64_t>(base) + uint64_t(plan->buffers[id].offset);
      });
    };
    step->tableOffset = p.reserveTable(step->packTable(nullptr).size());
  } else {
    for (int32_t id : g.args)
      step->pointerOffsets.push_back(plan.buffers[id].offset);
    step->readsStep = g.readsStep;
    if (g.scratchBytes > 0) {
      // Zeroed with the tables; every launch leaves its counter at zero.
      step->hasScratch = true;
      step->scratchOffset = p.reserveTable(static_cast<size_t>(g.scratchBytes));
    }
  }
  return std::unique_ptr<LaunchStep>(std::move(step));
}

} // namespace dlc::rt::cuda
