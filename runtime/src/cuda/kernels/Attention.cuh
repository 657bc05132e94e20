
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

// ---------------------------------------------------------------------------
// Tensor-core attention: the same two kernels for f16 and bf16 operands with
// head dimensions that are multiples of 16 up to DLC_ATTENTION_TC_MAX_D.
// The products (q k^T, p' v, and in the gradient do v^T, p'^T do, ds^T q,
// ds k) run as 16x16x16 WMMA tiles with float accumulators, one warp a tile;
// the softmax, the mask, dropout and ds stay element-wise on float tiles in
// shared memory, exactly as the SIMT kernels above compute them. p' and ds
// are rounded to the operands' type to enter the products, as
// FlashAttention-2 does. A block's warps take the tiles of a product in turn
// (tile = warp, warp + warps, ...), so the kernels are right for any block
// of whole warps; on the host, where a "warp" is the simulator's threads,
// lane 0 computes each tile in float and the others wait at the barrier.
#define DLC_TC_DP (DLC_ATTENTION_TC_MAX_D + 8) // q, k, v, do rows: 16-bit elements
#define DLC_TC_OP (DLC_ATTENTION_TC_MAX_D + 4) // o, dq, dk, dv rows: floats
#define DLC_TC_KEYS DLC_ATTENTION_TC_KEY_TILE
#define DLC_TC_SP (DLC_TC_KEYS + 4)            // score rows: floats
#define DLC_TC_PP (DLC_TC_KEYS + 8)            // p', ds rows: 16-bit elements
#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <mma.h>
#define DLC_TC_SHARED __shared__ __align__(32)
template <int T> struct DlcTcElem;
template <> struct DlcTcElem<DLC_T_F16> { typedef __half type; };
template <> struct DlcTcElem<DLC_T_BF16> { typedef __nv_bfloat16 type; };
template <bool Col> struct DlcTcLayout { typedef nvcuda::wmma::row_major type; };
template <> struct DlcTcLayout<true> { typedef nvcuda::wmma::col_major type; };
/// c[16 x 16] (floats, row-major, ldc) = (acc ? c : 0) + a[16 x kk] b[kk x 16]
/// for one warp; a and b hold 16-bit elements of type T, row- or
/// column-major (ACol, BCol) with leading dimensions lda, ldb; kk a multiple
/// of 16. Pointers 32-byte aligned, leading dimensions multiples of 8.
template <int T, bool ACol, bool BCol>
__device__ __forceinline__ void dlc_tc_tile(float *c, int ldc, bool acc, const unsigned short *a,
                                            int lda, const unsigned short *b, int ldb, int kk) {
  namespace wm = nvcuda::wmma;
  typedef typename DlcTcElem<T>::type E;
  wm::fragment<wm::matrix_a, 16, 16, 16, E, typename DlcTcLayout<ACol>::type> fa;
  wm::fragment<wm::matrix_b, 16, 16, 16, E, typename DlcTcLayout<BCol>::type> fb;
  wm::fragment<wm::accumulator, 16, 16, 16, float> fc;
  if (acc)
    wm::load_matrix_sync(fc, c, ldc, wm::mem_row_major);
  else
    wm::fill_fragment(fc, 0.f);
  for (int k = 0; k < kk; k += 16) {
    wm::load_matrix_sync(fa, reinterpret_cast<const E *>(a) + (ACol ? k * lda : k), lda);
    wm::load_matrix_sync(fb, reinterpret_cast<const E *>(b) + (BCol ? k : k * ldb), ldb);
    wm::mma_sync(fc, fa, fb, fc);
  }
  wm::store_matrix_sync(c, fc, ldc, wm::mem_row_major);
}
#else
#define DLC_TC_SHARED alignas(32) static
template <int T> inline float dlc_tc_widen(unsigned short bits) {
  return T == DLC_T_F16 ? dlc_f16_bits_to_float(bits) : dlc_bf16_bits_to_float(bits);
}
template <int T, bool ACol, bool BCol>
inline void dlc_tc_tile(float *c, int ldc, bool acc, const unsigned short *a, int lda,
                        const unsigned short *b, int ldb, int kk) {
  if (threadIdx.x % 32 != 0)
    return;
  for (int r = 0; r < 16; ++r)
    for (int j = 0; j < 16; ++j) {
      float sum = acc ? c[r * ldc + j] : 0.f;
      for (int k = 0; k < kk; ++k)
        sum += dlc_tc_widen<T>(a[ACol ? r + k * lda : r * lda + k]) *
               dlc_tc_widen<T>(b[BCol ? k + j * ldb : k * ldb + j]);
      c[r * ldc + j] = sum;
    }
}
#endif
template <int T> DLC_DEVICE unsigned short dlc_tc_narrow(float v) {
  return T == DLC_T_F16 ? dlc_float_to_f16_bits(v) : dlc_float_to_bf16_bits(v);
}
DLC_DEVICE int dlc_tc_warp() { return (int)(threadIdx.x / 32); }
DLC_DEVICE int dlc_tc_warps() { return (int)((blockDim.x + 31) / 32); }

/// Rows [0, n) of a [rows, width] slice at `first` of 16-bit buffer k into
/// a tile of `tileRows` rows DLC_TC_DP apart, zeros past n: the bits as
/// they are.
DLC_DEVICE void dlc_tc_load(const DlcHandArgs &a, int k, long long first, long long n,
                            long long width, unsigned short *tile, int tileRows) {
  const unsigned short *src = static_cast<const unsigned short *>(a.p[k]) + first;
  for (long long e = threadIdx.x; e < tileRows * width; e += blockDim.x) {
    long long r = e / width, c = e % width;
    tile[r * DLC_TC_DP + c] = r < n ? src[r * width + c] : (unsigned short)0;
  }
}

/// `tiles` 16x16 products of a [rows x cols] float result, tile-row-major,
/// spread over the block's warps.
template <int T, bool ACol, bool BCol>
DLC_DEVICE void dlc_tc_product(float *c, int ldc, bool acc, const unsigned short *a, int lda,
                               const unsigned short *b, int ldb, int kk, int rows, int cols,
                               int firstTile, int tileStride) {
  const int across = cols / 16;
  for (int tile = firstTile; tile < (rows / 16) * across; tile += tileStride) {
    const int tr = tile / across, tc = tile % across;
    dlc_tc_tile<T, ACol, BCol>(c + tr * 16 * ldc + tc * 16, ldc, acc,
                               a + (ACol ? tr * 16 : tr * 16 * lda), lda,
                               b + (BCol ? tc * 16 * ldb : tc * 16), ldb, kk);
  }
}

// Forward: one block per (batch entry, tile of DLC_ATTENTION_TC_QUERY_TILE
// queries), grid-stride, key tiles of DLC_TC_KEYS. s = q k^T on the tensor
// cores into a float tile; the rows' online softmax as the SIMT kernel's
// (scale, mask, causality, the running maximum and sum, o rescaled, dropout),
// element-wise wherever it can be; then o += p' v on the tensor cores, o a
// float tile in shared memory. Shared memory: q (64 x 72 x 2), k then v
// (32 x 72 x 2), p' (64 x 40 x 2), s (64 x 36 x 4), o (64 x 68 x 4), m, l
// and the rescaling factors: 46,336 bytes.
template <int T>
DLC_DEVICE void dlc_hw_attention_tc(const DlcHandArgs &a, const long long *step,
                                    unsigned char *smem) {
  enum { BR = DLC_ATTENTION_TC_QUERY_TILE, BC = DLC_TC_KEYS };
  unsigned short *sQ = reinterpret_cast<unsigned short *>(smem);
  unsigned short *sKV = sQ + BR * DLC_TC_DP;
  unsigned short *sP = sKV + BC * DLC_TC_DP;
  float *sS = reinterpret_cast<float *>(sP + BR * DLC_TC_PP);
  float *sO = sS + BR * DLC_TC_SP;
  float *sM = sO + BR * DLC_TC_OP, *sL = sM + BR, *sAlpha = sL + BR;
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
    dlc_tc_load(a, DLC_ATTENTION_Q, (b * Sq + q0) * D, nq, D, sQ, BR);
    for (long long e = t; e < BR * Dv; e += nt)
      sO[(e / Dv) * DLC_TC_OP + e % Dv] = 0.f;
    for (long long r = t; r < BR; r += nt)
      sM[r] = DLC_NEG_INF, sL[r] = 0.f;
    const long long kEnd = dlc_hw_attn_key_end(s, q0, nq);
    for (long long k0 = 0; k0 < kEnd; k0 += BC) {
      const long long nk = Sk - k0 < BC ? Sk - k0 : BC;
      __syncthreads(); // the last tile's v and p' are read
      dlc_tc_load(a, DLC_ATTENTION_K, (b * Sk + k0) * D, nk, D, sKV, BC);
      __syncthreads();
      dlc_tc_product<T, false, true>(sS, DLC_TC_SP, false, sQ, DLC_TC_DP, sKV, DLC_TC_DP,
                                     (int)D, BR, BC, dlc_tc_warp(), dlc_tc_warps());
      __syncthreads(); // k is read: v takes its place
      dlc_tc_load(a, DLC_ATTENTION_V, (b * Sk + k0) * Dv, nk, Dv, sKV, BC);
      // The scores, element-wise: scale, mask, causality; -inf outside.
      for (long long e = t; e < BR * BC; e += nt) {
        const long long r = e / BC, c = e % BC;
        float &v = sS[r * DLC_TC_SP + c];
        v = r < nq && c < nk
                ? dlc_hw_attn_score(a, DLC_ATTENTION_MASK, maskBase, q0 + r, k0 + c, v)
                : DLC_NEG_INF;
      }
      __syncthreads();
      // The rows' new maxima; a row that has seen no visible key yet keeps
      // m = -inf and p = 0.
      for (long long r = t; r < BR; r += nt) {
        const float mOld = sM[r];
        float mx = mOld;
        for (int c = 0; c < BC; ++c)
          mx = mx < sS[r * DLC_TC_SP + c] ? sS[r * DLC_TC_SP + c] : mx;
        sAlpha[r] = mx == DLC_NEG_INF ? 1.f : expf(mOld - mx);
        sM[r] = mx;
      }
      __syncthreads();
      // p for the rows' sums (in place of s), p' (dropped) in the operands'
      // type for o: element-wise, so that exp and the dropout draws spread
      // over every thread.
      for (long long e = t; e < BR * BC; e += nt) {
        const long long r = e / BC, c = e % BC;
        const float mx = sM[r];
        float p = mx == DLC_NEG_INF ? 0.f : expf(sS[r * DLC_TC_SP + c] - mx);
        sS[r * DLC_TC_SP + c] = p;
        if (dropout && p != 0.f)
          p = dlc_hw_keep(base, (b * Sq + q0 + r) * Sk + k0 + c, s.rate) ? p * keepScale : 0.f;
        sP[r * DLC_TC_PP + c] = dlc_tc_narrow<T>(p);
      }
      __syncthreads();
      // l's update reads p and writes l, o's rescaling writes o alone.
      for (long long r = t; r < BR; r += nt) {
        float sum = 0.f;
        for (int c = 0; c < BC; ++c)
          sum += sS[r * DLC_TC_SP + c];
        sL[r] = sL[r] * sAlpha[r] + sum;
      }
      for (long long e = t; e < BR * Dv; e += nt)
        sO[(e / Dv) * DLC_TC_OP + e % Dv] *= sAlpha[e / Dv];
      __syncthreads();
      dlc_tc_product<T, false, false>(sO, DLC_TC_OP, true, sP, DLC_TC_PP, sKV, DLC_TC_DP, BC,
                                      BR, (int)Dv, dlc_tc_warp(), dlc_tc_warps());
    }
    __syncthreads();
    // A row with no visible key: l = 0, so o is NaN and lse -inf, as the
    // softmax of a row of -inf.
    for (long long e = t; e < nq * Dv; e += nt) {
      const long long r = e / Dv, d = e % Dv;
      dlc_hw_st(a, DLC_ATTENTION_O, (b * Sq + q0 + r) * Dv + d, sO[r * DLC_TC_OP + d] / sL[r]);
    }
    for (long long r = t; r < nq; r += nt)
      static_cast<float *>(a.p[DLC_ATTENTION_LSE])[b * Sq + q0 + r] = sM[r] + logf(sL[r]);
  }
}
#define DLC_TC_FORWARD_BYTES                                                                     \
  ((DLC_ATTENTION_TC_QUERY_TILE * DLC_TC_DP + DLC_TC_KEYS * DLC_TC_DP +                          \
    DLC_ATTENTION_TC_QUERY_TILE * DLC_TC_PP) * 2 +                                               \
   (DLC_ATTENTION_TC_QUERY_TILE * (DLC_TC_SP + DLC_TC_OP + 3)) * 4)
extern "C" __global__ void __launch_bounds__(DLC_ATTENTION_THREADS)
dlc_hw_attention_tc_f16(const DlcHandArgs a, const long long *step) {
  DLC_TC_SHARED unsigned char smem[DLC_TC_FORWARD_BYTES];
  dlc_hw_attention_tc<DLC_T_F16>(a, step, smem);
}
extern "C" __global__ void __launch_bounds__(DLC_ATTENTION_THREADS)
dlc_hw_attention_tc_bf16(const DlcHandArgs a, const long long *step) {
  DLC_TC_SHARED unsigned char smem[DLC_TC_FORWARD_BYTES];
  dlc_hw_attention_tc<DLC_T_BF16>(a, step, smem);
}

/// For the tile's query rows [0, rows): lse_i, and D_i = do_i . o_i in
/// order of the value dimension, do from its tile in shared memory.
template <int T>
DLC_DEVICE void dlc_tc_row_stats(const DlcHandArgs &a, long long b, long long q0, long long nq,
                                 const unsigned short *sDO, float *lse, float *di, int rows) {
  const DlcAttentionArgs &s = a.attention;
  for (long long r = threadIdx.x; r < rows; r += blockDim.x) {
    float dot = 0.f, l = 0.f;
    if (r < nq) {
      const long long row = b * s.queries + q0 + r;
      for (long long e = 0; e < s.dv; ++e) {
        const unsigned short bits = sDO[r * DLC_TC_DP + e];
        dot += (T == DLC_T_F16 ? dlc_f16_bits_to_float(bits) : dlc_bf16_bits_to_float(bits)) *
               dlc_hw_ld(a, DLC_ATTENTION_BACKWARD_O, row * s.dv + e);
      }
      l = static_cast<const float *>(a.p[DLC_ATTENTION_BACKWARD_LSE])[row];
    }
    lse[r] = l, di[r] = dot;
  }
}

/// From the float tiles s (q k^T, unscaled) and dp (do v^T, before
/// dropout) of `rows` queries x DLC_TC_KEYS keys: p' (what o summed) and
/// ds = p * (dp' - D_i) in the operands' type, the SIMT kernels'
/// dlc_hw_attn_grad element by element; zeros outside [nq, nk) and for
/// hidden pairs.
template <int T>
DLC_DEVICE void dlc_tc_grads(const DlcHandArgs &a, long long maskBase, unsigned long long base,
                             long long b, long long q0, long long nq, long long k0, long long nk,
                             const float *sS, const float *sDP, const float *lse,
                             const float *di, unsigned short *pDropped, unsigned short *ds,
                             int rows) {
  const DlcAttentionArgs &s = a.attention;
  const float keepScale = (float)(1.0 / (1.0 - s.rate));
  for (long long e = threadIdx.x; e < rows * DLC_TC_KEYS; e += blockDim.x) {
    const long long r = e / DLC_TC_KEYS, c = e % DLC_TC_KEYS;
    float pd = 0.f, g = 0.f;
    if (r < nq && c < nk) {
      const float logit = dlc_hw_attn_score(a, DLC_ATTENTION_BACKWARD_MASK, maskBase, q0 + r,
                                            k0 + c, sS[r * DLC_TC_SP + c]);
      if (logit != DLC_NEG_INF) {
        const float p = expf(logit - lse[r]);
        float dp = sDP[r * DLC_TC_SP + c];
        pd = p;
        if (s.rate > 0) {
          const bool keep = dlc_hw_keep(base, (b * s.queries + q0 + r) * s.keys + k0 + c, s.rate);
          pd = keep ? p * keepScale : 0.f;
          dp = keep ? dp * keepScale : 0.f;
        }
        g = p * (dp - di[r]);
      }
    }
    if (pDropped)
      pDropped[r * DLC_TC_PP + c] = dlc_tc_narrow<T>(pd);
    ds[r * DLC_TC_PP + c] = dlc_tc_narrow<T>(g);
  }
}

// Backward, the SIMT kernel's two phases on the tensor cores. Phase 0: one
// block per (batch entry, tile of DLC_TC_KEYS keys) sums dv = p'^T do and
// dk = scale * ds^T q over the query tiles (16 rows) that see it. Phase 1:
// one block per (batch entry, tile of DLC_ATTENTION_TC_BACKWARD_QUERY_TILE
// queries) sums dq = scale * ds k over the key tiles it sees. Each phase
// writes its outputs once: no atomics, the same sums on every run.
#define DLC_TC_BR0 16
#define DLC_TC_BR1 DLC_ATTENTION_TC_BACKWARD_QUERY_TILE
#define DLC_TC_BACKWARD0_BYTES                                                                   \
  ((2 * DLC_TC_KEYS * DLC_TC_DP + 2 * DLC_TC_BR0 * DLC_TC_DP + 2 * DLC_TC_BR0 * DLC_TC_PP) * 2 + \
   (2 * DLC_TC_BR0 * DLC_TC_SP + 2 * DLC_TC_KEYS * DLC_TC_OP + 2 * DLC_TC_BR0) * 4)
#define DLC_TC_BACKWARD1_BYTES                                                                   \
  ((2 * DLC_TC_BR1 * DLC_TC_DP + 2 * DLC_TC_KEYS * DLC_TC_DP + DLC_TC_BR1 * DLC_TC_PP) * 2 +     \
   (2 * DLC_TC_BR1 * DLC_TC_SP + DLC_TC_BR1 * DLC_TC_OP + 2 * DLC_TC_BR1) * 4)
#define DLC_TC_BACKWARD_BYTES                                                                    \
  (DLC_TC_BACKWARD0_BYTES > DLC_TC_BACKWARD1_BYTES ? DLC_TC_BACKWARD0_BYTES                      \
                                                   : DLC_TC_BACKWARD1_BYTES)
template <int T>
DLC_DEVICE void dlc_hw_attention_backward_tc(const DlcHandArgs &a, const long long *step,
                                             unsigned char *smem) {
  enum { BC = DLC_TC_KEYS, BR0 = DLC_TC_BR0, BR1 = DLC_TC_BR1 };
  const DlcAttentionArgs &s = a.attention;
  const long long Sq = s.queries, Sk = s.keys, D = s.d, Dv = s.dv;
  const float scale = (float)s.scale;
  const unsigned long long base = s.rate > 0 ? dlc_hw_keep_base(s.seed, *step) : 0;
  const long long t = threadIdx.x, nt = blockDim.x;
  const int warp = dlc_tc_warp(), warps = dlc_tc_warps();
  unsigned short *sK = reinterpret_cast<unsigned short *>(smem);
  unsigned short *sV = sK + BC * DLC_TC_DP;
  if (a.i[DLC_HAND_PHASE_WORD] == 0) {
    unsigned short *sQ = sV + BC * DLC_TC_DP, *sDO = sQ + BR0 * DLC_TC_DP;
    unsigned short *sPD = sDO + BR0 * DLC_TC_DP, *sDS = sPD + BR0 * DLC_TC_PP;
    float *sS = reinterpret_cast<float *>(sDS + BR0 * DLC_TC_PP), *sDP = sS + BR0 * DLC_TC_SP;
    float *sDK = sDP + BR0 * DLC_TC_SP, *sDV = sDK + BC * DLC_TC_OP;
    float *sLse = sDV + BC * DLC_TC_OP, *sDi = sLse + BR0;
    const long long kTiles = (Sk + BC - 1) / BC;
    for (long long item = blockIdx.x; item < s.batch * kTiles; item += gridDim.x) {
      const long long b = item / kTiles, k0 = (item % kTiles) * BC;
      const long long nk = Sk - k0 < BC ? Sk - k0 : BC;
      const long long maskBase = s.hasMask ? dlc_hw_attn_mask_base(s, b) : 0;
      __syncthreads(); // the last item's dk and dv are read out
      dlc_tc_load(a, DLC_ATTENTION_BACKWARD_K, (b * Sk + k0) * D, nk, D, sK, BC);
      dlc_tc_load(a, DLC_ATTENTION_BACKWARD_V, (b * Sk + k0) * Dv, nk, Dv, sV, BC);
      for (long long e = t; e < BC * DLC_TC_OP; e += nt)
        sDK[e] = 0.f, sDV[e] = 0.f;
      // Causal: queries before k0 - (Sk - Sq) see none of these keys.
      long long qBegin = s.causal ? k0 - (Sk - Sq) : 0;
      qBegin = qBegin < 0 ? 0 : qBegin;
      for (long long q0 = qBegin; q0 < Sq; q0 += BR0) {
        const long long nq = Sq - q0 < BR0 ? Sq - q0 : BR0;
        __syncthreads(); // the last query tile's q, do, p' and ds are read
        dlc_tc_load(a, DLC_ATTENTION_BACKWARD_Q, (b * Sq + q0) * D, nq, D, sQ, BR0);
        dlc_tc_load(a, DLC_ATTENTION_BACKWARD_DO, (b * Sq + q0) * Dv, nq, Dv, sDO, BR0);
        __syncthreads();
        dlc_tc_row_stats<T>(a, b, q0, nq, sDO, sLse, sDi, BR0);
        // s = q k^T and dp = do v^T: 2 + 2 tiles.
        dlc_tc_product<T, false, true>(sS, DLC_TC_SP, false, sQ, DLC_TC_DP, sK, DLC_TC_DP,
                                       (int)D, BR0, BC, warp, warps);
        dlc_tc_product<T, false, true>(sDP, DLC_TC_SP, false, sDO, DLC_TC_DP, sV, DLC_TC_DP,
                                       (int)Dv, BR0, BC, (warp + 2) % warps, warps);
        __syncthreads();
        dlc_tc_grads<T>(a, maskBase, base, b, q0, nq, k0, nk, sS, sDP, sLse, sDi, sPD, sDS, BR0);
        __syncthreads();
        // dv += p'^T do, dk += ds^T q: [keys x 16 queries] x [16 x d].
        dlc_tc_product<T, true, false>(sDV, DLC_TC_OP, true, sPD, DLC_TC_PP, sDO, DLC_TC_DP, BR0,
                                       BC, (int)Dv, warp, warps);
        dlc_tc_product<T, true, false>(sDK, DLC_TC_OP, true, sDS, DLC_TC_PP, sQ, DLC_TC_DP, BR0,
                                       BC, (int)D, warp, warps);
      }
      __syncthreads();
      for (long long e = t; e < nk * D; e += nt)
        dlc_hw_st(a, DLC_ATTENTION_BACKWARD_DK, (b * Sk + k0) * D + e,
                  scale * sDK[(e / D) * DLC_TC_OP + e % D]);
      for (long long e = t; e < nk * Dv; e += nt)
        dlc_hw_st(a, DLC_ATTENTION_BACKWARD_DV, (b * Sk + k0) * Dv + e,
                  sDV[(e / Dv) * DLC_TC_OP + e % Dv]);
    }
    return;
  }
  unsigned short *sQ = sV + BC * DLC_TC_DP, *sDO = sQ + BR1 * DLC_TC_DP;
  unsigned short *sDS = sDO + BR1 * DLC_TC_DP;
  float *sS = reinterpret_cast<float *>(sDS + BR1 * DLC_TC_PP), *sDP = sS + BR1 * DLC_TC_SP;
  float *sDQ = sDP + BR1 * DLC_TC_SP, *sLse = sDQ + BR1 * DLC_TC_OP, *sDi = sLse + BR1;
  const long long qTiles = (Sq + BR1 - 1) / BR1;
  for (long long item = blockIdx.x; item < s.batch * qTiles; item += gridDim.x) {
    const long long b = item / qTiles, q0 = (item % qTiles) * BR1;
    const long long nq = Sq - q0 < BR1 ? Sq - q0 : BR1;
    const long long maskBase = s.hasMask ? dlc_hw_attn_mask_base(s, b) : 0;
    __syncthreads(); // the last item's dq is read out
    dlc_tc_load(a, DLC_ATTENTION_BACKWARD_Q, (b * Sq + q0) * D, nq, D, sQ, BR1);
    dlc_tc_load(a, DLC_ATTENTION_BACKWARD_DO, (b * Sq + q0) * Dv, nq, Dv, sDO, BR1);
    for (long long e = t; e < BR1 * DLC_TC_OP; e += nt)
      sDQ[e] = 0.f;
    __syncthreads();
    dlc_tc_row_stats<T>(a, b, q0, nq, sDO, sLse, sDi, BR1);
    const long long kEnd = dlc_hw_attn_key_end(s, q0, nq);
    for (long long k0 = 0; k0 < kEnd; k0 += BC) {
      const long long nk = Sk - k0 < BC ? Sk - k0 : BC;
      __syncthreads(); // the last key tile's k and ds are read; q, do and the row stats written
      dlc_tc_load(a, DLC_ATTENTION_BACKWARD_K, (b * Sk + k0) * D, nk, D, sK, BC);
      dlc_tc_load(a, DLC_ATTENTION_BACKWARD_V, (b * Sk + k0) * Dv, nk, Dv, sV, BC);
      __syncthreads();
      dlc_tc_product<T, false, true>(sS, DLC_TC_SP, false, sQ, DLC_TC_DP, sK, DLC_TC_DP, (int)D,
                                     BR1, BC, warp, warps);
      dlc_tc_product<T, false, true>(sDP, DLC_TC_SP, false, sDO, DLC_TC_DP, sV, DLC_TC_DP,
                                     (int)Dv, BR1, BC, warp, warps);
      __syncthreads();
      dlc_tc_grads<T>(a, maskBase, base, b, q0, nq, k0, nk, sS, sDP, sLse, sDi, nullptr, sDS,
                      BR1);
      __syncthreads();
      // dq += ds k: [32 queries x keys] x [keys x d].
      dlc_tc_product<T, false, false>(sDQ, DLC_TC_OP, true, sDS, DLC_TC_PP, sK, DLC_TC_DP, BC,
                                      BR1, (int)D, warp, warps);
    }
    __syncthreads();
    for (long long e = t; e < nq * D; e += nt)
      dlc_hw_st(a, DLC_ATTENTION_BACKWARD_DQ, (b * Sq + q0) * D + e,
                scale * sDQ[(e / D) * DLC_TC_OP + e % D]);
  }
}
extern "C" __global__ void __launch_bounds__(DLC_ATTENTION_THREADS)
dlc_hw_attention_backward_tc_f16(const DlcHandArgs a, const long long *step) {
  DLC_TC_SHARED unsigned char smem[DLC_TC_BACKWARD_BYTES];
  dlc_hw_attention_backward_tc<DLC_T_F16>(a, step, smem);
}
extern "C" __global__ void __launch_bounds__(DLC_ATTENTION_THREADS)
dlc_hw_attention_backward_tc_bf16(const DlcHandArgs a, const long long *step) {
  DLC_TC_SHARED unsigned char smem[DLC_TC_BACKWARD_BYTES];
  dlc_hw_attention_backward_tc<DLC_T_BF16>(a, step, smem);
}
