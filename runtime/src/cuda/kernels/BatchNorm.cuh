
/// Element j (of n * spatial) of channel c in an [n, channels, spatial]
/// buffer, or with nhwc an [n, spatial, channels] one (channels last). j
/// runs over the same (n, position) pairs in the same order either way, so
/// the sums, and the results, do not depend on the layout.
DLC_DEVICE long long dlc_hw_channel_at(long long j, long long c, long long channels,
                                       long long spatial, bool nhwc) {
  return nhwc ? j * channels + c : (j / spatial * channels + c) * spatial + j % spatial;
}

/// Work item (channel c, split s) of the grid-stride loop: the split's
/// range [begin, end) of the channel's n * spatial elements.
#define DLC_HW_BN_ITEMS(...)                                                  \
  {                                                                            \
    const DlcBatchNormArgs &bn = a.batchNorm;                                  \
    const long long channels = bn.channels, spatial = bn.spatial, count = bn.n * spatial; \
    const long long splits = bn.splits;                                        \
    const bool nhwc = bn.nhwc != 0;                                            \
    double *part = dlc_hw_partials(a, scratchSlot);                            \
    for (long long item = blockIdx.x; item < channels * splits; item += gridDim.x) { \
      const long long c = item / splits, s = item % splits;                    \
      const long long begin = count * s / splits, end = count * (s + 1) / splits; \
      __VA_ARGS__                                                              \
    }                                                                          \
  }
/// Partial k (0..3) of channel c, split s.
#define DLC_HW_BN_PART(k, c, s) part[((c) * splits + (s)) * 4 + (k)]
/// The block's sum in double of f(e) over the split's elements e.
#define DLC_HW_BN_SUM(result, f)                                               \
  {                                                                            \
    double acc_ = 0;                                                           \
    for (long long j = begin + threadIdx.x; j < end; j += blockDim.x) {        \
      const long long e = dlc_hw_channel_at(j, c, channels, spatial, nhwc);          \
      acc_ += (f);                                                             \
    }                                                                          \
    result = dlc_hw_block_sum(acc_, smem);                                     \
  }
/// Channel c's partials k added in split order (every block gets the same).
DLC_DEVICE double dlc_hw_bn_total(const double *part, long long c, long long splits, int k) {
  double t = 0;
  for (long long s = 0; s < splits; ++s) t += dlc_hw_partial(part, (c * splits + s) * 4 + k);
  return t;
}
/// Phases 0 and 1 of both kernels, over x (buffer k): the splits' sums,
/// then, about the mean, their centred squares. Defines xMean after them.
#define DLC_HW_BN_STATISTICS(k)                                                \
  if (phase == 0) {                                                            \
    double sum;                                                                \
    DLC_HW_BN_SUM(sum, (double)dlc_hw_ld(a, k, e));                            \
    if (threadIdx.x == 0) DLC_HW_BN_PART(0, c, s) = sum;                       \
    continue;                                                                  \
  }                                                                            \
  const double xMean = dlc_hw_bn_total(part, c, splits, 0) / count;            \
  if (phase == 1) {                                                            \
    double sq;                                                                 \
    DLC_HW_BN_SUM(sq, (dlc_hw_ld(a, k, e) - xMean) * (dlc_hw_ld(a, k, e) - xMean)); \
    if (threadIdx.x == 0) DLC_HW_BN_PART(1, c, s) = sq;                        \
    continue;                                                                  \
  }

// The running statistics may be read and written in place: each is read,
// then written, by the same thread.
// Phase 0: the splits' sums; 1: the mean, the splits' centred squares;
// 2: the statistics, y, and (split 0) the running statistics.
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_batch_norm(const DlcHandArgs a, const long long *step) {
  __shared__ double smem[1024];
  const int scratchSlot = DLC_BATCH_NORM_SCRATCH;
  const long long phase = a.i[DLC_HAND_PHASE_WORD];
  const double eps = a.batchNorm.epsilon, momentum = a.batchNorm.momentum;
  DLC_HW_BN_ITEMS({
    DLC_HW_BN_STATISTICS(DLC_BATCH_NORM_X)
    const double mean = xMean;
    const double sq = dlc_hw_bn_total(part, c, splits, 1);
    const double invstd = 1.0 / sqrt(sq / count + eps);
    const double scale = invstd * dlc_hw_ld(a, DLC_BATCH_NORM_SCALE, c),
                 bias = dlc_hw_ld(a, DLC_BATCH_NORM_BIAS, c);
    for (long long j = begin + threadIdx.x; j < end; j += blockDim.x) {
      const long long e = dlc_hw_channel_at(j, c, channels, spatial, nhwc);
      dlc_hw_st(a, DLC_BATCH_NORM_Y, e,
                (float)((dlc_hw_ld(a, DLC_BATCH_NORM_X, e) - mean) * scale + bias));
    }
    if (s == 0 && threadIdx.x == 0) {
      // The unbiased variance (PyTorch's choice); none for one element.
      const double unbiased = count > 1 ? sq / (count - 1) : (double)DLC_HW_NAN;
      dlc_hw_st(a, DLC_BATCH_NORM_NEW_RUNNING_MEAN, c,
                (float)((1 - momentum) * dlc_hw_ld(a, DLC_BATCH_NORM_RUNNING_MEAN, c) +
                        momentum * mean));
      dlc_hw_st(a, DLC_BATCH_NORM_NEW_RUNNING_VAR, c,
                (float)((1 - momentum) * dlc_hw_ld(a, DLC_BATCH_NORM_RUNNING_VAR, c) +
                        momentum * unbiased));
    }
  })
}

// Phases 0 and 1: x's statistics as the forward's; 2: the splits' sums of
// dy and dy * xhat; 3: dx, and (split 0) dscale and dbias.
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_batch_norm_backward(const DlcHandArgs a, const long long *step) {
  __shared__ double smem[1024];
  const int scratchSlot = DLC_BATCH_NORM_BACKWARD_SCRATCH;
  const long long phase = a.i[DLC_HAND_PHASE_WORD];
  const double eps = a.batchNorm.epsilon;
  DLC_HW_BN_ITEMS({
    DLC_HW_BN_STATISTICS(DLC_BATCH_NORM_BACKWARD_X)
    // The CPU hands its backward float statistics.
    const double mean = (float)xMean;
    const double invstd = (float)(1 / sqrt(dlc_hw_bn_total(part, c, splits, 1) / count + eps));
    if (phase == 2) {
      // dbias = sum(dy); dscale = sum(dy * xhat).
      double sumDy, sumDyXhat;
      DLC_HW_BN_SUM(sumDy, (double)dlc_hw_ld(a, DLC_BATCH_NORM_BACKWARD_DY, e));
      DLC_HW_BN_SUM(sumDyXhat, (double)dlc_hw_ld(a, DLC_BATCH_NORM_BACKWARD_DY, e) *
                                   ((dlc_hw_ld(a, DLC_BATCH_NORM_BACKWARD_X, e) - mean) * invstd));
      if (threadIdx.x == 0) {
        DLC_HW_BN_PART(2, c, s) = sumDy;
        DLC_HW_BN_PART(3, c, s) = sumDyXhat;
      }
      continue;
    }
    const double sumDy = dlc_hw_bn_total(part, c, splits, 2);
    const double sumDyXhat = dlc_hw_bn_total(part, c, splits, 3);
    // dx = scale * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)).
    const double meanDy = sumDy / count, meanDyXhat = sumDyXhat / count;
    const double k = double(dlc_hw_ld(a, DLC_BATCH_NORM_BACKWARD_SCALE, c)) * invstd;
    for (long long j = begin + threadIdx.x; j < end; j += blockDim.x) {
      const long long e = dlc_hw_channel_at(j, c, channels, spatial, nhwc);
      const double xhat = (dlc_hw_ld(a, DLC_BATCH_NORM_BACKWARD_X, e) - mean) * invstd;
      dlc_hw_st(a, DLC_BATCH_NORM_BACKWARD_DX, e,
                (float)(k * (dlc_hw_ld(a, DLC_BATCH_NORM_BACKWARD_DY, e) - meanDy -
                             xhat * meanDyXhat)));
    }
    if (s == 0 && threadIdx.x == 0) {
      dlc_hw_st(a, DLC_BATCH_NORM_BACKWARD_DSCALE, c, (float)sumDyXhat);
      dlc_hw_st(a, DLC_BATCH_NORM_BACKWARD_DBIAS, c, (float)sumDy);
    }
  })
}
