//===- HostGemm.cpp - oneDNN's sgemm on one thread, or loops -------------===//

#include "dlc/runtime/cpu/HostGemm.h"

#include "dlc/runtime/cpu/Dnnl.h"

#include "HostClones.h"

#include <atomic>

namespace dlc::rt::cpu {

namespace {
std::atomic<bool> forceLoops{false};
} // namespace

ScopedLoopGemm::ScopedLoopGemm() : previous_(forceLoops.exchange(true)) {}
ScopedLoopGemm::~ScopedLoopGemm() { forceLoops = previous_; }

void hostGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
              const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
              int64_t ldc) {
  if (m <= 0 || n <= 0)
    return;
  if (!forceLoops.load(std::memory_order_relaxed) &&
      dnnlSgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))
    return;
  loopGemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

DLC_HOST_CLONES void loopGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                              float alpha, const float *a, int64_t lda, const float *b,
                              int64_t ldb, float beta, float *c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float *row = c + i * ldc;
    for (int64_t j = 0; j < n; ++j)
      row[j] = beta == 0 ? 0.0f : beta * row[j];
    if (transB) {
      // B stored [n, k]: each element of the row is a dot product.
      for (int64_t j = 0; j < n; ++j) {
        float dot = 0;
        for (int64_t p = 0; p < k; ++p)
          dot += (transA ? a[p * lda + i] : a[i * lda + p]) * b[j * ldb + p];
        row[j] += alpha * dot;
      }
    } else {
      // B stored [k, n]: the row is a sum of B's rows (contiguous, vectorized).
      for (int64_t p = 0; p < k; ++p) {
        float x = alpha * (transA ? a[p * lda + i] : a[i * lda + p]);
        if (x == 0)
          continue;
        const float *brow = b + p * ldb;
        for (int64_t j = 0; j < n; ++j)
          row[j] += x * brow[j];
      }
    }
  }
}

} // namespace dlc::rt::cpu
