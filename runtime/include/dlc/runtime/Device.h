//===- Device.h - the GPUs the runtime can use ------------------*- C++ -*-===//

#ifndef DLC_RUNTIME_DEVICE_H
#define DLC_RUNTIME_DEVICE_H

#include "dlc/runtime/Status.h"

#include <cstddef>
#include <string>
#include <vector>

namespace dlc::rt {

struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;
  int computeMajor = 0;
  int computeMinor = 0;
  std::size_t totalMemoryBytes = 0;
  int multiprocessors = 0;
  /// "00000000:3B:00.0": how NVML finds the same device.
  std::string pciBusId;
};

/// True when this build contains the CUDA backend (nvcc was found).
bool cudaBackendBuilt();

/// The CUDA devices visible to this process. A build without CUDA, a machine
/// without a GPU or driver, or a driver older than the runtime gives
/// kUnavailable with the CUDA runtime's own explanation; never a crash.
StatusOr<std::vector<CudaDeviceInfo>> listCudaDevices();

/// Makes device `ordinal` the calling thread's current device
/// (cudaSetDevice): what NCCL's communicator of a rank is created on.
Status selectCudaDevice(int ordinal);

/// A device-to-device cudaMemcpyAsync of `bytes` on the first device, timed
/// with CUDA events over `iterations` copies after one untimed: the
/// achieved bandwidth in GB/s, counting the bytes read and the bytes
/// written (2 x bytes per copy), the yardstick of dlc-bandwidth.
StatusOr<double> measureDeviceCopyGBs(std::size_t bytes, int iterations);

} // namespace dlc::rt

#endif // DLC_RUNTIME_DEVICE_H
