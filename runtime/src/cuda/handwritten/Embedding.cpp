//===- Embedding.cpp - table gathers and their deterministic gradient -----===//
//
// The gather is one thread per output element (an index outside the table,
// an error on the CPU, gives NaN). The gradient uses no atomics: one block
// per table row, each thread owning columns of that row and scanning the
// indices in order, adding the matching rows of dy in float exactly as the
// CPU does, so the result is bit-identical to it. The scan costs
// rows x n index reads (all threads of a block read the same index, one
// transaction): fine for the tables of the model zoo, slow for a very large
// vocabulary with a long batch, where a sort-based kernel would be better.
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
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_embedding_backward(const DlcHandArgs a, const long long *step) {
  const long long rows = a.i[0], d = a.i[1], n = a.i[2];
  for (long long row = blockIdx.x; row < rows; row += gridDim.x)
    for (long long c = threadIdx.x; c < d; c += blockDim.x) {
      float acc = 0.0f;
      for (long long r = 0; r < n; ++r)
        if (dlc_hw_index(a, 1, r) == row) acc += dlc_hw_ld(a, 0, r * d + c);
      dlc_hw_st(a, 2, row * d + c, acc);
    }
}
)src";
}

} // namespace dlc::rt::cuda::handwritten
