
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

extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_layer_norm(const DlcHandArgs a, const long long *step) {
  __shared__ double smem[1024];
  const long long rows = a.layerNorm.rows, d = a.layerNorm.d;
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    double mean, rstd;
    dlc_hw_row_stats(a, DLC_LAYER_NORM_X, r, d, a.layerNorm.epsilon, smem, mean, rstd);
    for (long long i = threadIdx.x; i < d; i += blockDim.x)
      dlc_hw_st(a, DLC_LAYER_NORM_Y, r * d + i,
                (float)((dlc_hw_ld(a, DLC_LAYER_NORM_X, r * d + i) - mean) * rstd *
                            dlc_hw_ld(a, DLC_LAYER_NORM_GAMMA, i) +
                        dlc_hw_ld(a, DLC_LAYER_NORM_BETA, i)));
  }
}

extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_layer_norm_backward(const DlcHandArgs a, const long long *step) {
  __shared__ double smem[1024];
  const long long rows = a.layerNorm.rows, d = a.layerNorm.d;
  const double eps = a.layerNorm.epsilon;
  double *part = dlc_hw_partials(a, DLC_LAYER_NORM_BACKWARD_SCRATCH);
  double *mine = part + 2 * d * blockIdx.x;
  for (long long i = threadIdx.x; i < d; i += blockDim.x)
    mine[i] = mine[d + i] = 0;
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    double m, s;
    dlc_hw_row_stats(a, DLC_LAYER_NORM_BACKWARD_X, r, d, eps, smem, m, s);
    double sumG = 0, sumGX = 0;
    for (long long i = threadIdx.x; i < d; i += blockDim.x) {
      const double dy = dlc_hw_ld(a, DLC_LAYER_NORM_BACKWARD_DY, r * d + i);
      const double g = dy * dlc_hw_ld(a, DLC_LAYER_NORM_BACKWARD_GAMMA, i);
      const double xhat = (dlc_hw_ld(a, DLC_LAYER_NORM_BACKWARD_X, r * d + i) - m) * s;
      sumG += g;
      sumGX += g * xhat;
      mine[i] += dy * xhat; // this thread owns column i of the partials
      mine[d + i] += dy;
    }
    sumG = dlc_hw_block_sum(sumG, smem);
    sumGX = dlc_hw_block_sum(sumGX, smem);
    for (long long i = threadIdx.x; i < d; i += blockDim.x) {
      double g = double(dlc_hw_ld(a, DLC_LAYER_NORM_BACKWARD_DY, r * d + i)) *
                 dlc_hw_ld(a, DLC_LAYER_NORM_BACKWARD_GAMMA, i);
      double xhat = (dlc_hw_ld(a, DLC_LAYER_NORM_BACKWARD_X, r * d + i) - m) * s;
      dlc_hw_st(a, DLC_LAYER_NORM_BACKWARD_DX, r * d + i,
                (float)(s / d * (d * g - sumG - xhat * sumGX)));
    }
  }
  if (!dlc_hw_last_block(static_cast<unsigned *>(a.p[DLC_LAYER_NORM_BACKWARD_SCRATCH]))) return;
  for (long long i = threadIdx.x; i < d; i += blockDim.x) {
    double dg = 0, db = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) {
      dg += dlc_hw_partial(part, 2 * d * b + i);
      db += dlc_hw_partial(part, 2 * d * b + d + i);
    }
    dlc_hw_st(a, DLC_LAYER_NORM_BACKWARD_DGAMMA, i, (float)dg);
    dlc_hw_st(a, DLC_LAYER_NORM_BACKWARD_DBETA, i, (float)db);
  }
}
