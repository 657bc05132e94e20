//===- KernelPrelude.h - helpers every generated kernel starts with -*- C++ -*-===//

#ifndef DLC_RUNTIME_CUDA_KERNELPRELUDE_H
#define DLC_RUNTIME_CUDA_KERNELPRELUDE_H

namespace dlc::rt::cuda {

/// The text every generated kernel includes after its type headers: CUDA
/// under NVRTC, plain C++ elsewhere (see KernelPrelude.cpp). Expects
/// DLC_F16 / DLC_BF16 defined, and cuda_fp16.h / cuda_bf16.h included,
/// when the kernel touches half types.
const char *kernelPrelude();

} // namespace dlc::rt::cuda

#endif // DLC_RUNTIME_CUDA_KERNELPRELUDE_H
