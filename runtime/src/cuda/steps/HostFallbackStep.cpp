//===- HostFallbackStep.cpp - the CPU backend on a host mirror ------------===//
//
// The launch's buffers are copied down (inputs and outputs, so that bytes
// a kernel leaves alone keep their device values), the CPU backend's
// kernels run on the host mirror, and the outputs go back up. Slow, but
// every launch runs and matches the CPU; a step with one runs launch by
// launch, never as a CUDA graph.
//
//===----------------------------------------------------------------------===//

#include "LaunchStep.h"

#include <algorithm>

namespace dlc::rt::cuda {

namespace {

class HostFallbackStep final : public LaunchStep {
public:
  using LaunchStep::LaunchStep;
  DevicePath path() const override { return DevicePath::kHostFallback; }

  Status enqueue(StepContext &context, cudaStream_t) override {
    const std::string &where = label() + " on the host";
    DLC_RETURN_IF_ERROR(context.download(hostReads, where));
    for (size_t k : launch().kernels)
      if (Status s = context.host->runKernel(k, context.stepCounter); !s.isOk())
        return Status(s.code(), label() + " (host fallback): " + s.message());
    return context.upload(hostWrites, where);
  }

  std::vector<int32_t> hostReads, hostWrites;
};

} // namespace

PreparedStep prepareHostFallbackStep(Preparation &p) {
  const Plan &plan = p.context.plan();
  auto step = std::make_unique<HostFallbackStep>(p.launch, p.label);
  for (size_t k : p.launch.kernels)
    for (const std::vector<int32_t> *ids : {&plan.kernels[k].inputs, &plan.kernels[k].outputs})
      for (int32_t id : *ids) {
        if (std::find(step->hostReads.begin(), step->hostReads.end(), id) == step->hostReads.end())
          step->hostReads.push_back(id);
        if (ids == &plan.kernels[k].outputs &&
            std::find(step->hostWrites.begin(), step->hostWrites.end(), id) ==
                step->hostWrites.end())
          step->hostWrites.push_back(id);
      }
  return std::unique_ptr<LaunchStep>(std::move(step));
}

} // namespace dlc::rt::cuda
