//===- FastAttention.cpp - flash-style train.attention on the host -------===//
//
// The fast backend's train.attention and its gradient, FlashAttention-2's
// order: the [Sq, Sk] scores are never materialised. The forward walks
// query blocks x key blocks with an online softmax (a running row maximum
// and sum, the accumulator rescaled as the maximum grows); the backward
// recomputes each tile's probabilities from the saved lse, in two passes so
// that every output element is one task's sum in a fixed order: dk and dv
// per key block over the query blocks, then dq per query block over the key
// blocks. Tiles are plain loops over contiguous rows, which GCC vectorizes
// (DLC_HOST_CLONES); accumulation is float. Blocks with every key hidden by
// causality are skipped. Work is parallel over B... x blocks, and the
// result does not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"
#include "FastHost.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace dlc::rt::cpu {

namespace {

constexpr int64_t kBlockQ = 64, kBlockK = 64;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

/// exp(x) for x <= 0 in float, branch-free so that it vectorizes: Cephes'
/// expf polynomial after x = n ln2 + r (about 2 ulp); 0 below -87.
[[gnu::always_inline]] inline float expNonPositive(float x) {
  float c = std::max(x, -87.0f);
  float t = c * 1.44269504088896341f;
  int n = static_cast<int>(t - 0.5f); // round to nearest for t <= 0
  float fn = static_cast<float>(n);
  float r = c - fn * 0.693359375f + fn * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = p * r * r + r + 1.0f;
  uint32_t bits = static_cast<uint32_t>(n + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return x < -87.0f ? 0.0f : y * scale;
}

/// A [rows, cols] block of a [.., cols]-row matrix, transposed into
/// dst [cols, kBlockK] (rows <= kBlockK).
void transposeBlock(const float *src, int64_t rows, int64_t cols, float *dst) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      dst[c * kBlockK + r] = src[r * cols + c];
}

/// s[0, n) = a[0, depth) . bT[., 0, n): one row against a transposed block.
[[gnu::always_inline]] inline void rowTimesBlock(const float *a, const float *bT, int64_t depth,
                                                 int64_t n, float *s) {
  for (int64_t j = 0; j < n; ++j)
    s[j] = 0;
  for (int64_t d = 0; d < depth; ++d) {
    float x = a[d];
    const float *col = bT + d * kBlockK;
    for (int64_t j = 0; j < n; ++j)
      s[j] += x * col[j];
  }
}

/// Scales and masks row `row`'s scores against keys [k0, k0 + n); returns
/// how many of them are visible (the rest are -inf).
[[gnu::always_inline]] inline int64_t maskScores(const AttentionDims &a, int64_t row, int64_t k0,
                                                 int64_t n, float *s) {
  int64_t visible = std::clamp<int64_t>(a.visibleKeys(row % a.sq) - k0, 0, n);
  for (int64_t j = 0; j < visible; ++j)
    s[j] *= a.scale;
  if (a.mask) {
    const float *m = a.mask + a.maskRow(row) + k0 * a.maskKeyStride();
    int64_t stride = a.maskKeyStride();
    for (int64_t j = 0; j < visible; ++j)
      s[j] += m[j * stride];
  }
  for (int64_t j = visible; j < n; ++j)
    s[j] = kNegInf;
  return visible;
}

struct ForwardScratch {
  std::vector<float> kT, s, acc, m, l;
  ForwardScratch(const AttentionDims &a)
      : kT(a.d * kBlockK), s(kBlockK), acc(kBlockQ * a.dv), m(kBlockQ), l(kBlockQ) {}
};

/// Queries [q0, q1) of batch b against every visible key block.
DLC_HOST_CLONES void forwardBlock(const AttentionDims &a, const float *Q, const float *K,
                                  const float *V, float *O, float *L, int64_t b, int64_t q0,
                                  int64_t q1, ForwardScratch &w) {
  const float *k = K + b * a.sk * a.d, *v = V + b * a.sk * a.dv;
  int64_t rows = q1 - q0, keyEnd = a.visibleKeys(q1 - 1);
  float keepScale = static_cast<float>(1.0 / (1.0 - a.rate));
  std::fill(w.acc.begin(), w.acc.begin() + rows * a.dv, 0.0f);
  std::fill(w.m.begin(), w.m.end(), kNegInf);
  std::fill(w.l.begin(), w.l.end(), 0.0f);
  float *s = w.s.data();
  for (int64_t k0 = 0; k0 < keyEnd; k0 += kBlockK) {
    int64_t n = std::min(kBlockK, keyEnd - k0);
    transposeBlock(k + k0 * a.d, n, a.d, w.kT.data());
    for (int64_t r = 0; r < rows; ++r) {
      int64_t row = b * a.sq + q0 + r;
      rowTimesBlock(Q + row * a.d, w.kT.data(), a.d, n, s);
      int64_t visible = maskScores(a, row, k0, n, s);
      if (visible == 0)
        continue;
      float mx = w.m[r];
      for (int64_t j = 0; j < visible; ++j)
        mx = std::max(mx, s[j]);
      if (mx == kNegInf)
        continue; // every visible key masked to -inf so far
      float correction = w.m[r] == kNegInf ? 0.0f : expNonPositive(w.m[r] - mx);
      float sum = 0;
      for (int64_t j = 0; j < visible; ++j) {
        s[j] = expNonPositive(s[j] - mx);
        sum += s[j];
      }
      w.l[r] = w.l[r] * correction + sum;
      w.m[r] = mx;
      float *acc = w.acc.data() + r * a.dv;
      if (correction != 1.0f)
        for (int64_t e = 0; e < a.dv; ++e)
          acc[e] *= correction;
      for (int64_t j = 0; j < visible; ++j) {
        float p = s[j];
        if (a.rate > 0)
          p = dropoutKeeps(a.stream, a.scoreIndex(row, k0 + j), a.rate) ? p * keepScale : 0.0f;
        if (p == 0)
          continue;
        const float *vr = v + (k0 + j) * a.dv;
        for (int64_t e = 0; e < a.dv; ++e)
          acc[e] += p * vr[e];
      }
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    int64_t row = b * a.sq + q0 + r;
    float inv = 1.0f / w.l[r];
    const float *acc = w.acc.data() + r * a.dv;
    for (int64_t e = 0; e < a.dv; ++e)
      O[row * a.dv + e] = acc[e] * inv;
    L[row] = w.m[r] + std::log(w.l[r]);
  }
}

int64_t blocks(int64_t n, int64_t block) { return (n + block - 1) / block; }

Status attention(const KernelContext &c) {
  AttentionDims a;
  if (Status s = attentionDims(c, 3, a); !s.isOk())
    return s;
  const float *Q = c.in(0).f32(), *K = c.in(1).f32(), *V = c.in(2).f32();
  float *O = c.out(0).f32(), *L = c.out(1).f32();
  int64_t qBlocks = blocks(a.sq, kBlockQ);
  parallelFor(0, a.batch * qBlocks, [&](int64_t t) {
    ForwardScratch w(a);
    int64_t b = t / qBlocks, q0 = (t % qBlocks) * kBlockQ;
    forwardBlock(a, Q, K, V, O, L, b, q0, std::min(a.sq, q0 + kBlockQ), w);
  });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

struct BackwardScratch {
  std::vector<float> kT, vT, p, ds;
  BackwardScratch(const AttentionDims &a)
      : kT(a.d * kBlockK), vT(a.dv * kBlockK), p(kBlockQ * kBlockK), ds(kBlockQ * kBlockK) {}
};

struct BackwardOperands {
  const float *Q, *K, *V, *DO, *L, *D; // D: rowsum(do * o)
};

/// The tile of queries [q0, q1) x keys [k0, k0 + n) of batch b: p' (the
/// dropped-out probabilities) and ds = scale * p * (dp - D) into w.p and
/// w.ds, from w.kT and w.vT (the key block, transposed).
DLC_HOST_CLONES void backwardTile(const AttentionDims &a, const BackwardOperands &x, int64_t b,
                                  int64_t q0, int64_t q1, int64_t k0, int64_t n,
                                  BackwardScratch &w) {
  float keepScale = static_cast<float>(1.0 / (1.0 - a.rate));
  for (int64_t r = 0; r < q1 - q0; ++r) {
    int64_t row = b * a.sq + q0 + r;
    float *p = w.p.data() + r * kBlockK, *ds = w.ds.data() + r * kBlockK;
    rowTimesBlock(x.Q + row * a.d, w.kT.data(), a.d, n, p);
    int64_t visible = maskScores(a, row, k0, n, p);
    float lse = x.L[row];
    for (int64_t j = 0; j < visible; ++j)
      p[j] = expNonPositive(std::min(p[j] - lse, 0.0f));
    for (int64_t j = visible; j < n; ++j)
      p[j] = 0;
    rowTimesBlock(x.DO + row * a.dv, w.vT.data(), a.dv, n, ds); // dp' = do v^T
    float rowDot = x.D[row];
    for (int64_t j = 0; j < n; ++j) {
      bool keep = a.rate == 0 || dropoutKeeps(a.stream, a.scoreIndex(row, k0 + j), a.rate);
      float dp = keep ? ds[j] * keepScale : 0.0f;
      ds[j] = a.scale * (p[j] * (dp - rowDot));
      if (a.rate > 0)
        p[j] = keep ? p[j] * keepScale : 0.0f;
    }
  }
}

/// dk and dv of keys [k0, k0 + n) of batch b, over every query that sees them.
DLC_HOST_CLONES void keyBlockGradients(const AttentionDims &a, const BackwardOperands &x,
                                       float *DK, float *DV, int64_t b, int64_t k0, int64_t n,
                                       BackwardScratch &w) {
  const float *k = x.K + b * a.sk * a.d, *v = x.V + b * a.sk * a.dv;
  transposeBlock(k + k0 * a.d, n, a.d, w.kT.data());
  transposeBlock(v + k0 * a.dv, n, a.dv, w.vT.data());
  float *dk = DK + (b * a.sk + k0) * a.d, *dv = DV + (b * a.sk + k0) * a.dv;
  std::fill(dk, dk + n * a.d, 0.0f);
  std::fill(dv, dv + n * a.dv, 0.0f);
  // The first query that sees key k0: i + (Sk - Sq) >= k0.
  int64_t first = a.causal ? std::max<int64_t>(0, k0 - (a.sk - a.sq)) : 0;
  for (int64_t q0 = first / kBlockQ * kBlockQ; q0 < a.sq; q0 += kBlockQ) {
    int64_t q1 = std::min(a.sq, q0 + kBlockQ);
    backwardTile(a, x, b, q0, q1, k0, n, w);
    for (int64_t r = 0; r < q1 - q0; ++r) {
      int64_t row = b * a.sq + q0 + r;
      const float *g = x.DO + row * a.dv, *q = x.Q + row * a.d;
      const float *p = w.p.data() + r * kBlockK, *ds = w.ds.data() + r * kBlockK;
      for (int64_t j = 0; j < n; ++j) {
        if (p[j] != 0)
          for (int64_t e = 0; e < a.dv; ++e)
            dv[j * a.dv + e] += p[j] * g[e];
        if (ds[j] != 0)
          for (int64_t d = 0; d < a.d; ++d)
            dk[j * a.d + d] += ds[j] * q[d];
      }
    }
  }
}

/// dq of queries [q0, q1) of batch b, over every key block they see.
DLC_HOST_CLONES void queryBlockGradients(const AttentionDims &a, const BackwardOperands &x,
                                         float *DQ, int64_t b, int64_t q0, int64_t q1,
                                         BackwardScratch &w) {
  const float *k = x.K + b * a.sk * a.d, *v = x.V + b * a.sk * a.dv;
  float *dq = DQ + (b * a.sq + q0) * a.d;
  std::fill(dq, dq + (q1 - q0) * a.d, 0.0f);
  int64_t keyEnd = a.visibleKeys(q1 - 1);
  for (int64_t k0 = 0; k0 < keyEnd; k0 += kBlockK) {
    int64_t n = std::min(kBlockK, keyEnd - k0);
    transposeBlock(k + k0 * a.d, n, a.d, w.kT.data());
    transposeBlock(v + k0 * a.dv, n, a.dv, w.vT.data());
    backwardTile(a, x, b, q0, q1, k0, n, w);
    for (int64_t r = 0; r < q1 - q0; ++r) {
      const float *ds = w.ds.data() + r * kBlockK;
      float *out = dq + r * a.d;
      for (int64_t j = 0; j < n; ++j) {
        if (ds[j] == 0)
          continue;
        const float *kr = k + (k0 + j) * a.d;
        for (int64_t d = 0; d < a.d; ++d)
          out[d] += ds[j] * kr[d];
      }
    }
  }
}

Status attentionBackward(const KernelContext &c) {
  AttentionDims a;
  if (Status s = attentionDims(c, 6, a); !s.isOk())
    return s;
  const float *O = c.in(3).f32();
  BackwardOperands x{c.in(0).f32(), c.in(1).f32(), c.in(2).f32(), c.in(4).f32(),
                     c.in(5).f32(), nullptr};
  std::vector<float> rowDot(a.batch * a.sq);
  parallelFor(0, a.batch * a.sq, [&](int64_t row) {
    rowDot[row] = laneSum(a.dv, [&](int64_t e) {
      return x.DO[row * a.dv + e] * O[row * a.dv + e];
    });
  }, 256);
  x.D = rowDot.data();
  float *DQ = c.out(0).f32(), *DK = c.out(1).f32(), *DV = c.out(2).f32();
  int64_t kBlocks = blocks(a.sk, kBlockK), qBlocks = blocks(a.sq, kBlockQ);
  parallelFor(0, a.batch * kBlocks, [&](int64_t t) {
    BackwardScratch w(a);
    int64_t b = t / kBlocks, k0 = (t % kBlocks) * kBlockK;
    keyBlockGradients(a, x, DK, DV, b, k0, std::min(kBlockK, a.sk - k0), w);
  });
  parallelFor(0, a.batch * qBlocks, [&](int64_t t) {
    BackwardScratch w(a);
    int64_t b = t / qBlocks, q0 = (t % qBlocks) * kBlockQ;
    queryBlockGradients(a, x, DQ, b, q0, std::min(a.sq, q0 + kBlockQ), w);
  });
  return Status::ok();
}

} // namespace

void registerFastAttentionKernels(KernelRegistry &r) {
  r[OpId::kAttention] = attention;
  r[OpId::kAttentionBackward] = attentionBackward;
}

} // namespace dlc::rt::cpu
