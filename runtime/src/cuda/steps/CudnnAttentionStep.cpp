//===- CudnnAttentionStep.cpp - attention on cuDNN's SDPA graph -----------===//
//
// train.attention or train.attention_backward as one cuDNN SDPA graph
// (CudnnAttention.h), where sdpaShapeOf took it from the plan. A graph cuDNN
// does not support on this device goes on to the next path of
// fallbacksOf(): the flash kernels, then the host.
//
//===----------------------------------------------------------------------===//

#include "LaunchStep.h"

namespace dlc::rt::cuda {

namespace {

class CudnnAttentionStep final : public LaunchStep {
public:
  CudnnAttentionStep(const Launch &launch, const std::string &label,
                     std::unique_ptr<cudnn::Sdpa> sdpa)
      : LaunchStep(launch, label), sdpa_(std::move(sdpa)) {}
  DevicePath path() const override { return DevicePath::kCudnnAttention; }
  size_t workspaceBytes() const override { return sdpa_->workspaceBytes(); }
  Status enqueue(StepContext &context, cudaStream_t stream) override {
    return sdpa_->run(context.dnn, context.arena, context.workspace, context.workspaceBytes,
                      stream);
  }

private:
  std::unique_ptr<cudnn::Sdpa> sdpa_;
};

} // namespace

PreparedStep prepareCudnnAttentionStep(Preparation &p) {
  StepContext &context = p.context;
  const Plan &plan = context.plan();
  auto shape = sdpaShapeOf(plan, plan.kernels[p.launch.kernels.front()]);
  if (!shape.isOk())
    return shape.status(); // LaunchPaths routed it here
  DLC_RETURN_IF_ERROR(context.openCudnn(p.label));
  std::unique_ptr<cudnn::Sdpa> sdpa;
  std::string refusal;
  DLC_RETURN_IF_ERROR(
      cudnn::Sdpa::plan(context.dnn, context.sdpaGraphs, plan, *shape, p.label, sdpa, refusal));
  if (!sdpa) {
    addReason(p.reason, "cuDNN refuses it, so the flash kernels run it: " + refusal);
    return std::unique_ptr<LaunchStep>();
  }
  return std::unique_ptr<LaunchStep>(
      std::make_unique<CudnnAttentionStep>(p.launch, p.label, std::move(sdpa)));
}

} // namespace dlc::rt::cuda
