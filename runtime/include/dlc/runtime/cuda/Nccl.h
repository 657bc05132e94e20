//===- Nccl.h - NCCL all-reduces, loaded at run time ------------*- C++ -*-===//
//
// The CUDA backend's data-parallel group: one NCCL communicator per GPU,
// each averaging its rank's gradient buckets with ncclAvg on its executor's
// stream, where a CUDA graph can capture it. Ranks as threads of one
// process get theirs together (createNcclGroup); ranks as processes (an
// mpirun job) each get their own (createNcclRank), with the unique id rank
// 0 made. From NCCL 2.14 on they are created non-blocking
// (ncclCommInitRankConfig with blocking = 0) and every host wait on NCCL
// work polls (NcclWait.h), so a rank that fails or never joins ends its
// peers' waits with an error; before 2.14, ncclCommInitAll and
// ncclCommInitRank block as they always did.
//
// NCCL is loaded with dlopen, as NVML is: DLC_NCCL_LIBRARY names the file,
// else libnccl.so.2 on the loader's path (the GPU machine keeps it in
// Python's site-packages/nvidia/nccl/lib). A build or a machine without NCCL
// still runs everything else. This file needs no CUDA header: the stream is
// a cudaStream_t passed as void *.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CUDA_NCCL_H
#define DLC_RUNTIME_CUDA_NCCL_H

#include "dlc/runtime/Plan.h"
#include "dlc/runtime/Status.h"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace dlc::rt::cuda {

/// NCCL's version code (2.28.3 is 22803), or kUnavailable saying what was
/// tried; needs no GPU.
StatusOr<int> ncclVersion();
/// "2.28.3" for 22803.
std::string ncclVersionName(int code);

/// One buffer of a bucket: `count` elements of `dtype` at device addresses.
struct DeviceBuffer {
  const void *in = nullptr;
  void *out = nullptr; // may be `in`
  int64_t count = 0;
  DType dtype = DType::kF32;
};

/// One rank's NCCL communicator.
class NcclCommunicator {
public:
  ~NcclCommunicator();
  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  int device() const { return device_; }
  /// Whether it was created non-blocking (NCCL 2.14 or later, and
  /// DLC_NCCL_BLOCKING not 1).
  bool nonBlocking() const { return nonBlocking_; }
  /// Enqueues, on `stream` (a cudaStream_t), each buffer's mean over the
  /// ranks (ncclAllReduce with ncclAvg), the bucket as one NCCL group.
  /// Every rank must enqueue the same buckets in the same order. Returns
  /// once the kernels are on the stream (a non-blocking group enqueues them
  /// from NCCL's thread: this waits, bounded, for that).
  Status allReduceMean(const std::vector<DeviceBuffer> &bucket, void *stream);
  /// An error NCCL met while running enqueued work (a peer that died), or ok.
  Status asyncError();
  /// The one place the host waits for work that holds this communicator's
  /// collectives: polls `done` (a cudaStreamQuery or cudaEventQuery: true
  /// once the work finished) beside NCCL's asynchronous state, within
  /// DLC_NCCL_TIMEOUT; `what` names the work in the error. An NCCL error
  /// or the timeout aborts the communicator; a group another rank aborted
  /// is an error too, once the work ended. `done` empty: waits for NCCL
  /// alone.
  Status wait(const std::function<StatusOr<bool>()> &done, const std::string &what);
  /// Stops the communicator so that the ranks waiting on a rank that failed
  /// return instead of hanging; it cannot be used after. Another rank's
  /// thread may call it while this rank steps. With ncclCommRevoke (NCCL
  /// 2.28.7 and later) it does not wait for the CUDA graphs that captured
  /// the communicator, and the destructor frees it; before, ncclCommAbort
  /// frees it here, waiting for those graphs.
  void abort();
  /// abort() was called: a CUDA graph holding this communicator's calls
  /// must not be replayed.
  bool aborted() const { return aborted_.load(); }

private:
  friend StatusOr<std::vector<std::unique_ptr<NcclCommunicator>>>
  createNcclGroup(const std::vector<int> &devices);
  friend StatusOr<std::unique_ptr<NcclCommunicator>>
  createNcclRank(int device, int ranks, int rank, const std::string &uniqueId);
  NcclCommunicator(void *comm, int rank, int ranks, int device, bool nonBlocking,
                   double timeoutSeconds)
      : comm_(comm), rank_(rank), ranks_(ranks), device_(device), nonBlocking_(nonBlocking),
        timeoutSeconds_(timeoutSeconds) {}
  /// ncclCommGetAsyncError's state; in progress while another thread frees
  /// the communicator, success once it is freed.
  StatusOr<int> state();
  void *const comm_;
  int rank_, ranks_, device_;
  bool nonBlocking_;
  double timeoutSeconds_;
  std::atomic<bool> aborted_{false};
  /// Held while ncclCommAbort frees comm_; freed_ once it has.
  std::mutex freeing_;
  bool freed_ = false;
};

/// One communicator per entry of `devices` (CUDA ordinals, rank r on
/// devices[r]), created together (ncclCommInitRankConfig per device in one
/// group; ncclCommInitAll before NCCL 2.14), leaving the last device
/// current. Fails with kUnavailable without NCCL (or with one older than
/// 2.10, which lacks ncclAvg), with the device or NCCL's message otherwise
/// (a device listed twice, one that does not exist), and when a
/// communicator is not ready within DLC_NCCL_TIMEOUT.
StatusOr<std::vector<std::unique_ptr<NcclCommunicator>>>
createNcclGroup(const std::vector<int> &devices);

/// A new ncclUniqueId's bytes (128): rank 0 of a group of processes makes
/// it and every rank passes it to createNcclRank. Needs NCCL, not a GPU.
StatusOr<std::string> ncclUniqueId();

/// This process's communicator in a group of `ranks` processes
/// (ncclCommInitRankConfig, non-blocking, polled until every rank joined or
/// DLC_NCCL_TIMEOUT passed; ncclCommInitRank before NCCL 2.14, which waits
/// without end). `device` must be the current CUDA device.
StatusOr<std::unique_ptr<NcclCommunicator>>
createNcclRank(int device, int ranks, int rank, const std::string &uniqueId);

} // namespace dlc::rt::cuda

#endif // DLC_RUNTIME_CUDA_NCCL_H
