//===- Softmax.cpp - softmax and its gradient, one block per line ---------===//
//
// One block per line along the axis (grid-stride over lines), as many
// threads as the line needs up to 256, maxima and sums in double through
// the block reductions, as
// runtime/src/cpu/OpsDense.cpp computes them. The exponentials are
// recomputed in the last pass rather than kept in the output, so a half
// output is rounded once, from the same float the CPU divides.
//
//===----------------------------------------------------------------------===//

#include "Sources.h"

namespace dlc::rt::cuda::handwritten {

const char *softmaxBody() {
  return R"src(
// p: x, mask (or null), y. i: outer, n, inner, causal, queries, keys,
// has_mask, rank, x shape [8..13], mask strides over x [14..19], axis [20].
// f: scale.
DLC_DEVICE long long dlc_hw_mask_at(const DlcHandArgs &a, long long flat) {
  long long at = 0;
  for (int d = (int)a.i[7] - 1; d >= 0; --d) {
    at += (flat % a.i[8 + d]) * a.i[14 + d];
    flat /= a.i[8 + d];
  }
  return at;
}

// At most 256 threads (lineBlocks): a bound of 1024 spilled 8 bytes.
extern "C" __global__ void __launch_bounds__(256)
dlc_hw_softmax(const DlcHandArgs a, const long long *step) {
  __shared__ double smem[1024];
  const long long outer = a.i[0], n = a.i[1], inner = a.i[2];
  const bool causal = a.i[3] != 0, masked = a.i[6] != 0;
  const long long queries = a.i[4], keys = a.i[5];
  const double scale = a.f[0];
  // Along the axis the mask moves by one stride: its offset is found once
  // per line (dlc_hw_mask_at divides by every dimension).
  const long long maskStep = masked ? a.i[14 + a.i[20]] : 0;
  for (long long line = blockIdx.x; line < outer * inner; line += gridDim.x) {
    const long long o = line / inner, in = line % inner;
    const long long query = causal ? o % queries : 0;
    const long long maskBase = masked ? dlc_hw_mask_at(a, o * n * inner + in) : 0;
#define DLC_HW_SOFTMAX_LOGIT(k, at)                                            \
  (scale * dlc_hw_ld(a, 0, at) + (masked ? (double)dlc_hw_ld(a, 1, maskBase + (k) * maskStep) : 0.0))
    double mx = DLC_NEG_INF;
    for (long long k = threadIdx.x; k < n; k += blockDim.x) {
      if (causal && k > query + (keys - queries)) continue;
      long long at = (o * n + k) * inner + in;
      double v = DLC_HW_SOFTMAX_LOGIT(k, at);
      mx = mx < v ? v : mx;
    }
    mx = dlc_hw_block_max(mx, smem);
    double sum = 0;
    for (long long k = threadIdx.x; k < n; k += blockDim.x) {
      if (causal && k > query + (keys - queries)) continue;
      long long at = (o * n + k) * inner + in;
      sum += exp(DLC_HW_SOFTMAX_LOGIT(k, at) - mx);
    }
    sum = dlc_hw_block_sum(sum, smem);
    for (long long k = threadIdx.x; k < n; k += blockDim.x) {
      long long at = (o * n + k) * inner + in;
      float e = 0.f;
      if (!causal || k <= query + (keys - queries))
        e = (float)exp(DLC_HW_SOFTMAX_LOGIT(k, at) - mx);
      dlc_hw_st(a, 2, at, (float)((double)e / sum));
    }
  }
}

// p: dy, y, dx. i: outer, n, inner. f: scale.
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_softmax_backward(const DlcHandArgs a, const long long *step) {
  __shared__ double smem[1024];
  const long long outer = a.i[0], n = a.i[1], inner = a.i[2];
  const double scale = a.f[0];
  for (long long line = blockIdx.x; line < outer * inner; line += gridDim.x) {
    const long long o = line / inner, in = line % inner;
    double dot = 0;
    for (long long k = threadIdx.x; k < n; k += blockDim.x) {
      long long at = (o * n + k) * inner + in;
      dot += double(dlc_hw_ld(a, 0, at)) * dlc_hw_ld(a, 1, at);
    }
    dot = dlc_hw_block_sum(dot, smem);
    for (long long k = threadIdx.x; k < n; k += blockDim.x) {
      long long at = (o * n + k) * inner + in;
      dlc_hw_st(a, 2, at, (float)(scale * dlc_hw_ld(a, 1, at) * (dlc_hw_ld(a, 0, at) - dot)));
    }
  }
}
)src";
}

} // namespace dlc::rt::cuda::handwritten
