//===- Collective.h - data-parallel ranks and their all-reduce --*- C++ -*-===//
//
// A plan compiled by dlc-data-parallel averages its gradients over ranks
// (train.all_reduce). Each rank runs its own executor; a Communicator is one
// rank's handle on the group. The CPU backend has two kinds of group:
//  - threads of one process (createThreadRankGroup): each rank reads every
//    rank's buffers and sums them in rank order;
//  - the processes mpirun started, one rank each (joinProcessRankGroup,
//    through MPI loaded at run time): each rank sums its slice of every
//    bucket in rank order, and the slices are gathered back.
// Both add the same numbers in the same order, so every rank of either
// group gets bit-identical means, and the two groups agree bit for bit.
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

/// How far each all_reduce may run alongside the kernels after it, as DDP
/// overlaps a bucket's all-reduce with the rest of the backward pass: for
/// kernel k an all_reduce, waitAt[k] is the first later kernel that touches
/// a byte of one of its operands (kernels.size() when none does: it must
/// finish with the step); -1 for every other kernel. Decided on the
/// arena's bytes, not buffer ids, so that it holds for any plan (a view of
/// an output, a temporary the planner put where an input was). The
/// compiler keeps an all_reduce's operands to their first reader
/// (TrainToPlan), so that the wait is that reader.
std::vector<int64_t> allReduceWaitPoints(const Plan &plan);

/// Dropout masks by rank. The mask of element i is a hash of
/// seed * kDropoutSeedMultiplier + step, then of i (cpu keepElement, the
/// CUDA prelude's dlc_keep, the hand-written dlc_hw_dropout). Rank r draws
/// the masks of seed + dropoutSeedOffset(r): rank 0 the one-rank masks, the
/// backward pass (a dropout of the same seed on the same rank) the forward
/// pass's. A kernel whose seed is fixed in its source gets the same masks
/// from the step counter plus dropoutStepOffset(r), since
/// (seed + o) * M + step == seed * M + (step + o * M) modulo 2^64.
constexpr uint64_t kDropoutSeedMultiplier = 0x9e3779b97f4a7c15ull;
inline uint64_t dropoutSeedOffset(int64_t rank) {
  return static_cast<uint64_t>(rank) * 0x9E3779B97F4A7C15ull;
}
inline uint64_t dropoutStepOffset(int64_t rank) {
  return dropoutSeedOffset(rank) * kDropoutSeedMultiplier;
}

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
  Status allReduceMean(const std::vector<const float *> &in,
                       const std::vector<float *> &out,
                       const std::vector<int64_t> &counts);
  /// all[r * bytes, (r + 1) * bytes) = rank r's `bytes` bytes at `mine`,
  /// on every rank. Every rank must call it with the same `bytes`.
  virtual Status allGather(const void *mine, size_t bytes, void *all) = 0;
  /// Marks this rank failed (with why) and wakes every rank waiting on it.
  /// A process group has no other way than to end every process of the job
  /// (MPI_Abort): it does not return.
  virtual void abort(const std::string &why) = 0;

protected:
  /// allReduceMean, once it checked that in, out and counts pair up.
  virtual Status reduceMean(const std::vector<const float *> &in,
                            const std::vector<float *> &out,
                            const std::vector<int64_t> &counts) = 0;
};

/// `ranks` communicators over threads of this process; communicator r is
/// rank r's and must be used by one thread.
std::vector<std::unique_ptr<Communicator>> createThreadRankGroup(int ranks);

/// How many processes an MPI launcher started this job with, read from its
/// environment (OMPI_COMM_WORLD_SIZE of Open MPI's mpirun, PMI_SIZE of
/// MPICH's); 1 when no launcher did. Loads nothing.
int launchedProcesses();
/// This process's rank in that job (OMPI_COMM_WORLD_RANK, PMI_RANK), 0
/// when no launcher started it. Only rank 0 of a job writes reports.
int launchedRank();

/// This process's place in the job mpirun started.
struct ProcessRankGroup {
  Communicator *communicator = nullptr; // rank() is this process's rank
  int localRank = 0, localRanks = 1;    // among the processes of this node
};

/// Joins the job's group (once per process; later calls return the same
/// group): loads libdlc_mpi.so (DLC_MPI_LIBRARY, else the lib/ beside the
/// program's bin/, else the loader's path) and initializes MPI. Fails with
/// kUnavailable saying what is missing when the plugin or MPI cannot be
/// loaded, or when MPI's world is not the launcher's (a plugin built for
/// another MPI than the one that launched the job).
StatusOr<ProcessRankGroup> joinProcessRankGroup();

/// Leaves the group if this process joined one: MPI_Finalize; after a
/// failure MPI_Abort instead, so that no other rank waits for this one (it
/// does not return). Call it once, before exiting.
void leaveProcessRankGroup(bool failed);

} // namespace dlc::rt

#endif // DLC_RUNTIME_COLLECTIVE_H
