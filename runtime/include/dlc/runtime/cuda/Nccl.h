//===- Nccl.h - NCCL all-reduces, loaded at run time ------------*- C++ -*-===//
//
// The CUDA backend's data-parallel group: one NCCL communicator per GPU,
// each averaging its rank's gradient buckets with ncclAvg on its executor's
// stream, where a CUDA graph can capture it. Ranks as threads of one
// process get theirs together from ncclCommInitAll; ranks as processes (an
// mpirun job) each get their own from ncclCommInitRank, with the unique id
// rank 0 made.
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
#include <memory>
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
  /// Enqueues, on `stream` (a cudaStream_t), each buffer's mean over the
  /// ranks (ncclAllReduce with ncclAvg), the bucket as one NCCL group.
  /// Every rank must enqueue the same buckets in the same order.
  Status allReduceMean(const std::vector<DeviceBuffer> &bucket, void *stream);
  /// An error NCCL met while running enqueued work (a peer that died), or ok.
  Status asyncError();
  /// Aborts the communicator (ncclCommAbort) so that the ranks waiting on a
  /// rank that failed return instead of hanging; it cannot be used after.
  /// Another rank's thread may call it while this rank steps.
  void abort();
  /// abort() was called: a CUDA graph holding this communicator's calls
  /// must not be replayed.
  bool aborted() const { return comm_.load() == nullptr; }

private:
  friend StatusOr<std::vector<std::unique_ptr<NcclCommunicator>>>
  createNcclGroup(const std::vector<int> &devices);
  friend StatusOr<std::unique_ptr<NcclCommunicator>>
  createNcclRank(int device, int ranks, int rank, const std::string &uniqueId);
  NcclCommunicator(void *comm, int rank, int ranks, int device)
      : comm_(comm), rank_(rank), ranks_(ranks), device_(device) {}
  std::atomic<void *> comm_;
  int rank_, ranks_, device_;
};

/// One communicator per entry of `devices` (CUDA ordinals, rank r on
/// devices[r]), created together by ncclCommInitAll. Fails with
/// kUnavailable without NCCL (or with one older than 2.10, which lacks
/// ncclAvg), and with NCCL's message otherwise (a device listed twice, one
/// that does not exist).
StatusOr<std::vector<std::unique_ptr<NcclCommunicator>>>
createNcclGroup(const std::vector<int> &devices);

/// A new ncclUniqueId's bytes (128): rank 0 of a group of processes makes
/// it and every rank passes it to createNcclRank. Needs NCCL, not a GPU.
StatusOr<std::string> ncclUniqueId();

/// This process's communicator in a group of `ranks` processes
/// (ncclCommInitRank; it returns once every rank called it). `device` must
/// be the current CUDA device.
StatusOr<std::unique_ptr<NcclCommunicator>>
createNcclRank(int device, int ranks, int rank, const std::string &uniqueId);

} // namespace dlc::rt::cuda

#endif // DLC_RUNTIME_CUDA_NCCL_H
