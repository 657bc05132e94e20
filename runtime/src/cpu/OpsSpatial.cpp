//===- OpsSpatial.cpp - convolution, batch-norm, pooling, resize kernels --===//
//
// NCHW float32 reference kernels, direct loops with double accumulation.
// Work is split over (image, channel) planes or output channels so that
// every output element has one writer and sums run in a fixed order.
//
//===----------------------------------------------------------------------===//

#include "KernelRegistration.h"

#include <cmath>
#include <cstring>

namespace dlc::rt::cpu {

namespace {

/// The geometry of a 2-D convolution, read from the kernel's attributes
/// and its input, filter and output shapes.
struct ConvShape {
  int64_t n, c, h, w;     // input
  int64_t k, cg, r, s;    // filter: out channels, in channels per group, kernel
  int64_t oh, ow;         // output
  int64_t sh, sw, ph, pw, dh, dw, groups;

  int64_t kg() const { return k / groups; } // out channels per group
};

ConvShape convShape(const KernelContext &c, const std::vector<int64_t> &x,
                    const std::vector<int64_t> &w, const std::vector<int64_t> &y) {
  std::vector<int64_t> stride = c.getInts("stride", {1, 1}),
                       pad = c.getInts("padding", {0, 0}),
                       dil = c.getInts("dilation", {1, 1});
  return ConvShape{x[0], x[1], x[2], x[3], w[0], w[1], w[2], w[3], y[2], y[3],
                   stride[0], stride[1], pad[0], pad[1], dil[0], dil[1],
                   c.getInt("groups", 1)};
}

/// The output positions o in [0, out) whose input position
/// o * stride + offset lies in [0, in): the loops below then run without
/// bounds checks and vectorize along a row.
struct Range {
  int64_t lo, hi;
};
Range validRange(int64_t in, int64_t out, int64_t stride, int64_t offset) {
  // Smallest o with o * stride + offset >= 0, largest with < in.
  int64_t lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t last = in - 1 - offset;
  int64_t hi = last < 0 ? 0 : last / stride + 1;
  return Range{lo, std::max(lo, std::min(hi, out))};
}

Status conv2d(const KernelContext &c) {
  ConvShape g = convShape(c, *c.in(0).shape, *c.in(1).shape, *c.out(0).shape);
  const float *X = c.in(0).f32(), *W = c.in(1).f32();
  const float *bias = c.numInputs() > 2 ? c.in(2).f32() : nullptr;
  float *Y = c.out(0).f32();
  parallelFor(0, g.n * g.k, [&](int64_t nk) {
    int64_t n = nk / g.k, k = nk % g.k, c0 = (k / g.kg()) * g.cg;
    std::vector<double> acc(g.oh * g.ow, bias ? bias[k] : 0.0);
    for (int64_t ci = 0; ci < g.cg; ++ci) {
      const float *plane = X + (n * g.c + c0 + ci) * g.h * g.w;
      for (int64_t ry = 0; ry < g.r; ++ry) {
        Range ys = validRange(g.h, g.oh, g.sh, ry * g.dh - g.ph);
        for (int64_t sx = 0; sx < g.s; ++sx) {
          Range xs = validRange(g.w, g.ow, g.sw, sx * g.dw - g.pw);
          double w = W[((k * g.cg + ci) * g.r + ry) * g.s + sx];
          for (int64_t oy = ys.lo; oy < ys.hi; ++oy) {
            const float *row = plane + (oy * g.sh - g.ph + ry * g.dh) * g.w +
                               sx * g.dw - g.pw;
            double *out = acc.data() + oy * g.ow;
            for (int64_t ox = xs.lo; ox < xs.hi; ++ox)
              out[ox] += w * row[ox * g.sw];
          }
        }
      }
    }
    float *y = Y + (n * g.k + k) * g.oh * g.ow;
    for (int64_t i = 0; i < g.oh * g.ow; ++i)
      y[i] = static_cast<float>(acc[i]);
  });
  return Status::ok();
}

Status conv2dBackwardData(const KernelContext &c) {
  // in: dy, filter; out: dx. Scatters dy through the filter; images are
  // independent, so one thread owns each image's dx and adds in a fixed
  // order.
  ConvShape g = convShape(c, *c.out(0).shape, *c.in(1).shape, *c.in(0).shape);
  const float *DY = c.in(0).f32(), *W = c.in(1).f32();
  float *DX = c.out(0).f32();
  int64_t image = g.c * g.h * g.w;
  parallelFor(0, g.n, [&](int64_t n) {
    std::vector<double> acc(image, 0.0);
    for (int64_t k = 0; k < g.k; ++k) {
      int64_t c0 = (k / g.kg()) * g.cg;
      const float *dy = DY + (n * g.k + k) * g.oh * g.ow;
      for (int64_t ci = 0; ci < g.cg; ++ci)
        for (int64_t ry = 0; ry < g.r; ++ry) {
          Range ys = validRange(g.h, g.oh, g.sh, ry * g.dh - g.ph);
          for (int64_t sx = 0; sx < g.s; ++sx) {
            Range xs = validRange(g.w, g.ow, g.sw, sx * g.dw - g.pw);
            double w = W[((k * g.cg + ci) * g.r + ry) * g.s + sx];
            for (int64_t oy = ys.lo; oy < ys.hi; ++oy) {
              double *row = acc.data() + ((c0 + ci) * g.h + oy * g.sh - g.ph +
                                          ry * g.dh) * g.w + sx * g.dw - g.pw;
              const float *d = dy + oy * g.ow;
              for (int64_t ox = xs.lo; ox < xs.hi; ++ox)
                row[ox * g.sw] += w * d[ox];
            }
          }
        }
    }
    for (int64_t i = 0; i < image; ++i)
      DX[n * image + i] = static_cast<float>(acc[i]);
  });
  return Status::ok();
}

Status conv2dBackwardFilter(const KernelContext &c) {
  // in: dy, input; out: dw.
  ConvShape g = convShape(c, *c.in(1).shape, *c.out(0).shape, *c.in(0).shape);
  const float *DY = c.in(0).f32(), *X = c.in(1).f32();
  float *DW = c.out(0).f32();
  parallelFor(0, g.k, [&](int64_t k) {
    int64_t c0 = (k / g.kg()) * g.cg;
    for (int64_t ci = 0; ci < g.cg; ++ci)
      for (int64_t ry = 0; ry < g.r; ++ry) {
        Range ys = validRange(g.h, g.oh, g.sh, ry * g.dh - g.ph);
        for (int64_t sx = 0; sx < g.s; ++sx) {
          Range xs = validRange(g.w, g.ow, g.sw, sx * g.dw - g.pw);
          double sum = 0;
          for (int64_t n = 0; n < g.n; ++n) {
            const float *plane = X + (n * g.c + c0 + ci) * g.h * g.w;
            const float *dy = DY + (n * g.k + k) * g.oh * g.ow;
            for (int64_t oy = ys.lo; oy < ys.hi; ++oy) {
              const float *row = plane + (oy * g.sh - g.ph + ry * g.dh) * g.w +
                                 sx * g.dw - g.pw;
              const float *d = dy + oy * g.ow;
              for (int64_t ox = xs.lo; ox < xs.hi; ++ox)
                sum += double(d[ox]) * row[ox * g.sw];
            }
          }
          DW[((k * g.cg + ci) * g.r + ry) * g.s + sx] = static_cast<float>(sum);
        }
      }
  });
  return Status::ok();
}

/// Per-channel batch statistics of an NC or NCHW tensor.
void channelStats(const TensorRef &x, int64_t ch, double &mean, double &var) {
  int64_t n = x.dim(0), c = x.dim(1), hw = x.numElements() / (n * c);
  const float *X = x.f32();
  double sum = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < hw; ++j)
      sum += X[(i * c + ch) * hw + j];
  mean = sum / (n * hw);
  double sq = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < hw; ++j) {
      double d = X[(i * c + ch) * hw + j] - mean;
      sq += d * d;
    }
  var = sq / (n * hw);
}

Status batchNorm(const KernelContext &c) {
  const TensorRef &x = c.in(0);
  int64_t n = x.dim(0), ch = x.dim(1), hw = x.numElements() / (n * ch), m = n * hw;
  double eps = c.getFloat("epsilon", 1e-5), momentum = c.getFloat("momentum", 0.1);
  const float *X = x.f32(), *G = c.in(1).f32(), *B = c.in(2).f32(),
              *RM = c.in(3).f32(), *RV = c.in(4).f32();
  float *Y = c.out(0).f32(), *RM2 = c.out(1).f32(), *RV2 = c.out(2).f32();
  parallelFor(0, ch, [&](int64_t k) {
    double mean, var;
    channelStats(x, k, mean, var);
    double rstd = 1 / std::sqrt(var + eps);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < hw; ++j) {
        int64_t at = (i * ch + k) * hw + j;
        Y[at] = static_cast<float>((X[at] - mean) * rstd * G[k] + B[k]);
      }
    // The running variance takes the unbiased batch variance, as PyTorch.
    double unbiased = m > 1 ? var * m / (m - 1) : var;
    double rm = RM[k], rv = RV[k]; // read before writing: updated in place
    RM2[k] = static_cast<float>((1 - momentum) * rm + momentum * mean);
    RV2[k] = static_cast<float>((1 - momentum) * rv + momentum * unbiased);
  });
  return Status::ok();
}

Status batchNormBackward(const KernelContext &c) {
  const TensorRef &x = c.in(1);
  int64_t n = x.dim(0), ch = x.dim(1), hw = x.numElements() / (n * ch), m = n * hw;
  double eps = c.getFloat("epsilon", 1e-5);
  const float *DY = c.in(0).f32(), *X = x.f32(), *G = c.in(2).f32();
  float *DX = c.out(0).f32(), *DG = c.out(1).f32(), *DB = c.out(2).f32();
  parallelFor(0, ch, [&](int64_t k) {
    double mean, var;
    channelStats(x, k, mean, var);
    double rstd = 1 / std::sqrt(var + eps), dg = 0, db = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < hw; ++j) {
        int64_t at = (i * ch + k) * hw + j;
        dg += DY[at] * (X[at] - mean) * rstd;
        db += DY[at];
      }
    DG[k] = static_cast<float>(dg);
    DB[k] = static_cast<float>(db);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < hw; ++j) {
        int64_t at = (i * ch + k) * hw + j;
        double xhat = (X[at] - mean) * rstd;
        DX[at] = static_cast<float>(G[k] * rstd / m * (m * DY[at] - db - xhat * dg));
      }
  });
  return Status::ok();
}

/// Pooling geometry: the input and output planes and the window.
struct PoolShape {
  int64_t planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw;
};

PoolShape poolShape(const KernelContext &c, const std::vector<int64_t> &in,
                    const std::vector<int64_t> &out) {
  std::vector<int64_t> k = c.getInts("kernel_size", {1, 1}),
                       s = c.getInts("stride", {1, 1}),
                       p = c.getInts("padding", {0, 0});
  return PoolShape{in[0] * in[1], in[2], in[3], out[2], out[3],
                   k[0], k[1], s[0], s[1], p[0], p[1]};
}

/// Index in the plane of the window's first maximum (PyTorch's tie rule).
int64_t windowArgmax(const float *plane, const PoolShape &g, int64_t oy, int64_t ox) {
  int64_t best = -1;
  float value = -INFINITY;
  for (int64_t y = oy * g.sh - g.ph; y < oy * g.sh - g.ph + g.kh; ++y)
    for (int64_t x = ox * g.sw - g.pw; x < ox * g.sw - g.pw + g.kw; ++x) {
      if (y < 0 || y >= g.h || x < 0 || x >= g.w)
        continue;
      float v = plane[y * g.w + x];
      if (best < 0 || v > value || std::isnan(v)) {
        best = y * g.w + x;
        value = v;
      }
    }
  return best;
}

Status maxPool(const KernelContext &c) {
  PoolShape g = poolShape(c, *c.in(0).shape, *c.out(0).shape);
  const float *X = c.in(0).f32();
  float *Y = c.out(0).f32();
  parallelFor(0, g.planes, [&](int64_t p) {
    const float *plane = X + p * g.h * g.w;
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox)
        Y[(p * g.oh + oy) * g.ow + ox] = plane[windowArgmax(plane, g, oy, ox)];
  });
  return Status::ok();
}

Status maxPoolBackward(const KernelContext &c) {
  PoolShape g = poolShape(c, *c.in(1).shape, *c.in(0).shape);
  const float *DY = c.in(0).f32(), *X = c.in(1).f32();
  float *DX = c.out(0).f32();
  std::memset(DX, 0, c.out(0).numElements() * sizeof(float));
  parallelFor(0, g.planes, [&](int64_t p) {
    const float *plane = X + p * g.h * g.w;
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox)
        DX[p * g.h * g.w + windowArgmax(plane, g, oy, ox)] +=
            DY[(p * g.oh + oy) * g.ow + ox];
  });
  return Status::ok();
}

/// PyTorch's average-pooling window: [start, end) clipped to the input, and
/// the divisor (the window clipped to the padded input, or the real count).
struct AvgWindow {
  int64_t y0, y1, x0, x1;
  double divisor;
};

AvgWindow avgWindow(const PoolShape &g, int64_t oy, int64_t ox, bool includePad) {
  int64_t y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
  int64_t y1 = std::min(y0 + g.kh, g.h + g.ph), x1 = std::min(x0 + g.kw, g.w + g.pw);
  double padded = double(y1 - y0) * (x1 - x0);
  y0 = std::max<int64_t>(y0, 0);
  x0 = std::max<int64_t>(x0, 0);
  y1 = std::min(y1, g.h);
  x1 = std::min(x1, g.w);
  return AvgWindow{y0, y1, x0, x1, includePad ? padded : double(y1 - y0) * (x1 - x0)};
}

Status avgPool(const KernelContext &c) {
  PoolShape g = poolShape(c, *c.in(0).shape, *c.out(0).shape);
  bool includePad = c.getInt("count_include_pad", 1);
  const float *X = c.in(0).f32();
  float *Y = c.out(0).f32();
  parallelFor(0, g.planes, [&](int64_t p) {
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        AvgWindow win = avgWindow(g, oy, ox, includePad);
        double sum = 0;
        for (int64_t y = win.y0; y < win.y1; ++y)
          for (int64_t x = win.x0; x < win.x1; ++x)
            sum += X[(p * g.h + y) * g.w + x];
        Y[(p * g.oh + oy) * g.ow + ox] = static_cast<float>(sum / win.divisor);
      }
  });
  return Status::ok();
}

Status avgPoolBackward(const KernelContext &c) {
  PoolShape g = poolShape(c, *c.out(0).shape, *c.in(0).shape);
  bool includePad = c.getInt("count_include_pad", 1);
  const float *DY = c.in(0).f32();
  float *DX = c.out(0).f32();
  std::memset(DX, 0, c.out(0).numElements() * sizeof(float));
  parallelFor(0, g.planes, [&](int64_t p) {
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        AvgWindow win = avgWindow(g, oy, ox, includePad);
        float share = static_cast<float>(DY[(p * g.oh + oy) * g.ow + ox] / win.divisor);
        for (int64_t y = win.y0; y < win.y1; ++y)
          for (int64_t x = win.x0; x < win.x1; ++x)
            DX[(p * g.h + y) * g.w + x] += share;
      }
  });
  return Status::ok();
}

Status globalAvgPool(const KernelContext &c) {
  int64_t planes = c.in(0).dim(0) * c.in(0).dim(1);
  int64_t hw = c.in(0).dim(2) * c.in(0).dim(3);
  const float *X = c.in(0).f32();
  float *Y = c.out(0).f32();
  parallelFor(0, planes, [&](int64_t p) {
    double sum = 0;
    for (int64_t i = 0; i < hw; ++i)
      sum += X[p * hw + i];
    Y[p] = static_cast<float>(sum / hw);
  });
  return Status::ok();
}

/// Source coordinate of a bilinear sample, as PyTorch's
/// area_pixel_compute_source_index: the two neighbours and their weights.
struct Sample {
  int64_t i0, i1;
  double w0, w1;
};

Sample sourceOf(int64_t dst, int64_t in, int64_t out, bool alignCorners) {
  double src;
  if (alignCorners) {
    src = out > 1 ? dst * double(in - 1) / double(out - 1) : 0.0;
  } else {
    src = (dst + 0.5) * double(in) / double(out) - 0.5;
    if (src < 0)
      src = 0;
  }
  int64_t i0 = static_cast<int64_t>(src);
  int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
  double w1 = src - i0;
  return Sample{i0, i1, 1 - w1, w1};
}

Status resizeBilinear(const KernelContext &c) {
  const TensorRef &x = c.in(0), &y = c.out(0);
  int64_t planes = x.dim(0) * x.dim(1), h = x.dim(2), w = x.dim(3),
          oh = y.dim(2), ow = y.dim(3);
  bool align = c.getInt("align_corners", 0);
  const float *X = x.f32();
  float *Y = y.f32();
  parallelFor(0, planes, [&](int64_t p) {
    for (int64_t oy = 0; oy < oh; ++oy) {
      Sample sy = sourceOf(oy, h, oh, align);
      for (int64_t ox = 0; ox < ow; ++ox) {
        Sample sx = sourceOf(ox, w, ow, align);
        const float *plane = X + p * h * w;
        double v = sy.w0 * (sx.w0 * plane[sy.i0 * w + sx.i0] + sx.w1 * plane[sy.i0 * w + sx.i1]) +
                   sy.w1 * (sx.w0 * plane[sy.i1 * w + sx.i0] + sx.w1 * plane[sy.i1 * w + sx.i1]);
        Y[(p * oh + oy) * ow + ox] = static_cast<float>(v);
      }
    }
  });
  return Status::ok();
}

Status resizeBilinearBackward(const KernelContext &c) {
  const TensorRef &dy = c.in(0), &dx = c.out(0);
  int64_t planes = dx.dim(0) * dx.dim(1), h = dx.dim(2), w = dx.dim(3),
          oh = dy.dim(2), ow = dy.dim(3);
  bool align = c.getInt("align_corners", 0);
  const float *DY = dy.f32();
  float *DX = dx.f32();
  std::memset(DX, 0, dx.numElements() * sizeof(float));
  parallelFor(0, planes, [&](int64_t p) {
    float *plane = DX + p * h * w;
    for (int64_t oy = 0; oy < oh; ++oy) {
      Sample sy = sourceOf(oy, h, oh, align);
      for (int64_t ox = 0; ox < ow; ++ox) {
        Sample sx = sourceOf(ox, w, ow, align);
        double g = DY[(p * oh + oy) * ow + ox];
        plane[sy.i0 * w + sx.i0] += static_cast<float>(g * sy.w0 * sx.w0);
        plane[sy.i0 * w + sx.i1] += static_cast<float>(g * sy.w0 * sx.w1);
        plane[sy.i1 * w + sx.i0] += static_cast<float>(g * sy.w1 * sx.w0);
        plane[sy.i1 * w + sx.i1] += static_cast<float>(g * sy.w1 * sx.w1);
      }
    }
  });
  return Status::ok();
}

} // namespace

void registerSpatialKernels(KernelRegistry &r) {
  r["conv2d"] = conv2d;
  r["conv2d_backward_data"] = conv2dBackwardData;
  r["conv2d_backward_filter"] = conv2dBackwardFilter;
  r["batch_norm"] = batchNorm;
  r["batch_norm_backward"] = batchNormBackward;
  r["max_pool2d"] = maxPool;
  r["max_pool2d_backward"] = maxPoolBackward;
  r["avg_pool2d"] = avgPool;
  r["avg_pool2d_backward"] = avgPoolBackward;
  r["global_avg_pool"] = globalAvgPool;
  r["resize_bilinear"] = resizeBilinear;
  r["resize_bilinear_backward"] = resizeBilinearBackward;
}

} // namespace dlc::rt::cpu
