//===- Embedding.cpp - table gathers and their deterministic gradient -----===//
//
// The gather is one thread per output element (an index outside the table,
// an error on the CPU, gives NaN). The gradient uses no atomics: each block
// owns 32 table rows, each thread a column of them in registers; the block
// reads the indices in order a tile at a time into shared memory and adds
// the dy rows that hit its rows in float, exactly as the CPU does, so the
// result is bit-identical to it. (One block per row, each scanning every
// index from global memory, took 37 ms for BERT-base's 30522 x 4096 on
// an H100.)
//
//===----------------------------------------------------------------------===//

#include "Sources.h"

namespace dlc::rt::cuda::handwritten {

const char *embeddingBody() {
  return R"src(
// p: table, ids, y. i: rows, d, n.
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_embedding(const DlcHandArgs a, const long long *step) {
  const long long rows = a.i[0], d = a.i[1], n = a.i[2];
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < n * d;
       e += (long long)gridDim.x * blockDim.x) {
    const long long r = e / d, c = e % d, id = dlc_hw_index(a, 1, r);
    dlc_hw_st(a, 2, e, id >= 0 && id < rows ? dlc_hw_ld(a, 0, id * d + c) : DLC_HW_NAN);
  }
}

// p: dy, ids, dtable. i: rows, d, n.
#define DLC_HW_EMBEDDING_ROWS 32
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_embedding_backward(const DlcHandArgs a, const long long *step) {
  __shared__ long long ids[1024];
  const long long rows = a.i[0], d = a.i[1], n = a.i[2];
  for (long long r0 = (long long)blockIdx.x * DLC_HW_EMBEDDING_ROWS; r0 < rows;
       r0 += (long long)gridDim.x * DLC_HW_EMBEDDING_ROWS)
    for (long long c0 = 0; c0 < d; c0 += blockDim.x) {
      const long long c = c0 + threadIdx.x;
      float acc[DLC_HW_EMBEDDING_ROWS];
#pragma unroll
      for (int q = 0; q < DLC_HW_EMBEDDING_ROWS; ++q) acc[q] = 0.0f;
      for (long long t0 = 0; t0 < n; t0 += blockDim.x) {
        __syncthreads(); // the last tile is read
        if (t0 + threadIdx.x < n) ids[threadIdx.x] = dlc_hw_index(a, 1, t0 + threadIdx.x);
        __syncthreads();
        const long long tile = n - t0 < (long long)blockDim.x ? n - t0 : (long long)blockDim.x;
        for (long long j = 0; j < tile; ++j) {
          const long long q = ids[j] - r0;
          if (q < 0 || q >= DLC_HW_EMBEDDING_ROWS || c >= d) continue;
          const float v = dlc_hw_ld(a, 0, (t0 + j) * d + c);
#pragma unroll
          for (int k = 0; k < DLC_HW_EMBEDDING_ROWS; ++k) // a constant index: registers
            if (q == k) acc[k] += v;
        }
      }
#pragma unroll
      for (int q = 0; q < DLC_HW_EMBEDDING_ROWS; ++q)
        if (r0 + q < rows && c < d) dlc_hw_st(a, 2, (r0 + q) * d + c, acc[q]);
    }
}
)src";
}

} // namespace dlc::rt::cuda::handwritten
