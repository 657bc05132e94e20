
/// Position (o, in)'s maximum logit and sum of exp(logit - max), in double,
/// from one read of its logits. A NaN logit never becomes the maximum (as
/// the CPU's std::max) and makes the sum NaN; so does a +inf one.
DLC_DEVICE void dlc_hw_logsumexp(const DlcHandArgs &a, int k, long long o, long long in,
                                 long long classes, long long ld, long long inner,
                                 double *smem, double &mx, double &sum) {
  double m = DLC_NEG_INF, s = 0;
  for (long long c = threadIdx.x; c < classes; c += blockDim.x) {
    const double v = dlc_hw_ld(a, k, (o * ld + c) * inner + in);
    if (v > m) { s = s * exp(m - v) + 1.0; m = v; }
    // A -inf logit adds exp(-inf - max) = 0, also before this thread has
    // seen a finite one (where exp(-inf - -inf) would be NaN); a NaN adds NaN.
    else if (m != DLC_NEG_INF || v != v) s += exp(v - m);
  }
  mx = dlc_hw_block_max(m, smem);
  // A thread that saw no logit, or only smaller ones, adds its sum scaled to
  // the block's maximum (0 * exp(-inf) is 0, not NaN).
  sum = dlc_hw_block_sum(s == 0 ? 0.0 : s * exp(m - mx), smem);
}

extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_softmax_cross_entropy(const DlcHandArgs a, const long long *step) {
  __shared__ double smem[1024];
  const DlcCrossEntropyArgs &ce = a.crossEntropy;
  const long long outer = ce.outer, classes = ce.classes, inner = ce.inner,
                  ignore = ce.ignoreIndex, ld = ce.ld;
  double total = 0, counted = 0, bad = 0; // thread 0's are the block's
  for (long long pos = blockIdx.x; pos < outer * inner; pos += gridDim.x) {
    const long long o = pos / inner, in = pos % inner;
    const long long label = dlc_hw_index(a, DLC_CROSS_ENTROPY_LABELS, pos);
    if (label == ignore) continue;
    if (label < 0 || label >= classes) { bad = 1; continue; }
    double mx, sum;
    dlc_hw_logsumexp(a, DLC_CROSS_ENTROPY_LOGITS, o, in, classes, ld, inner, smem, mx, sum);
    total += mx + log(sum) -
             dlc_hw_ld(a, DLC_CROSS_ENTROPY_LOGITS, (o * ld + label) * inner + in);
    counted += 1;
  }
  double *part = dlc_hw_partials(a, DLC_CROSS_ENTROPY_SCRATCH);
  if (threadIdx.x == 0) {
    part[3 * blockIdx.x] = total;
    part[3 * blockIdx.x + 1] = counted;
    part[3 * blockIdx.x + 2] = bad;
  }
  if (!dlc_hw_last_block(static_cast<unsigned *>(a.p[DLC_CROSS_ENTROPY_SCRATCH])))
    return;
  // Thousands of partials: every thread adds a fixed stride of them.
  total = counted = bad = 0;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) {
    total += dlc_hw_partial(part, 3 * b);
    counted += dlc_hw_partial(part, 3 * b + 1);
    bad += dlc_hw_partial(part, 3 * b + 2);
  }
  total = dlc_hw_block_sum(total, smem);
  counted = dlc_hw_block_sum(counted, smem); // exact: whole numbers
  bad = dlc_hw_block_sum(bad, smem);
  if (threadIdx.x == 0)
    dlc_hw_st(a, DLC_CROSS_ENTROPY_LOSS, 0,
              bad != 0 ? DLC_HW_NAN : counted != 0 ? (float)(total / counted) : 0.0f);
}

extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_softmax_cross_entropy_backward(const DlcHandArgs a, const long long *step) {
  __shared__ double smem[1024];
  const DlcCrossEntropyArgs &ce = a.crossEntropy;
  const long long outer = ce.outer, classes = ce.classes, inner = ce.inner,
                  ignore = ce.ignoreIndex, ld = ce.ld, ldGrad = ce.ldGrad;
  const long long positions = outer * inner;
  double part = 0;
  for (long long pos = threadIdx.x; pos < positions; pos += blockDim.x)
    part += dlc_hw_index(a, DLC_CROSS_ENTROPY_BACKWARD_LABELS, pos) != ignore ? 1.0 : 0.0;
  const double counted = dlc_hw_block_sum(part, smem); // exact: whole numbers
  const double dloss = dlc_hw_ld(a, DLC_CROSS_ENTROPY_BACKWARD_DLOSS, 0);
  for (long long pos = blockIdx.x; pos < positions; pos += gridDim.x) {
    const long long o = pos / inner, in = pos % inner;
    const long long label = dlc_hw_index(a, DLC_CROSS_ENTROPY_BACKWARD_LABELS, pos);
    if (label == ignore || counted == 0) {
      for (long long c = threadIdx.x; c < classes; c += blockDim.x)
        dlc_hw_st(a, DLC_CROSS_ENTROPY_BACKWARD_DLOGITS, (o * ldGrad + c) * inner + in, 0.0f);
      continue;
    }
    double mx, sum;
    dlc_hw_logsumexp(a, DLC_CROSS_ENTROPY_BACKWARD_LOGITS, o, in, classes, ld, inner, smem, mx,
                     sum);
    for (long long c = threadIdx.x; c < classes; c += blockDim.x) {
      double p = exp(dlc_hw_ld(a, DLC_CROSS_ENTROPY_BACKWARD_LOGITS, (o * ld + c) * inner + in) -
                     mx) / sum -
                 (c == label ? 1.0 : 0.0);
      dlc_hw_st(a, DLC_CROSS_ENTROPY_BACKWARD_DLOGITS, (o * ldGrad + c) * inner + in,
                (float)(dloss * p / counted));
    }
  }
}
