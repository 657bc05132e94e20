//===- KernelPrelude.h - helpers every generated kernel starts with -*- C++ -*-===//

#ifndef DLC_RUNTIME_CODEGEN_KERNELPRELUDE_H
#define DLC_RUNTIME_CODEGEN_KERNELPRELUDE_H

namespace dlc::rt::codegen {

/// The text every generated kernel includes after its type headers: CUDA
/// under NVRTC, plain C++ elsewhere (kernels/Prelude.cuh, KernelPrelude.cpp). Expects
/// DLC_F16 / DLC_BF16 defined, and cuda_fp16.h / cuda_bf16.h included,
/// when the kernel touches half types.
const char *kernelPrelude();

/// kernels/HostParts.h: what the host target's kernels (KernelTarget::kHost) include after the
/// prelude: dlc_part_begin, which cuts a launch's items into the parts'
/// contiguous shares, and __shared__ arrays of each thread's own (parts
/// run at once on threads of the CPU).
const char *hostPartsText();

/// f16 / bf16 values as their 16 bits, converted to and from float exactly
/// as the CPU converts them (Half.h), on the device and as plain C++:
/// kernels/HalfToFloat.cuh (dlc_f16_bits_to_float, dlc_bf16_bits_to_float
/// and float bit casts) and kernels/FloatToHalf.cuh (dlc_float_to_f16_bits,
/// dlc_float_to_bf16_bits; after the first, and under NVRTC cuda_fp16.h).
/// No include guards, which would change the generated table kernels' text
/// and so their names (a hash of it); the hand-written kernels guard them.
const char *halfToFloatText();
const char *floatToHalfText();

} // namespace dlc::rt::codegen

#endif // DLC_RUNTIME_CODEGEN_KERNELPRELUDE_H
