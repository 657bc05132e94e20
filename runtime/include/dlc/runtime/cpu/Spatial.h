//===- Spatial.h - CPU reference kernels for the spatial ops ----*- C++ -*-===//
//
// Convolution, batch normalization, pooling and bilinear resize, forward and
// backward, on NCHW tensors with OIHW filters, exactly as PyTorch defines
// them. These are the numerical reference the other backends are checked
// against, so they favour clarity and determinism over speed: direct loops,
// sums accumulated in double, and parallelism only over independent outer
// indices (image x channel, or output channel) so that every output element
// has one writer and a fixed summation order whatever the thread count.
//
// Every kernel is a template on the element type, instantiated for float
// and double. Kernels take raw pointers to dense row-major buffers the
// caller owns and write every element of their outputs (nothing needs to be
// zeroed first).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CPU_SPATIAL_H
#define DLC_RUNTIME_CPU_SPATIAL_H

#include "dlc/runtime/Shape.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace dlc::rt::cpu {

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

/// Output extents of a convolution and a pooling window (Shape.h, where the
/// plan's validation reads them too).
using rt::convOutputSize;
using rt::poolOutputSize;

/// The geometry of a 2-D convolution: input x [n, c, h, w], filter
/// [k, c / groups, kh, kw], output [n, k, outH(), outW()].
struct Conv2dParams {
  int64_t n = 1, c = 1, h = 1, w = 1;
  int64_t k = 1, kh = 1, kw = 1;
  int64_t strideH = 1, strideW = 1;
  int64_t padH = 0, padW = 0; ///< zero padding on both sides
  int64_t dilationH = 1, dilationW = 1;
  int64_t groups = 1; ///< must divide c and k; groups == c is depthwise

  int64_t outH() const {
    return convOutputSize(h, kh, strideH, padH, dilationH);
  }
  int64_t outW() const {
    return convOutputSize(w, kw, strideW, padW, dilationW);
  }
};

/// y = conv(x, w) (+ bias[k] when bias is not null).
template <typename T>
void conv2dForward(const Conv2dParams &p, const T *x, const T *w, const T *bias,
                   T *y);

/// dx = the gradient of sum(y * dy) with respect to x.
template <typename T>
void conv2dBackwardData(const Conv2dParams &p, const T *dy, const T *w, T *dx);

/// dw (and dbias[k] = sum of dy over n, oh, ow when dbias is not null).
template <typename T>
void conv2dBackwardFilter(const Conv2dParams &p, const T *x, const T *dy, T *dw,
                          T *dbias);

//===----------------------------------------------------------------------===//
// Batch normalization, training mode
//===----------------------------------------------------------------------===//

/// x is [n, c, spatial...]; spatial is the product of the trailing extents
/// (h * w for NCHW, 1 for NC). Statistics are per channel over n * spatial.
struct BatchNormParams {
  int64_t n = 1, c = 1, spatial = 1;
  double eps = 1e-5;
  double momentum = 0.1; ///< weight of the new batch in the running stats
};

/// y = (x - mean) * invstd * scale + bias with the batch mean and biased
/// variance. Writes savedMean / savedInvstd [c] for the backward pass, and
/// updates runningMean / runningVar [c] in place (the variance with the
/// unbiased estimator, as PyTorch). The running pointers may be null.
template <typename T>
void batchNormTrainForward(const BatchNormParams &p, const T *x, const T *scale,
                           const T *bias, T *y, T *savedMean, T *savedInvstd,
                           T *runningMean, T *runningVar);

/// dx, dscale, dbias of a training-mode batch norm (the batch statistics
/// depend on x, so dx has the two mean-correction terms).
template <typename T>
void batchNormTrainBackward(const BatchNormParams &p, const T *dy, const T *x,
                            const T *scale, const T *savedMean,
                            const T *savedInvstd, T *dx, T *dscale, T *dbias);

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//


/// The window of output position o along one axis, clipped to the input
/// (padding is never part of it), and its extent clipped to the padded
/// input (the divisor of average pooling with count_include_pad).
struct PoolWindow {
  int64_t begin, end, paddedSize;
};
/// Inline: the channels-last max pooling (DnnlPool.cpp) asks per output
/// pixel.
inline PoolWindow poolWindow(int64_t o, int64_t in, int64_t kernel, int64_t stride,
                             int64_t pad) {
  int64_t begin = o * stride - pad;
  int64_t end = std::min(begin + kernel, in + pad);
  return PoolWindow{std::max<int64_t>(begin, 0), std::min(end, in), end - begin};
}

/// Max and average pooling over [n, c, h, w] -> [n, c, outH(), outW()].
struct Pool2dParams {
  int64_t n = 1, c = 1, h = 1, w = 1;
  int64_t kh = 1, kw = 1;
  int64_t strideH = 1, strideW = 1;
  int64_t padH = 0, padW = 0;
  bool ceilMode = false;
  /// Average pooling only: divide by the window clipped to the padded input
  /// (true) or by the number of real input elements in it (false).
  bool countIncludePad = true;

  int64_t outH() const {
    return poolOutputSize(h, kh, strideH, padH, ceilMode);
  }
  int64_t outW() const {
    return poolOutputSize(w, kw, strideW, padW, ceilMode);
  }
};

/// Padding counts as -inf; a NaN in a window wins, as in PyTorch.
template <typename T>
void maxPool2dForward(const Pool2dParams &p, const T *x, T *y);

/// Routes dy to the first maximum of each window in row-major order
/// (PyTorch's tie rule), summing where windows overlap. The argmax is
/// recomputed from x, so no index tensor has to be kept.
template <typename T>
void maxPool2dBackward(const Pool2dParams &p, const T *x, const T *dy, T *dx);

template <typename T>
void avgPool2dForward(const Pool2dParams &p, const T *x, T *y);

template <typename T>
void avgPool2dBackward(const Pool2dParams &p, const T *dy, T *dx);

/// [n, c, h, w] -> [n, c, 1, 1], the mean of each plane.
template <typename T>
void globalAvgPoolForward(int64_t n, int64_t c, int64_t h, int64_t w,
                          const T *x, T *y);

template <typename T>
void globalAvgPoolBackward(int64_t n, int64_t c, int64_t h, int64_t w,
                           const T *dy, T *dx);

//===----------------------------------------------------------------------===//
// Bilinear resize
//===----------------------------------------------------------------------===//

/// [n, c, inH, inW] -> [n, c, outH, outW] as
/// torch.nn.functional.interpolate(mode="bilinear", size=(outH, outW)).
struct ResizeParams {
  int64_t n = 1, c = 1, inH = 1, inW = 1, outH = 1, outW = 1;
  bool alignCorners = false;
};

/// The two source neighbours of one output index along one axis and their
/// weights: value = w0 * in[i0] + w1 * in[i1].
struct BilinearTap {
  int64_t i0, i1;
  double w0, w1;
};

/// The taps of each of `out` indices sampling an axis of `in`, following
/// ATen's area_pixel_compute_scale / area_pixel_compute_source_index and
/// guard_index_and_lambda (UpSample.h).
std::vector<BilinearTap> bilinearTaps(int64_t in, int64_t out, bool alignCorners);

template <typename T>
void resizeBilinearForward(const ResizeParams &p, const T *x, T *y);

template <typename T>
void resizeBilinearBackward(const ResizeParams &p, const T *dy, T *dx);

} // namespace dlc::rt::cpu

#endif // DLC_RUNTIME_CPU_SPATIAL_H
