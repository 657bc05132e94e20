//===- DnnlNorm.cpp - training-mode batch norm through oneDNN -------------===//
//
// batch_norm (x, scale, bias, running_mean, running_var) -> (y,
// running_mean', running_var') and batch_norm_backward (dy, x, scale) ->
// (dx, dscale, dbias), as the reference (OpsSpatial.cpp, BatchNorm.cpp).
// The batch statistics are dlc's, summed in double as the reference and
// PyTorch's CPU batch norm sum them (one pass, shifted; in an order fixed
// by the shape, whatever the thread count); oneDNN normalizes
// with them (use_global_stats) and computes the gradients. Its own float
// statistics put models with few values a channel (ShuffleNet, DenseNet,
// RegNet at 64x64) several times further from PyTorch's float64 step than
// PyTorch's float32 step is. Two more places where oneDNN's float is not
// enough are done here in double: the channels whose mean is large against
// their spread are normalized again (renormalize), and the scale and bias
// gradients are summed again (parameterGrads); DenseNet-121's step needs
// both. The running statistics are updated here as the reference does it,
// from the double statistics. The backward pass recomputes the same
// statistics from x (the plan keeps no saved ones).
//
//===----------------------------------------------------------------------===//

#include "dnnl/DnnlCommon.h"
#include "cpu/HostClones.h"

#include "dlc/runtime/Parallel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace dlc::rt::cpu::onednn {

namespace {

enum OpTag : int64_t { kForward = 32, kBackward };

/// x as oneDNN sees it: [n, c, h, w] for a 4-d x in its layout, else
/// [n, c, spatial, 1] (channels-first, as the reference reads it).
struct NormGeometry {
  int64_t n = 1, c = 1, spatial = 1;
  bool channelsLast = false;
  md data;
  float eps = 1e-5f;
};

StatusOr<NormGeometry> geometry(const KernelContext &c, const TensorRef &x) {
  auto layout = layoutOf(c);
  if (!layout.isOk())
    return layout.status();
  if (x.rank() < 2)
    return c.error("expects x of rank 2 or more");
  NormGeometry g;
  g.channelsLast = *layout == Layout::kNhwc && x.rank() == 4;
  dims nchw = x.rank() == 4 ? nchwDims(*x.shape, *layout) : dims{};
  g.n = x.dim(0);
  g.c = g.channelsLast ? x.dim(3) : x.dim(1);
  g.spatial = x.numElements() / (g.n * g.c);
  if (nchw.empty())
    nchw = {g.n, g.c, g.spatial, 1};
  g.data = activationDesc(nchw, g.channelsLast ? Layout::kNhwc : Layout::kNchw);
  g.eps = static_cast<float>(c.kernel().floatAttr("epsilon", 1e-5));
  return g;
}

/// The configuration beyond shapes: layout and epsilon.
Key normKey(const KernelContext &c, OpTag op, const NormGeometry &g) {
  Key key = shapeKey(c, op);
  int64_t epsBits = 0;
  std::memcpy(&epsBits, &g.eps, sizeof(g.eps));
  key.push_back(g.channelsLast);
  key.push_back(epsBits);
  return key;
}

const dnnl::normalization_flags kFlags =
    dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;

/// The forward primitive: with `givenStats`, normalizing with the mean and
/// variance it is handed; without, the hint the backward one is made from.
dnnl::batch_normalization_forward::primitive_desc forwardPd(const NormGeometry &g,
                                                            bool givenStats = false) {
  dnnl::batch_normalization_forward::desc d(
      dnnl::prop_kind::forward_training, g.data, g.eps,
      givenStats ? kFlags | dnnl::normalization_flags::use_global_stats : kFlags);
  return dnnl::batch_normalization_forward::primitive_desc(d, userScratchpad(),
                                                           engine());
}

dnnl::memory channels(const NormGeometry &g, const void *data) {
  return dnnl::memory(md({g.c}, kF32, tag::a), engine(), const_cast<void *>(data));
}

/// The channels' batch statistics: in double as summed, and rounded to
/// float for oneDNN (with a third float array, the backward pass's shift).
struct Stats {
  double *meanD, *varD;
  float *mean, *var, *extra;
};

Stats stats(const NormGeometry &g) {
  auto *buffer = static_cast<double *>(
      threadBuffer(Slot::kStats, g.c * (2 * sizeof(double) + 3 * sizeof(float))));
  auto *f = reinterpret_cast<float *>(buffer + 2 * g.c);
  return {buffer, buffer + g.c, f, f + g.c, f + 2 * g.c};
}

void channelStats(const NormGeometry &g, const float *x, const Stats &s);
void renormalize(const NormGeometry &g, const float *x, const float *scale, const float *bias,
                 const Stats &s, float *y);

Status batchNorm(const KernelContext &c) {
  static Cache<Prim> cache;
  return guarded(c, [&]() -> Status {
    auto g = geometry(c, c.in(0));
    if (!g.isOk())
      return g.status();
    auto prim = cache.get(normKey(c, kForward, *g), [&] {
      return std::make_shared<Prim>(
          makePrim<dnnl::batch_normalization_forward>(forwardPd(*g, /*givenStats=*/true)));
    });
    if (!prim)
      return runReference(c);
    Stats s = stats(*g);
    channelStats(*g, c.in(0).f32(), s);
    execute(*prim, {{DNNL_ARG_SRC, dnnl::memory(g->data, engine(), c.in(0).data)},
                    {DNNL_ARG_SCALE, channels(*g, c.in(1).data)},
                    {DNNL_ARG_SHIFT, channels(*g, c.in(2).data)},
                    {DNNL_ARG_DST, dnnl::memory(g->data, engine(), c.out(0).data)},
                    {DNNL_ARG_MEAN, channels(*g, s.mean)},
                    {DNNL_ARG_VARIANCE, channels(*g, s.var)}});
    renormalize(*g, c.in(0).f32(), c.in(1).f32(), c.in(2).f32(), s, c.out(0).f32());
    // Results 1 and 2 usually share storage with operands 3 and 4 (an
    // in-place update); copy when they do not, as the reference.
    float *runningMean = c.out(1).f32(), *runningVar = c.out(2).f32();
    if (runningMean != c.in(3).f32())
      std::memcpy(runningMean, c.in(3).data, g->c * sizeof(float));
    if (runningVar != c.in(4).f32())
      std::memcpy(runningVar, c.in(4).data, g->c * sizeof(float));
    double momentum = c.kernel().floatAttr("momentum", 0.1);
    int64_t count = g->n * g->spatial;
    for (int64_t k = 0; k < g->c; ++k) {
      // The unbiased estimator, as PyTorch; none for a single element.
      double unbiased = count > 1 ? s.varD[k] * count / (count - 1) : NAN;
      runningMean[k] =
          static_cast<float>((1 - momentum) * runningMean[k] + momentum * s.meanD[k]);
      runningVar[k] =
          static_cast<float>((1 - momentum) * runningVar[k] + momentum * unbiased);
    }
    return Status::ok();
  });
}

/// Shifted sums of one channel's values, `d = x - shift`: the mean is
/// shift + sum / count and the biased variance (sq - sum^2 / count) / count,
/// in double. The shift (the channel's first value) keeps the subtraction
/// from cancelling when the mean is large against the spread, so one pass
/// gives what the reference's two passes give, to float precision.
struct ShiftedSums {
  double sum = 0, sq = 0;
};

/// Lanes of the contiguous (channels-first) sums: each lane sums every
/// kLanes-th value, so the loop vectorizes without reassociating, and the
/// lanes are added in a fixed order.
constexpr int64_t kLanes = 16;

/// One channel of channels-first data: `spatial` contiguous values in each
/// of `planes` planes `stride` apart.
DLC_HOST_CLONES void planeSums(const float *x, int64_t planes, int64_t spatial, int64_t stride,
                               double shift, ShiftedSums &out) {
  double sum[kLanes] = {}, sq[kLanes] = {};
  for (int64_t i = 0; i < planes; ++i) {
    const float *p = x + i * stride;
    int64_t j = 0;
    for (; j + kLanes <= spatial; j += kLanes)
      for (int64_t l = 0; l < kLanes; ++l) {
        const double d = double(p[j + l]) - shift;
        sum[l] += d;
        sq[l] += d * d;
      }
    for (int64_t l = 0; j < spatial; ++j, ++l) {
      const double d = double(p[j]) - shift;
      sum[l] += d;
      sq[l] += d * d;
    }
  }
  for (int64_t l = 0; l < kLanes; ++l) {
    out.sum += sum[l];
    out.sq += sq[l];
  }
}

/// Rows [r0, r1) of channels-last data (`c` channels a row), every channel
/// at once: the loop runs along the row, which vectorizes.
DLC_HOST_CLONES void rowSums(const float *__restrict__ x, int64_t r0, int64_t r1, int64_t c,
                             const double *__restrict__ shift, double *__restrict__ sum,
                             double *__restrict__ sq) {
  for (int64_t j = 0; j < c; ++j)
    sum[j] = sq[j] = 0;
  for (int64_t r = r0; r < r1; ++r) {
    const float *row = x + r * c;
    for (int64_t j = 0; j < c; ++j) {
      const double d = double(row[j]) - shift[j];
      sum[j] += d;
      sq[j] += d * d;
    }
  }
}

/// Channels-last rows a chunk of channelStats sums: enough that a chunk's
/// partial sums cost little beside its rows, few enough chunks to keep
/// two threads busy. It depends on the shape alone, so that the sums do
/// not depend on the thread count.
int64_t chunkRows(int64_t rows) { return std::max<int64_t>(64, (rows + 63) / 64); }

/// The batch mean and biased variance of each channel, in double, each
/// channel summed in an order fixed by the shape: one read of x.
void channelStats(const NormGeometry &g, const float *x, const Stats &s) {
  const int64_t count = g.n * g.spatial;
  auto finish = [&](int64_t k, double shift, double sum, double sq) {
    const double m = sum / double(count);
    s.meanD[k] = shift + m;
    s.varD[k] = std::max(0.0, sq / double(count) - m * m);
    s.mean[k] = static_cast<float>(s.meanD[k]);
    s.var[k] = static_cast<float>(s.varD[k]);
  };
  if (!g.channelsLast) {
    parallelFor(0, g.c, [&](int64_t k) {
      const float *plane = x + k * g.spatial;
      ShiftedSums s;
      planeSums(plane, g.n, g.spatial, g.c * g.spatial, plane[0], s);
      finish(k, plane[0], s.sum, s.sq);
    });
    return;
  }
  // Channels last: each chunk of rows sums all its channels along the
  // rows; the chunks' sums are added in chunk order.
  const int64_t rows = count, per = chunkRows(rows), chunks = (rows + per - 1) / per;
  auto *scratch = static_cast<double *>(
      threadBuffer(Slot::kWorkspace, (2 * chunks + 1) * g.c * sizeof(double)));
  double *shift = scratch, *partial = scratch + g.c;
  for (int64_t k = 0; k < g.c; ++k)
    shift[k] = x[k];
  parallelFor(0, chunks, [&](int64_t ch) {
    rowSums(x, ch * per, std::min(rows, (ch + 1) * per), g.c, shift,
            partial + 2 * ch * g.c, partial + (2 * ch + 1) * g.c);
  });
  for (int64_t k = 0; k < g.c; ++k) {
    double sum = 0, sq = 0;
    for (int64_t ch = 0; ch < chunks; ++ch) {
      sum += partial[2 * ch * g.c + k];
      sq += partial[(2 * ch + 1) * g.c + k];
    }
    finish(k, shift[k], sum, sq);
  }
}


/// How far the float mean oneDNN normalizes with may shift a normalized
/// value before the channel is normalized again in double: float's own
/// rounding of a value of magnitude 1.
constexpr double kMeanShiftTolerance = 0x1p-24;

/// Normalizes again, in double, the channels where oneDNN's float mean
/// moves the normalized values further than float's rounding: those whose
/// mean is large against their spread (after a linear bottleneck, a
/// concatenation of unnormalized features). There the rounding of the mean
/// to float shifts every value of the channel alike, and such a shift is
/// what puts a step past PyTorch's float32 distance from float64
/// (ShuffleNet, MnasNet, DenseNet). Elsewhere oneDNN's result stands.
void renormalize(const NormGeometry &g, const float *x, const float *scale, const float *bias,
                 const Stats &s, float *y) {
  auto *a = static_cast<double *>(threadBuffer(Slot::kWorkspace, g.c * sizeof(double)));
  std::vector<int64_t> redo;
  for (int64_t k = 0; k < g.c; ++k) {
    const double invstd = 1.0 / std::sqrt(s.varD[k] + double(g.eps));
    if (std::abs(double(s.mean[k]) - s.meanD[k]) * invstd <= kMeanShiftTolerance)
      continue;
    redo.push_back(k);
    a[k] = invstd * scale[k];
  }
  if (redo.empty())
    return;
  if (!g.channelsLast) {
    parallelFor(0, g.n * int64_t(redo.size()), [&](int64_t t) {
      const int64_t k = redo[t % redo.size()], plane = (t / redo.size()) * g.c + k;
      const float *in = x + plane * g.spatial;
      float *out = y + plane * g.spatial;
      const double m = s.meanD[k], ak = a[k], bk = bias[k];
      for (int64_t i = 0; i < g.spatial; ++i)
        out[i] = static_cast<float>((double(in[i]) - m) * ak + bk);
    });
    return;
  }
  const int64_t rows = g.n * g.spatial, per = chunkRows(rows);
  parallelFor(0, (rows + per - 1) / per, [&](int64_t ch) {
    for (int64_t r = ch * per; r < std::min(rows, (ch + 1) * per); ++r)
      for (int64_t k : redo)
        y[r * g.c + k] =
            static_cast<float>((double(x[r * g.c + k]) - s.meanD[k]) * a[k] + bias[k]);
  });
}

/// The parameter gradients in double: dbias = sum(dy), dscale = sum(dy *
/// xhat), in place of oneDNN's float sums. These are sums of many terms
/// that largely cancel (a bias gradient that is zero but for rounding where
/// the output reaches only convolutions followed by batch norm); PyTorch's
/// CPU kernel accumulates them in double, and oneDNN's float accumulation
/// lands past twice PyTorch float32's distance from float64 there.
void parameterGrads(const NormGeometry &g, const float *dy, const float *x, const Stats &s,
                    float *dscale, float *dbias) {
  auto invstd = [&](int64_t k) { return 1.0 / std::sqrt(s.varD[k] + double(g.eps)); };
  if (!g.channelsLast) {
    parallelFor(0, g.c, [&](int64_t k) {
      double sumDy = 0, sumDyXc = 0;
      const double m = s.meanD[k];
      for (int64_t n = 0; n < g.n; ++n) {
        const int64_t at = (n * g.c + k) * g.spatial;
        for (int64_t i = 0; i < g.spatial; ++i) {
          sumDy += dy[at + i];
          sumDyXc += double(dy[at + i]) * (double(x[at + i]) - m);
        }
      }
      dbias[k] = static_cast<float>(sumDy);
      dscale[k] = static_cast<float>(sumDyXc * invstd(k));
    });
    return;
  }
  const int64_t rows = g.n * g.spatial, per = chunkRows(rows), chunks = (rows + per - 1) / per;
  auto *partial = static_cast<double *>(
      threadBuffer(Slot::kWorkspace, 2 * chunks * g.c * sizeof(double)));
  parallelFor(0, chunks, [&](int64_t ch) {
    double *sumDy = partial + 2 * ch * g.c, *sumDyXc = sumDy + g.c;
    for (int64_t k = 0; k < g.c; ++k)
      sumDy[k] = sumDyXc[k] = 0;
    for (int64_t r = ch * per; r < std::min(rows, (ch + 1) * per); ++r)
      for (int64_t k = 0; k < g.c; ++k) {
        const double d = dy[r * g.c + k];
        sumDy[k] += d;
        sumDyXc[k] += d * (double(x[r * g.c + k]) - s.meanD[k]);
      }
  });
  for (int64_t k = 0; k < g.c; ++k) {
    double sumDy = 0, sumDyXc = 0;
    for (int64_t ch = 0; ch < chunks; ++ch) {
      sumDy += partial[2 * ch * g.c + k];
      sumDyXc += partial[(2 * ch + 1) * g.c + k];
    }
    dbias[k] = static_cast<float>(sumDy);
    dscale[k] = static_cast<float>(sumDyXc * invstd(k));
  }
}

Status batchNormBackward(const KernelContext &c) {
  // in: dy, x, scale; out: dx, dscale, dbias.
  static Cache<Prim> cache;
  return guarded(c, [&]() -> Status {
    auto g = geometry(c, c.in(1));
    if (!g.isOk())
      return g.status();
    auto prim = cache.get(normKey(c, kBackward, *g), [&] {
      using dnnl::batch_normalization_backward;
      batch_normalization_backward::desc d(dnnl::prop_kind::backward, g->data, g->data,
                                           g->eps, kFlags);
      batch_normalization_backward::primitive_desc pd(d, userScratchpad(), engine(),
                                                      forwardPd(*g));
      return std::make_shared<Prim>(makePrim<batch_normalization_backward>(pd));
    });
    if (!prim)
      return runReference(c);
    Stats s = stats(*g);
    float *mean = s.mean, *var = s.var, *shift = s.extra;
    channelStats(*g, c.in(1).f32(), s);
    // oneDNN asks for the shift whenever it computes its gradient, though
    // without a fused relu the gradient does not depend on it.
    std::fill(shift, shift + g->c, 0.0f);
    execute(*prim, {{DNNL_ARG_DIFF_DST, dnnl::memory(g->data, engine(), c.in(0).data)},
                    {DNNL_ARG_SRC, dnnl::memory(g->data, engine(), c.in(1).data)},
                    {DNNL_ARG_SCALE, channels(*g, c.in(2).data)},
                    {DNNL_ARG_SHIFT, channels(*g, shift)},
                    {DNNL_ARG_MEAN, channels(*g, mean)},
                    {DNNL_ARG_VARIANCE, channels(*g, var)},
                    {DNNL_ARG_DIFF_SRC, dnnl::memory(g->data, engine(), c.out(0).data)},
                    {DNNL_ARG_DIFF_SCALE, channels(*g, c.out(1).data)},
                    {DNNL_ARG_DIFF_SHIFT, channels(*g, c.out(2).data)}});
    parameterGrads(*g, c.in(0).f32(), c.in(1).f32(), s, c.out(1).f32(), c.out(2).f32());
    return Status::ok();
  });
}

} // namespace

void registerNormKernels(KernelRegistry &r) {
  r[OpId::kBatchNorm] = batchNorm;
  r[OpId::kBatchNormBackward] = batchNormBackward;
}

} // namespace dlc::rt::cpu::onednn
