//===- Resize.cpp - bilinear resize kernels
//--------------------------------===//
//
// Matches torch.nn.functional.interpolate(mode="bilinear") given an output
// size (no scale factor): the source coordinate of each output index, the
// clamping of it, and the two neighbours and weights follow ATen's
// area_pixel_compute_scale / area_pixel_compute_source_index and
// guard_index_and_lambda (UpSample.h). One parallel task per plane.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/cpu/Spatial.h"

#include "dlc/runtime/Parallel.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace dlc::rt::cpu {

std::vector<BilinearTap> bilinearTaps(int64_t in, int64_t out, bool alignCorners) {
  // align_corners maps the corner pixel centres onto each other; otherwise
  // pixel areas are mapped, and a 1-pixel output has scale 0 under
  // align_corners (it samples the first pixel).
  double scale = alignCorners
                     ? (out > 1 ? double(in - 1) / double(out - 1) : 0.0)
                     : double(in) / double(out);
  std::vector<BilinearTap> result(out);
  for (int64_t o = 0; o < out; ++o) {
    double src = alignCorners ? scale * o : scale * (o + 0.5) - 0.5;
    // Without align_corners the first output centres can map left of the
    // first input centre; ATen clamps them to it rather than extrapolate.
    if (!alignCorners && src < 0)
      src = 0;
    int64_t i0 =
        std::min<int64_t>(static_cast<int64_t>(std::floor(src)), in - 1);
    double w1 = std::min(std::max(src - double(i0), 0.0), 1.0);
    int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
    result[o] = BilinearTap{i0, i1, 1.0 - w1, w1};
  }
  return result;
}

template <typename T>
void resizeBilinearForward(const ResizeParams &p, const T *x, T *y) {
  std::vector<BilinearTap> ty = bilinearTaps(p.inH, p.outH, p.alignCorners);
  std::vector<BilinearTap> tx = bilinearTaps(p.inW, p.outW, p.alignCorners);
  parallelFor(0, p.n * p.c, [&](int64_t nc) {
    const T *plane = x + nc * p.inH * p.inW;
    T *out = y + nc * p.outH * p.outW;
    for (int64_t oy = 0; oy < p.outH; ++oy) {
      const BilinearTap &a = ty[oy];
      const T *r0 = plane + a.i0 * p.inW, *r1 = plane + a.i1 * p.inW;
      for (int64_t ox = 0; ox < p.outW; ++ox) {
        const BilinearTap &b = tx[ox];
        double v = a.w0 * (b.w0 * r0[b.i0] + b.w1 * r0[b.i1]) +
                   a.w1 * (b.w0 * r1[b.i0] + b.w1 * r1[b.i1]);
        out[oy * p.outW + ox] = static_cast<T>(v);
      }
    }
  });
}

template <typename T>
void resizeBilinearBackward(const ResizeParams &p, const T *dy, T *dx) {
  std::vector<BilinearTap> ty = bilinearTaps(p.inH, p.outH, p.alignCorners);
  std::vector<BilinearTap> tx = bilinearTaps(p.inW, p.outW, p.alignCorners);
  parallelFor(0, p.n * p.c, [&](int64_t nc) {
    const T *grad = dy + nc * p.outH * p.outW;
    // The transpose of the forward gather: each output scatters its
    // gradient to its four taps (two of which coincide at the borders).
    std::vector<double> acc(p.inH * p.inW, 0.0);
    for (int64_t oy = 0; oy < p.outH; ++oy) {
      const BilinearTap &a = ty[oy];
      double *r0 = acc.data() + a.i0 * p.inW, *r1 = acc.data() + a.i1 * p.inW;
      for (int64_t ox = 0; ox < p.outW; ++ox) {
        const BilinearTap &b = tx[ox];
        double g = grad[oy * p.outW + ox];
        r0[b.i0] += a.w0 * b.w0 * g;
        r0[b.i1] += a.w0 * b.w1 * g;
        r1[b.i0] += a.w1 * b.w0 * g;
        r1[b.i1] += a.w1 * b.w1 * g;
      }
    }
    T *out = dx + nc * p.inH * p.inW;
    for (int64_t i = 0; i < p.inH * p.inW; ++i)
      out[i] = static_cast<T>(acc[i]);
  });
}

#define DLC_INSTANTIATE_RESIZE(T)                                              \
  template void resizeBilinearForward<T>(const ResizeParams &, const T *,      \
                                         T *);                                 \
  template void resizeBilinearBackward<T>(const ResizeParams &, const T *, T *);
DLC_INSTANTIATE_RESIZE(float)
DLC_INSTANTIATE_RESIZE(double)
#undef DLC_INSTANTIATE_RESIZE

} // namespace dlc::rt::cpu
