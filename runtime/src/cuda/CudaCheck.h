//===- CudaCheck.h - CUDA runtime errors as Status values -------*- C++ -*-===//
//
// Every CUDA runtime call of the executor goes through cudaCheck, which
// turns a failure into a Status naming the call, what it was for (the
// launch, the kernel, the op) and the runtime's own explanation.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_SRC_CUDA_CUDACHECK_H
#define DLC_RUNTIME_SRC_CUDA_CUDACHECK_H

#include "dlc/runtime/Status.h"

#include <cuda_runtime.h>

#include <string>

namespace dlc::rt::cuda {

/// ok, or "<call>: <cudaErrorName> (<its text>) [in <where>]".
inline Status cudaCheck(cudaError_t error, const char *call, const std::string &where = "") {
  if (error == cudaSuccess)
    return Status::ok();
  // A non-sticky error stays reported by the next cudaGetLastError; clear it
  // so that it is not blamed on a later call.
  (void)cudaGetLastError();
  StatusCode code = error == cudaErrorMemoryAllocation ? StatusCode::kResourceExhausted
                                                       : StatusCode::kInternal;
  return Status(code, std::string(call) + ": " + cudaGetErrorName(error) + " (" +
                          cudaGetErrorString(error) + ")" +
                          (where.empty() ? "" : " in " + where));
}

} // namespace dlc::rt::cuda

#endif // DLC_RUNTIME_SRC_CUDA_CUDACHECK_H
