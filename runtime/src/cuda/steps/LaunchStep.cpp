//===- LaunchStep.cpp - the step factory and what the steps share ---------===//

#include "LaunchStep.h"

#include "../../cublas/CublasLtGemm.h"
#include "dlc/runtime/cuda/Nccl.h"

namespace dlc::rt::cuda {

PreparedStep prepareStep(DevicePath path, Preparation &p) {
  switch (path) {
  case DevicePath::kGenerated:
    return prepareGeneratedStep(p);
  case DevicePath::kCublasLt:
    return prepareGemmStep(p);
  case DevicePath::kCudnnConvolution:
    return prepareConvStep(p);
  case DevicePath::kCudnnBatchNorm:
    return prepareBatchNormStep(p);
  case DevicePath::kCudnnFusedBatchNorm:
    return prepareFusedBatchNormStep(p);
  case DevicePath::kCudnnAttention:
    return prepareCudnnAttentionStep(p);
  case DevicePath::kHandWritten:
    return prepareHandStep(p);
  case DevicePath::kCollective:
    return prepareCollectiveStep(p);
  case DevicePath::kHostFallback:
    return prepareHostFallbackStep(p);
  }
  return prepareHostFallbackStep(p);
}

std::string StepContext::arch() const {
  return "sm_" + std::to_string(device.computeMajor) + std::to_string(device.computeMinor);
}

Status StepContext::openCublasLt(const std::string &where) {
  if (!lt)
    DLC_RETURN_IF_ERROR(cublas::cublasCheck(cublasLtCreate(&lt), "cublasLtCreate", where));
  return Status::ok();
}

Status StepContext::openCudnn(const std::string &where) {
  if (!dnn) {
    DLC_RETURN_IF_ERROR(cudnn::cudnnCheck(cudnnCreate(&dnn), "cudnnCreate", where));
    DLC_RETURN_IF_ERROR(cudnn::cudnnCheck(cudnnSetStream(dnn, stream), "cudnnSetStream", where));
  }
  return Status::ok();
}

Status StepContext::loadKernel(KernelCompiler &compiler, const std::string &libraryKey,
                               const std::string &source, const std::string &entry,
                               const std::string &where, cudaKernel_t &kernel) {
  // One library per source, compiled (or found in the disk cache) once.
  auto library = libraries.find(libraryKey);
  if (library == libraries.end()) {
    auto cubin = compiler.compile(libraryKey, source, arch());
    if (!cubin.isOk())
      return Status(cubin.status().code(), where + ": " + cubin.status().message());
    cudaLibrary_t loaded = nullptr;
    DLC_RETURN_IF_ERROR(cudaCheck(
        cudaLibraryLoadData(&loaded, cubin->data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
        "cudaLibraryLoadData", where + ", " + libraryKey));
    library = libraries.emplace(libraryKey, loaded).first;
  }
  return cudaCheck(cudaLibraryGetKernel(&kernel, library->second, entry.c_str()),
                   "cudaLibraryGetKernel", where + ", kernel " + entry);
}

Status StepContext::copy(const std::vector<int32_t> &ids, bool toDevice, const std::string &why) {
  unsigned char *mirror = host->hostArena();
  for (int32_t id : ids) {
    const PlanBuffer &b = plan().buffers[id];
    unsigned char *device = arena + b.offset, *hostCopy = mirror + b.offset;
    DLC_RETURN_IF_ERROR(cudaCheck(
        cudaMemcpyAsync(toDevice ? device : hostCopy, toDevice ? hostCopy : device, b.bytes,
                        toDevice ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync", why + ", buffer '" + b.name + "'"));
  }
  // The mirror is pageable memory, rewritten by the next fallback.
  return waitFor(stream, nullptr, why);
}

Status StepContext::waitFor(cudaStream_t on, cudaEvent_t event, const std::string &why) const {
  if (!communicator)
    return event ? cudaCheck(cudaEventSynchronize(event), "cudaEventSynchronize", why)
                 : cudaCheck(cudaStreamSynchronize(on), "cudaStreamSynchronize", why);
  return communicator->wait(
      [&]() -> StatusOr<bool> {
        cudaError_t r = event ? cudaEventQuery(event) : cudaStreamQuery(on);
        if (r == cudaErrorNotReady)
          return false;
        DLC_RETURN_IF_ERROR(cudaCheck(r, event ? "cudaEventQuery" : "cudaStreamQuery", why));
        return true;
      },
      why);
}

} // namespace dlc::rt::cuda
