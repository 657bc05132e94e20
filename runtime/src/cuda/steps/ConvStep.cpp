//===- ConvStep.cpp - a 2-d convolution or its gradient through cuDNN -----===//
//
// conv2d, conv2d_backward_data and conv2d_backward_filter, with the
// algorithm cuDNN finds fastest within the workspace limit (one search per
// distinct problem: cudnn::AlgorithmCache). When cuDNN takes no algorithm
// for the shape the launch goes on to the next path of fallbacksOf(), with
// "cuDNN refuses it: ..." as its reason.
//
//===----------------------------------------------------------------------===//

#include "LaunchStep.h"

namespace dlc::rt::cuda {

namespace {

class ConvStep final : public LaunchStep {
public:
  ConvStep(const Launch &launch, const std::string &label, std::unique_ptr<cudnn::Conv> conv)
      : LaunchStep(launch, label), conv_(std::move(conv)) {}
  DevicePath path() const override { return DevicePath::kCudnnConvolution; }
  size_t workspaceBytes() const override { return conv_->workspaceBytes(); }
  /// On the cuDNN handle's stream, the context's.
  Status enqueue(StepContext &context, cudaStream_t) override {
    return conv_->run(context.dnn, context.arena, context.workspace, context.workspaceBytes);
  }

private:
  std::unique_ptr<cudnn::Conv> conv_;
};

} // namespace

PreparedStep prepareConvStep(Preparation &p) {
  StepContext &context = p.context;
  const Plan &plan = context.plan();
  DLC_RETURN_IF_ERROR(context.openCudnn(p.label));
  const PlanKernel &kernel = plan.kernels[p.launch.kernels.front()];
  std::unique_ptr<cudnn::Conv> conv;
  std::string refusal;
  DLC_RETURN_IF_ERROR(cudnn::Conv::plan(context.dnn, plan, kernel, context.options.allowTf32,
                                        p.label, p.algorithms, conv, refusal));
  if (!conv) {
    addReason(p.reason, "cuDNN refuses it: " + refusal);
    return std::unique_ptr<LaunchStep>();
  }
  return std::unique_ptr<LaunchStep>(
      std::make_unique<ConvStep>(p.launch, p.label, std::move(conv)));
}

} // namespace dlc::rt::cuda
