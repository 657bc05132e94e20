//===- Executor.h - what every backend offers a caller ---------*- C++ -*-===//
//
// The interface the CPU and CUDA executors share, so that dlc-bench drives
// (initializes, feeds, steps, times, reads back) either backend with one
// loop. Each backend's own header says how it runs a plan.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_EXECUTOR_H
#define DLC_RUNTIME_EXECUTOR_H

#include "dlc/runtime/Plan.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace dlc::rt {

class Executor {
public:
  virtual ~Executor() = default;

  /// "cpu" or "cuda".
  virtual const char *backendName() const = 0;

  /// Fills parameters, state and optimizer state from their initializers
  /// (PyTorch's formulas) with a generator seeded by `seed`, and constants
  /// from their bytes. Resets the step counter. Every backend starts from
  /// the same values for the same seed.
  virtual Status initialize(uint64_t seed) = 0;
  /// Fills inputs with N(0, 1) and labels / indices uniformly in the range
  /// their consuming kernel accepts (classes, vocabulary rows).
  virtual Status fillSyntheticBatch(uint64_t seed) = 0;

  /// Whole buffers by name; `bytes` must be the buffer's size.
  virtual Status write(const std::string &name, const void *data, size_t bytes) = 0;
  virtual Status read(const std::string &name, void *data, size_t bytes) const = 0;
  /// The buffer of that name, or null.
  virtual const PlanBuffer *buffer(const std::string &name) const = 0;
  /// The current bytes of buffer `id`.
  virtual std::string bytesOf(int32_t id) const = 0;

  /// Called after each kernel of a step, with its index; lets a caller
  /// capture values that later kernels overwrite (gradients, activations),
  /// or time the kernels. A device backend waits for the kernel to finish
  /// first. `readsBuffers`: whether the observer reads the kernel's
  /// buffers. Only then does the CPU backend compute, by itself, a value a
  /// fused launch kept in registers (an update's half gradient): a profile
  /// that only times the kernels must not time that as the launch's.
  virtual void setKernelObserver(std::function<void(size_t)> observer, bool readsBuffers) = 0;

  /// Runs one training step. A device backend may return before the device
  /// has finished it; synchronize() waits.
  virtual Status step() = 0;
  virtual Status synchronize() { return Status::ok(); }
  /// The loss the last step computed.
  virtual float loss() const = 0;
  virtual int64_t stepsRun() const = 0;
  virtual const Plan &plan() const = 0;

  /// Launches per step by the path that runs them ("generated", "cublaslt",
  /// "cudnn", "host-fallback"); empty where the backend has one path.
  virtual std::map<std::string, int64_t> launchesByPath() const { return {}; }

protected:
  /// The named buffer, if it exists and holds exactly `bytes`: what write()
  /// and read() check first.
  StatusOr<const PlanBuffer *> sizedBuffer(const std::string &name, size_t bytes) const;
};

} // namespace dlc::rt

#endif // DLC_RUNTIME_EXECUTOR_H
