//===- LaunchStep.h - one launch of a step, on its device path --*- C++ -*-===//
//
// The CUDA executor runs each launch through a step of its path's type
// (LaunchPaths.h, DevicePath), one file per path under steps/:
//
//   prepare  in create(), against arena offsets: compile and load a kernel,
//            plan a library call, reserve table and scratch bytes; a library
//            that refuses the launch at run time gives no step and says why,
//            and the launch tries the next path of fallbacksOf() (LaunchPaths.h);
//   bind     once the one device allocation exists: addresses and tables;
//   enqueue  every step (or once, into the CUDA graph);
//   describe what reports print: the path's name, the label, the reason.
//
// The executor keeps what the steps share in a StepContext (the device, the
// stream, the allocation, the library handles, the host mirror); it owns
// the streams, the graph and the schedule of all-reduces.
// docs/AddingALaunchPath.md says how a path is added.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CUDA_STEPS_LAUNCHSTEP_H
#define DLC_RUNTIME_CUDA_STEPS_LAUNCHSTEP_H

#include "../../cudnn/CudnnAttention.h"
#include "../../cudnn/CudnnConv.h"
#include "../CudaCheck.h"
#include "dlc/runtime/Device.h"
#include "dlc/runtime/cpu/CpuExecutor.h"
#include "dlc/runtime/cuda/CudaExecutor.h"
#include "dlc/runtime/cuda/KernelCompiler.h"
#include "dlc/runtime/cuda/LaunchPaths.h"

#include <cublasLt.h>
#include <cudnn.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace dlc::rt::cuda {

/// The optimizer and operand tables' alignment in their device allocation
/// (DlcSegment and DlcHandOperand hold 8-byte pointers; 16 keeps every
/// table on a vector boundary).
constexpr size_t kTableAlignment = 16;
/// Regions of the one device allocation start on this boundary.
constexpr size_t kRegionAlignment = 256;

inline size_t alignUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

/// Adds `why` to the reasons a launch is not on a faster path.
inline void addReason(std::string &reason, const std::string &why) {
  reason += (reason.empty() ? "" : "; ") + why;
}

class NcclCommunicator;

/// What the executor's steps share: the device, the stream, the one device
/// allocation (the arena at its start, then the workspace, the cuDNN reserve
/// space, the tables and the step counter), the library handles and the
/// host mirror. The executor owns it and its resources.
struct StepContext {
  CudaDeviceInfo device;
  CudaOptions options;
  /// The host mirror: the CPU backend over a host copy of the arena. Its
  /// plan is the plan.
  std::unique_ptr<cpu::CpuExecutor> host;
  cudaStream_t stream = nullptr;
  unsigned char *arena = nullptr;
  void *workspace = nullptr;
  size_t workspaceBytes = 0;
  unsigned char *tables = nullptr;
  /// cuDNN's fused batch norm: what each forward group leaves for its
  /// gradient (CudnnFusedBatchNorm.h), one slice per forward group, found
  /// by the group's (input, relu output) buffers.
  unsigned char *reserve = nullptr;
  size_t reserveBytes = 0;
  std::map<std::pair<int32_t, int32_t>, size_t> reserveOf;
  /// The step counter the kernels read (CudaExecutor.h), and beside it the
  /// dropout counter: the step plus this rank's dropoutStepOffset, which
  /// dropout kernels read instead, so that each rank draws the CPU
  /// backend's masks for its rank.
  long long *deviceStep = nullptr, *deviceDropoutCounter = nullptr;
  int64_t stepCounter = 0;
  cublasLtHandle_t lt = nullptr;
  cudnnHandle_t dnn = nullptr;
  /// cuDNN's SDPA graphs, one per attention shape (CudnnAttention.h).
  cudnn::SdpaCache sdpaGraphs;
  std::map<std::string, cudaLibrary_t> libraries;
  /// This rank's NCCL communicator; null on one GPU.
  NcclCommunicator *communicator = nullptr;

  const Plan &plan() const { return host->plan(); }
  /// "sm_90": what kernels are compiled for.
  std::string arch() const;
  /// The library handles, created on first use (`where` names the launch).
  Status openCublasLt(const std::string &where);
  Status openCudnn(const std::string &where);
  /// `entry` of the source compiled for this device (once per key).
  Status loadKernel(KernelCompiler &compiler, const std::string &libraryKey,
                    const std::string &source, const std::string &entry, const std::string &where,
                    cudaKernel_t &kernel);
  /// The host's wait for the device: for `event`, or for all of `on` when
  /// `event` is null. With a communicator it polls beside NCCL's state
  /// (NcclCommunicator::wait), so that a peer that failed or hangs ends it
  /// with an error instead of blocking forever; without one it blocks.
  Status waitFor(cudaStream_t on, cudaEvent_t event, const std::string &why) const;
  /// Copies buffers between the device arena and the host mirror, and waits.
  Status copy(const std::vector<int32_t> &ids, bool toDevice, const std::string &why);
  Status upload(const std::vector<int32_t> &ids, const std::string &why) {
    return copy(ids, /*toDevice=*/true, why);
  }
  Status download(const std::vector<int32_t> &ids, const std::string &why) {
    return copy(ids, /*toDevice=*/false, why);
  }
};

/// One launch as the step runs it.
class LaunchStep {
public:
  LaunchStep(const Launch &launch, const std::string &label) : launch_(launch), label_(label) {}
  virtual ~LaunchStep() = default;

  virtual DevicePath path() const = 0;
  /// The library workspace it needs; the executor sizes one for all.
  virtual size_t workspaceBytes() const { return 0; }
  /// Points the launch at the allocation (context.arena, context.tables
  /// exist now) and writes its table, if it has one, into `tables`: the
  /// host image of the tables region.
  virtual void bind(const StepContext &context, std::string &tables) {}
  /// Enqueues the launch on `stream`: the context's stream, or an
  /// all-reduce's own (CudaOptions::overlapAllReduce; only a collective
  /// step is given another).
  virtual Status enqueue(StepContext &context, cudaStream_t stream) = 0;
  /// What reports print of it.
  LaunchPath describe() const { return {devicePathName(path()), label_, reason_}; }

  const Launch &launch() const { return launch_; }
  /// "launch #3 (conv2d, kernel #3)".
  const std::string &label() const { return label_; }
  void setReason(const std::string &reason) { reason_ = reason; }

private:
  Launch launch_;
  std::string label_;
  std::string reason_; // why it is not on a faster path
};

/// What preparing a step is given.
struct Preparation {
  StepContext &context;
  const Launch &launch;
  const std::string &label;
  /// Every device launch (fusedBatchNormFor and the generator read them).
  const std::vector<Launch> &all;
  KernelCompiler &compiler;
  cudnn::AlgorithmCache &algorithms;
  /// Bytes of the tables region reserved so far; a step's table or
  /// scratch goes at its end (reserveTable).
  size_t &tableBytes;
  /// Why the launch is not on a faster path; a step that refuses it adds
  /// why.
  std::string &reason;
  /// Reserves `bytes` of the tables region; returns the offset.
  size_t reserveTable(size_t bytes) {
    tableBytes = alignUp(tableBytes, kTableAlignment);
    size_t offset = tableBytes;
    tableBytes += bytes;
    return offset;
  }
};

/// A prepared step, or null when the path's library refuses the launch
/// (the refusal added to Preparation::reason); an error status when a call
/// fails.
using PreparedStep = StatusOr<std::unique_ptr<LaunchStep>>;

/// One function per path, each in its step's file.
PreparedStep prepareGeneratedStep(Preparation &p);
PreparedStep prepareGemmStep(Preparation &p);
PreparedStep prepareConvStep(Preparation &p);
PreparedStep prepareBatchNormStep(Preparation &p);
PreparedStep prepareFusedBatchNormStep(Preparation &p);
PreparedStep prepareCudnnAttentionStep(Preparation &p);
PreparedStep prepareHandStep(Preparation &p);
PreparedStep prepareCollectiveStep(Preparation &p);
PreparedStep prepareHostFallbackStep(Preparation &p);

/// The factory: the step of `path` for p.launch.
PreparedStep prepareStep(DevicePath path, Preparation &p);

} // namespace dlc::rt::cuda

#endif // DLC_RUNTIME_CUDA_STEPS_LAUNCHSTEP_H
