//===- FastResize.cpp - the fast backend's bilinear resize -----------------===//
//
// The reference resizes NCHW planes in double, and runs an NHWC op (the fast
// backend's layout) through NCHW copies of every operand. These take either
// layout as it is, in float, one output row (forward) or one input row
// (backward) per item: an NHWC row's channels are contiguous, so every
// pixel is a vector loop over them. The forward pass blends the two source
// rows first, then samples the blend along the row; the backward pass sums
// the output rows that sample an input row, weighted (contiguous), then
// scatters that sum along the row. Each item writes its own row, in a fixed
// order, so the bytes do not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#include "FastHost.h"

#include "dlc/runtime/cpu/Spatial.h"

#include <cstring>
#include <vector>

namespace dlc::rt::cpu {

namespace {

/// A resize as rows: `images` stacks of rows (n * c planes for NCHW, n
/// images for NHWC), each row `width` pixels of `channels` contiguous
/// floats (1 for NCHW).
struct ResizeRows {
  int64_t images, channels, inH, inW, outH, outW;
  bool alignCorners;
};

/// One axis's taps as float weights.
struct AxisTaps {
  std::vector<int64_t> i0, i1;
  std::vector<float> w0, w1;
};

AxisTaps axisTaps(int64_t in, int64_t out, bool alignCorners) {
  AxisTaps t;
  for (const BilinearTap &tap : bilinearTaps(in, out, alignCorners)) {
    t.i0.push_back(tap.i0);
    t.i1.push_back(tap.i1);
    t.w0.push_back(static_cast<float>(tap.w0));
    t.w1.push_back(static_cast<float>(tap.w1));
  }
  return t;
}

/// A float scratch row per thread, reused from call to call.
float *scratchRow(int64_t size) {
  thread_local std::vector<float> row;
  if (static_cast<int64_t>(row.size()) < size)
    row.resize(static_cast<size_t>(size));
  return row.data();
}

/// kChannels: 1 (NCHW, known at compile time) or 0 (NHWC, r.channels).
template <int kChannels> void forward(const ResizeRows &r, const float *x, float *y) {
  const int64_t ch = kChannels ? kChannels : r.channels;
  const int64_t inRow = r.inW * ch, outRow = r.outW * ch;
  const AxisTaps ty = axisTaps(r.inH, r.outH, r.alignCorners);
  const AxisTaps tx = axisTaps(r.inW, r.outW, r.alignCorners);
  parallelFor(0, r.images * r.outH, [&](int64_t item) {
    const int64_t image = item / r.outH, oy = item % r.outH;
    const float *r0 = x + (image * r.inH + ty.i0[oy]) * inRow;
    const float *r1 = x + (image * r.inH + ty.i1[oy]) * inRow;
    const float a0 = ty.w0[oy], a1 = ty.w1[oy];
    float *blend = scratchRow(inRow);
    for (int64_t i = 0; i < inRow; ++i)
      blend[i] = a0 * r0[i] + a1 * r1[i];
    float *out = y + item * outRow;
    for (int64_t ox = 0; ox < r.outW; ++ox) {
      const float *p0 = blend + tx.i0[ox] * ch, *p1 = blend + tx.i1[ox] * ch;
      const float b0 = tx.w0[ox], b1 = tx.w1[ox];
      for (int64_t k = 0; k < ch; ++k)
        out[ox * ch + k] = b0 * p0[k] + b1 * p1[k];
    }
  }, rowsPerPart(outRow));
}

template <int kChannels> void backward(const ResizeRows &r, const float *dy, float *dx) {
  const int64_t ch = kChannels ? kChannels : r.channels;
  const int64_t inRow = r.inW * ch, outRow = r.outW * ch;
  const AxisTaps ty = axisTaps(r.inH, r.outH, r.alignCorners);
  const AxisTaps tx = axisTaps(r.inW, r.outW, r.alignCorners);
  // The output rows that sample input row iy, ascending, with their
  // weights: samples[first[iy] .. first[iy + 1]) (a row may list one output
  // row twice, at an edge where both taps are the same row).
  std::vector<int64_t> first(static_cast<size_t>(r.inH) + 1, 0);
  for (int64_t oy = 0; oy < r.outH; ++oy) {
    ++first[ty.i0[oy] + 1];
    ++first[ty.i1[oy] + 1];
  }
  for (int64_t iy = 0; iy < r.inH; ++iy)
    first[iy + 1] += first[iy];
  std::vector<std::pair<int64_t, float>> samples(static_cast<size_t>(2 * r.outH));
  {
    std::vector<int64_t> next(first.begin(), first.end() - 1);
    for (int64_t oy = 0; oy < r.outH; ++oy) {
      samples[next[ty.i0[oy]]++] = {oy, ty.w0[oy]};
      samples[next[ty.i1[oy]]++] = {oy, ty.w1[oy]};
    }
  }
  parallelFor(0, r.images * r.inH, [&](int64_t item) {
    const int64_t image = item / r.inH, iy = item % r.inH;
    float *sum = scratchRow(outRow);
    std::memset(sum, 0, outRow * sizeof(float));
    for (int64_t s = first[iy]; s < first[iy + 1]; ++s) {
      const float *g = dy + (image * r.outH + samples[s].first) * outRow;
      const float w = samples[s].second;
      for (int64_t i = 0; i < outRow; ++i)
        sum[i] += w * g[i];
    }
    float *out = dx + item * inRow;
    std::memset(out, 0, inRow * sizeof(float));
    for (int64_t ox = 0; ox < r.outW; ++ox) {
      float *p0 = out + tx.i0[ox] * ch, *p1 = out + tx.i1[ox] * ch;
      const float b0 = tx.w0[ox], b1 = tx.w1[ox], *g = sum + ox * ch;
      // Two loops: p0 and p1 are the same pixel at the right edge.
      for (int64_t k = 0; k < ch; ++k)
        p0[k] += b0 * g[k];
      for (int64_t k = 0; k < ch; ++k)
        p1[k] += b1 * g[k];
    }
  }, rowsPerPart(inRow));
}

/// `small` is the input of the forward pass (the output of the backward
/// one), `large` the other; false where the layout is neither NCHW nor NHWC.
bool resizeRows(const KernelContext &c, const TensorRef &small, const TensorRef &large,
                ResizeRows &r, bool &nhwc) {
  const std::string layout = c.kernel().stringAttr("layout", "NCHW");
  if (layout != "NCHW" && layout != "NHWC")
    return false;
  nhwc = layout == "NHWC";
  // NCHW [n, c, h, w] or NHWC [n, h, w, c].
  const int64_t h = nhwc ? 1 : 2, w = h + 1;
  r.channels = nhwc ? small.dim(3) : 1;
  r.images = nhwc ? small.dim(0) : small.dim(0) * small.dim(1);
  r.inH = small.dim(h), r.inW = small.dim(w), r.outH = large.dim(h), r.outW = large.dim(w);
  r.alignCorners = c.kernel().intAttr("align_corners", 0);
  return true;
}

Status resizeBilinear(const KernelContext &c) {
  ResizeRows r;
  bool nhwc = false;
  if (!resizeRows(c, c.in(0), c.out(0), r, nhwc))
    return cpuKernels().at(c.op())(c); // the reference's error
  (nhwc ? forward<0> : forward<1>)(r, c.in(0).f32(), c.out(0).f32());
  return Status::ok();
}

Status resizeBilinearBackwardKernel(const KernelContext &c) {
  // in: dy (the output's size); out: dx (the input's).
  ResizeRows r;
  bool nhwc = false;
  if (!resizeRows(c, c.out(0), c.in(0), r, nhwc))
    return cpuKernels().at(c.op())(c);
  (nhwc ? backward<0> : backward<1>)(r, c.in(0).f32(), c.out(0).f32());
  return Status::ok();
}

} // namespace

void registerFastResizeKernels(KernelRegistry &r) {
  r[OpId::kResizeBilinear] = resizeBilinear;
  r[OpId::kResizeBilinearBackward] = resizeBilinearBackwardKernel;
}

} // namespace dlc::rt::cpu
