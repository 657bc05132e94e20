//===- Embedding.cpp - table gathers and their deterministic gradient -----===//
//
// The gather is one thread per output element (an index outside the table,
// an error on the CPU, gives NaN). The gradient uses no atomics on data:
// each work item owns 32 table rows, each thread a column of them in
// registers; it reads its indices in order a tile at a time into shared
// memory and adds the dy rows that hit its rows in float, as the CPU does.
// A large table has one item per row group, and its result is the CPU's bit
// for bit. A small one (few row groups to fill the GPU) splits the indices
// too: each split writes float partials to HandKernel::scratch and the
// group's last split to arrive adds them in split order (the CPU's sum
// re-associated at the split points).
//
//===----------------------------------------------------------------------===//

#include "Sources.h"

namespace dlc::rt::cuda::handwritten {

const char *embeddingBody() {
  return R"src(
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

// Work items: (row group, index split), over a grid-stride loop.
#define DLC_HW_EMBEDDING_ROWS 32
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_embedding_backward(const DlcHandArgs a, const long long *step) {
  __shared__ long long ids[1024];
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
    for (long long c0 = 0; c0 < d; c0 += blockDim.x) {
      const long long c = c0 + threadIdx.x;
      float acc[DLC_HW_EMBEDDING_ROWS];
#pragma unroll
      for (int q = 0; q < DLC_HW_EMBEDDING_ROWS; ++q) acc[q] = 0.0f;
      for (long long t0 = begin; t0 < end; t0 += blockDim.x) {
        __syncthreads(); // the last tile is read
        if (t0 + threadIdx.x < end)
          ids[threadIdx.x] = dlc_hw_index(a, DLC_EMBEDDING_BACKWARD_IDS, t0 + threadIdx.x);
        __syncthreads();
        const long long tile = end - t0 < (long long)blockDim.x ? end - t0 : (long long)blockDim.x;
        for (long long j = 0; j < tile; ++j) {
          const long long q = ids[j] - r0;
          if (q < 0 || q >= DLC_HW_EMBEDDING_ROWS || c >= d) continue;
          const float v = dlc_hw_ld(a, DLC_EMBEDDING_BACKWARD_DY, (t0 + j) * d + c);
#pragma unroll
          for (int k = 0; k < DLC_HW_EMBEDDING_ROWS; ++k) // a constant index: registers
            if (q == k) acc[k] += v;
        }
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
)src";
}

} // namespace dlc::rt::cuda::handwritten
