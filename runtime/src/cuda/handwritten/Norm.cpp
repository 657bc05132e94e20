//===- Norm.cpp - layer normalization and its gradient --------------------===//
//
// Forward: one block per row. Backward: the input gradient one block per
// row; gamma's and beta's gradients one block per chunk of blockDim.x
// columns, each thread walking the rows in order (the CPU's summation
// order, so no atomics and a deterministic result), the block recomputing
// each row's mean and inverse deviation as it goes. Both phases run in
// every block over a grid of max(rows, chunks): no block waits for another.
//
//===----------------------------------------------------------------------===//

#include "Sources.h"

namespace dlc::rt::cuda::handwritten {

const char *normBody() {
  return R"src(
/// Row r's mean and 1/sqrt(var + eps) over buffer k, in double.
DLC_DEVICE void dlc_hw_row_stats(const DlcHandArgs &a, int k, long long r, long long d,
                                 double eps, double *smem, double &mean, double &rstd) {
  double s = 0;
  for (long long i = threadIdx.x; i < d; i += blockDim.x) s += dlc_hw_ld(a, k, r * d + i);
  mean = dlc_hw_block_sum(s, smem) / d;
  double v = 0;
  for (long long i = threadIdx.x; i < d; i += blockDim.x) {
    double c = dlc_hw_ld(a, k, r * d + i) - mean;
    v += c * c;
  }
  v = dlc_hw_block_sum(v, smem);
  rstd = 1.0 / sqrt(v / d + eps);
}

// p: x, gamma, beta, y. i: rows, d. f: epsilon.
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_layer_norm(const DlcHandArgs a, const long long *step) {
  __shared__ double smem[1024];
  const long long rows = a.i[0], d = a.i[1];
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    double mean, rstd;
    dlc_hw_row_stats(a, 0, r, d, a.f[0], smem, mean, rstd);
    for (long long i = threadIdx.x; i < d; i += blockDim.x)
      dlc_hw_st(a, 3, r * d + i,
                (float)((dlc_hw_ld(a, 0, r * d + i) - mean) * rstd * dlc_hw_ld(a, 1, i) +
                        dlc_hw_ld(a, 2, i)));
  }
}

// p: dy, x, gamma, dx, dgamma, dbeta. i: rows, d. f: epsilon.
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_layer_norm_backward(const DlcHandArgs a, const long long *step) {
  __shared__ double smem[1024];
  const long long rows = a.i[0], d = a.i[1];
  const double eps = a.f[0];
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    double m, s;
    dlc_hw_row_stats(a, 1, r, d, eps, smem, m, s);
    double sumG = 0, sumGX = 0;
    for (long long i = threadIdx.x; i < d; i += blockDim.x) {
      double g = double(dlc_hw_ld(a, 0, r * d + i)) * dlc_hw_ld(a, 2, i);
      double xhat = (dlc_hw_ld(a, 1, r * d + i) - m) * s;
      sumG += g;
      sumGX += g * xhat;
    }
    sumG = dlc_hw_block_sum(sumG, smem);
    sumGX = dlc_hw_block_sum(sumGX, smem);
    for (long long i = threadIdx.x; i < d; i += blockDim.x) {
      double g = double(dlc_hw_ld(a, 0, r * d + i)) * dlc_hw_ld(a, 2, i);
      double xhat = (dlc_hw_ld(a, 1, r * d + i) - m) * s;
      dlc_hw_st(a, 3, r * d + i, (float)(s / d * (d * g - sumG - xhat * sumGX)));
    }
  }
  for (long long chunk = blockIdx.x; chunk * blockDim.x < d; chunk += gridDim.x) {
    const long long i = chunk * blockDim.x + threadIdx.x;
    double dg = 0, db = 0;
    for (long long r = 0; r < rows; ++r) {
      double m, s;
      dlc_hw_row_stats(a, 1, r, d, eps, smem, m, s);
      if (i < d) {
        dg += double(dlc_hw_ld(a, 0, r * d + i)) * (dlc_hw_ld(a, 1, r * d + i) - m) * s;
        db += dlc_hw_ld(a, 0, r * d + i);
      }
    }
    if (i < d) {
      dlc_hw_st(a, 4, i, (float)dg);
      dlc_hw_st(a, 5, i, (float)db);
    }
  }
}
)src";
}

} // namespace dlc::rt::cuda::handwritten
