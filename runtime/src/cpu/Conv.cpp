//===- Conv.cpp - 2-D convolution reference kernels -----------------------===//
//
// Direct loops over NCHW / OIHW buffers. Each kernel owns one kind of output
// slice per parallel task (an output plane, an input-gradient plane, or one
// output channel's filter gradient) so sums run in a fixed order and the
// results do not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/cpu/Spatial.h"

#include "dlc/runtime/Parallel.h"

#include <algorithm>
#include <vector>

namespace dlc::rt::cpu {

namespace {

/// The output positions o in [0, out) whose input position
/// o * stride + offset lies in [0, in). Hoisting the bounds test out of the
/// innermost loop keeps it branch-free.
struct Range {
  int64_t lo, hi;
};

Range validRange(int64_t in, int64_t out, int64_t stride, int64_t offset) {
  int64_t lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t last = in - 1 - offset;
  int64_t hi = last < 0 ? 0 : last / stride + 1;
  return Range{lo, std::max(lo, std::min(hi, out))};
}

} // namespace

template <typename T>
void conv2dForward(const Conv2dParams &p, const T *x, const T *w, const T *bias,
                   T *y) {
  const int64_t oh = p.outH(), ow = p.outW();
  const int64_t cg = p.c / p.groups, kg = p.k / p.groups;
  parallelFor(0, p.n * p.k, [&](int64_t nk) {
    int64_t n = nk / p.k, k = nk % p.k, c0 = (k / kg) * cg;
    // Summing in double makes the float kernel a reference, not a peer.
    std::vector<double> acc(oh * ow, bias ? double(bias[k]) : 0.0);
    for (int64_t ci = 0; ci < cg; ++ci) {
      const T *plane = x + (n * p.c + c0 + ci) * p.h * p.w;
      for (int64_t ky = 0; ky < p.kh; ++ky) {
        int64_t offY = ky * p.dilationH - p.padH;
        Range ys = validRange(p.h, oh, p.strideH, offY);
        for (int64_t kx = 0; kx < p.kw; ++kx) {
          int64_t offX = kx * p.dilationW - p.padW;
          Range xs = validRange(p.w, ow, p.strideW, offX);
          double wv = w[((k * cg + ci) * p.kh + ky) * p.kw + kx];
          for (int64_t oy = ys.lo; oy < ys.hi; ++oy) {
            const T *row = plane + (oy * p.strideH + offY) * p.w + offX;
            double *out = acc.data() + oy * ow;
            for (int64_t ox = xs.lo; ox < xs.hi; ++ox)
              out[ox] += wv * row[ox * p.strideW];
          }
        }
      }
    }
    T *dst = y + nk * oh * ow;
    for (int64_t i = 0; i < oh * ow; ++i)
      dst[i] = static_cast<T>(acc[i]);
  });
}

template <typename T>
void conv2dBackwardData(const Conv2dParams &p, const T *dy, const T *w, T *dx) {
  const int64_t oh = p.outH(), ow = p.outW();
  const int64_t cg = p.c / p.groups, kg = p.k / p.groups;
  // One task per input plane: it gathers from every output channel of its
  // group, so no two tasks write the same element.
  parallelFor(0, p.n * p.c, [&](int64_t nc) {
    int64_t n = nc / p.c, c = nc % p.c, g = c / cg, cl = c % cg;
    std::vector<double> acc(p.h * p.w, 0.0);
    for (int64_t k = g * kg; k < (g + 1) * kg; ++k) {
      const T *grad = dy + (n * p.k + k) * oh * ow;
      for (int64_t ky = 0; ky < p.kh; ++ky) {
        int64_t offY = ky * p.dilationH - p.padH;
        Range ys = validRange(p.h, oh, p.strideH, offY);
        for (int64_t kx = 0; kx < p.kw; ++kx) {
          int64_t offX = kx * p.dilationW - p.padW;
          Range xs = validRange(p.w, ow, p.strideW, offX);
          double wv = w[((k * cg + cl) * p.kh + ky) * p.kw + kx];
          for (int64_t oy = ys.lo; oy < ys.hi; ++oy) {
            double *row = acc.data() + (oy * p.strideH + offY) * p.w + offX;
            const T *gradRow = grad + oy * ow;
            for (int64_t ox = xs.lo; ox < xs.hi; ++ox)
              row[ox * p.strideW] += wv * gradRow[ox];
          }
        }
      }
    }
    T *dst = dx + nc * p.h * p.w;
    for (int64_t i = 0; i < p.h * p.w; ++i)
      dst[i] = static_cast<T>(acc[i]);
  });
}

template <typename T>
void conv2dBackwardFilter(const Conv2dParams &p, const T *x, const T *dy, T *dw,
                          T *dbias) {
  const int64_t oh = p.outH(), ow = p.outW();
  const int64_t cg = p.c / p.groups, kg = p.k / p.groups;
  // One task per output channel: its filter slice and bias sum over the
  // whole batch in a fixed (n, oy, ox) order.
  parallelFor(0, p.k, [&](int64_t k) {
    int64_t c0 = (k / kg) * cg;
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t ky = 0; ky < p.kh; ++ky) {
        int64_t offY = ky * p.dilationH - p.padH;
        Range ys = validRange(p.h, oh, p.strideH, offY);
        for (int64_t kx = 0; kx < p.kw; ++kx) {
          int64_t offX = kx * p.dilationW - p.padW;
          Range xs = validRange(p.w, ow, p.strideW, offX);
          double acc = 0;
          for (int64_t n = 0; n < p.n; ++n) {
            const T *plane = x + (n * p.c + c0 + ci) * p.h * p.w;
            const T *grad = dy + (n * p.k + k) * oh * ow;
            for (int64_t oy = ys.lo; oy < ys.hi; ++oy) {
              const T *row = plane + (oy * p.strideH + offY) * p.w + offX;
              const T *g = grad + oy * ow;
              for (int64_t ox = xs.lo; ox < xs.hi; ++ox)
                acc += double(row[ox * p.strideW]) * g[ox];
            }
          }
          dw[((k * cg + ci) * p.kh + ky) * p.kw + kx] = static_cast<T>(acc);
        }
      }
    if (dbias) {
      double acc = 0;
      for (int64_t n = 0; n < p.n; ++n) {
        const T *grad = dy + (n * p.k + k) * oh * ow;
        for (int64_t i = 0; i < oh * ow; ++i)
          acc += grad[i];
      }
      dbias[k] = static_cast<T>(acc);
    }
  });
}

#define DLC_INSTANTIATE_CONV(T)                                                \
  template void conv2dForward<T>(const Conv2dParams &, const T *, const T *,   \
                                 const T *, T *);                              \
  template void conv2dBackwardData<T>(const Conv2dParams &, const T *,         \
                                      const T *, T *);                         \
  template void conv2dBackwardFilter<T>(const Conv2dParams &, const T *,       \
                                        const T *, T *, T *);
DLC_INSTANTIATE_CONV(float)
DLC_INSTANTIATE_CONV(double)
#undef DLC_INSTANTIATE_CONV

} // namespace dlc::rt::cpu
