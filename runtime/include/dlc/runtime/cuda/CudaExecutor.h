//===- CudaExecutor.h - run a plan on one CUDA GPU --------------*- C++ -*-===//
//
// The CUDA backend. create() checks for a device, allocates the plan's
// arena with one cudaMalloc, and decides once how each launch (consecutive
// kernels of one fused group, or a single kernel, as PlanSummary counts
// them) runs:
//
//   generated      KernelCodegen's kernel, compiled by NVRTC for the
//                  device's sm_XY, loaded with cudaLibraryLoadData;
//   cublaslt       matmul / linear (fp32; f16 / bf16 with fp32 accumulation);
//   cudnn          conv2d and its data and filter gradients;
//   hand-written   a single softmax, layer norm, cross-entropy, embedding,
//                  dropout, 2-d pooling or optimizer update, and their
//                  gradients: HandKernels.h's NVRTC kernels;
//   host-fallback  everything else (batch norm, resizing, fused groups
//                  holding library ops, shapes the hand-written kernels
//                  refuse): the launch's buffers are copied to the host, the
//                  CPU backend's kernels run on them, the results go back.
//                  Slow, but every plan runs and matches the CPU reference.
//
// Parameters are initialized on the host by the CPU backend's code (so both
// backends start from identical values) and copied up. fp32 GEMMs and
// convolutions do not use TF32 unless DLC_CUDA_TF32=1 is set in the
// environment when the executor is created.
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
  std::string path;   // "generated", "cublaslt", "cudnn", "hand-written" or "host-fallback"
  std::string label;  // "launch #3 (conv2d, kernel #3)"
  std::string reason; // host-fallback: why no device path took it
};

class CudaExecutor : public Executor {
public:
  /// kUnavailable without a device (listCudaDevices' status, unchanged);
  /// kResourceExhausted naming the planned peak and the free device memory
  /// when the arena does not fit; kInvalidArgument for a plan the CPU
  /// reference cannot run (the host fallback needs it); the failing call,
  /// launch and op otherwise.
  static StatusOr<std::unique_ptr<CudaExecutor>> create(Plan plan);
  ~CudaExecutor() override;

  const char *backendName() const override { return "cuda"; }
  Status initialize(uint64_t seed) override;
  Status fillSyntheticBatch(uint64_t seed) override;

  Status write(const std::string &name, const void *data, size_t bytes) override;
  Status read(const std::string &name, void *data, size_t bytes) const override;
  const PlanBuffer *buffer(const std::string &name) const override;
  std::string bytesOf(int32_t id) const override;
  void setKernelObserver(std::function<void(size_t)> observer) override;

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
  /// Milliseconds of the last step, between its CUDA events (waits for it).
  StatusOr<float> stepMs() const;
  /// "NVIDIA H100 80GB HBM3 (sm_90)".
  const std::string &deviceName() const;

private:
  struct Impl;
  explicit CudaExecutor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace dlc::rt::cuda

#endif // DLC_RUNTIME_CUDA_CUDAEXECUTOR_H
