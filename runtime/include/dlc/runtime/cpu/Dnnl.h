//===- Dnnl.h - oneDNN kernels for the CPU backend's heavy ops --*- C++ -*-===//
//
// Convolutions, matrix products, batch norm and pooling through oneDNN, with
// the reference kernels' calling convention (cpuKernels()): a registry by
// plan op name that a fast CPU backend lays over the reference one. The
// reference stays the numerical truth; these agree with it to float
// rounding (DnnlTest.cpp), not bit for bit.
//
// Results are identical run to run for a fixed thread count and machine.
// Debian's oneDNN runs on OpenMP; the kernels give it cpuThreadCount()
// threads (DLC_CPU_THREADS, else the hardware's), which overrides
// OMP_NUM_THREADS. Another thread count, or a CPU with other vector
// instructions (oneDNN dispatches on them; DNNL_MAX_CPU_ISA caps it), may
// change the last bits.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CPU_DNNL_H
#define DLC_RUNTIME_CPU_DNNL_H

#include "dlc/runtime/cpu/CpuExecutor.h"

#include <set>
#include <string>

namespace dlc::rt::cpu {

/// Whether dlc was built with oneDNN (CMake found libdnnl).
bool dnnlAvailable();

/// "oneDNN 2.6.3, OpenMP, 2 threads, ISA avx2", or why there is none.
std::string dnnlDescription();

/// The oneDNN kernels by op; empty without oneDNN. A kernel
/// whose configuration oneDNN cannot run as the reference defines it (see
/// DnnlPool.cpp) runs the reference kernel instead.
const KernelRegistry &dnnlKernels();

/// The ops of dnnlKernels() that take bf16 operands and results as they
/// are (CpuExecutor::Options::nativeBf16Ops): the matrix products and the
/// convolutions, where the CPU has AVX512-BF16 (oneDNN's effective ISA,
/// which DNNL_MAX_CPU_ISA caps); empty elsewhere, where the executor widens
/// bf16 to float. bf16 products are summed in float, as PyTorch's CPU
/// autocast does.
const std::set<OpId> &dnnlNativeBf16Ops();

/// Calls of dnnlKernels() so far that ran the reference kernel instead.
int64_t dnnlReferenceCalls();

/// The GFLOP/s a 512^3 f32 matrix product reaches through oneDNN on
/// cpuThreadCount() threads, measured once per process (some tens of
/// milliseconds): the rate behind dlc-bench's estimate of a step's time
/// before the first step ran. 0 without oneDNN.
double dnnlGemmGflops();

/// C = alpha op(A) op(B) + beta C over row-major float matrices, op(A)
/// [m, k] and op(B) [k, n] (dnnl_sgemm's convention), on the calling
/// thread alone: kernels call it from their own parallel tasks, and one
/// thread keeps its bits independent of the thread count. False without
/// oneDNN or where oneDNN refuses the call (then C is untouched).
/// cpu::hostGemm (HostGemm.h) is the call with its fallback.
bool dnnlSgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
               const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
               int64_t ldc);

} // namespace dlc::rt::cpu

#endif // DLC_RUNTIME_CPU_DNNL_H
