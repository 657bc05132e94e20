//===- OpsDense.cpp - element-wise, matrix, attention and loss kernels ----===//
//
// The CPU reference for every non-spatial op of a training step, in float32
// with double accumulation of sums. Each output element is written by one
// thread, and reductions add in index order, so a step gives bit-identical
// results for any thread count. Kernels whose outputs alias their inputs
// (the optimizer updates, written in place) read each element before
// writing it.
//
//===----------------------------------------------------------------------===//

#include "KernelRegistration.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace dlc::rt::cpu {

namespace {

constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kGeluCubic = 0.044715; // the tanh approximation's coefficient
constexpr double kInvSqrt2 = 0.7071067811865476;
constexpr double kInvSqrt2Pi = 0.3989422804014327;

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

template <typename F> Status unary(const KernelContext &c, F f) {
  const float *x = c.in(0).f32();
  float *y = c.out(0).f32();
  parallelFor(0, c.out(0).numElements(), [&](int64_t i) { y[i] = f(x[i]); }, kGrain);
  return Status::ok();
}

/// dx = f(dy, saved) element by element.
template <typename F> Status unaryBackward(const KernelContext &c, F f) {
  const float *dy = c.in(0).f32(), *saved = c.in(1).f32();
  float *dx = c.out(0).f32();
  parallelFor(0, c.out(0).numElements(),
              [&](int64_t i) { dx[i] = f(dy[i], saved[i]); }, kGrain);
  return Status::ok();
}

template <typename F> Status binary(const KernelContext &c, F f) {
  const std::vector<int64_t> &out = *c.out(0).shape;
  std::vector<int64_t> ls = broadcastStrides(*c.in(0).shape, out);
  std::vector<int64_t> rs = broadcastStrides(*c.in(1).shape, out);
  const float *l = c.in(0).f32(), *r = c.in(1).f32();
  float *y = c.out(0).f32();
  int64_t rank = static_cast<int64_t>(out.size());
  parallelFor(0, c.out(0).numElements(), [&](int64_t o) {
    int64_t rest = o, li = 0, ri = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      int64_t coord = rest % out[d];
      rest /= out[d];
      li += coord * ls[d];
      ri += coord * rs[d];
    }
    y[o] = f(l[li], r[ri]);
  }, kGrain);
  return Status::ok();
}

bool isExactGelu(const KernelContext &c) {
  return c.kernel().stringAttr("approximate", "none") != "tanh";
}

float gelu(float x, bool exact) {
  double v = x;
  if (exact)
    return static_cast<float>(0.5 * v * (1 + std::erf(v * kInvSqrt2)));
  double u = kSqrt2OverPi * (v + kGeluCubic * v * v * v);
  return static_cast<float>(0.5 * v * (1 + std::tanh(u)));
}

float geluDerivative(float x, bool exact) {
  double v = x;
  if (exact)
    return static_cast<float>(0.5 * (1 + std::erf(v * kInvSqrt2)) +
                              v * std::exp(-0.5 * v * v) * kInvSqrt2Pi);
  double u = kSqrt2OverPi * (v + kGeluCubic * v * v * v);
  double t = std::tanh(u);
  return static_cast<float>(0.5 * (1 + t) + 0.5 * v * (1 - t * t) * kSqrt2OverPi *
                                                (1 + 3 * kGeluCubic * v * v));
}

/// min(max(x, 0), 6) in float, as PyTorch's clamp computes relu6, hardswish
/// and hardsigmoid; NaN stays NaN (std::max and std::min return their first
/// operand when a comparison with NaN is false).
float relu6(float x) { return std::min(std::max(x, 0.0f), 6.0f); }

bool keepElement(uint64_t seed, uint64_t step, uint64_t index, double rate) {
  return dropoutKeeps(dropoutStream(seed, step), index, rate);
}

Status dropout(const KernelContext &c) {
  double rate = c.kernel().floatAttr("rate", 0);
  if (rate < 0 || rate >= 1)
    return c.error("rate must be in [0, 1)");
  uint64_t seed = static_cast<uint64_t>(c.kernel().intAttr("seed", 0));
  // Data-parallel ranks draw their own masks (Collective.h).
  seed += dropoutSeedOffset(c.rank());
  uint64_t step = static_cast<uint64_t>(c.step());
  float scale = static_cast<float>(1.0 / (1.0 - rate));
  const float *x = c.in(0).f32();
  float *y = c.out(0).f32();
  parallelFor(0, c.out(0).numElements(), [&](int64_t i) {
    y[i] = keepElement(seed, step, i, rate) ? x[i] * scale : 0.0f;
  }, kGrain);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

enum class Reduce { kSum, kMean, kMax };

Status reduce(const KernelContext &c, Reduce kind) {
  const std::vector<int64_t> &in = *c.in(0).shape;
  int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> reduced(rank, false);
  for (int64_t a : c.kernel().intsAttr("axes", {}))
    reduced[a < 0 ? a + rank : a] = true;
  std::vector<int64_t> strides = rowMajorStrides(in), keptShape, keptStrides,
                       redShape, redStrides;
  for (int64_t d = 0; d < rank; ++d) {
    (reduced[d] ? redShape : keptShape).push_back(in[d]);
    (reduced[d] ? redStrides : keptStrides).push_back(strides[d]);
  }
  int64_t count = numElements(redShape);
  const float *x = c.in(0).f32();
  float *y = c.out(0).f32();
  forEachMapped(keptShape, keptStrides, 0, [&](int64_t o, int64_t base) {
    double acc = kind == Reduce::kMax ? -INFINITY : 0.0;
    for (int64_t r = 0; r < count; ++r) {
      int64_t rest = r, at = base;
      for (int64_t d = static_cast<int64_t>(redShape.size()) - 1; d >= 0; --d) {
        at += (rest % redShape[d]) * redStrides[d];
        rest /= redShape[d];
      }
      // torch.amax: a NaN wins (std::max would keep the running maximum).
      acc = kind != Reduce::kMax         ? acc + x[at]
            : std::isnan(acc) || acc >= x[at] ? acc
                                              : x[at];
    }
    y[o] = static_cast<float>(kind == Reduce::kMean ? acc / count : acc);
  });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

Status matmul(const KernelContext &c) {
  const TensorRef &a = c.in(0), &b = c.in(1), &y = c.out(0);
  bool ta = c.kernel().intAttr("transpose_lhs", 0), tb = c.kernel().intAttr("transpose_rhs", 0);
  int64_t ra = a.dim(-2), ca = a.dim(-1), rb = b.dim(-2), cb = b.dim(-1);
  int64_t m = ta ? ca : ra, k = ta ? ra : ca, n = tb ? rb : cb;
  // Row strides: the columns, or the padded rows' stride (RowStride.h).
  int64_t lda = a.ld(), ldb = b.ld(), ldy = y.ld();
  // Batch dimensions broadcast: map each output batch to its operands'.
  std::vector<int64_t> outBatch(y.shape->begin(), y.shape->end() - 2);
  std::vector<int64_t> aBatch(a.shape->begin(), a.shape->end() - 2);
  std::vector<int64_t> bBatch(b.shape->begin(), b.shape->end() - 2);
  std::vector<int64_t> as = broadcastStrides(aBatch, outBatch);
  std::vector<int64_t> bs = broadcastStrides(bBatch, outBatch);
  int64_t batches = numElements(outBatch);
  const float *A = a.f32(), *B = b.f32();
  float *Y = y.f32();
  parallelFor(0, batches * m, [&](int64_t row) {
    int64_t batch = row / m, i = row % m, rest = batch, ai = 0, bi = 0;
    for (int64_t d = static_cast<int64_t>(outBatch.size()) - 1; d >= 0; --d) {
      int64_t coord = rest % outBatch[d];
      rest /= outBatch[d];
      ai += coord * as[d];
      bi += coord * bs[d];
    }
    const float *Ab = A + ai * ra * lda, *Bb = B + bi * rb * ldb;
    float *Yr = Y + (batch * m + i) * ldy;
    if (tb) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += double(ta ? Ab[p * lda + i] : Ab[i * lda + p]) * Bb[j * ldb + p];
        Yr[j] = static_cast<float>(sum);
      }
      return;
    }
    // B row-major: walk its rows contiguously, accumulating the whole output
    // row. Each output still sums its products over p in order, in double,
    // so the result is bit-identical to the dot-product order.
    std::vector<double> acc(n, 0.0);
    for (int64_t p = 0; p < k; ++p) {
      double av = ta ? Ab[p * lda + i] : Ab[i * lda + p];
      const float *Brow = Bb + p * ldb;
      for (int64_t j = 0; j < n; ++j)
        acc[j] += av * Brow[j];
    }
    for (int64_t j = 0; j < n; ++j)
      Yr[j] = static_cast<float>(acc[j]);
  });
  return Status::ok();
}

Status linear(const KernelContext &c) {
  const TensorRef &x = c.in(0), &w = c.in(1);
  int64_t in = x.dim(-1), out = w.dim(0), rows = x.numElements() / in;
  int64_t ldx = x.ld(), ldy = c.out(0).ld(); // padded rows (RowStride.h)
  const float *X = x.f32(), *W = w.f32();
  const float *bias = c.numInputs() > 2 ? c.in(2).f32() : nullptr;
  float *Y = c.out(0).f32();
  parallelFor(0, rows, [&](int64_t r) {
    for (int64_t o = 0; o < out; ++o) {
      double sum = bias ? bias[o] : 0.0;
      for (int64_t i = 0; i < in; ++i)
        sum += double(X[r * ldx + i]) * W[o * in + i];
      Y[r * ldy + o] = static_cast<float>(sum);
    }
  });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Softmax, normalization, embedding, loss
//===----------------------------------------------------------------------===//

Status softmax(const KernelContext &c) {
  const TensorRef &x = c.in(0);
  int64_t rank = x.rank(), axis = axisOf(c, "axis", -1, rank);
  int64_t outer, n, inner;
  splitAround(*x.shape, axis, outer, n, inner);
  double scale = c.kernel().floatAttr("scale", 1.0);
  bool causal = c.kernel().intAttr("causal", 0);
  // The additive mask, broadcast to the input once.
  std::vector<float> mask;
  if (c.numInputs() > 1) {
    mask.resize(x.numElements());
    std::vector<int64_t> ms = broadcastStrides(*c.in(1).shape, *x.shape);
    const float *m = c.in(1).f32();
    forEachMapped(*x.shape, ms, 0, [&](int64_t o, int64_t i) { mask[o] = m[i]; });
  }
  int64_t queries = causal ? x.dim(-2) : 0, keys = causal ? x.dim(-1) : 0;
  const float *X = x.f32();
  float *Y = c.out(0).f32();
  parallelFor(0, outer * inner, [&](int64_t line) {
    int64_t o = line / inner, in = line % inner;
    // With causal masking the axis is last, so `o` ends with the query.
    int64_t query = causal ? o % queries : 0;
    auto at = [&](int64_t a) { return (o * n + a) * inner + in; };
    auto visible = [&](int64_t a) { return !causal || a <= query + (keys - queries); };
    double mx = -INFINITY;
    for (int64_t a = 0; a < n; ++a)
      if (visible(a))
        mx = std::max(mx, scale * X[at(a)] + (mask.empty() ? 0.0 : mask[at(a)]));
    double sum = 0;
    for (int64_t a = 0; a < n; ++a) {
      double e = visible(a) ? std::exp(scale * X[at(a)] +
                                       (mask.empty() ? 0.0 : mask[at(a)]) - mx)
                            : 0.0;
      Y[at(a)] = static_cast<float>(e);
      sum += e;
    }
    for (int64_t a = 0; a < n; ++a)
      Y[at(a)] = static_cast<float>(Y[at(a)] / sum);
  });
  return Status::ok();
}

Status softmaxBackward(const KernelContext &c) {
  const TensorRef &dy = c.in(0);
  int64_t axis = axisOf(c, "axis", -1, dy.rank());
  int64_t outer, n, inner;
  splitAround(*dy.shape, axis, outer, n, inner);
  double scale = c.kernel().floatAttr("scale", 1.0);
  const float *DY = dy.f32(), *Y = c.in(1).f32();
  float *DX = c.out(0).f32();
  parallelFor(0, outer * inner, [&](int64_t line) {
    int64_t o = line / inner, in = line % inner;
    double dot = 0;
    for (int64_t a = 0; a < n; ++a)
      dot += double(DY[(o * n + a) * inner + in]) * Y[(o * n + a) * inner + in];
    for (int64_t a = 0; a < n; ++a) {
      int64_t i = (o * n + a) * inner + in;
      DX[i] = static_cast<float>(scale * Y[i] * (DY[i] - dot));
    }
  });
  return Status::ok();
}

Status layerNorm(const KernelContext &c) {
  int64_t d = c.in(0).dim(-1), rows = c.in(0).numElements() / d;
  double eps = c.kernel().floatAttr("epsilon", 1e-5);
  const float *X = c.in(0).f32(), *G = c.in(1).f32(), *B = c.in(2).f32();
  float *Y = c.out(0).f32();
  parallelFor(0, rows, [&](int64_t r) {
    const float *x = X + r * d;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < d; ++i)
      mean += x[i];
    mean /= d;
    for (int64_t i = 0; i < d; ++i)
      var += (x[i] - mean) * (x[i] - mean);
    double rstd = 1.0 / std::sqrt(var / d + eps);
    for (int64_t i = 0; i < d; ++i)
      Y[r * d + i] = static_cast<float>((x[i] - mean) * rstd * G[i] + B[i]);
  });
  return Status::ok();
}

Status layerNormBackward(const KernelContext &c) {
  int64_t d = c.in(1).dim(-1), rows = c.in(1).numElements() / d;
  double eps = c.kernel().floatAttr("epsilon", 1e-5);
  const float *DY = c.in(0).f32(), *X = c.in(1).f32(), *G = c.in(2).f32();
  float *DX = c.out(0).f32(), *DG = c.out(1).f32(), *DB = c.out(2).f32();
  std::vector<double> mean(rows), rstd(rows);
  parallelFor(0, rows, [&](int64_t r) {
    const float *x = X + r * d, *dy = DY + r * d;
    double m = 0, v = 0;
    for (int64_t i = 0; i < d; ++i)
      m += x[i];
    m /= d;
    for (int64_t i = 0; i < d; ++i)
      v += (x[i] - m) * (x[i] - m);
    double s = 1.0 / std::sqrt(v / d + eps);
    mean[r] = m;
    rstd[r] = s;
    double sumG = 0, sumGX = 0; // sums of dxhat and dxhat * xhat
    for (int64_t i = 0; i < d; ++i) {
      double g = double(dy[i]) * G[i], xhat = (x[i] - m) * s;
      sumG += g;
      sumGX += g * xhat;
    }
    for (int64_t i = 0; i < d; ++i) {
      double g = double(dy[i]) * G[i], xhat = (x[i] - m) * s;
      DX[r * d + i] = static_cast<float>(s / d * (d * g - sumG - xhat * sumGX));
    }
  });
  // Parameter gradients sum over rows; parallel over features.
  parallelFor(0, d, [&](int64_t i) {
    double dg = 0, db = 0;
    for (int64_t r = 0; r < rows; ++r) {
      dg += double(DY[r * d + i]) * (X[r * d + i] - mean[r]) * rstd[r];
      db += DY[r * d + i];
    }
    DG[i] = static_cast<float>(dg);
    DB[i] = static_cast<float>(db);
  });
  return Status::ok();
}

Status embedding(const KernelContext &c) {
  int64_t rows = c.in(0).dim(0), d = c.in(0).dim(1), n = c.in(1).numElements();
  const float *T = c.in(0).f32();
  float *Y = c.out(0).f32();
  for (int64_t r = 0; r < n; ++r) {
    int64_t index = indexAt(c.in(1), r);
    if (index < 0 || index >= rows)
      return c.error("index " + std::to_string(index) + " at position " +
                     std::to_string(r) + " is outside the table's " +
                     std::to_string(rows) + " rows");
    std::memcpy(Y + r * d, T + index * d, d * sizeof(float));
  }
  return Status::ok();
}

Status embeddingBackward(const KernelContext &c) {
  int64_t d = c.out(0).dim(1), rows = c.out(0).dim(0), n = c.in(1).numElements();
  const float *DY = c.in(0).f32();
  float *DT = c.out(0).f32();
  std::memset(DT, 0, c.out(0).numElements() * sizeof(float));
  // In index order, so repeated indices add deterministically.
  for (int64_t r = 0; r < n; ++r) {
    int64_t index = indexAt(c.in(1), r);
    if (index < 0 || index >= rows)
      return c.error("index " + std::to_string(index) + " is outside the table");
    for (int64_t i = 0; i < d; ++i)
      DT[index * d + i] += DY[r * d + i];
  }
  return Status::ok();
}

Status softmaxCrossEntropy(const KernelContext &c) {
  const TensorRef &logits = c.in(0), &labels = c.in(1);
  CrossEntropyShape s = crossEntropyShape(c, logits);
  const float *L = logits.f32();
  double total = 0;
  int64_t counted = 0;
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t in = 0; in < s.inner; ++in) {
      int64_t label = indexAt(labels, o * s.inner + in);
      if (label == s.ignore)
        continue;
      if (label < 0 || label >= s.classes)
        return c.error("label " + std::to_string(label) + " is outside [0, " +
                       std::to_string(s.classes) + ") and not the ignore index");
      double mx = -INFINITY, sum = 0;
      for (int64_t k = 0; k < s.classes; ++k)
        mx = std::max<double>(mx, L[(o * s.ld + k) * s.inner + in]);
      for (int64_t k = 0; k < s.classes; ++k)
        sum += std::exp(L[(o * s.ld + k) * s.inner + in] - mx);
      total += mx + std::log(sum) - L[(o * s.ld + label) * s.inner + in];
      ++counted;
    }
  // PyTorch gives NaN when every label is ignored; a zero loss with zero
  // gradients is what a training step can use, so dlc returns 0.
  c.out(0).f32()[0] = counted ? static_cast<float>(total / counted) : 0.0f;
  return Status::ok();
}

Status softmaxCrossEntropyBackward(const KernelContext &c) {
  const TensorRef &logits = c.in(1), &labels = c.in(2);
  CrossEntropyShape s = crossEntropyShape(c, logits);
  double dloss = c.in(0).f32()[0];
  int64_t counted = 0;
  for (int64_t i = 0; i < labels.numElements(); ++i)
    counted += indexAt(labels, i) != s.ignore;
  const float *L = logits.f32();
  float *D = c.out(0).f32();
  // The gradient's rows may be padded apart from the logits' (RowStride.h).
  int64_t ldD = c.out(0).rowStride > 0 ? c.out(0).rowStride : s.classes;
  parallelFor(0, s.outer * s.inner, [&](int64_t pos) {
    int64_t o = pos / s.inner, in = pos % s.inner;
    int64_t label = indexAt(labels, pos);
    auto at = [&](int64_t k) { return (o * s.ld + k) * s.inner + in; };
    auto dAt = [&](int64_t k) { return (o * ldD + k) * s.inner + in; };
    if (label == s.ignore || counted == 0) {
      for (int64_t k = 0; k < s.classes; ++k)
        D[dAt(k)] = 0;
      return;
    }
    double mx = -INFINITY, sum = 0;
    for (int64_t k = 0; k < s.classes; ++k)
      mx = std::max<double>(mx, L[at(k)]);
    for (int64_t k = 0; k < s.classes; ++k)
      sum += std::exp(L[at(k)] - mx);
    for (int64_t k = 0; k < s.classes; ++k) {
      double p = std::exp(L[at(k)] - mx) / sum - (k == label ? 1.0 : 0.0);
      D[dAt(k)] = static_cast<float>(dloss * p / counted);
    }
  });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Optimizers (torch.optim semantics, in place)
//===----------------------------------------------------------------------===//

/// The loss-scale status an update may take as its last operand
/// (train.loss_scale_status): the gradient's multiplier, and whether the
/// step is skipped because a gradient overflowed.
struct Unscale {
  double factor = 1;
  bool skip = false;
};
Unscale unscaleOf(const KernelContext &c, size_t statusOperand) {
  if (c.numInputs() <= statusOperand)
    return {};
  const float *status = c.in(statusOperand).f32();
  return {status[0], status[1] != 0};
}

/// A skipped update writes its parameter and state back unchanged.
Status keepAsIs(const KernelContext &c, size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (c.out(i).data != c.in(i == 0 ? 0 : i + 1).data)
      std::memcpy(c.out(i).data, c.in(i == 0 ? 0 : i + 1).data,
                  c.out(i).numElements() * sizeof(float));
  return Status::ok();
}

Status sgdUpdate(const KernelContext &c) {
  double lr = c.kernel().floatAttr("lr", 0), momentum = c.kernel().floatAttr("momentum", 0),
         decay = c.kernel().floatAttr("weight_decay", 0);
  bool nesterov = c.kernel().intAttr("nesterov", 0), first = c.step() == 0;
  Unscale unscale = unscaleOf(c, 3);
  if (unscale.skip)
    return keepAsIs(c, 2);
  const float *P = c.in(0).f32(), *G = c.in(1).f32(), *M = c.in(2).f32();
  float *P2 = c.out(0).f32(), *M2 = c.out(1).f32();
  parallelFor(0, c.in(0).numElements(), [&](int64_t i) {
    double p = P[i], g = G[i] * unscale.factor + decay * p, m = M[i];
    double d = g;
    if (momentum != 0) {
      m = first ? g : momentum * m + g; // torch: the buffer starts as g
      d = nesterov ? g + momentum * m : m;
    }
    M2[i] = static_cast<float>(m);
    P2[i] = static_cast<float>(p - lr * d);
  }, kGrain);
  return Status::ok();
}

Status adamwUpdate(const KernelContext &c) {
  double lr = c.kernel().floatAttr("lr", 0), b1 = c.kernel().floatAttr("beta1", 0.9),
         b2 = c.kernel().floatAttr("beta2", 0.999), eps = c.kernel().floatAttr("epsilon", 1e-8),
         decay = c.kernel().floatAttr("weight_decay", 0.01);
  double t = static_cast<double>(c.step() + 1);
  double correction1 = 1 - std::pow(b1, t), correction2 = 1 - std::pow(b2, t);
  Unscale unscale = unscaleOf(c, 4);
  if (unscale.skip)
    return keepAsIs(c, 3);
  const float *P = c.in(0).f32(), *G = c.in(1).f32(), *M = c.in(2).f32(),
              *V = c.in(3).f32();
  float *P2 = c.out(0).f32(), *M2 = c.out(1).f32(), *V2 = c.out(2).f32();
  parallelFor(0, c.in(0).numElements(), [&](int64_t i) {
    double p = P[i] * (1 - lr * decay), g = G[i] * unscale.factor;
    double m = b1 * M[i] + (1 - b1) * g, v = b2 * V[i] + (1 - b2) * g * g;
    double denom = std::sqrt(v) / std::sqrt(correction2) + eps;
    M2[i] = static_cast<float>(m);
    V2[i] = static_cast<float>(v);
    P2[i] = static_cast<float>(p - lr / correction1 * m / denom);
  }, kGrain);
  return Status::ok();
}

/// [1 / scale, 1 if any gradient element is inf or NaN].
Status lossScaleStatus(const KernelContext &c) {
  bool overflow = false;
  for (size_t i = 1; i < c.numInputs() && !overflow; ++i) {
    const float *g = c.in(i).f32();
    for (int64_t e = 0, n = c.in(i).numElements(); e < n; ++e)
      if (!std::isfinite(g[e])) {
        overflow = true;
        break;
      }
  }
  float scale = c.in(0).f32()[0];
  c.out(0).f32()[0] = 1.0f / scale;
  c.out(0).f32()[1] = overflow ? 1.0f : 0.0f;
  return Status::ok();
}

/// torch's _amp_update_scale_: back off after an overflow, grow after
/// growth_interval good steps in a row.
Status updateLossScale(const KernelContext &c) {
  float scale = c.in(0).f32()[0], good = c.in(1).f32()[0];
  bool overflow = c.in(2).f32()[1] != 0;
  int64_t interval = c.kernel().intAttr("growth_interval", 2000);
  if (overflow) {
    scale *= static_cast<float>(c.kernel().floatAttr("backoff_factor", 0.5));
    good = 0;
  } else if (good + 1 >= static_cast<float>(interval)) {
    scale *= static_cast<float>(c.kernel().floatAttr("growth_factor", 2.0));
    good = 0;
  } else {
    good += 1;
  }
  c.out(0).f32()[0] = scale;
  c.out(1).f32()[0] = good;
  return Status::ok();
}

/// Float to float copies (the executor widens and rounds half precision),
/// float to integer truncates toward zero, integer to float converts.
Status castKernel(const KernelContext &c) {
  const TensorRef &in = c.in(0), &out = c.out(0);
  int64_t n = in.numElements();
  auto isFloat = [](DType t) { return t == DType::kF32; };
  auto readAt = [&](int64_t i) -> double {
    switch (in.dtype) {
    case DType::kF32: return in.f32()[i];
    case DType::kI64: return static_cast<double>(in.i64()[i]);
    case DType::kI32: return static_cast<int32_t *>(in.data)[i];
    default: return 0;
    }
  };
  if (!isFloat(in.dtype) && in.dtype != DType::kI64 && in.dtype != DType::kI32)
    return c.error("cannot cast from " + std::string(dtypeName(in.dtype)));
  parallelFor(0, n, [&](int64_t i) {
    double v = readAt(i);
    switch (out.dtype) {
    case DType::kF32: out.f32()[i] = static_cast<float>(v); break;
    case DType::kI64: out.i64()[i] = static_cast<int64_t>(std::trunc(v)); break;
    case DType::kI32:
      static_cast<int32_t *>(out.data)[i] = static_cast<int32_t>(std::trunc(v));
      break;
    default: break;
    }
  }, kGrain);
  return Status::ok();
}

} // namespace

void registerDenseKernels(KernelRegistry &r) {
  r[OpId::kCast] = castKernel;
  r[OpId::kLossScaleStatus] = lossScaleStatus;
  r[OpId::kUpdateLossScale] = updateLossScale;
  // NaN propagates as in PyTorch (relu(nan) = nan, its gradient passes):
  // a NaN input must not turn into a finite loss.
  r[OpId::kRelu] = [](const KernelContext &c) {
    return unary(c, [](float x) { return x > 0 || std::isnan(x) ? x : 0.0f; });
  };
  r[OpId::kTanh] = [](const KernelContext &c) {
    return unary(c, [](float x) { return std::tanh(x); });
  };
  r[OpId::kSigmoid] = [](const KernelContext &c) {
    return unary(c, [](float x) { return static_cast<float>(1 / (1 + std::exp(-double(x)))); });
  };
  r[OpId::kSilu] = [](const KernelContext &c) {
    return unary(c, [](float x) { return static_cast<float>(x / (1 + std::exp(-double(x)))); });
  };
  r[OpId::kRelu6] = [](const KernelContext &c) { return unary(c, relu6); };
  r[OpId::kHardswish] = [](const KernelContext &c) {
    return unary(c, [](float x) { return x * relu6(x + 3.0f) / 6.0f; });
  };
  r[OpId::kHardsigmoid] = [](const KernelContext &c) {
    return unary(c, [](float x) { return relu6(x + 3.0f) / 6.0f; });
  };
  r[OpId::kGelu] = [](const KernelContext &c) {
    bool exact = isExactGelu(c);
    return unary(c, [exact](float x) { return gelu(x, exact); });
  };
  r[OpId::kScale] = [](const KernelContext &c) {
    float s = static_cast<float>(c.kernel().floatAttr("scale", 1)),
          b = static_cast<float>(c.kernel().floatAttr("bias", 0));
    return unary(c, [s, b](float x) { return x * s + b; });
  };
  r[OpId::kDropout] = dropout;
  r[OpId::kReluBackward] = [](const KernelContext &c) {
    return unaryBackward(c, [](float dy, float x) { return x <= 0 ? 0.0f : dy; });
  };
  r[OpId::kTanhBackward] = [](const KernelContext &c) {
    return unaryBackward(c, [](float dy, float y) { return dy * (1 - y * y); });
  };
  r[OpId::kSigmoidBackward] = [](const KernelContext &c) {
    return unaryBackward(c, [](float dy, float y) { return dy * y * (1 - y); });
  };
  r[OpId::kSiluBackward] = [](const KernelContext &c) {
    return unaryBackward(c, [](float dy, float x) {
      double s = 1 / (1 + std::exp(-double(x)));
      return static_cast<float>(dy * s * (1 + x * (1 - s)));
    });
  };
  // The boundaries and NaN follow PyTorch's CUDA kernels (its scalar CPU
  // loop; see TrainGradOps.td for where its vectorized CPU loop differs).
  r[OpId::kRelu6Backward] = [](const KernelContext &c) {
    return unaryBackward(c, [](float dy, float x) { return x <= 0 || x >= 6 ? 0.0f : dy; });
  };
  r[OpId::kHardswishBackward] = [](const KernelContext &c) {
    return unaryBackward(c, [](float dy, float x) {
      return x < -3 ? 0.0f : x <= 3 ? dy * (x / 3.0f + 0.5f) : dy;
    });
  };
  r[OpId::kHardsigmoidBackward] = [](const KernelContext &c) {
    return unaryBackward(c, [](float dy, float x) {
      return x > -3 && x < 3 ? dy * (1.0f / 6.0f) : 0.0f;
    });
  };
  r[OpId::kGeluBackward] = [](const KernelContext &c) {
    bool exact = isExactGelu(c);
    return unaryBackward(c, [exact](float dy, float x) { return dy * geluDerivative(x, exact); });
  };
  r[OpId::kAdd] = [](const KernelContext &c) { return binary(c, [](float a, float b) { return a + b; }); };
  r[OpId::kSub] = [](const KernelContext &c) { return binary(c, [](float a, float b) { return a - b; }); };
  r[OpId::kMul] = [](const KernelContext &c) { return binary(c, [](float a, float b) { return a * b; }); };
  r[OpId::kDiv] = [](const KernelContext &c) { return binary(c, [](float a, float b) { return a / b; }); };
  r[OpId::kReduceSum] = [](const KernelContext &c) { return reduce(c, Reduce::kSum); };
  r[OpId::kReduceMean] = [](const KernelContext &c) { return reduce(c, Reduce::kMean); };
  r[OpId::kReduceMax] = [](const KernelContext &c) { return reduce(c, Reduce::kMax); };
  r[OpId::kMatmul] = matmul;
  r[OpId::kLinear] = linear;
  r[OpId::kSoftmax] = softmax;
  r[OpId::kSoftmaxBackward] = softmaxBackward;
  r[OpId::kLayerNorm] = layerNorm;
  r[OpId::kLayerNormBackward] = layerNormBackward;
  r[OpId::kEmbedding] = embedding;
  r[OpId::kEmbeddingBackward] = embeddingBackward;
  r[OpId::kSoftmaxCrossEntropy] = softmaxCrossEntropy;
  r[OpId::kSoftmaxCrossEntropyBackward] = softmaxCrossEntropyBackward;
  r[OpId::kSgdUpdate] = sgdUpdate;
  r[OpId::kAdamWUpdate] = adamwUpdate;
}

} // namespace dlc::rt::cpu
