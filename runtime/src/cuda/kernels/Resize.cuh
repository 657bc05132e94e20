
#if defined(__CUDACC__)
DLC_DEVICE double dlc_hw_dmul(double x, double y) { return __dmul_rn(x, y); }
#else
inline double dlc_hw_dmul(double x, double y) { return x * y; }
#endif

/// Output index o's value along one axis is w0 * in[i0] + w1 * in[i1].
struct DlcTap {
  long long i0, i1;
  double w0, w1;
};
DLC_DEVICE DlcTap dlc_hw_tap(long long o, long long in, long long out, bool alignCorners) {
  const double scale = alignCorners ? (out > 1 ? double(in - 1) / double(out - 1) : 0.0)
                                    : double(in) / double(out);
  double src = alignCorners ? dlc_hw_dmul(scale, (double)o) : dlc_hw_dmul(scale, o + 0.5) - 0.5;
  if (!alignCorners && src < 0) src = 0;
  long long i0 = (long long)floor(src);
  if (i0 > in - 1) i0 = in - 1;
  double w1 = src - double(i0);
  w1 = w1 < 0.0 ? 0.0 : (1.0 < w1 ? 1.0 : w1);
  DlcTap t;
  t.i0 = i0;
  t.i1 = i0 + (i0 < in - 1 ? 1 : 0);
  t.w0 = 1.0 - w1;
  t.w1 = w1;
  return t;
}

/// Element (n, c, y, x) of an [N, C, H, W] tensor stored NCHW or NHWC.
DLC_DEVICE long long dlc_hw_at(bool nhwc, long long n, long long c, long long y, long long x,
                               long long C, long long H, long long W) {
  return nhwc ? ((n * H + y) * W + x) * C + c : ((n * C + c) * H + y) * W + x;
}

/// The first output index whose taps can reach input index i: outputs
/// reading i have i0 in {i - 1, i}, and i0 is non-decreasing in o.
DLC_DEVICE long long dlc_hw_first_reader(long long i, long long in, long long out,
                                         bool alignCorners) {
  long long lo = 0, hi = out;
  while (lo < hi) {
    const long long mid = lo + (hi - lo) / 2;
    if (dlc_hw_tap(mid, in, out, alignCorners).i0 >= i - 1) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_resize_bilinear(const DlcHandArgs a, const long long *step) {
  const DlcResizeArgs &r = a.resize;
  const long long C = r.c, inH = r.inH, inW = r.inW, outH = r.outH, outW = r.outW;
  const bool align = r.alignCorners != 0, nhwc = r.nhwc != 0;
  const long long total = r.n * C * outH * outW;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += (long long)gridDim.x * blockDim.x) {
    long long n, c, oy, ox;
    if (nhwc)
      c = e % C, ox = e / C % outW, oy = e / (C * outW) % outH, n = e / (C * outW * outH);
    else
      ox = e % outW, oy = e / outW % outH, c = e / (outW * outH) % C, n = e / (outW * outH * C);
    const DlcTap ty = dlc_hw_tap(oy, inH, outH, align), tx = dlc_hw_tap(ox, inW, outW, align);
#define DLC_HW_RESIZE_X(y, x) dlc_hw_ld(a, DLC_RESIZE_X, dlc_hw_at(nhwc, n, c, y, x, C, inH, inW))
    const double top = dlc_hw_dmul(tx.w0, DLC_HW_RESIZE_X(ty.i0, tx.i0)) +
                       dlc_hw_dmul(tx.w1, DLC_HW_RESIZE_X(ty.i0, tx.i1));
    const double bottom = dlc_hw_dmul(tx.w0, DLC_HW_RESIZE_X(ty.i1, tx.i0)) +
                          dlc_hw_dmul(tx.w1, DLC_HW_RESIZE_X(ty.i1, tx.i1));
#undef DLC_HW_RESIZE_X
    dlc_hw_st(a, DLC_RESIZE_Y, e,
              (float)(dlc_hw_dmul(ty.w0, top) + dlc_hw_dmul(ty.w1, bottom)));
  }
}

// dy is [n, c, outH, outW], dx [n, c, inH, inW].
extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_resize_bilinear_backward(const DlcHandArgs a, const long long *step) {
  const DlcResizeArgs &r = a.resize;
  const long long C = r.c, inH = r.inH, inW = r.inW, outH = r.outH, outW = r.outW;
  const bool align = r.alignCorners != 0, nhwc = r.nhwc != 0;
  const long long total = r.n * C * inH * inW;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += (long long)gridDim.x * blockDim.x) {
    long long n, c, iy, ix;
    if (nhwc)
      c = e % C, ix = e / C % inW, iy = e / (C * inW) % inH, n = e / (C * inW * inH);
    else
      ix = e % inW, iy = e / inW % inH, c = e / (inW * inH) % C, n = e / (inW * inH * C);
    const long long ox0 = dlc_hw_first_reader(ix, inW, outW, align);
    double acc = 0;
    for (long long oy = dlc_hw_first_reader(iy, inH, outH, align); oy < outH; ++oy) {
      const DlcTap ty = dlc_hw_tap(oy, inH, outH, align);
      if (ty.i0 > iy) break;
      const bool top = ty.i0 == iy, bottom = ty.i1 == iy;
      if (!top && !bottom) continue;
      for (long long ox = ox0; ox < outW; ++ox) {
        const DlcTap tx = dlc_hw_tap(ox, inW, outW, align);
        if (tx.i0 > ix) break;
        const bool left = tx.i0 == ix, right = tx.i1 == ix;
        if (!left && !right) continue;
        const double g =
            dlc_hw_ld(a, DLC_RESIZE_BACKWARD_DY, dlc_hw_at(nhwc, n, c, oy, ox, C, outH, outW));
        // The CPU's four scatters of this output, in its order.
        if (top && left) acc = acc + dlc_hw_dmul(dlc_hw_dmul(ty.w0, tx.w0), g);
        if (top && right) acc = acc + dlc_hw_dmul(dlc_hw_dmul(ty.w0, tx.w1), g);
        if (bottom && left) acc = acc + dlc_hw_dmul(dlc_hw_dmul(ty.w1, tx.w0), g);
        if (bottom && right) acc = acc + dlc_hw_dmul(dlc_hw_dmul(ty.w1, tx.w1), g);
      }
    }
    dlc_hw_st(a, DLC_RESIZE_BACKWARD_DX, e, (float)acc);
  }
}
