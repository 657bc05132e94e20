//===- Device.cu - CUDA device discovery ----------------------------------===//

#include "dlc/runtime/Device.h"

#include "CudaCheck.h"

#include <cstdio>
#include <cuda_runtime.h>

namespace dlc::rt {

bool cudaBackendBuilt() { return true; }

Status selectCudaDevice(int ordinal) {
  if (cudaError_t error = cudaSetDevice(ordinal); error != cudaSuccess)
    return Status(StatusCode::kUnavailable, "cudaSetDevice(" + std::to_string(ordinal) +
                                                "): " + cudaGetErrorString(error));
  return Status::ok();
}

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

namespace {
Status check(cudaError_t error, const char *call) {
  return cuda::cudaCheck(error, call, "the device-to-device copy");
}
} // namespace

StatusOr<double> measureDeviceCopyGBs(std::size_t bytes, int iterations) {
  auto devices = listCudaDevices();
  if (!devices.isOk())
    return devices.status();
  void *from = nullptr, *to = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  cudaStream_t stream = nullptr;
  auto measure = [&]() -> StatusOr<double> {
    DLC_RETURN_IF_ERROR(check(cudaSetDevice(devices->front().ordinal), "cudaSetDevice"));
    DLC_RETURN_IF_ERROR(check(cudaStreamCreate(&stream), "cudaStreamCreate"));
    DLC_RETURN_IF_ERROR(check(cudaMalloc(&from, bytes), "cudaMalloc"));
    DLC_RETURN_IF_ERROR(check(cudaMalloc(&to, bytes), "cudaMalloc"));
    DLC_RETURN_IF_ERROR(check(cudaMemsetAsync(from, 1, bytes, stream), "cudaMemsetAsync"));
    DLC_RETURN_IF_ERROR(check(cudaEventCreate(&start), "cudaEventCreate"));
    DLC_RETURN_IF_ERROR(check(cudaEventCreate(&stop), "cudaEventCreate"));
    DLC_RETURN_IF_ERROR(check(
        cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync"));
    DLC_RETURN_IF_ERROR(check(cudaEventRecord(start, stream), "cudaEventRecord"));
    for (int i = 0; i < iterations; ++i)
      DLC_RETURN_IF_ERROR(check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream),
                                "cudaMemcpyAsync"));
    DLC_RETURN_IF_ERROR(check(cudaEventRecord(stop, stream), "cudaEventRecord"));
    DLC_RETURN_IF_ERROR(check(cudaEventSynchronize(stop), "cudaEventSynchronize"));
    float ms = 0;
    DLC_RETURN_IF_ERROR(check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime"));
    return 2.0 * double(bytes) * iterations / (ms * 1e-3) / 1e9;
  };
  StatusOr<double> result = measure();
  if (start)
    (void)cudaEventDestroy(start);
  if (stop)
    (void)cudaEventDestroy(stop);
  (void)cudaFree(from);
  (void)cudaFree(to);
  if (stream)
    (void)cudaStreamDestroy(stream);
  return result;
}

} // namespace dlc::rt
