
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_embedding(const DlcHandArgs a, const long long *step) {
  const long long rows = a.embedding.rows, d = a.embedding.d, n = a.embedding.n;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < n * d;
       e += (long long)gridDim.x * blockDim.x) {
    const long long r = e / d, c = e % d, id = dlc_hw_index(a, DLC_EMBEDDING_IDS, r);
    dlc_hw_st(a, DLC_EMBEDDING_Y, e,
              id >= 0 && id < rows ? dlc_hw_ld(a, DLC_EMBEDDING_TABLE, id * d + c) : DLC_HW_NAN);
  }
}

// Warps for the hits' prefix sum. A GPU votes with __ballot_sync; the
// host layers have no warps and emulate the vote through shared memory,
// in warps of 4 so that the tests' 16-thread blocks hold several warps
// and exercise the per-warp offsets.
#if defined(__CUDACC__)
#define DLC_HW_WARP 32
DLC_DEVICE unsigned dlc_hw_ballot(bool p) { return __ballot_sync(0xffffffffu, p); }
DLC_DEVICE int dlc_hw_popc(unsigned m) { return __popc(m); }
#else
#define DLC_HW_WARP 4
/// Called by every thread of the block: bit l of lane l's p, for the
/// caller's warp.
DLC_DEVICE unsigned dlc_hw_ballot(bool p) {
  __shared__ unsigned votes[1024];
  votes[threadIdx.x] = p;
  __syncthreads();
  const unsigned first = threadIdx.x / DLC_HW_WARP * DLC_HW_WARP;
  unsigned m = 0;
  for (unsigned l = 0; l < DLC_HW_WARP && first + l < blockDim.x; ++l) m |= votes[first + l] << l;
  __syncthreads(); // votes is written again by the next vote
  return m;
}
DLC_DEVICE int dlc_hw_popc(unsigned m) { return __builtin_popcount(m); }
#endif

#define DLC_HW_EMBEDDING_ROWS 32
/// Hits one block lists at once: the whole range when they fit, else
/// each column chunk lists them again a tile of this many positions at a
/// time (a tile of positions never holds more hits than positions).
#define DLC_HW_EMBEDDING_HITS 1024

/// Lists the hits of positions [from, to) (indices in [r0, r0 + ROWS))
/// in position order, as position * ROWS + (index - r0): each thread
/// votes on one position a round, and a hit's slot is the hits of the
/// earlier rounds, of the earlier warps and of the earlier lanes. Stores
/// the first DLC_HW_EMBEDDING_HITS; returns how many there are, in every
/// thread. Called by the whole block.
DLC_DEVICE long long dlc_hw_embedding_hits(const DlcHandArgs &a, long long from, long long to,
                                           long long r0, long long *hits, int *warpHits) {
  const unsigned lane = threadIdx.x % DLC_HW_WARP, warp = threadIdx.x / DLC_HW_WARP;
  const unsigned warps = (blockDim.x + DLC_HW_WARP - 1) / DLC_HW_WARP;
  long long count = 0;
  for (long long p0 = from; p0 < to; p0 += blockDim.x) {
    const long long p = p0 + threadIdx.x;
    const long long q = p < to ? dlc_hw_index(a, DLC_EMBEDDING_BACKWARD_IDS, p) - r0 : -1;
    const bool hit = q >= 0 && q < DLC_HW_EMBEDDING_ROWS;
    const unsigned votes = dlc_hw_ballot(hit);
    if (lane == 0) warpHits[warp] = dlc_hw_popc(votes);
    __syncthreads();
    long long slot = count;
    for (unsigned k = 0; k < warps; ++k) {
      if (k < warp) slot += warpHits[k];
      count += warpHits[k];
    }
    slot += dlc_hw_popc(votes & ((1u << lane) - 1u));
    if (hit && slot < DLC_HW_EMBEDDING_HITS) hits[slot] = p * DLC_HW_EMBEDDING_ROWS + q;
    __syncthreads(); // warpHits is written again
  }
  return count;
}

/// dy loads one thread has in flight: a split of a small table (BERT's
/// token types) hits its rows at every position, and one load at a time
/// leaves such a launch waiting on memory latency.
#define DLC_HW_EMBEDDING_LOADS 8
/// Adds column c of the dy rows of `count` listed hits to their rows'
/// sums, in list (position) order.
DLC_DEVICE void dlc_hw_embedding_add(const DlcHandArgs &a, const long long *hits, long long count,
                                     long long c, long long d, float (&acc)[DLC_HW_EMBEDDING_ROWS]) {
  if (c >= d) return;
  for (long long j0 = 0; j0 < count; j0 += DLC_HW_EMBEDDING_LOADS) {
    float v[DLC_HW_EMBEDDING_LOADS];
    int q[DLC_HW_EMBEDDING_LOADS];
#pragma unroll
    for (int u = 0; u < DLC_HW_EMBEDDING_LOADS; ++u) {
      const long long hit = j0 + u < count ? hits[j0 + u] : -1;
      q[u] = hit < 0 ? -1 : (int)(hit % DLC_HW_EMBEDDING_ROWS);
      v[u] = hit < 0 ? 0.0f
                     : dlc_hw_ld(a, DLC_EMBEDDING_BACKWARD_DY, hit / DLC_HW_EMBEDDING_ROWS * d + c);
    }
#pragma unroll
    for (int u = 0; u < DLC_HW_EMBEDDING_LOADS; ++u)
#pragma unroll
      for (int k = 0; k < DLC_HW_EMBEDDING_ROWS; ++k) // a constant index: registers
        if (q[u] == k) acc[k] += v[u];
  }
}

// Work items: (row group, index split), over a grid-stride loop. Launched
// with 256 threads (HandKernel::blockSize), so the 32 sums of a thread's
// column stay in registers.
extern "C" __global__ void __launch_bounds__(256)
dlc_hw_embedding_backward(const DlcHandArgs a, const long long *step) {
  __shared__ long long hits[DLC_HW_EMBEDDING_HITS];
  __shared__ int warpHits[1024 / DLC_HW_WARP];
  const long long rows = a.embedding.rows, d = a.embedding.d, n = a.embedding.n;
  const long long splits = a.embedding.splits;
  const long long groups = (rows + DLC_HW_EMBEDDING_ROWS - 1) / DLC_HW_EMBEDDING_ROWS;
  void *scratch = a.p[DLC_EMBEDDING_BACKWARD_SCRATCH];
  unsigned *counters = static_cast<unsigned *>(scratch);
  float *partials = splits > 1 ? reinterpret_cast<float *>(static_cast<unsigned char *>(scratch) +
                                                           (groups * 4 + 15) / 16 * 16)
                               : nullptr;
  for (long long w = blockIdx.x; w < groups * splits; w += gridDim.x) {
    const long long r0 = w / splits * DLC_HW_EMBEDDING_ROWS, s = w % splits;
    const long long begin = n * s / splits, end = n * (s + 1) / splits;
    __syncthreads(); // the last item's hits are read
    const long long total = dlc_hw_embedding_hits(a, begin, end, r0, hits, warpHits);
    for (long long c0 = 0; c0 < d; c0 += blockDim.x) {
      const long long c = c0 + threadIdx.x;
      float acc[DLC_HW_EMBEDDING_ROWS];
#pragma unroll
      for (int q = 0; q < DLC_HW_EMBEDDING_ROWS; ++q) acc[q] = 0.0f;
      if (total <= DLC_HW_EMBEDDING_HITS)
        dlc_hw_embedding_add(a, hits, total, c, d, acc);
      else
        for (long long t0 = begin; t0 < end; t0 += DLC_HW_EMBEDDING_HITS) {
          __syncthreads(); // the last tile's hits are read
          const long long t1 = end - t0 < DLC_HW_EMBEDDING_HITS ? end : t0 + DLC_HW_EMBEDDING_HITS;
          dlc_hw_embedding_add(a, hits, dlc_hw_embedding_hits(a, t0, t1, r0, hits, warpHits), c,
                               d, acc);
        }
#pragma unroll
      for (int q = 0; q < DLC_HW_EMBEDDING_ROWS; ++q)
        if (r0 + q < rows && c < d) {
          if (splits == 1) dlc_hw_st(a, DLC_EMBEDDING_BACKWARD_DTABLE, (r0 + q) * d + c, acc[q]);
          else partials[(s * rows + r0 + q) * d + c] = acc[q];
        }
    }
    if (splits == 1 || !dlc_hw_arrive(counters + w / splits, (unsigned)splits)) continue;
    // The group's last split: add the splits' partials in split order.
    const long long last = r0 + DLC_HW_EMBEDDING_ROWS < rows ? r0 + DLC_HW_EMBEDDING_ROWS : rows;
    for (long long e = r0 * d + threadIdx.x; e < last * d; e += blockDim.x) {
      float sum = 0.0f;
      for (long long k = 0; k < splits; ++k)
        sum += (float)static_cast<const volatile float *>(partials)[k * rows * d + e];
      dlc_hw_st(a, DLC_EMBEDDING_BACKWARD_DTABLE, e, sum);
    }
  }
}
