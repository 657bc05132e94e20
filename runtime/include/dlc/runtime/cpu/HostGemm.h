//===- HostGemm.h - one thread's float GEMM for the host kernels -*- C++ -*-===//
//
// The fast host kernels that tile their own work (FastAttention.cpp) call
// a GEMM from inside their parallel tasks: oneDNN's sgemm on the calling
// thread alone where dlc has oneDNN (dnnlSgemm), else plain loops. Either
// way the result depends on the shapes only, not on the thread count.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CPU_HOSTGEMM_H
#define DLC_RUNTIME_CPU_HOSTGEMM_H

#include <cstdint>

namespace dlc::rt::cpu {

/// C = alpha op(A) op(B) + beta C, row-major: op(A) is [m, k] (A stored
/// [k, m] when transA), op(B) [k, n] (B stored [n, k] when transB); lda,
/// ldb and ldc are the stored rows' strides. beta 0 ignores C's contents.
void hostGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
              const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
              int64_t ldc);

/// The loops hostGemm falls back on (a build without oneDNN), in float.
void loopGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
              const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
              int64_t ldc);

/// While alive, hostGemm takes the loops on every thread, oneDNN or not:
/// the tests check the fallback this way. Not for use while kernels run.
class ScopedLoopGemm {
public:
  ScopedLoopGemm();
  ~ScopedLoopGemm();
  ScopedLoopGemm(const ScopedLoopGemm &) = delete;
  ScopedLoopGemm &operator=(const ScopedLoopGemm &) = delete;

private:
  bool previous_;
};

} // namespace dlc::rt::cpu

#endif // DLC_RUNTIME_CPU_HOSTGEMM_H
