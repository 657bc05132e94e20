//===- OpsAttention.cpp - reference train.attention and its gradient ------===//
//
// The checked path of the fused attention: each query's row of scores is
// materialised (one row at a time, in double), exactly the unfused
// matmul -> softmax -> dropout -> matmul in the order the reference kernels
// of those ops compute it. The forward is parallel over the rows of
// [B..., Sq]; the backward over B..., so that each dk and dv element is one
// thread's sum in query order.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace dlc::rt::cpu {

namespace {

/// The scores of one row, scaled and masked; -inf where causality hides the
/// key. Returns the row's maximum.
double scoreRow(const AttentionDims &a, const float *q, const float *k, int64_t row,
                std::vector<double> &s) {
  int64_t i = row % a.sq, visible = a.visibleKeys(i), mrow = a.mask ? a.maskRow(row) : 0;
  double mx = -INFINITY;
  for (int64_t j = 0; j < a.sk; ++j) {
    if (j >= visible) {
      s[j] = -INFINITY;
      continue;
    }
    double dot = 0;
    for (int64_t d = 0; d < a.d; ++d)
      dot += double(q[d]) * k[j * a.d + d];
    // As train.matmul rounds q k^T to float before train.softmax reads it.
    double v = double(a.scale) * static_cast<float>(dot);
    if (a.mask)
      v += a.mask[mrow + j * a.maskKeyStride()];
    s[j] = v;
    mx = std::max(mx, v);
  }
  return mx;
}

Status attention(const KernelContext &c) {
  AttentionDims a;
  if (Status s = attentionDims(c, 3, a); !s.isOk())
    return s;
  const float *Q = c.in(0).f32(), *K = c.in(1).f32(), *V = c.in(2).f32();
  float *O = c.out(0).f32(), *L = c.out(1).f32();
  double keepScale = 1.0 / (1.0 - a.rate);
  parallelFor(0, a.batch * a.sq, [&](int64_t row) {
    int64_t b = row / a.sq;
    const float *q = Q + row * a.d, *k = K + b * a.sk * a.d, *v = V + b * a.sk * a.dv;
    std::vector<double> s(a.sk), acc(a.dv, 0.0);
    double mx = scoreRow(a, q, k, row, s), sum = 0;
    for (int64_t j = 0; j < a.sk; ++j) {
      s[j] = std::isinf(s[j]) && s[j] < 0 ? 0.0 : std::exp(s[j] - mx);
      sum += s[j];
    }
    L[row] = static_cast<float>(mx + std::log(sum));
    for (int64_t j = 0; j < a.sk; ++j) {
      // p rounded to float, as train.softmax writes it.
      double p = static_cast<float>(s[j] / sum);
      if (a.rate > 0)
        p = dropoutKeeps(a.stream, a.scoreIndex(row, j), a.rate)
                ? static_cast<float>(p * static_cast<float>(keepScale))
                : 0.0;
      if (p == 0)
        continue;
      for (int64_t d = 0; d < a.dv; ++d)
        acc[d] += p * v[j * a.dv + d];
    }
    for (int64_t d = 0; d < a.dv; ++d)
      O[row * a.dv + d] = static_cast<float>(acc[d]);
  });
  return Status::ok();
}

Status attentionBackward(const KernelContext &c) {
  AttentionDims a;
  if (Status s = attentionDims(c, 6, a); !s.isOk())
    return s;
  const float *Q = c.in(0).f32(), *K = c.in(1).f32(), *V = c.in(2).f32(),
              *O = c.in(3).f32(), *DO = c.in(4).f32(), *L = c.in(5).f32();
  float *DQ = c.out(0).f32(), *DK = c.out(1).f32(), *DV = c.out(2).f32();
  double keepScale = 1.0 / (1.0 - a.rate);
  parallelFor(0, a.batch, [&](int64_t b) {
    const float *k = K + b * a.sk * a.d, *v = V + b * a.sk * a.dv;
    std::vector<double> s(a.sk), dk(a.sk * a.d, 0.0), dv(a.sk * a.dv, 0.0), dq(a.d);
    for (int64_t i = 0; i < a.sq; ++i) {
      int64_t row = b * a.sq + i;
      const float *q = Q + row * a.d, *o = O + row * a.dv, *g = DO + row * a.dv;
      scoreRow(a, q, k, row, s);
      double rowDot = 0; // D_i = rowsum(do * o)
      for (int64_t d = 0; d < a.dv; ++d)
        rowDot += double(g[d]) * o[d];
      std::fill(dq.begin(), dq.end(), 0.0);
      for (int64_t j = 0; j < a.sk; ++j) {
        if (std::isinf(s[j]) && s[j] < 0)
          continue;
        double p = std::exp(s[j] - L[row]);
        bool keep = a.rate == 0 || dropoutKeeps(a.stream, a.scoreIndex(row, j), a.rate);
        double dpKept = 0; // dp' = do v^T
        for (int64_t d = 0; d < a.dv; ++d)
          dpKept += double(g[d]) * v[j * a.dv + d];
        double dp = keep ? dpKept * keepScale : 0.0;
        double pKept = keep ? p * keepScale : 0.0;
        double ds = p * (dp - rowDot) * a.scale;
        for (int64_t d = 0; d < a.dv; ++d)
          dv[j * a.dv + d] += pKept * g[d];
        for (int64_t d = 0; d < a.d; ++d) {
          dq[d] += ds * k[j * a.d + d];
          dk[j * a.d + d] += ds * q[d];
        }
      }
      for (int64_t d = 0; d < a.d; ++d)
        DQ[row * a.d + d] = static_cast<float>(dq[d]);
    }
    for (int64_t e = 0; e < a.sk * a.d; ++e)
      DK[b * a.sk * a.d + e] = static_cast<float>(dk[e]);
    for (int64_t e = 0; e < a.sk * a.dv; ++e)
      DV[b * a.sk * a.dv + e] = static_cast<float>(dv[e]);
  });
  return Status::ok();
}

} // namespace

void registerAttentionKernels(KernelRegistry &r) {
  r[OpId::kAttention] = attention;
  r[OpId::kAttentionBackward] = attentionBackward;
}

} // namespace dlc::rt::cpu
