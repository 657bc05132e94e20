//===- FastEmbedding.cpp - the fast backend's embedding lookup -------------===//
//
// The reference looks rows up on one thread and adds the gradient rows into
// the table in position order, on one thread too. Here the lookup copies
// rows in parallel, and the gradient is cut by table row: a stable counting
// sort lists each row's positions in position order, and each part zeroes
// its share of the table and adds its rows' gradients in that order, the
// reference's order, so the bytes are the reference's for every thread
// count.
//
//===----------------------------------------------------------------------===//

#include "FastHost.h"

#include <cstring>
#include <string>
#include <vector>

namespace dlc::rt::cpu {

namespace {

/// The first index outside [0, rows), in position order, as the reference
/// reports it; `where` says whether to name its position.
Status checkIndices(const KernelContext &c, const TensorRef &indices, int64_t rows,
                    bool where) {
  for (int64_t r = 0, n = indices.numElements(); r < n; ++r) {
    const int64_t index = indexAt(indices, r);
    if (index >= 0 && index < rows)
      continue;
    if (!where)
      return c.error("index " + std::to_string(index) + " is outside the table");
    return c.error("index " + std::to_string(index) + " at position " + std::to_string(r) +
                   " is outside the table's " + std::to_string(rows) + " rows");
  }
  return Status::ok();
}

Status embedding(const KernelContext &c) {
  const int64_t rows = c.in(0).dim(0), d = c.in(0).dim(1), n = c.in(1).numElements();
  if (Status ok = checkIndices(c, c.in(1), rows, /*where=*/true); !ok.isOk())
    return ok;
  const float *T = c.in(0).f32();
  float *Y = c.out(0).f32();
  parallelFor(0, n, [&](int64_t r) {
    std::memcpy(Y + r * d, T + indexAt(c.in(1), r) * d, d * sizeof(float));
  }, rowsPerPart(d));
  return Status::ok();
}

Status embeddingBackward(const KernelContext &c) {
  const int64_t d = c.out(0).dim(1), rows = c.out(0).dim(0), n = c.in(1).numElements();
  const TensorRef &indices = c.in(1);
  if (Status ok = checkIndices(c, indices, rows, /*where=*/false); !ok.isOk())
    return ok;
  // Row t's positions are order[first[t] .. first[t + 1]), ascending.
  std::vector<int64_t> first(static_cast<size_t>(rows) + 1, 0), order(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r)
    ++first[indexAt(indices, r) + 1];
  for (int64_t t = 0; t < rows; ++t)
    first[t + 1] += first[t];
  {
    std::vector<int64_t> next(first.begin(), first.end() - 1);
    for (int64_t r = 0; r < n; ++r)
      order[next[indexAt(indices, r)]++] = r;
  }
  const float *DY = c.in(0).f32();
  float *DT = c.out(0).f32();
  parallelFor(0, rows, [&](int64_t t) {
    float *out = DT + t * d;
    // 0 + g, not a copy of g: the reference's sum, -0 included.
    std::memset(out, 0, d * sizeof(float));
    for (int64_t k = first[t]; k < first[t + 1]; ++k) {
      const float *g = DY + order[k] * d;
      for (int64_t i = 0; i < d; ++i)
        out[i] += g[i];
    }
  }, rowsPerPart(d));
  return Status::ok();
}

} // namespace

void registerFastEmbeddingKernels(KernelRegistry &r) {
  r[OpId::kEmbedding] = embedding;
  r[OpId::kEmbeddingBackward] = embeddingBackward;
}

} // namespace dlc::rt::cpu
