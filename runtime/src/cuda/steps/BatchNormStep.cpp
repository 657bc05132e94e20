//===- BatchNormStep.cpp - a batch norm on cuDNN's plain calls ------------===//
//
// A training-mode batch_norm or batch_norm_backward that cuDNN's fused
// calls do not take (fp32, NCHW), or a lone one they refused at run time.
// When cuDNN refuses it the launch goes on to the next path of
// fallbacksOf(), with "cuDNN refuses it: ..." as its reason.
//
//===----------------------------------------------------------------------===//

#include "LaunchStep.h"

#include "../../cudnn/CudnnBatchNorm.h"

namespace dlc::rt::cuda {

namespace {

class BatchNormStep final : public LaunchStep {
public:
  BatchNormStep(const Launch &launch, const std::string &label,
                std::unique_ptr<cudnn::BatchNorm> bn)
      : LaunchStep(launch, label), bn_(std::move(bn)) {}
  DevicePath path() const override { return DevicePath::kCudnnBatchNorm; }
  Status enqueue(StepContext &context, cudaStream_t stream) override {
    return bn_->run(context.dnn, context.arena, stream);
  }

private:
  std::unique_ptr<cudnn::BatchNorm> bn_;
};

} // namespace

PreparedStep prepareBatchNormStep(Preparation &p) {
  StepContext &context = p.context;
  const Plan &plan = context.plan();
  DLC_RETURN_IF_ERROR(context.openCudnn(p.label));
  const PlanKernel &kernel = plan.kernels[p.launch.kernels.front()];
  std::unique_ptr<cudnn::BatchNorm> bn;
  std::string refusal;
  DLC_RETURN_IF_ERROR(cudnn::BatchNorm::plan(plan, kernel, p.label, bn, refusal));
  if (!bn) {
    addReason(p.reason, "cuDNN refuses it: " + refusal);
    return std::unique_ptr<LaunchStep>();
  }
  return std::unique_ptr<LaunchStep>(
      std::make_unique<BatchNormStep>(p.launch, p.label, std::move(bn)));
}

} // namespace dlc::rt::cuda
