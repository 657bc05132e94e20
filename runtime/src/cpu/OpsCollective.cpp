//===- OpsCollective.cpp - all_reduce on the CPU backend ------------------===//
//
// train.all_reduce: every operand replaced by its mean over the data-parallel
// ranks, through the executor's communicator (ranks as threads). Half
// precision operands arrive widened to float and leave rounded, as for
// every CPU kernel.
//
//===----------------------------------------------------------------------===//

#include "KernelRegistration.h"

namespace dlc::rt::cpu {

namespace {

Status allReduce(const KernelContext &c) {
  int64_t ranks = c.kernel().intAttr("ranks", 0);
  Communicator *comm = c.communicator();
  if (!comm)
    return c.error(runsAloneMessage(ranks));
  if (comm->ranks() != ranks)
    return c.error("compiled for " + std::to_string(ranks) + " ranks, run on " +
                   std::to_string(comm->ranks()));
  std::vector<const float *> in;
  std::vector<float *> out;
  std::vector<int64_t> counts;
  for (size_t i = 0; i < c.numInputs(); ++i) {
    in.push_back(c.in(i).f32());
    out.push_back(c.out(i).f32());
    counts.push_back(c.in(i).numElements());
  }
  if (Status s = comm->allReduceMean(in, out, counts); !s.isOk())
    return c.error(s.message());
  return Status::ok();
}

} // namespace

void registerCollectiveKernels(KernelRegistry &registry) {
  registry[OpId::kAllReduce] = allReduce;
}

} // namespace dlc::rt::cpu
