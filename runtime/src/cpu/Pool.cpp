//===- Pool.cpp - max, average and global average pooling kernels ---------===//
//
// PoolWindow geometry follows PyTorch's CPU kernels (aten/src/ATen/native/
// Pool.h and the pooling loops): windows start at o * stride - pad, are
// clipped to the input, and in ceil mode the last window may hang over the
// right edge. One parallel task per (image, channel) plane, so backward
// scatters into a plane nobody else touches.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/cpu/Spatial.h"

#include "dlc/runtime/Parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace dlc::rt::cpu {

namespace {

/// Index in the plane of the first maximum of window (wy, wx): strict `>`
/// keeps the first of equal values, and a NaN always wins, as in PyTorch.
template <typename T>
int64_t argmax(const T *plane, int64_t w, PoolWindow wy, PoolWindow wx) {
  int64_t best = wy.begin * w + wx.begin;
  T bestValue = -std::numeric_limits<T>::infinity();
  for (int64_t iy = wy.begin; iy < wy.end; ++iy)
    for (int64_t ix = wx.begin; ix < wx.end; ++ix) {
      T v = plane[iy * w + ix];
      if (v > bestValue || std::isnan(v)) {
        bestValue = v;
        best = iy * w + ix;
      }
    }
  return best;
}

} // namespace

template <typename T>
void maxPool2dForward(const Pool2dParams &p, const T *x, T *y) {
  const int64_t oh = p.outH(), ow = p.outW();
  parallelFor(0, p.n * p.c, [&](int64_t nc) {
    const T *plane = x + nc * p.h * p.w;
    T *out = y + nc * oh * ow;
    for (int64_t oy = 0; oy < oh; ++oy) {
      PoolWindow wy = poolWindow(oy, p.h, p.kh, p.strideH, p.padH);
      for (int64_t ox = 0; ox < ow; ++ox) {
        PoolWindow wx = poolWindow(ox, p.w, p.kw, p.strideW, p.padW);
        // An all-padding window cannot occur (poolOutputSize drops it), so
        // the argmax is a real element.
        out[oy * ow + ox] = plane[argmax(plane, p.w, wy, wx)];
      }
    }
  });
}

template <typename T>
void maxPool2dBackward(const Pool2dParams &p, const T *x, const T *dy, T *dx) {
  const int64_t oh = p.outH(), ow = p.outW();
  parallelFor(0, p.n * p.c, [&](int64_t nc) {
    const T *plane = x + nc * p.h * p.w;
    const T *grad = dy + nc * oh * ow;
    std::vector<double> acc(p.h * p.w, 0.0);
    for (int64_t oy = 0; oy < oh; ++oy) {
      PoolWindow wy = poolWindow(oy, p.h, p.kh, p.strideH, p.padH);
      for (int64_t ox = 0; ox < ow; ++ox) {
        PoolWindow wx = poolWindow(ox, p.w, p.kw, p.strideW, p.padW);
        acc[argmax(plane, p.w, wy, wx)] += grad[oy * ow + ox];
      }
    }
    T *out = dx + nc * p.h * p.w;
    for (int64_t i = 0; i < p.h * p.w; ++i)
      out[i] = static_cast<T>(acc[i]);
  });
}

namespace {

double avgDivisor(const Pool2dParams &p, PoolWindow wy, PoolWindow wx) {
  if (p.countIncludePad)
    return double(wy.paddedSize * wx.paddedSize);
  return double((wy.end - wy.begin) * (wx.end - wx.begin));
}

} // namespace

template <typename T>
void avgPool2dForward(const Pool2dParams &p, const T *x, T *y) {
  const int64_t oh = p.outH(), ow = p.outW();
  parallelFor(0, p.n * p.c, [&](int64_t nc) {
    const T *plane = x + nc * p.h * p.w;
    T *out = y + nc * oh * ow;
    for (int64_t oy = 0; oy < oh; ++oy) {
      PoolWindow wy = poolWindow(oy, p.h, p.kh, p.strideH, p.padH);
      for (int64_t ox = 0; ox < ow; ++ox) {
        PoolWindow wx = poolWindow(ox, p.w, p.kw, p.strideW, p.padW);
        double sum = 0;
        for (int64_t iy = wy.begin; iy < wy.end; ++iy)
          for (int64_t ix = wx.begin; ix < wx.end; ++ix)
            sum += plane[iy * p.w + ix];
        out[oy * ow + ox] = static_cast<T>(sum / avgDivisor(p, wy, wx));
      }
    }
  });
}

template <typename T>
void avgPool2dBackward(const Pool2dParams &p, const T *dy, T *dx) {
  const int64_t oh = p.outH(), ow = p.outW();
  parallelFor(0, p.n * p.c, [&](int64_t nc) {
    const T *grad = dy + nc * oh * ow;
    std::vector<double> acc(p.h * p.w, 0.0);
    for (int64_t oy = 0; oy < oh; ++oy) {
      PoolWindow wy = poolWindow(oy, p.h, p.kh, p.strideH, p.padH);
      for (int64_t ox = 0; ox < ow; ++ox) {
        PoolWindow wx = poolWindow(ox, p.w, p.kw, p.strideW, p.padW);
        double g = grad[oy * ow + ox] / avgDivisor(p, wy, wx);
        for (int64_t iy = wy.begin; iy < wy.end; ++iy)
          for (int64_t ix = wx.begin; ix < wx.end; ++ix)
            acc[iy * p.w + ix] += g;
      }
    }
    T *out = dx + nc * p.h * p.w;
    for (int64_t i = 0; i < p.h * p.w; ++i)
      out[i] = static_cast<T>(acc[i]);
  });
}

template <typename T>
void globalAvgPoolForward(int64_t n, int64_t c, int64_t h, int64_t w,
                          const T *x, T *y) {
  parallelFor(0, n * c, [&](int64_t nc) {
    const T *plane = x + nc * h * w;
    double sum = 0;
    for (int64_t i = 0; i < h * w; ++i)
      sum += plane[i];
    y[nc] = static_cast<T>(sum / double(h * w));
  });
}

template <typename T>
void globalAvgPoolBackward(int64_t n, int64_t c, int64_t h, int64_t w,
                           const T *dy, T *dx) {
  parallelFor(0, n * c, [&](int64_t nc) {
    T g = static_cast<T>(double(dy[nc]) / double(h * w));
    T *plane = dx + nc * h * w;
    std::fill(plane, plane + h * w, g);
  });
}

#define DLC_INSTANTIATE_POOL(T)                                                \
  template void maxPool2dForward<T>(const Pool2dParams &, const T *, T *);     \
  template void maxPool2dBackward<T>(const Pool2dParams &, const T *,          \
                                     const T *, T *);                          \
  template void avgPool2dForward<T>(const Pool2dParams &, const T *, T *);     \
  template void avgPool2dBackward<T>(const Pool2dParams &, const T *, T *);    \
  template void globalAvgPoolForward<T>(int64_t, int64_t, int64_t, int64_t,    \
                                        const T *, T *);                       \
  template void globalAvgPoolBackward<T>(int64_t, int64_t, int64_t, int64_t,   \
                                         const T *, T *);
DLC_INSTANTIATE_POOL(float)
DLC_INSTANTIATE_POOL(double)
#undef DLC_INSTANTIATE_POOL

} // namespace dlc::rt::cpu
