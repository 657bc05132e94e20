//===- Loss.cpp - softmax cross-entropy and its gradient ------------------===//
//
// Both kernels run one block per position (every gridDim.x-th, past the
// grid's cap), threads over the classes, in double. A position's maximum
// and sum of exp(logit - max) come from one pass over its logits: each
// thread keeps a running maximum and rescales its sum when the maximum
// grows (the online softmax), then the block combines the threads' pairs.
//
// The loss is one scalar: each block sums its positions' terms, and the
// last block to finish adds the blocks' partials, its threads each over a
// fixed stride of blocks, then a tree: a fixed order, in double, so the
// float result is the CPU's but for a last-bit tie. A label outside
// [0, classes) that is not ignore_index, an error on the CPU, makes the
// loss NaN. The gradient's blocks first count the labels that are not
// ignored (the mean's divisor).
//
// Measured on an H100 (2026-11-26, GPT-2 small's 8192 x 50,257 fp32
// logits) before this form: the loss 6.1 ms and its gradient 4.7 ms, when
// the loss ran 256 blocks (a quarter of the SMs' threads, too few loads in
// flight to stream) and both read the logits once for the maximum and once
// for the sum. Predicted, not yet measured: the loss near one read of the
// logits and one double exp per logit, about 1 ms; the gradient two reads
// and a write, about 2 ms.
//
//===----------------------------------------------------------------------===//

#include "Sources.h"

namespace dlc::rt::cuda::handwritten {

const char *lossBody() {
  return R"src(
/// Position (o, in)'s maximum logit and sum of exp(logit - max), in double,
/// from one read of its logits. A NaN logit never becomes the maximum (as
/// the CPU's std::max) and makes the sum NaN; so does a +inf one.
DLC_DEVICE void dlc_hw_logsumexp(const DlcHandArgs &a, int k, long long o, long long in,
                                 long long classes, long long inner, double *smem,
                                 double &mx, double &sum) {
  double m = DLC_NEG_INF, s = 0;
  for (long long c = threadIdx.x; c < classes; c += blockDim.x) {
    const double v = dlc_hw_ld(a, k, (o * classes + c) * inner + in);
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
                  ignore = ce.ignoreIndex;
  double total = 0, counted = 0, bad = 0; // thread 0's are the block's
  for (long long pos = blockIdx.x; pos < outer * inner; pos += gridDim.x) {
    const long long o = pos / inner, in = pos % inner;
    const long long label = dlc_hw_index(a, DLC_CROSS_ENTROPY_LABELS, pos);
    if (label == ignore) continue;
    if (label < 0 || label >= classes) { bad = 1; continue; }
    double mx, sum;
    dlc_hw_logsumexp(a, DLC_CROSS_ENTROPY_LOGITS, o, in, classes, inner, smem, mx, sum);
    total += mx + log(sum) -
             dlc_hw_ld(a, DLC_CROSS_ENTROPY_LOGITS, (o * classes + label) * inner + in);
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
                  ignore = ce.ignoreIndex;
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
        dlc_hw_st(a, DLC_CROSS_ENTROPY_BACKWARD_DLOGITS, (o * classes + c) * inner + in, 0.0f);
      continue;
    }
    double mx, sum;
    dlc_hw_logsumexp(a, DLC_CROSS_ENTROPY_BACKWARD_LOGITS, o, in, classes, inner, smem, mx, sum);
    for (long long c = threadIdx.x; c < classes; c += blockDim.x) {
      long long at = (o * classes + c) * inner + in;
      double p = exp(dlc_hw_ld(a, DLC_CROSS_ENTROPY_BACKWARD_LOGITS, at) - mx) / sum -
                 (c == label ? 1.0 : 0.0);
      dlc_hw_st(a, DLC_CROSS_ENTROPY_BACKWARD_DLOGITS, at, (float)(dloss * p / counted));
    }
  }
}
)src";
}

} // namespace dlc::rt::cuda::handwritten
