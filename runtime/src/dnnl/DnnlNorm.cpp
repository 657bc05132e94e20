//===- DnnlNorm.cpp - training-mode batch norm through oneDNN -------------===//
//
// batch_norm (x, scale, bias, running_mean, running_var) -> (y,
// running_mean', running_var') and batch_norm_backward (dy, x, scale) ->
// (dx, dscale, dbias), as the reference (OpsSpatial.cpp, BatchNorm.cpp).
// The batch statistics are dlc's, summed in double and in a fixed order as
// the reference and PyTorch's CPU batch norm sum them; oneDNN normalizes
// with them (use_global_stats) and computes the gradients. Its own float
// statistics put models with few values a channel (ShuffleNet, DenseNet,
// RegNet at 64x64) several times further from PyTorch's float64 step than
// PyTorch's float32 step is. The running statistics are updated here as
// the reference does it. The backward pass recomputes the same statistics
// from x (the plan keeps no saved ones).
//
//===----------------------------------------------------------------------===//

#include "dnnl/DnnlCommon.h"
#include "cpu/HostClones.h"

#include "dlc/runtime/Parallel.h"

#include <algorithm>
#include <cmath>
#include <cstring>

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

void channelStats(const NormGeometry &g, const float *x, float *mean, float *var);

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
    auto *stats = static_cast<float *>(threadBuffer(Slot::kStats, 2 * g->c * sizeof(float)));
    float *mean = stats, *var = stats + g->c;
    channelStats(*g, c.in(0).f32(), mean, var);
    execute(*prim, {{DNNL_ARG_SRC, dnnl::memory(g->data, engine(), c.in(0).data)},
                    {DNNL_ARG_SCALE, channels(*g, c.in(1).data)},
                    {DNNL_ARG_SHIFT, channels(*g, c.in(2).data)},
                    {DNNL_ARG_DST, dnnl::memory(g->data, engine(), c.out(0).data)},
                    {DNNL_ARG_MEAN, channels(*g, mean)},
                    {DNNL_ARG_VARIANCE, channels(*g, var)}});
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
      double unbiased = count > 1 ? double(var[k]) * count / (count - 1) : NAN;
      runningMean[k] =
          static_cast<float>((1 - momentum) * runningMean[k] + momentum * mean[k]);
      runningVar[k] =
          static_cast<float>((1 - momentum) * runningVar[k] + momentum * unbiased);
    }
    return Status::ok();
  });
}

/// Channels a task of channelStats owns in channels-last data: 16 floats,
/// one cache line, so tasks never share a line.
constexpr int64_t kChannelBlock = 16;

/// The mean and biased variance of one channel's `count` values, `spatial`
/// contiguous ones in each of `planes` planes `stride` apart: two passes in
/// double like the reference, in a fixed order.
DLC_HOST_CLONES void planeStats(const float *x, int64_t planes, int64_t spatial, int64_t stride,
                                float &mean, float &var) {
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < planes; ++i)
    for (int64_t j = 0; j < spatial; ++j)
      sum += x[i * stride + j];
  const double m = sum / double(planes * spatial);
  for (int64_t i = 0; i < planes; ++i)
    for (int64_t j = 0; j < spatial; ++j)
      sq += (x[i * stride + j] - m) * (x[i * stride + j] - m);
  mean = static_cast<float>(m);
  var = static_cast<float>(sq / double(planes * spatial));
}

/// The same for `width` adjacent channels of channels-last data (`count`
/// rows `stride` apart), each channel summed down its rows.
/// Inlined into each clone of blockStats, so that each vectorizes it for
/// its own ISA.
template <int64_t kWidth>
[[gnu::always_inline]] inline void blockStatsOf(const float *x, int64_t count, int64_t stride, int64_t width, float *mean,
                  float *var) {
  const int64_t w = kWidth ? kWidth : width;
  double sum[kChannelBlock] = {}, sq[kChannelBlock] = {}, m[kChannelBlock];
  for (int64_t r = 0; r < count; ++r)
    for (int64_t j = 0; j < w; ++j)
      sum[j] += x[r * stride + j];
  for (int64_t j = 0; j < w; ++j)
    m[j] = sum[j] / count;
  for (int64_t r = 0; r < count; ++r)
    for (int64_t j = 0; j < w; ++j) {
      double d = x[r * stride + j] - m[j];
      sq[j] += d * d;
    }
  for (int64_t j = 0; j < w; ++j) {
    mean[j] = static_cast<float>(m[j]);
    var[j] = static_cast<float>(sq[j] / count);
  }
}

/// A whole block has a constant width, which the compiler vectorizes.
DLC_HOST_CLONES void blockStats(const float *x, int64_t count, int64_t stride, int64_t width,
                                float *mean, float *var) {
  if (width == kChannelBlock)
    blockStatsOf<kChannelBlock>(x, count, stride, width, mean, var);
  else
    blockStatsOf<0>(x, count, stride, width, mean, var);
}

/// The batch mean and biased variance of each channel, two passes in
/// double like the reference, each channel summed in a fixed order.
void channelStats(const NormGeometry &g, const float *x, float *mean, float *var) {
  if (!g.channelsLast) {
    parallelFor(0, g.c, [&](int64_t k) {
      planeStats(x + k * g.spatial, g.n, g.spatial, g.c * g.spatial, mean[k], var[k]);
    });
    return;
  }
  // Channels last: a row of c channels per position; a task walks every
  // row for its block of channels.
  parallelFor(0, (g.c + kChannelBlock - 1) / kChannelBlock, [&](int64_t block) {
    int64_t k0 = block * kChannelBlock;
    blockStats(x + k0, g.n * g.spatial, g.c, std::min(kChannelBlock, g.c - k0), mean + k0,
               var + k0);
  });
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
    auto *stats = static_cast<float *>(threadBuffer(Slot::kStats, 3 * g->c * sizeof(float)));
    float *mean = stats, *var = stats + g->c, *shift = stats + 2 * g->c;
    channelStats(*g, c.in(1).f32(), mean, var);
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
    return Status::ok();
  });
}

} // namespace

void registerNormKernels(KernelRegistry &r) {
  r["batch_norm"] = batchNorm;
  r["batch_norm_backward"] = batchNormBackward;
}

} // namespace dlc::rt::cpu::onednn
