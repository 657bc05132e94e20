//===- NcclWait.h - the host's bounded wait on NCCL work --------*- C++ -*-===//
//
// A rank must not block inside NCCL or the CUDA runtime for a peer that
// failed or vanished. Its communicator is non-blocking, and wherever the
// host waits for NCCL (a communicator being created, a stream or graph
// replay holding collectives) it polls instead: NCCL's asynchronous state
// (ncclCommGetAsyncError) beside the CUDA query, until the work is done,
// NCCL reports an error, or DLC_NCCL_TIMEOUT passes. On an error or the
// timeout the communicator is aborted, so that the rank's queued NCCL
// kernels return, and the Status names the rank and what NCCL said.
//
// The loop takes its queries as functions, so a unit test drives it without
// NCCL or a GPU. No CUDA header: the CUDA side is a query function.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CUDA_NCCLWAIT_H
#define DLC_RUNTIME_CUDA_NCCLWAIT_H

#include "dlc/runtime/Status.h"

#include <chrono>
#include <functional>
#include <string>

namespace dlc::rt::cuda {

/// nccl.h's ncclResult_t values the wait tells apart (taken from NCCL
/// 2.28's nccl.h; unchanged since ncclInProgress appeared in 2.14).
constexpr int kNcclSuccess = 0, kNcclInProgress = 7;

/// The environment variable that bounds every wait, in seconds.
inline constexpr const char *kNcclTimeoutVariable = "DLC_NCCL_TIMEOUT";
/// Its default, torch.distributed's for NCCL process groups: long enough
/// for a slow multi-node bootstrap, short enough that a hung job ends.
inline constexpr double kDefaultNcclTimeoutSeconds = 600;

/// `text` as DLC_NCCL_TIMEOUT's value: seconds, 0 for no limit, the
/// default when null or empty; kInvalidArgument naming the variable for
/// anything else (negative, not a number, trailing characters).
StatusOr<double> parseNcclTimeout(const char *text);
/// DLC_NCCL_TIMEOUT of this process, through parseNcclTimeout.
StatusOr<double> ncclTimeoutSeconds();

/// What one wait looks at; each call is one query that does not block.
struct NcclWaitQueries {
  /// NCCL's asynchronous state of the communicator (an ncclResult_t:
  /// kNcclSuccess, kNcclInProgress or an error), or the query's failure.
  std::function<StatusOr<int>()> ncclState;
  /// Whether the CUDA work finished (cudaStreamQuery, cudaEventQuery), or
  /// its error; empty where the wait is on NCCL alone (a communicator's
  /// creation, which ends when the state leaves kNcclInProgress).
  std::function<StatusOr<bool>()> cudaDone;
  /// NCCL's text for an ncclResult_t (ncclGetErrorString).
  std::function<std::string(int)> describe;
  /// Aborts the communicator, so that its queued kernels return.
  std::function<void()> abort;
};

/// How long a wait may take and how often it looks.
struct NcclWaitLimits {
  /// 0 waits without end.
  double timeoutSeconds = kDefaultNcclTimeoutSeconds;
  /// Short: the wait at the end of timed steps is inside the timed region.
  std::chrono::microseconds interval{50};
};

/// Polls until the work is done: ok. An NCCL error state, or the timeout,
/// aborts the communicator and gives "rank <rank>: ..." naming `what` (the
/// thing waited for: "step 12", "its communicator") and NCCL's text or the
/// limit; a failed query gives its Status, prefixed with the rank.
Status waitPolling(const NcclWaitQueries &queries, int rank, const std::string &what,
                   const NcclWaitLimits &limits);

} // namespace dlc::rt::cuda

#endif // DLC_RUNTIME_CUDA_NCCLWAIT_H
