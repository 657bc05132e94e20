//===- FastAttention.cpp - blocked train.attention on the host -----------===//
//
// The fast backend's train.attention and its gradient. The [Sq, Sk] score
// matrix is never materialised: work goes by blocks of kBlockQ queries of
// one (batch, head), and a block's scores against every key it sees are a
// [kBlockQ, Sk] tile (256 KB at Sk 1024), in which the row softmax is
// exact (no online rescaling) and the log-sum-exp saved. The products are
// GEMMs on the calling thread (hostGemm: oneDNN's sgemm, else loops):
//
//   forward   S = scale Q K^T (+ mask), P = softmax(S), O = dropout(P) V
//   backward  per (batch, head), its query blocks in order: S and P again
//             from lse, dP = dO V^T, dS = scale P (dropout'(dP) - D) with
//             D = rowsum(dO O), dQ = dS K, dK += dS^T Q, dV += P'^T dO.
//
// Causal blocks stop at the keys their last query sees; rows of the
// diagonal block mask the rest. Dropout draws the mask train.dropout draws
// (dropoutKeeps of the scores' flat index). The forward is parallel over
// (batch, head, query block), the backward over (batch, head): each dK and
// dV is one task's sum over query blocks in order, so the result does not
// depend on the thread count. Exponentials are HostMath.h's, as the
// generated softmax's.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"
#include "FastHost.h"
#include "HostClones.h"
#include "../codegen/kernels/HostMath.h"

#include "dlc/runtime/cpu/HostGemm.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace dlc::rt::cpu {

namespace {

constexpr int64_t kBlockQ = 64;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

int64_t blocks(int64_t n, int64_t block) { return (n + block - 1) / block; }

/// The tiles' row stride: Sk rounded up to 16 floats, plus 16 so that rows
/// a power of two apart do not fall on the same cache sets.
int64_t tileStride(const AttentionDims &a) { return (a.sk + 15) / 16 * 16 + 16; }

/// A thread's tile buffers, kept between calls (they grow, never shrink).
std::vector<float> &tile(int which, size_t size) {
  thread_local std::vector<float> buffers[2];
  if (buffers[which].size() < size)
    buffers[which].resize(size);
  return buffers[which];
}

/// s[0, n) of row `row` (flat over B... x Sq): the scaled scores plus the
/// mask; keys from `visible` on are hidden (causal) and become -inf.
[[gnu::always_inline]] inline void maskRow(const AttentionDims &a, int64_t row, int64_t visible,
                                           int64_t n, float *s) {
  if (a.mask) {
    const float *m = a.mask + a.maskRow(row);
    int64_t stride = a.maskKeyStride();
    for (int64_t j = 0; j < visible; ++j)
      s[j] += m[j * stride];
  }
  for (int64_t j = visible; j < n; ++j)
    s[j] = kNegInf;
}

/// The dropout factors of row `row`, keys [0, n): 1 / (1 - rate) where
/// the mask keeps the score, else 0.
[[gnu::always_inline]] inline void dropoutRow(const AttentionDims &a, int64_t row, int64_t n,
                                              float *keep) {
  float keepScale = static_cast<float>(1.0 / (1.0 - a.rate));
  const uint64_t threshold = dropoutThreshold(a.rate);
  for (int64_t j = 0; j < n; ++j)
    keep[j] = dropoutKeepsAbove(a.stream, a.scoreIndex(row, j), threshold) ? keepScale : 0.0f;
}

/// The largest of s[0, n) (-inf for none), in kLanes lanes that GCC
/// vectorizes (std::max's NaN order keeps a single running maximum scalar).
[[gnu::always_inline]] inline float rowMax(int64_t n, const float *s) {
  float lane[kLanes];
  std::fill(lane, lane + kLanes, kNegInf);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j)
      lane[j] = s[i + j] > lane[j] ? s[i + j] : lane[j];
  for (int j = 0; i + j < n; ++j)
    lane[j] = s[i + j] > lane[j] ? s[i + j] : lane[j];
  float mx = kNegInf;
  for (float x : lane)
    mx = x > mx ? x : mx;
  return mx;
}

/// Row softmax of s[0, n) in place (its first `visible` entries; the rest
/// become 0), returning the log-sum-exp, then the dropout factors applied.
DLC_HOST_CLONES float softmaxRow(const AttentionDims &a, int64_t row, int64_t visible, int64_t n,
                                 float *s, float *keep) {
  float mx = rowMax(visible, s);
  for (int64_t j = 0; j < visible; ++j)
    s[j] = dlc_expf(s[j] - mx);
  float sum = laneSum(visible, [&](int64_t j) { return s[j]; });
  float inv = 1.0f / sum;
  for (int64_t j = 0; j < visible; ++j)
    s[j] *= inv;
  for (int64_t j = visible; j < n; ++j)
    s[j] = 0;
  if (a.rate > 0) {
    dropoutRow(a, row, visible, keep);
    for (int64_t j = 0; j < visible; ++j)
      s[j] *= keep[j];
  }
  return mx + std::log(sum);
}

/// Queries [q0, q1) of head b: O and lse.
void forwardBlock(const AttentionDims &a, const float *Q, const float *K, const float *V,
                  float *O, float *L, int64_t b, int64_t q0, int64_t q1) {
  int64_t rows = q1 - q0, keyEnd = a.visibleKeys(q1 - 1), ld = tileStride(a);
  int64_t first = b * a.sq + q0;
  float *s = tile(0, rows * ld).data();
  float *keep = tile(1, ld).data();
  if (keyEnd > 0)
    hostGemm(false, true, rows, keyEnd, a.d, a.scale, Q + first * a.d, a.d, K + b * a.sk * a.d,
             a.d, 0.0f, s, ld);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t visible = a.visibleKeys(q0 + r);
    maskRow(a, first + r, visible, keyEnd, s + r * ld);
    L[first + r] = softmaxRow(a, first + r, visible, keyEnd, s + r * ld, keep);
  }
  if (keyEnd > 0)
    hostGemm(false, false, rows, a.dv, keyEnd, 1.0f, s, ld, V + b * a.sk * a.dv, a.dv, 0.0f,
             O + first * a.dv, a.dv);
  else
    std::fill(O + first * a.dv, O + (first + rows) * a.dv, 0.0f);
}

Status attention(const KernelContext &c) {
  AttentionDims a;
  if (Status s = attentionDims(c, 3, a); !s.isOk())
    return s;
  const float *Q = c.in(0).f32(), *K = c.in(1).f32(), *V = c.in(2).f32();
  float *O = c.out(0).f32(), *L = c.out(1).f32();
  int64_t qBlocks = blocks(a.sq, kBlockQ);
  parallelFor(0, a.batch * qBlocks, [&](int64_t t) {
    int64_t b = t / qBlocks, q0 = (t % qBlocks) * kBlockQ;
    forwardBlock(a, Q, K, V, O, L, b, q0, std::min(a.sq, q0 + kBlockQ));
  });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

struct BackwardOperands {
  const float *Q, *K, *V, *O, *DO, *L;
  float *DQ, *DK, *DV;
};

/// Row r of a query block: p (the tile's scores) becomes P' (the
/// dropped-out probabilities from lse) and dp (dO V^T) becomes dS.
DLC_HOST_CLONES void backwardRow(const AttentionDims &a, const BackwardOperands &x, int64_t row,
                                 int64_t visible, int64_t n, float *p, float *dp, float *keep) {
  float lse = x.L[row];
  for (int64_t j = 0; j < visible; ++j)
    p[j] = dlc_expf(p[j] - lse);
  for (int64_t j = visible; j < n; ++j)
    p[j] = 0;
  const float *o = x.O + row * a.dv, *g = x.DO + row * a.dv;
  float rowDot = laneSum(a.dv, [&](int64_t e) { return g[e] * o[e]; });
  if (a.rate > 0) {
    dropoutRow(a, row, visible, keep);
    for (int64_t j = 0; j < visible; ++j) {
      dp[j] = a.scale * (p[j] * (dp[j] * keep[j] - rowDot));
      p[j] *= keep[j];
    }
  } else {
    for (int64_t j = 0; j < visible; ++j)
      dp[j] = a.scale * (p[j] * (dp[j] - rowDot));
  }
  for (int64_t j = visible; j < n; ++j)
    dp[j] = 0;
}

/// dQ, dK and dV of head b.
void backwardHead(const AttentionDims &a, const BackwardOperands &x, int64_t b) {
  const float *k = x.K + b * a.sk * a.d, *v = x.V + b * a.sk * a.dv;
  float *dk = x.DK + b * a.sk * a.d, *dv = x.DV + b * a.sk * a.dv;
  std::fill(dk, dk + a.sk * a.d, 0.0f);
  std::fill(dv, dv + a.sk * a.dv, 0.0f);
  int64_t ld = tileStride(a), rowsMax = std::min(kBlockQ, a.sq);
  float *p = tile(0, rowsMax * ld + ld).data(), *dp = tile(1, rowsMax * ld + ld).data();
  float *keep = p + rowsMax * ld; // one more row past the tile
  for (int64_t q0 = 0; q0 < a.sq; q0 += kBlockQ) {
    int64_t q1 = std::min(a.sq, q0 + kBlockQ), rows = q1 - q0, first = b * a.sq + q0;
    int64_t keyEnd = a.visibleKeys(q1 - 1);
    const float *q = x.Q + first * a.d, *g = x.DO + first * a.dv;
    float *dq = x.DQ + first * a.d;
    if (keyEnd == 0) {
      std::fill(dq, dq + rows * a.d, 0.0f);
      continue;
    }
    hostGemm(false, true, rows, keyEnd, a.d, a.scale, q, a.d, k, a.d, 0.0f, p, ld);
    hostGemm(false, true, rows, keyEnd, a.dv, 1.0f, g, a.dv, v, a.dv, 0.0f, dp, ld);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t visible = a.visibleKeys(q0 + r);
      maskRow(a, first + r, visible, keyEnd, p + r * ld);
      backwardRow(a, x, first + r, visible, keyEnd, p + r * ld, dp + r * ld, keep);
    }
    hostGemm(false, false, rows, a.d, keyEnd, 1.0f, dp, ld, k, a.d, 0.0f, dq, a.d);
    hostGemm(true, false, keyEnd, a.d, rows, 1.0f, dp, ld, q, a.d, 1.0f, dk, a.d);
    hostGemm(true, false, keyEnd, a.dv, rows, 1.0f, p, ld, g, a.dv, 1.0f, dv, a.dv);
  }
}

Status attentionBackward(const KernelContext &c) {
  AttentionDims a;
  if (Status s = attentionDims(c, 6, a); !s.isOk())
    return s;
  BackwardOperands x{c.in(0).f32(),  c.in(1).f32(),  c.in(2).f32(),
                     c.in(3).f32(),  c.in(4).f32(),  c.in(5).f32(),
                     c.out(0).f32(), c.out(1).f32(), c.out(2).f32()};
  parallelFor(0, a.batch, [&](int64_t b) { backwardHead(a, x, b); });
  return Status::ok();
}

} // namespace

void registerFastAttentionKernels(KernelRegistry &r) {
  r[OpId::kAttention] = attention;
  r[OpId::kAttentionBackward] = attentionBackward;
}

} // namespace dlc::rt::cpu
