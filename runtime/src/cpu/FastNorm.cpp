//===- FastNorm.cpp - the fast backend's layer norm ------------------------===//
//
// The reference's layer_norm_backward sums gamma's and beta's gradients one
// feature at a time down the rows, in double: a new cache line per element.
// On BERT-base at batch 4 its 26 launches took 57-97 ms of a step. Here
// each part takes a block of whole rows: it writes their input gradients and
// adds their contributions to gamma and beta into a partial of its own, row
// after row (contiguous, vectorized); the partials are then added in block
// order. Blocks are cut by the shape alone, so the bytes do not depend on
// the thread count. Statistics are float lane sums (FastHost.h).
//
//===----------------------------------------------------------------------===//

#include "FastHost.h"

#include <cmath>
#include <vector>

namespace dlc::rt::cpu {

namespace {

/// A row's mean and 1 / sqrt(variance + eps), as the reference defines
/// them (the biased variance, two passes).
struct RowStats {
  float mean, rstd;
};

[[gnu::always_inline]] inline RowStats rowStats(const float *x, int64_t d, double eps) {
  const float mean = laneSum(d, [&](int64_t i) { return x[i]; }) / static_cast<float>(d);
  const float var = laneSum(d, [&](int64_t i) {
                      const float t = x[i] - mean;
                      return t * t;
                    }) /
                    static_cast<float>(d);
  return {mean, static_cast<float>(1.0 / std::sqrt(static_cast<double>(var) + eps))};
}

DLC_HOST_CLONES void normalizeRow(const float *x, float *y, const float *G, const float *B,
                                  int64_t d, double eps) {
  const RowStats s = rowStats(x, d, eps);
  for (int64_t i = 0; i < d; ++i)
    y[i] = (x[i] - s.mean) * s.rstd * G[i] + B[i];
}

/// One row's input gradient, and its terms of gamma's and beta's gradients
/// added to pg and pb.
DLC_HOST_CLONES void backwardRow(const float *x, const float *dy, float *dx, const float *G,
                                 float *pg, float *pb, int64_t d, double eps) {
  const float invD = 1.0f / static_cast<float>(d), fd = static_cast<float>(d);
  const RowStats s = rowStats(x, d, eps);
  // The sums of dxhat = dy * gamma and of dxhat * xhat.
  const float sumG = laneSum(d, [&](int64_t i) { return dy[i] * G[i]; });
  const float sumGX =
      laneSum(d, [&](int64_t i) { return dy[i] * G[i] * ((x[i] - s.mean) * s.rstd); });
  const float scale = s.rstd * invD;
  for (int64_t i = 0; i < d; ++i) {
    // Read before the write: dx may be dy's storage.
    const float g = dy[i], xhat = (x[i] - s.mean) * s.rstd;
    dx[i] = scale * (fd * (g * G[i]) - sumG - xhat * sumGX);
    pg[i] += g * xhat;
    pb[i] += g;
  }
}

/// Rows a block takes: about kPartElements, but at most an eighth of the
/// rows. A row costs several of its own reductions, so short rows
/// (tiny_transformer's 32 features: 512 rows in one block) kept one thread
/// busy for a whole launch while the others waited.
int64_t rowsPerBlock(int64_t rows, int64_t d) {
  return std::min(rowsPerPart(d), std::max<int64_t>(1, (rows + 7) / 8));
}

Status layerNorm(const KernelContext &c) {
  const int64_t d = c.in(0).dim(-1), rows = c.in(0).numElements() / d;
  const double eps = c.kernel().floatAttr("epsilon", 1e-5);
  const float *X = c.in(0).f32(), *G = c.in(1).f32(), *B = c.in(2).f32();
  float *Y = c.out(0).f32();
  parallelFor(0, rows, [&](int64_t r) { normalizeRow(X + r * d, Y + r * d, G, B, d, eps); },
              rowsPerBlock(rows, d));
  return Status::ok();
}

Status layerNormBackward(const KernelContext &c) {
  const int64_t d = c.in(1).dim(-1), rows = c.in(1).numElements() / d;
  const double eps = c.kernel().floatAttr("epsilon", 1e-5);
  const float *DY = c.in(0).f32(), *X = c.in(1).f32(), *G = c.in(2).f32();
  float *DX = c.out(0).f32(), *DG = c.out(1).f32(), *DB = c.out(2).f32();
  const int64_t perBlock = rowsPerBlock(rows, d), blocks = (rows + perBlock - 1) / perBlock;
  // Block b's sums for gamma at [2b * d, ...), for beta at [(2b + 1) * d, ...).
  std::vector<float> partial(static_cast<size_t>(2 * blocks * d), 0.0f);
  parallelFor(0, blocks, [&](int64_t b) {
    float *pg = partial.data() + 2 * b * d, *pb = pg + d;
    for (int64_t r = b * perBlock, end = std::min(rows, r + perBlock); r < end; ++r)
      backwardRow(X + r * d, DY + r * d, DX + r * d, G, pg, pb, d, eps);
  });
  // Gamma's and beta's gradients: the blocks' partials in block order, a
  // share of the features per part.
  const int64_t columns = std::max<int64_t>(1, kPartElements / std::max<int64_t>(blocks, 1));
  parallelFor(0, (d + columns - 1) / columns, [&](int64_t part) {
    const int64_t begin = part * columns, end = std::min(d, begin + columns);
    for (int64_t i = begin; i < end; ++i) {
      DG[i] = partial[i];
      DB[i] = partial[d + i];
    }
    for (int64_t b = 1; b < blocks; ++b) {
      const float *pg = partial.data() + 2 * b * d, *pb = pg + d;
      for (int64_t i = begin; i < end; ++i) {
        DG[i] += pg[i];
        DB[i] += pb[i];
      }
    }
  });
  return Status::ok();
}

} // namespace

void registerFastNormKernels(KernelRegistry &r) {
  r[OpId::kLayerNorm] = layerNorm;
  r[OpId::kLayerNormBackward] = layerNormBackward;
}

} // namespace dlc::rt::cpu
