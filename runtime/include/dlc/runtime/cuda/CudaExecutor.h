//===- CudaExecutor.h - run a plan on one CUDA GPU --------------*- C++ -*-===//
//
// The CUDA backend. create() checks for a device, allocates the plan's
// arena with one cudaMalloc, and prepares every launch on the path
// LaunchPaths.h routes it to (decided from the plan alone, so dlc-kernels
// --paths prints the same routing without a GPU):
//
//   generated      KernelCodegen's kernel, compiled by NVRTC for the
//                  device's sm_XY, loaded with cudaLibraryLoadData;
//   cublaslt       matmul / linear (fp32; f16 / bf16 with fp32 accumulation),
//                  and xla's GEMM-epilogue groups as one call;
//   cudnn          conv2d and its data and filter gradients, training-mode
//                  batch norm and its gradient;
//   nccl           train.all_reduce, through the executor's NCCL
//                  communicator (Nccl.h; data-parallel plans only);
//   hand-written   single ops with a HandKernels.h NVRTC kernel (softmax,
//                  layer and batch norm, cross-entropy, embedding, dropout,
//                  pooling, resizing, optimizer updates, loss scaling);
//   host-fallback  everything else: the launch's buffers are copied to the
//                  host, the CPU backend's kernels run on them, the results
//                  go back. Slow, but every plan runs and matches the CPU.
//
// Fused groups no single device kernel computes are split by LaunchPaths
// into their kernels. Parameters are initialized on the host by the CPU
// backend's code (so both backends start from identical values) and copied
// up.
//
// The step counter (AdamW's bias correction, dropout's seed) lives on the
// device: kernels read it through a pointer and a one-thread kernel advances
// it at the end of each step, so the whole step can be captured once as a
// CUDA graph and replayed (CudaOptions::cudaGraph); the first step runs
// launch by launch as the warm-up capture needs, the second is captured
// and every later one replays the graph. A step with host
// fallbacks, a kernel observer or per-launch profiling runs launch by
// launch instead, and cudaGraphNote() says why.
//
// Links the CUDA runtime, cuBLASLt, cuDNN and NVRTC, never the driver
// library: without a GPU create() returns listCudaDevices()' kUnavailable.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CUDA_CUDAEXECUTOR_H
#define DLC_RUNTIME_CUDA_CUDAEXECUTOR_H

#include "dlc/runtime/Executor.h"

#include <memory>
#include <string>
#include <vector>

namespace dlc::rt::cuda {

/// How one launch runs, and why it is not on a faster path.
struct LaunchPath {
  std::string path;   // "generated", "cublaslt", "cudnn", "hand-written", "nccl" or "host-fallback"
  std::string label;  // "launch #3 (conv2d, kernel #3)"
  std::string reason; // host-fallback: why no device path took it
};

/// How the step runs; the defaults are what dlc-bench times.
struct CudaOptions {
  /// Capture the step as a CUDA graph once and replay it (--no-cuda-graph
  /// to compare against launching kernel by kernel).
  bool cudaGraph = true;
  /// fp32 GEMMs and convolutions on TF32 tensor cores (--tf32); off, fp32
  /// is fp32.
  bool allowTf32 = false;
  /// Wait after every launch, so a device fault names its launch
  /// (DLC_CUDA_SYNC=1 sets it too). Implies no graph.
  bool syncEachLaunch = false;
  /// The CUDA ordinal of the GPU to run on (a data-parallel rank's).
  int device = 0;
  /// The data-parallel rank this executor runs: its dropout masks are the
  /// CPU backend's for that rank (Collective.h), and its NCCL communicator
  /// must be that rank's.
  int rank = 0;
  /// Run each all_reduce on a second stream, alongside the launches after
  /// it until the first that touches its operands (allReduceWaitPoints),
  /// as DDP overlaps a bucket with the rest of the backward pass. Off
  /// (--no-overlap), each runs in its place on the step's stream. Per-launch
  /// profiling and synchronization run in place too.
  bool overlapAllReduce = true;
};

class NcclCommunicator;

class CudaExecutor : public Executor {
public:
  /// kUnavailable without a device (listCudaDevices' status, unchanged);
  /// kResourceExhausted naming the planned peak and the free device memory
  /// when the arena does not fit; kInvalidArgument for a plan the CPU
  /// reference cannot run (the host fallback needs it); the failing call,
  /// launch and op otherwise.
  static StatusOr<std::unique_ptr<CudaExecutor>> create(Plan plan, CudaOptions options = {});
  ~CudaExecutor() override;

  const char *backendName() const override { return "cuda"; }
  Status initialize(uint64_t seed) override;
  Status fillSyntheticBatch(uint64_t seed) override;

  Status write(const std::string &name, const void *data, size_t bytes) override;
  Status read(const std::string &name, void *data, size_t bytes) const override;
  const PlanBuffer *buffer(const std::string &name) const override;
  std::string bytesOf(int32_t id) const override;
  void setKernelObserver(std::function<void(size_t)> observer, bool readsBuffers) override;

  /// Enqueues one step between two CUDA events; returns once every launch
  /// is enqueued (host-fallback launches wait for the device first).
  Status step() override;
  Status synchronize() override;
  float loss() const override;
  int64_t stepsRun() const override;
  const Plan &plan() const override;

  std::map<std::string, int64_t> launchesByPath() const override;
  /// Every launch in plan order with its path.
  const std::vector<LaunchPath> &launchPaths() const;
  /// Launches whose routed library refused them when the executor was
  /// created (a shape with no algorithm, a graph cuDNN does not support),
  /// each as "<label> on <path that took it>: <why>"; dlc-bench and
  /// dlc-run print how many and the first.
  const std::vector<std::string> &refusedAtRunTime() const;
  /// Milliseconds of the last step, between its CUDA events (waits for it).
  StatusOr<float> stepMs() const;
  /// "NVIDIA H100 80GB HBM3 (sm_90)".
  const std::string &deviceName() const;
  const CudaOptions &options() const;
  /// The device's PCI bus id, for NVML ("00000000:3B:00.0").
  const std::string &pciBusId() const;

  /// Makes this executor rank `communicator->rank()` of a data-parallel
  /// group: its all_reduce launches average with the other ranks' through
  /// NCCL, on this executor's stream (inside its CUDA graph too). A plan
  /// compiled for N ranks cannot step without a group of N.
  void setCommunicator(NcclCommunicator *communicator);
  /// Makes this executor's GPU the calling thread's current device: a
  /// thread that drives an executor on another GPU than device 0 calls it
  /// first.
  Status makeCurrent() const;

  /// Whether the last step replayed a CUDA graph; if not, cudaGraphNote()
  /// says why ("disabled", "42 launches fall back to the host", a capture
  /// error).
  bool replaysCudaGraph() const;
  const std::string &cudaGraphNote() const;

  /// Per-launch profiling: while on, each launch sits between two CUDA
  /// events (no graph) and its milliseconds add up per launch.
  void setProfiling(bool on);
  /// Milliseconds per profiled step of each launch (launchPaths() order),
  /// and the steps profiled; waits for the device.
  StatusOr<std::vector<double>> launchMsPerStep() const;
  int64_t profiledSteps() const;

private:
  struct Impl;
  explicit CudaExecutor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace dlc::rt::cuda

#endif // DLC_RUNTIME_CUDA_CUDAEXECUTOR_H
