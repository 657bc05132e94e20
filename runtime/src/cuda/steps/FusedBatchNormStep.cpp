//===- FusedBatchNormStep.cpp - a batch-norm group as one cuDNN call ------===//
//
// A paddle batch-norm group (bn_act, bn_add_act and their gradients), or a
// lone FP16 NHWC batch norm, on cuDNN's fused batch-norm calls
// (fusedBatchNormFor). Each forward call leaves its saved statistics and
// reserve space in a slice of the reserve region, which its gradient reads.
// A gradient whose forward did not run fused, or a group cuDNN refuses at
// run time, goes on to the next path of fallbacksOf(): a lone one to the
// plain calls, a group to the host.
//
//===----------------------------------------------------------------------===//

#include "LaunchStep.h"

#include "../../cudnn/CudnnFusedBatchNorm.h"

namespace dlc::rt::cuda {

namespace {

class FusedBatchNormStep final : public LaunchStep {
public:
  FusedBatchNormStep(const Launch &launch, const std::string &label,
                     std::unique_ptr<cudnn::FusedBatchNorm> bn)
      : LaunchStep(launch, label), bn_(std::move(bn)) {}
  DevicePath path() const override { return DevicePath::kCudnnFusedBatchNorm; }
  size_t workspaceBytes() const override { return bn_->workspaceBytes(); }
  Status enqueue(StepContext &context, cudaStream_t stream) override {
    return bn_->run(context.dnn, context.arena, context.reserve, context.workspace,
                    context.workspaceBytes, stream);
  }

private:
  std::unique_ptr<cudnn::FusedBatchNorm> bn_;
};

} // namespace

PreparedStep prepareFusedBatchNormStep(Preparation &p) {
  StepContext &context = p.context;
  const Plan &plan = context.plan();
  DLC_RETURN_IF_ERROR(context.openCudnn(p.label));
  const bool lone = p.launch.kernels.size() == 1;
  auto group = fusedBatchNormFor(plan, p.launch, p.all);
  if (!group.isOk()) {
    if (!lone)
      return group.status(); // LaunchPaths said it was one
    addReason(p.reason, "not on cuDNN's fused calls: " + group.status().message());
    return std::unique_ptr<LaunchStep>();
  }
  std::pair<int32_t, int32_t> key = std::make_pair(group->x, group->y);
  if (group->backward && !context.reserveOf.count(key)) {
    addReason(p.reason, lone ? "its forward did not run on cuDNN's fused calls, so there is "
                               "no reserve space to read"
                             : "its forward group did not run fused, so there is no reserve "
                               "space to read");
    return std::unique_ptr<LaunchStep>();
  }
  std::unique_ptr<cudnn::FusedBatchNorm> bn;
  std::string refusal;
  DLC_RETURN_IF_ERROR(cudnn::FusedBatchNorm::plan(context.dnn, plan, *group, p.label, bn, refusal));
  if (!bn) {
    addReason(p.reason,
              (lone ? "cuDNN's fused calls refuse it: " : "cuDNN refuses it: ") + refusal);
    return std::unique_ptr<LaunchStep>();
  }
  if (group->backward) {
    bn->setReserveOffset(context.reserveOf.at(key));
  } else {
    context.reserveBytes = alignUp(context.reserveBytes, kRegionAlignment);
    bn->setReserveOffset(context.reserveBytes);
    context.reserveOf[key] = context.reserveBytes;
    context.reserveBytes += bn->reserveBytes();
  }
  return std::unique_ptr<LaunchStep>(
      std::make_unique<FusedBatchNormStep>(p.launch, p.label, std::move(bn)));
}

} // namespace dlc::rt::cuda
