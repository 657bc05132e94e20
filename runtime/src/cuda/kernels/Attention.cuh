
// Attention, FlashAttention-2's algorithm on shared-memory tiles, SIMT: a
// block's threads share every tile element-wise, strided by blockDim.x, so
// the kernels are right for any block size (the host's one thread, the
// simulator's 16, the launcher's DLC_ATTENTION_THREADS). Scores,
// probabilities and accumulators are float; the score matrix is never
// written to memory. Tile rows are DLC_HW_ATTN_STRIDE floats apart, one
// more than the widest head, so a warp reading one column of a tile's rows
// touches 32 different banks.
#define DLC_HW_ATTN_STRIDE (DLC_ATTENTION_MAX_D + 1)
// A thread's register micro-tile in the forward's two products: 4 scores
// of one query, or one output element of 4 queries. It divides both tiles.
#define DLC_HW_ATTN_MICRO 4

/// The mask's offset for batch entry b (B... flattened).
DLC_DEVICE long long dlc_hw_attn_mask_base(const DlcAttentionArgs &s, long long b) {
  long long at = 0;
  for (int d = (int)s.batchRank - 1; d >= 0; --d) {
    at += (b % s.batchShape[d]) * s.maskBatchStrides[d];
    b /= s.batchShape[d];
  }
  return at;
}

/// Whether query i sees key j: causal masking, as train.softmax's.
DLC_DEVICE bool dlc_hw_attn_visible(const DlcAttentionArgs &s, long long i, long long j) {
  return !s.causal || j <= i + (s.keys - s.queries);
}

/// Keys [0, end) hold every key a query in [q0, q0 + nq) sees.
DLC_DEVICE long long dlc_hw_attn_key_end(const DlcAttentionArgs &s, long long q0, long long nq) {
  if (!s.causal)
    return s.keys;
  long long end = q0 + nq + (s.keys - s.queries);
  return end < 0 ? 0 : (end > s.keys ? s.keys : end);
}

/// s_ij = scale * dot + mask_ij for visible keys, -inf otherwise, where dot
/// is q_i . k_j summed in order of the head dimension.
DLC_DEVICE float dlc_hw_attn_score(const DlcHandArgs &a, int maskSlot, long long maskBase,
                                   long long i, long long j, float dot) {
  const DlcAttentionArgs &s = a.attention;
  if (!dlc_hw_attn_visible(s, i, j))
    return DLC_NEG_INF;
  float v = (float)s.scale * dot;
  if (s.hasMask)
    v += dlc_hw_ld(a, maskSlot, maskBase + i * s.maskQueryStride + j * s.maskKeyStride);
  return v;
}
/// The same, q and k rows of `d` floats in shared memory.
DLC_DEVICE float dlc_hw_attn_logit(const DlcHandArgs &a, int maskSlot, long long maskBase,
                                   long long i, long long j, const float *q, const float *k,
                                   long long d) {
  if (!dlc_hw_attn_visible(a.attention, i, j))
    return DLC_NEG_INF;
  float dot = 0.f;
  for (long long e = 0; e < d; ++e)
    dot += q[e] * k[e];
  return dlc_hw_attn_score(a, maskSlot, maskBase, i, j, dot);
}

/// Loads rows [row0, row0 + n) of a [rows, width] slice at `first` of
/// buffer k into a tile of `tileRows` rows, zeros past n.
DLC_DEVICE void dlc_hw_attn_load(const DlcHandArgs &a, int k, long long first, long long n,
                                 long long width, float *tile, int tileRows) {
  for (long long e = threadIdx.x; e < tileRows * width; e += blockDim.x) {
    long long r = e / width, c = e % width;
    tile[r * DLC_HW_ATTN_STRIDE + c] = r < n ? dlc_hw_ld(a, k, first + r * width + c) : 0.f;
  }
}

// Forward: one block per (batch entry, tile of DLC_ATTENTION_QUERY_TILE
// queries), grid-stride. Each key tile: s, the rows' online softmax
// (running maximum m, sum l, the accumulator rescaled by exp(m_old -
// m_new)), then o += p' v. Shared memory: 2 query tiles (q, o), one key
// tile (k, then v in the same place), the scores and the probabilities:
// 45,760 bytes.
extern "C" __global__ void __launch_bounds__(DLC_ATTENTION_THREADS)
dlc_hw_attention(const DlcHandArgs a, const long long *step) {
  enum {
    BR = DLC_ATTENTION_QUERY_TILE,
    BC = DLC_ATTENTION_KEY_TILE,
    KEY_GROUPS = BC / DLC_HW_ATTN_MICRO, // micro-tiles in a row of scores
    ROW_GROUPS = BR / DLC_HW_ATTN_MICRO  // micro-tiles in a column of o
  };
  static_assert(BR % DLC_HW_ATTN_MICRO == 0 && BC % DLC_HW_ATTN_MICRO == 0, "micro-tiles");
  __shared__ float sQ[BR * DLC_HW_ATTN_STRIDE], sO[BR * DLC_HW_ATTN_STRIDE];
  __shared__ float sKV[BC * DLC_HW_ATTN_STRIDE];
  __shared__ float sS[BR * BC], sP[BR * BC];
  __shared__ float sM[BR], sL[BR], sAlpha[BR];
  const DlcAttentionArgs &s = a.attention;
  const long long Sq = s.queries, Sk = s.keys, D = s.d, Dv = s.dv;
  const long long qTiles = (Sq + BR - 1) / BR;
  const bool dropout = s.rate > 0;
  const float keepScale = (float)(1.0 / (1.0 - s.rate));
  const unsigned long long base = dropout ? dlc_hw_keep_base(s.seed, *step) : 0;
  const long long t = threadIdx.x, nt = blockDim.x;
  for (long long item = blockIdx.x; item < s.batch * qTiles; item += gridDim.x) {
    const long long b = item / qTiles, q0 = (item % qTiles) * BR;
    const long long nq = Sq - q0 < BR ? Sq - q0 : BR;
    const long long maskBase = s.hasMask ? dlc_hw_attn_mask_base(s, b) : 0;
    __syncthreads(); // the last item's output is read out
    dlc_hw_attn_load(a, DLC_ATTENTION_Q, (b * Sq + q0) * D, nq, D, sQ, BR);
    for (long long e = t; e < BR * Dv; e += nt)
      sO[(e / Dv) * DLC_HW_ATTN_STRIDE + e % Dv] = 0.f;
    for (long long r = t; r < BR; r += nt)
      sM[r] = DLC_NEG_INF, sL[r] = 0.f;
    const long long kEnd = dlc_hw_attn_key_end(s, q0, nq);
    for (long long k0 = 0; k0 < kEnd; k0 += BC) {
      const long long nk = Sk - k0 < BC ? Sk - k0 : BC;
      __syncthreads(); // the last tile's v is read
      dlc_hw_attn_load(a, DLC_ATTENTION_K, (b * Sk + k0) * D, nk, D, sKV, BC);
      __syncthreads();
      // Each thread's item: one query against DLC_HW_ATTN_MICRO keys, each
      // q element read once for all of them.
      for (long long e = t; e < BR * KEY_GROUPS; e += nt) {
        const long long r = e / KEY_GROUPS, c0 = (e % KEY_GROUPS) * DLC_HW_ATTN_MICRO;
        const float *q = sQ + r * DLC_HW_ATTN_STRIDE, *k = sKV + c0 * DLC_HW_ATTN_STRIDE;
        float dot[DLC_HW_ATTN_MICRO] = {};
        for (long long d = 0; d < D; ++d) {
          const float qd = q[d];
          for (int u = 0; u < DLC_HW_ATTN_MICRO; ++u)
            dot[u] += qd * k[u * DLC_HW_ATTN_STRIDE + d];
        }
        for (int u = 0; u < DLC_HW_ATTN_MICRO; ++u)
          sS[r * BC + c0 + u] = r < nq && c0 + u < nk
                                    ? dlc_hw_attn_score(a, DLC_ATTENTION_MASK, maskBase, q0 + r,
                                                        k0 + c0 + u, dot[u])
                                    : DLC_NEG_INF;
      }
      __syncthreads(); // k is read: v takes its place
      dlc_hw_attn_load(a, DLC_ATTENTION_V, (b * Sk + k0) * Dv, nk, Dv, sKV, BC);
      // The rows' new maxima; a row that has seen no visible key yet keeps
      // m = -inf and p = 0.
      for (long long r = t; r < BR; r += nt) {
        const float mOld = sM[r];
        float mx = mOld;
        for (int c = 0; c < BC; ++c)
          mx = mx < sS[r * BC + c] ? sS[r * BC + c] : mx;
        sAlpha[r] = mx == DLC_NEG_INF ? 1.f : expf(mOld - mx);
        sM[r] = mx;
      }
      __syncthreads();
      // p for the rows' sums, p' (dropped) for o; element-wise, so that the
      // dropout draws spread over every thread.
      for (long long e = t; e < BR * BC; e += nt) {
        const long long r = e / BC, c = e % BC;
        const float mx = sM[r];
        float p = mx == DLC_NEG_INF ? 0.f : expf(sS[e] - mx);
        sP[e] = p;
        if (dropout && p != 0.f)
          p = dlc_hw_keep(base, (b * Sq + q0 + r) * Sk + k0 + c, s.rate) ? p * keepScale : 0.f;
        sS[e] = p;
      }
      __syncthreads();
      // l's update reads p and writes l alone, o's reads p' and writes o:
      // no barrier between them.
      for (long long r = t; r < BR; r += nt) {
        float sum = 0.f;
        for (int c = 0; c < BC; ++c)
          sum += sP[r * BC + c];
        sL[r] = sL[r] * sAlpha[r] + sum;
      }
      // Each thread's item: DLC_HW_ATTN_MICRO queries' element d, each v
      // element read once for all of them.
      for (long long e = t; e < ROW_GROUPS * Dv; e += nt) {
        const long long r0 = (e / Dv) * DLC_HW_ATTN_MICRO, d = e % Dv;
        float acc[DLC_HW_ATTN_MICRO];
        for (int u = 0; u < DLC_HW_ATTN_MICRO; ++u)
          acc[u] = sO[(r0 + u) * DLC_HW_ATTN_STRIDE + d] * sAlpha[r0 + u];
        for (long long c = 0; c < nk; ++c) {
          const float vd = sKV[c * DLC_HW_ATTN_STRIDE + d];
          for (int u = 0; u < DLC_HW_ATTN_MICRO; ++u)
            acc[u] += sS[(r0 + u) * BC + c] * vd;
        }
        for (int u = 0; u < DLC_HW_ATTN_MICRO; ++u)
          sO[(r0 + u) * DLC_HW_ATTN_STRIDE + d] = acc[u];
      }
    }
    __syncthreads();
    // A row with no visible key: l = 0, so o is NaN and lse -inf, as the
    // softmax of a row of -inf.
    for (long long e = t; e < nq * Dv; e += nt) {
      const long long r = e / Dv, d = e % Dv;
      dlc_hw_st(a, DLC_ATTENTION_O, (b * Sq + q0 + r) * Dv + d,
                sO[r * DLC_HW_ATTN_STRIDE + d] / sL[r]);
    }
    for (long long r = t; r < nq; r += nt)
      static_cast<float *>(a.p[DLC_ATTENTION_LSE])[b * Sq + q0 + r] = sM[r] + logf(sL[r]);
  }
}

/// The backward's view of one (query i, key j) pair: p recomputed from lse,
/// p' = p * keep / (1 - R) (what o summed), and ds = p * (dp - D_i) with
/// dp = (do_i . v_j) * keep / (1 - R). q, k, do, v: rows in shared memory.
struct DlcAttnGrad {
  float pDropped, ds;
};
DLC_DEVICE DlcAttnGrad dlc_hw_attn_grad(const DlcHandArgs &a, long long maskBase,
                                        unsigned long long base, long long b, long long i,
                                        long long j, const float *q, const float *k,
                                        const float *dO, const float *v, float lse, float di) {
  const DlcAttentionArgs &s = a.attention;
  DlcAttnGrad g = {0.f, 0.f};
  const float logit =
      dlc_hw_attn_logit(a, DLC_ATTENTION_BACKWARD_MASK, maskBase, i, j, q, k, s.d);
  if (logit == DLC_NEG_INF)
    return g;
  const float p = expf(logit - lse);
  float dp = 0.f;
  for (long long e = 0; e < s.dv; ++e)
    dp += dO[e] * v[e];
  g.pDropped = p;
  if (s.rate > 0) {
    const float keepScale = (float)(1.0 / (1.0 - s.rate));
    const bool keep = dlc_hw_keep(base, (b * s.queries + i) * s.keys + j, s.rate);
    g.pDropped = keep ? p * keepScale : 0.f;
    dp = keep ? dp * keepScale : 0.f;
  }
  g.ds = p * (dp - di);
  return g;
}

/// lse_i and D_i = do_i . o_i for the tile's rows [q0, q0 + nq); dO: the
/// tile's do rows in shared memory.
DLC_DEVICE void dlc_hw_attn_row_stats(const DlcHandArgs &a, long long b, long long q0,
                                      long long nq, const float *dO, float *lse, float *di,
                                      int rows) {
  const DlcAttentionArgs &s = a.attention;
  for (long long r = threadIdx.x; r < rows; r += blockDim.x) {
    float dot = 0.f, l = 0.f;
    if (r < nq) {
      const long long row = b * s.queries + q0 + r;
      for (long long e = 0; e < s.dv; ++e)
        dot += dO[r * DLC_HW_ATTN_STRIDE + e] *
               dlc_hw_ld(a, DLC_ATTENTION_BACKWARD_O, row * s.dv + e);
      l = static_cast<const float *>(a.p[DLC_ATTENTION_BACKWARD_LSE])[row];
    }
    lse[r] = l, di[r] = dot;
  }
}

// Backward, two phases (HandKernel::phases), each grid-stride over its
// tiles and writing its outputs once, so no atomics and the same sums on
// every run. Phase 0: one block per (batch entry, tile of
// DLC_ATTENTION_BACKWARD_KEY_TILE keys) sums dv = p'^T do and dk = scale *
// ds^T q over the query tiles that see it. Phase 1: one block per (batch
// entry, tile of DLC_ATTENTION_BACKWARD_DQ_QUERY_TILE queries) sums dq =
// scale * ds k over the key tiles it sees. Five tiles of 16 rows, the
// pairs' p' and ds, and the rows' lse and D: 43,456 bytes.
extern "C" __global__ void __launch_bounds__(DLC_ATTENTION_THREADS)
dlc_hw_attention_backward(const DlcHandArgs a, const long long *step) {
  enum {
    BC = DLC_ATTENTION_BACKWARD_KEY_TILE,
    BR0 = DLC_ATTENTION_BACKWARD_KV_QUERY_TILE,
    BR1 = DLC_ATTENTION_BACKWARD_DQ_QUERY_TILE,
    ROWS = 16 // each tile buffer's rows: max(BC, 2 * BR0, BR1)
  };
  static_assert(BC <= ROWS && 2 * BR0 <= ROWS && BR1 <= ROWS, "the tiles fit the buffers");
  __shared__ float sA[ROWS * DLC_HW_ATTN_STRIDE], sB[ROWS * DLC_HW_ATTN_STRIDE],
      sC[ROWS * DLC_HW_ATTN_STRIDE], sD[ROWS * DLC_HW_ATTN_STRIDE], sE[ROWS * DLC_HW_ATTN_STRIDE];
  __shared__ float sP[ROWS * BC], sDS[ROWS * BC];
  __shared__ float sLse[ROWS], sDi[ROWS];
  const DlcAttentionArgs &s = a.attention;
  const long long Sq = s.queries, Sk = s.keys, D = s.d, Dv = s.dv;
  const float scale = (float)s.scale;
  const unsigned long long base = s.rate > 0 ? dlc_hw_keep_base(s.seed, *step) : 0;
  const long long t = threadIdx.x, nt = blockDim.x;
  if (a.i[DLC_HAND_PHASE_WORD] == 0) {
    // sA: k, sB: v, sC: dk, sD: dv, sE: q (rows 0..BR0) and do (rows BR0..).
    float *sK = sA, *sV = sB, *sDK = sC, *sDV = sD, *sQ = sE,
          *sDO = sE + BR0 * DLC_HW_ATTN_STRIDE;
    const long long kTiles = (Sk + BC - 1) / BC;
    for (long long item = blockIdx.x; item < s.batch * kTiles; item += gridDim.x) {
      const long long b = item / kTiles, k0 = (item % kTiles) * BC;
      const long long nk = Sk - k0 < BC ? Sk - k0 : BC;
      const long long maskBase = s.hasMask ? dlc_hw_attn_mask_base(s, b) : 0;
      __syncthreads(); // the last item's dk and dv are read out
      dlc_hw_attn_load(a, DLC_ATTENTION_BACKWARD_K, (b * Sk + k0) * D, nk, D, sK, BC);
      dlc_hw_attn_load(a, DLC_ATTENTION_BACKWARD_V, (b * Sk + k0) * Dv, nk, Dv, sV, BC);
      for (long long e = t; e < BC * DLC_HW_ATTN_STRIDE; e += nt)
        sDK[e] = 0.f, sDV[e] = 0.f;
      // Causal: queries before k0 - (Sk - Sq) see none of these keys.
      long long qBegin = s.causal ? k0 - (Sk - Sq) : 0;
      qBegin = qBegin < 0 ? 0 : qBegin;
      for (long long q0 = qBegin; q0 < Sq; q0 += BR0) {
        const long long nq = Sq - q0 < BR0 ? Sq - q0 : BR0;
        __syncthreads(); // the last query tile's q, do, p' and ds are read
        dlc_hw_attn_load(a, DLC_ATTENTION_BACKWARD_Q, (b * Sq + q0) * D, nq, D, sQ, BR0);
        dlc_hw_attn_load(a, DLC_ATTENTION_BACKWARD_DO, (b * Sq + q0) * Dv, nq, Dv, sDO, BR0);
        __syncthreads();
        dlc_hw_attn_row_stats(a, b, q0, nq, sDO, sLse, sDi, BR0);
        __syncthreads();
        for (long long e = t; e < BR0 * BC; e += nt) {
          const long long r = e / BC, c = e % BC;
          DlcAttnGrad g = {0.f, 0.f};
          if (r < nq && c < nk)
            g = dlc_hw_attn_grad(a, maskBase, base, b, q0 + r, k0 + c,
                                 sQ + r * DLC_HW_ATTN_STRIDE, sK + c * DLC_HW_ATTN_STRIDE,
                                 sDO + r * DLC_HW_ATTN_STRIDE, sV + c * DLC_HW_ATTN_STRIDE,
                                 sLse[r], sDi[r]);
          sP[e] = g.pDropped, sDS[e] = g.ds;
        }
        __syncthreads();
        for (long long e = t; e < BC * Dv; e += nt) {
          const long long c = e / Dv, d = e % Dv;
          float acc = sDV[c * DLC_HW_ATTN_STRIDE + d];
          for (long long r = 0; r < nq; ++r)
            acc += sP[r * BC + c] * sDO[r * DLC_HW_ATTN_STRIDE + d];
          sDV[c * DLC_HW_ATTN_STRIDE + d] = acc;
        }
        for (long long e = t; e < BC * D; e += nt) {
          const long long c = e / D, d = e % D;
          float acc = 0.f;
          for (long long r = 0; r < nq; ++r)
            acc += sDS[r * BC + c] * sQ[r * DLC_HW_ATTN_STRIDE + d];
          sDK[c * DLC_HW_ATTN_STRIDE + d] += scale * acc;
        }
      }
      __syncthreads();
      for (long long e = t; e < nk * D; e += nt)
        dlc_hw_st(a, DLC_ATTENTION_BACKWARD_DK, (b * Sk + k0) * D + e,
                  sDK[(e / D) * DLC_HW_ATTN_STRIDE + e % D]);
      for (long long e = t; e < nk * Dv; e += nt)
        dlc_hw_st(a, DLC_ATTENTION_BACKWARD_DV, (b * Sk + k0) * Dv + e,
                  sDV[(e / Dv) * DLC_HW_ATTN_STRIDE + e % Dv]);
    }
    return;
  }
  // Phase 1. sA: q, sB: do, sC: dq, sD: k, sE: v.
  float *sQ = sA, *sDO = sB, *sDQ = sC, *sK = sD, *sV = sE;
  const long long qTiles = (Sq + BR1 - 1) / BR1;
  for (long long item = blockIdx.x; item < s.batch * qTiles; item += gridDim.x) {
    const long long b = item / qTiles, q0 = (item % qTiles) * BR1;
    const long long nq = Sq - q0 < BR1 ? Sq - q0 : BR1;
    const long long maskBase = s.hasMask ? dlc_hw_attn_mask_base(s, b) : 0;
    __syncthreads(); // the last item's dq is read out
    dlc_hw_attn_load(a, DLC_ATTENTION_BACKWARD_Q, (b * Sq + q0) * D, nq, D, sQ, BR1);
    dlc_hw_attn_load(a, DLC_ATTENTION_BACKWARD_DO, (b * Sq + q0) * Dv, nq, Dv, sDO, BR1);
    for (long long e = t; e < BR1 * DLC_HW_ATTN_STRIDE; e += nt)
      sDQ[e] = 0.f;
    __syncthreads();
    dlc_hw_attn_row_stats(a, b, q0, nq, sDO, sLse, sDi, BR1);
    const long long kEnd = dlc_hw_attn_key_end(s, q0, nq);
    for (long long k0 = 0; k0 < kEnd; k0 += BC) {
      const long long nk = Sk - k0 < BC ? Sk - k0 : BC;
      __syncthreads(); // the last key tile's k and ds are read; the row stats written
      dlc_hw_attn_load(a, DLC_ATTENTION_BACKWARD_K, (b * Sk + k0) * D, nk, D, sK, BC);
      dlc_hw_attn_load(a, DLC_ATTENTION_BACKWARD_V, (b * Sk + k0) * Dv, nk, Dv, sV, BC);
      __syncthreads();
      for (long long e = t; e < BR1 * BC; e += nt) {
        const long long r = e / BC, c = e % BC;
        DlcAttnGrad g = {0.f, 0.f};
        if (r < nq && c < nk)
          g = dlc_hw_attn_grad(a, maskBase, base, b, q0 + r, k0 + c,
                               sQ + r * DLC_HW_ATTN_STRIDE, sK + c * DLC_HW_ATTN_STRIDE,
                               sDO + r * DLC_HW_ATTN_STRIDE, sV + c * DLC_HW_ATTN_STRIDE,
                               sLse[r], sDi[r]);
        sDS[e] = g.ds;
      }
      __syncthreads();
      for (long long e = t; e < BR1 * D; e += nt) {
        const long long r = e / D, d = e % D;
        float acc = 0.f;
        for (long long c = 0; c < nk; ++c)
          acc += sDS[r * BC + c] * sK[c * DLC_HW_ATTN_STRIDE + d];
        sDQ[r * DLC_HW_ATTN_STRIDE + d] += scale * acc;
      }
    }
    __syncthreads();
    for (long long e = t; e < nq * D; e += nt)
      dlc_hw_st(a, DLC_ATTENTION_BACKWARD_DQ, (b * Sq + q0) * D + e,
                sDQ[(e / D) * DLC_HW_ATTN_STRIDE + e % D]);
  }
}
