//===- NoCuda.cpp - device discovery in a build without CUDA --------------===//

#include "dlc/runtime/Device.h"

namespace dlc::rt {

bool cudaBackendBuilt() { return false; }

StatusOr<std::vector<CudaDeviceInfo>> listCudaDevices() {
  return Status(StatusCode::kUnavailable,
                "no CUDA device: dlc was built without the CUDA toolkit "
                "(nvcc was not found at configure time)");
}

Status selectCudaDevice(int) { return listCudaDevices().status(); }

StatusOr<double> measureDeviceCopyGBs(std::size_t, int) { return listCudaDevices().status(); }

} // namespace dlc::rt
