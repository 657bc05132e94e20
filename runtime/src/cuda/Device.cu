//===- Device.cu - CUDA device discovery ----------------------------------===//

#include "dlc/runtime/Device.h"

#include <cstdio>
#include <cuda_runtime.h>

namespace dlc::rt {

bool cudaBackendBuilt() { return true; }

StatusOr<std::vector<CudaDeviceInfo>> listCudaDevices() {
  // cudaGetDeviceCount leaves its argument untouched when it fails (no
  // driver, no device), so it must start at zero.
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count == 0)
    return Status(StatusCode::kUnavailable,
                  std::string("no CUDA device (cudaGetDeviceCount: ") +
                      (error == cudaSuccess ? "0 devices"
                                            : cudaGetErrorString(error)) +
                      ")");
  std::vector<CudaDeviceInfo> devices;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    error = cudaGetDeviceProperties(&prop, i);
    if (error != cudaSuccess)
      return Status(StatusCode::kInternal,
                    "cudaGetDeviceProperties(" + std::to_string(i) +
                        "): " + cudaGetErrorString(error));
    CudaDeviceInfo info;
    info.ordinal = i;
    info.name = prop.name;
    info.computeMajor = prop.major;
    info.computeMinor = prop.minor;
    info.totalMemoryBytes = prop.totalGlobalMem;
    info.multiprocessors = prop.multiProcessorCount;
    char bus[32];
    std::snprintf(bus, sizeof(bus), "%08X:%02X:%02X.0", prop.pciDomainID, prop.pciBusID,
                  prop.pciDeviceID);
    info.pciBusId = bus;
    devices.push_back(std::move(info));
  }
  return devices;
}

} // namespace dlc::rt
