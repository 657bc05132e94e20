//===- Nvml.h - GPU utilization and memory through NVML ---------*- C++ -*-===//
//
// NVML is loaded at run time (dlopen of libnvidia-ml.so.1, which comes with
// the driver, not the toolkit), so nothing links against it and a machine
// without a driver runs everything else. A monitor samples one device on a
// thread while the timed steps run and reports the mean GPU and memory
// utilization and the most device memory in use.
//
// $DLC_NVML_LIBRARY names another library to load (tests use a fake one).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_NVML_H
#define DLC_RUNTIME_NVML_H

#include "dlc/runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>

namespace dlc::rt {

struct GpuUsage {
  int samples = 0;
  double gpuUtilizationPercent = 0;    // mean over the samples
  double memoryUtilizationPercent = 0; // mean over the samples
  int64_t memoryUsedBytes = 0;         // the most seen
  int64_t memoryTotalBytes = 0;
};

class NvmlMonitor {
public:
  /// NVML for the device at `pciBusId` ("00000000:3B:00.0"); kUnavailable
  /// naming what is missing (the library, nvmlInit's error, the device).
  static StatusOr<std::unique_ptr<NvmlMonitor>> open(const std::string &pciBusId);
  ~NvmlMonitor();

  /// Samples every `periodMs` on a thread until stop().
  void start(int periodMs = 20);
  /// Ends the sampling (one last sample is always taken) and returns it.
  GpuUsage stop();
  /// One sample now, without a thread.
  StatusOr<GpuUsage> sample();

private:
  struct Impl;
  explicit NvmlMonitor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace dlc::rt

#endif // DLC_RUNTIME_NVML_H
