//===- Collective.h - data-parallel ranks and their all-reduce --*- C++ -*-===//
//
// A plan compiled by dlc-data-parallel averages its gradients over ranks
// (train.all_reduce). Each rank runs its own executor; a Communicator is one
// rank's handle on the group. The CPU backend's group is threads of one
// process (ThreadRankGroup): each rank reads every rank's buffers and sums
// them in rank order, so every rank gets bit-identical means.
//
// A rank that fails aborts the group: the others, waiting in a collective or
// arriving at one later, return an error that names it instead of hanging.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_COLLECTIVE_H
#define DLC_RUNTIME_COLLECTIVE_H

#include "dlc/runtime/Plan.h"
#include "dlc/runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dlc::rt {

/// The data-parallel ranks a plan was compiled for: the `ranks` of its
/// all_reduce kernels, 1 without any.
int64_t planRanks(const Plan &plan);

/// What an executor without its group says when it meets an all_reduce of
/// a plan compiled for `ranks` ranks (both backends).
std::string runsAloneMessage(int64_t ranks);

/// One rank's view of its group.
class Communicator {
public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  /// out[i][e] = the mean over the ranks of their in[i][e], for float32
  /// host buffers of counts[i] elements. Every rank must call it with the
  /// same counts; `out` may alias `in`.
  virtual Status allReduceMean(const std::vector<const float *> &in,
                               const std::vector<float *> &out,
                               const std::vector<int64_t> &counts) = 0;
  /// Marks this rank failed (with why) and wakes every rank waiting on it.
  virtual void abort(const std::string &why) = 0;
};

/// `ranks` communicators over threads of this process; communicator r is
/// rank r's and must be used by one thread.
std::vector<std::unique_ptr<Communicator>> createThreadRankGroup(int ranks);

} // namespace dlc::rt

#endif // DLC_RUNTIME_COLLECTIVE_H
