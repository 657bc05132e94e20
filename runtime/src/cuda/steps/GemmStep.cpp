//===- GemmStep.cpp - a GEMM or GEMM-epilogue group through cuBLASLt ------===//
//
// matmul / linear (fp32; f16 / bf16 with fp32 accumulation), and xla's
// GEMM-epilogue groups as one call (LaunchPaths.h, gemmEpilogueFor). When
// cuBLASLt finds no algorithm for the shape the launch goes on to the next
// path of fallbacksOf(), with "cuBLASLt refuses it: ..." as its reason.
//
//===----------------------------------------------------------------------===//

#include "LaunchStep.h"

#include "../../cublas/CublasLtGemm.h"

#include <optional>

namespace dlc::rt::cuda {

namespace {

class GemmStep final : public LaunchStep {
public:
  GemmStep(const Launch &launch, const std::string &label, std::unique_ptr<cublas::Gemm> gemm)
      : LaunchStep(launch, label), gemm_(std::move(gemm)) {}
  DevicePath path() const override { return DevicePath::kCublasLt; }
  size_t workspaceBytes() const override { return gemm_->workspaceBytes(); }
  Status enqueue(StepContext &context, cudaStream_t stream) override {
    return gemm_->run(context.lt, context.arena, context.workspace, context.workspaceBytes, stream);
  }

private:
  std::unique_ptr<cublas::Gemm> gemm_;
};

} // namespace

PreparedStep prepareGemmStep(Preparation &p) {
  StepContext &context = p.context;
  const Plan &plan = context.plan();
  const Launch &launch = p.launch;
  DLC_RETURN_IF_ERROR(context.openCublasLt(p.label));
  // A GEMM-epilogue group is one call; LaunchPaths chose its epilogue.
  std::optional<GemmEpilogue> epilogue;
  if (launch.kernels.size() > 1) {
    auto chosen = gemmEpilogueFor(plan, launch);
    if (!chosen.isOk())
      return chosen.status(); // LaunchPaths said it had one
    epilogue = *chosen;
  }
  const PlanKernel &gemmKernel =
      epilogue ? plan.kernels[epilogue->gemm] : plan.kernels[launch.kernels.front()];
  std::unique_ptr<cublas::Gemm> gemm;
  std::string refusal;
  DLC_RETURN_IF_ERROR(cublas::Gemm::plan(context.lt, plan, gemmKernel, context.options.allowTf32,
                                         p.label, gemm, refusal, epilogue ? &*epilogue : nullptr));
  if (!gemm) {
    addReason(p.reason, "cuBLASLt refuses it: " + refusal);
    return std::unique_ptr<LaunchStep>();
  }
  return std::unique_ptr<LaunchStep>(std::make_unique<GemmStep>(launch, p.label, std::move(gemm)));
}

} // namespace dlc::rt::cuda
