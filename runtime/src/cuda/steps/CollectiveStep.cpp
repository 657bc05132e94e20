//===- CollectiveStep.cpp - a gradient all-reduce through NCCL ------------===//
//
// train.all_reduce: its buffers' mean over the data-parallel ranks, through
// the executor's NCCL communicator (Nccl.h), on the stream it is given: the
// step's, or the all-reduce stream the executor forks it onto
// (CudaOptions::overlapAllReduce).
//
//===----------------------------------------------------------------------===//

#include "LaunchStep.h"

#include "dlc/runtime/Collective.h"
#include "dlc/runtime/cuda/Nccl.h"

namespace dlc::rt::cuda {

namespace {

class CollectiveStep final : public LaunchStep {
public:
  using LaunchStep::LaunchStep;
  DevicePath path() const override { return DevicePath::kCollective; }

  Status enqueue(StepContext &context, cudaStream_t on) override {
    const Plan &p = context.plan();
    const PlanKernel &kernel = p.kernels[launch().kernels.front()];
    NcclCommunicator *communicator = context.communicator;
    if (!communicator)
      return Status(StatusCode::kInvalidArgument, label() + ": " + runsAloneMessage(planRanks(p)));
    if (communicator->ranks() != planRanks(p))
      return Status(StatusCode::kInvalidArgument,
                    label() + ": compiled for " + std::to_string(planRanks(p)) + " ranks, run on " +
                        std::to_string(communicator->ranks()));
    if (communicator->rank() != context.options.rank)
      return Status(StatusCode::kInvalidArgument,
                    label() + ": the executor runs rank " + std::to_string(context.options.rank) +
                        " (its dropout masks) and its NCCL communicator is rank " +
                        std::to_string(communicator->rank()));
    std::vector<DeviceBuffer> bucket;
    for (size_t i = 0; i < kernel.inputs.size(); ++i) {
      const PlanBuffer &in = p.buffers[kernel.inputs[i]];
      const PlanBuffer &out = p.buffers[kernel.outputs[i]];
      bucket.push_back(
          {context.arena + in.offset, context.arena + out.offset, in.numElements(), in.dtype});
    }
    if (Status s = communicator->allReduceMean(bucket, on); !s.isOk())
      return Status(s.code(), label() + ": " + s.message());
    return Status::ok();
  }
};

} // namespace

PreparedStep prepareCollectiveStep(Preparation &p) {
  return std::unique_ptr<LaunchStep>(std::make_unique<CollectiveStep>(p.launch, p.label));
}

} // namespace dlc::rt::cuda
