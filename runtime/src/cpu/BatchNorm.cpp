//===- BatchNorm.cpp - training-mode batch normalization kernels ----------===//
//
// Statistics are per channel over the batch and spatial positions. One
// parallel task per channel owns that channel's statistics and every output
// element of it, so the sums run in a fixed order.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/cpu/Spatial.h"

#include "dlc/runtime/Parallel.h"

#include <cmath>

namespace dlc::rt::cpu {

template <typename T>
void batchNormTrainForward(const BatchNormParams &p, const T *x, const T *scale,
                           const T *bias, T *y, T *savedMean, T *savedInvstd,
                           T *runningMean, T *runningVar) {
  const int64_t count = p.n * p.spatial;
  parallelFor(0, p.c, [&](int64_t c) {
    // Two passes (mean, then centred squares) rather than E[x^2] - E[x]^2,
    // which cancels catastrophically when the mean dominates the spread.
    double sum = 0;
    for (int64_t n = 0; n < p.n; ++n) {
      const T *plane = x + (n * p.c + c) * p.spatial;
      for (int64_t i = 0; i < p.spatial; ++i)
        sum += plane[i];
    }
    double mean = sum / count, sq = 0;
    for (int64_t n = 0; n < p.n; ++n) {
      const T *plane = x + (n * p.c + c) * p.spatial;
      for (int64_t i = 0; i < p.spatial; ++i) {
        double d = plane[i] - mean;
        sq += d * d;
      }
    }
    double var = sq / count, invstd = 1.0 / std::sqrt(var + p.eps);
    double a = invstd * scale[c], b = bias[c];
    for (int64_t n = 0; n < p.n; ++n) {
      const T *in = x + (n * p.c + c) * p.spatial;
      T *out = y + (n * p.c + c) * p.spatial;
      for (int64_t i = 0; i < p.spatial; ++i)
        out[i] = static_cast<T>((in[i] - mean) * a + b);
    }
    savedMean[c] = static_cast<T>(mean);
    savedInvstd[c] = static_cast<T>(invstd);
    // The running variance uses the unbiased estimator (PyTorch's choice);
    // a single-element batch has none, and PyTorch then stores inf/nan too.
    double unbiased = count > 1 ? sq / (count - 1) : NAN;
    if (runningMean)
      runningMean[c] =
          static_cast<T>((1 - p.momentum) * runningMean[c] + p.momentum * mean);
    if (runningVar)
      runningVar[c] = static_cast<T>((1 - p.momentum) * runningVar[c] +
                                     p.momentum * unbiased);
  });
}

template <typename T>
void batchNormTrainBackward(const BatchNormParams &p, const T *dy, const T *x,
                            const T *scale, const T *savedMean,
                            const T *savedInvstd, T *dx, T *dscale, T *dbias) {
  const int64_t count = p.n * p.spatial;
  parallelFor(0, p.c, [&](int64_t c) {
    double mean = savedMean[c], invstd = savedInvstd[c];
    // dbias = sum(dy); dscale = sum(dy * xhat).
    double sumDy = 0, sumDyXhat = 0;
    for (int64_t n = 0; n < p.n; ++n) {
      const T *g = dy + (n * p.c + c) * p.spatial;
      const T *in = x + (n * p.c + c) * p.spatial;
      for (int64_t i = 0; i < p.spatial; ++i) {
        sumDy += g[i];
        sumDyXhat += double(g[i]) * ((in[i] - mean) * invstd);
      }
    }
    // dx = scale * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)): the
    // last two terms are the gradient through the batch mean and variance.
    double meanDy = sumDy / count, meanDyXhat = sumDyXhat / count;
    double a = double(scale[c]) * invstd;
    for (int64_t n = 0; n < p.n; ++n) {
      const T *g = dy + (n * p.c + c) * p.spatial;
      const T *in = x + (n * p.c + c) * p.spatial;
      T *out = dx + (n * p.c + c) * p.spatial;
      for (int64_t i = 0; i < p.spatial; ++i) {
        double xhat = (in[i] - mean) * invstd;
        out[i] = static_cast<T>(a * (g[i] - meanDy - xhat * meanDyXhat));
      }
    }
    dscale[c] = static_cast<T>(sumDyXhat);
    dbias[c] = static_cast<T>(sumDy);
  });
}

#define DLC_INSTANTIATE_BN(T)                                                  \
  template void batchNormTrainForward<T>(const BatchNormParams &, const T *,   \
                                         const T *, const T *, T *, T *, T *,  \
                                         T *, T *);                            \
  template void batchNormTrainBackward<T>(const BatchNormParams &, const T *,  \
                                          const T *, const T *, const T *,     \
                                          const T *, T *, T *, T *);
DLC_INSTANTIATE_BN(float)
DLC_INSTANTIATE_BN(double)
#undef DLC_INSTANTIATE_BN

} // namespace dlc::rt::cpu
