//===- BatchNorm.cpp - training-mode batch normalization and its gradient -===//
//
// The CPU reference (runtime/src/cpu/BatchNorm.cpp and its caller in
// OpsSpatial.cpp) step by step: one block per channel, a grid-stride loop
// over the channels. The block walks the channel's n * spatial elements
// with a thread stride; its statistics are two passes (the mean, then the
// centred squares) reduced in double with dlc_hw_block_sum, a fixed tree,
// so a launch is deterministic and no block waits for another. Element
// types are any float type per operand (mixed precision: x and y in f16 or
// bf16, the statistics in f32), loaded and stored through dlc_hw_ld/st.
//
// The backward recomputes the batch statistics from x, as the CPU does,
// and rounds them to float before use, as the CPU hands its backward
// kernel float statistics.
//
//===----------------------------------------------------------------------===//

#include "Sources.h"

namespace dlc::rt::cuda::handwritten {

const char *batchNormBody() {
  return R"src(
/// Element j (of n * spatial) of channel c in an [n, channels, spatial] buffer.
DLC_DEVICE long long dlc_hw_channel_at(long long j, long long c, long long channels,
                                       long long spatial) {
  return (j / spatial * channels + c) * spatial + j % spatial;
}

/// Channel c's mean and sum of centred squares over buffer k, in double.
/// i: n, channels, spatial.
DLC_DEVICE void dlc_hw_channel_stats(const DlcHandArgs &a, int k, long long c, double *smem,
                                     double &mean, double &sq) {
  const long long channels = a.i[1], spatial = a.i[2], count = a.i[0] * spatial;
  double s = 0;
  for (long long j = threadIdx.x; j < count; j += blockDim.x)
    s += dlc_hw_ld(a, k, dlc_hw_channel_at(j, c, channels, spatial));
  mean = dlc_hw_block_sum(s, smem) / count;
  double v = 0;
  for (long long j = threadIdx.x; j < count; j += blockDim.x) {
    double d = dlc_hw_ld(a, k, dlc_hw_channel_at(j, c, channels, spatial)) - mean;
    v += d * d;
  }
  sq = dlc_hw_block_sum(v, smem);
}

// p: x, scale, bias, running_mean, running_var, y, new_running_mean,
//    new_running_var (the running statistics may share storage with their
//    new values: each is read, then written, by the same thread).
// i: n, channels, spatial (the product of the dimensions after 1).
// f: epsilon, momentum.
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_batch_norm(const DlcHandArgs a, const long long *step) {
  __shared__ double smem[1024];
  const long long channels = a.i[1], spatial = a.i[2], count = a.i[0] * spatial;
  const double eps = a.f[0], momentum = a.f[1];
  for (long long c = blockIdx.x; c < channels; c += gridDim.x) {
    double mean, sq;
    dlc_hw_channel_stats(a, 0, c, smem, mean, sq);
    const double invstd = 1.0 / sqrt(sq / count + eps);
    const double scale = invstd * dlc_hw_ld(a, 1, c), bias = dlc_hw_ld(a, 2, c);
    for (long long j = threadIdx.x; j < count; j += blockDim.x) {
      const long long e = dlc_hw_channel_at(j, c, channels, spatial);
      dlc_hw_st(a, 5, e, (float)((dlc_hw_ld(a, 0, e) - mean) * scale + bias));
    }
    if (threadIdx.x == 0) {
      // The unbiased variance (PyTorch's choice); none for one element.
      const double unbiased = count > 1 ? sq / (count - 1) : (double)DLC_HW_NAN;
      dlc_hw_st(a, 6, c, (float)((1 - momentum) * dlc_hw_ld(a, 3, c) + momentum * mean));
      dlc_hw_st(a, 7, c, (float)((1 - momentum) * dlc_hw_ld(a, 4, c) + momentum * unbiased));
    }
  }
}

// p: dy, x, scale, dx, dscale, dbias. i: n, channels, spatial. f: epsilon.
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_batch_norm_backward(const DlcHandArgs a, const long long *step) {
  __shared__ double smem[1024];
  const long long channels = a.i[1], spatial = a.i[2], count = a.i[0] * spatial;
  for (long long c = blockIdx.x; c < channels; c += gridDim.x) {
    double mean, sq;
    dlc_hw_channel_stats(a, 1, c, smem, mean, sq);
    mean = (float)mean;
    const double invstd = (float)(1 / sqrt(sq / count + a.f[0]));
    // dbias = sum(dy); dscale = sum(dy * xhat).
    double sumDy = 0, sumDyXhat = 0;
    for (long long j = threadIdx.x; j < count; j += blockDim.x) {
      const long long e = dlc_hw_channel_at(j, c, channels, spatial);
      const double g = dlc_hw_ld(a, 0, e);
      sumDy += g;
      sumDyXhat += g * ((dlc_hw_ld(a, 1, e) - mean) * invstd);
    }
    sumDy = dlc_hw_block_sum(sumDy, smem);
    sumDyXhat = dlc_hw_block_sum(sumDyXhat, smem);
    // dx = scale * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)).
    const double meanDy = sumDy / count, meanDyXhat = sumDyXhat / count;
    const double k = double(dlc_hw_ld(a, 2, c)) * invstd;
    for (long long j = threadIdx.x; j < count; j += blockDim.x) {
      const long long e = dlc_hw_channel_at(j, c, channels, spatial);
      const double xhat = (dlc_hw_ld(a, 1, e) - mean) * invstd;
      dlc_hw_st(a, 3, e, (float)(k * (dlc_hw_ld(a, 0, e) - meanDy - xhat * meanDyXhat)));
    }
    if (threadIdx.x == 0) {
      dlc_hw_st(a, 4, c, (float)sumDyXhat);
      dlc_hw_st(a, 5, c, (float)sumDy);
    }
  }
}
)src";
}

} // namespace dlc::rt::cuda::handwritten
