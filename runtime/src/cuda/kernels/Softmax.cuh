
/// The mask's element for x's element `flat`.
DLC_DEVICE long long dlc_hw_mask_at(const DlcSoftmaxArgs &s, long long flat) {
  long long at = 0;
  for (int d = (int)s.rank - 1; d >= 0; --d) {
    at += (flat % s.shape[d]) * s.maskStrides[d];
    flat /= s.shape[d];
  }
  return at;
}

// At most 256 threads (lineBlocks): a bound of 1024 spilled 8 bytes.
extern "C" __global__ void __launch_bounds__(256)
dlc_hw_softmax(const DlcHandArgs a, const long long *step) {
  __shared__ double smem[1024];
  const DlcSoftmaxArgs &s = a.softmax;
  const long long outer = s.outer, n = s.n, inner = s.inner;
  const bool causal = s.causal != 0, masked = s.hasMask != 0;
  const long long queries = s.queries, keys = s.keys;
  const double scale = s.scale;
  // Along the axis the mask moves by one stride: its offset is found once
  // per line (dlc_hw_mask_at divides by every dimension).
  const long long maskStep = masked ? s.maskStrides[s.axis] : 0;
  for (long long line = blockIdx.x; line < outer * inner; line += gridDim.x) {
    const long long o = line / inner, in = line % inner;
    const long long query = causal ? o % queries : 0;
    const long long maskBase = masked ? dlc_hw_mask_at(s, o * n * inner + in) : 0;
#define DLC_HW_SOFTMAX_LOGIT(k, at)                                            \
  (scale * dlc_hw_ld(a, DLC_SOFTMAX_X, at) +                                  \
   (masked ? (double)dlc_hw_ld(a, DLC_SOFTMAX_MASK, maskBase + (k) * maskStep) : 0.0))
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
      dlc_hw_st(a, DLC_SOFTMAX_Y, at, (float)((double)e / sum));
    }
  }
}

extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_softmax_backward(const DlcHandArgs a, const long long *step) {
  __shared__ double smem[1024];
  const long long outer = a.softmax.outer, n = a.softmax.n, inner = a.softmax.inner;
  const double scale = a.softmax.scale;
  for (long long line = blockIdx.x; line < outer * inner; line += gridDim.x) {
    const long long o = line / inner, in = line % inner;
    double dot = 0;
    for (long long k = threadIdx.x; k < n; k += blockDim.x) {
      long long at = (o * n + k) * inner + in;
      dot += double(dlc_hw_ld(a, DLC_SOFTMAX_BACKWARD_DY, at)) *
             dlc_hw_ld(a, DLC_SOFTMAX_BACKWARD_Y, at);
    }
    dot = dlc_hw_block_sum(dot, smem);
    for (long long k = threadIdx.x; k < n; k += blockDim.x) {
      long long at = (o * n + k) * inner + in;
      dlc_hw_st(a, DLC_SOFTMAX_BACKWARD_DX, at,
                (float)(scale * dlc_hw_ld(a, DLC_SOFTMAX_BACKWARD_Y, at) *
                        (dlc_hw_ld(a, DLC_SOFTMAX_BACKWARD_DY, at) - dot)));
    }
  }
}
