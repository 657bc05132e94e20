
// The index type I: long long, or int in the NHWC gradient (its planner
// picks it for tensors under 2^31 elements).
template <typename I> struct DlcWindowOf { I begin, end, padded; };
typedef DlcWindowOf<long long> DlcWindow;
template <typename I>
DLC_DEVICE DlcWindowOf<I> dlc_hw_window(I o, I in, I k, I s, I pad) {
  I b = o * s - pad, e = b + k < in + pad ? b + k : in + pad;
  DlcWindowOf<I> w;
  w.padded = e - b;
  w.begin = b > 0 ? b : 0;
  w.end = e < in ? e : in;
  return w;
}
/// Where plane nc (n * C + c) of an [N, C, H, W] tensor starts, NCHW or NHWC.
DLC_DEVICE long long dlc_hw_plane(bool nhwc, long long nc, long long ch, long long pixels) {
  return nhwc ? nc / ch * pixels * ch + nc % ch : nc * pixels;
}
/// Element e of an [N, C, H, W] tensor stored NCHW or NHWC, as (nc, y, x).
DLC_DEVICE void dlc_hw_pixel_of(bool nhwc, long long e, long long ch, long long h, long long w,
                                long long &nc, long long &y, long long &x) {
  if (nhwc) {
    const long long c = e % ch, p = e / ch;
    x = p % w, y = p / w % h, nc = p / (w * h) * ch + c;
  } else {
    x = e % w, y = e / w % h, nc = e / (w * h);
  }
}
/// The window's first maximum (a NaN wins), as a pixel index (y * w + x).
template <typename I>
DLC_DEVICE I dlc_hw_argmax(const DlcHandArgs &a, int k, I plane, I ps, I w, DlcWindowOf<I> wy,
                           DlcWindowOf<I> wx) {
  I best = wy.begin * w + wx.begin;
  float bestValue = DLC_NEG_INF;
  for (I iy = wy.begin; iy < wy.end; ++iy)
    for (I ix = wx.begin; ix < wx.end; ++ix) {
      float v = dlc_hw_ld(a, k, plane + (iy * w + ix) * ps);
      if (v > bestValue || dlc_hw_isnan(v)) { bestValue = v; best = iy * w + ix; }
    }
  return best;
}
DLC_DEVICE double dlc_hw_divisor(const DlcHandArgs &a, DlcWindow wy, DlcWindow wx) {
  return a.pool.countIncludePad ? double(wy.padded * wx.padded)
                 : double((wy.end - wy.begin) * (wx.end - wx.begin));
}
/// The outputs along one axis whose windows contain input position i.
template <typename I>
DLC_DEVICE void dlc_hw_covering(I i, I k, I s, I pad, I out, I &lo, I &hi) {
  I first = i + pad - k + 1;
  lo = first <= 0 ? 0 : (first + s - 1) / s;
  hi = (i + pad) / s;
  if (hi > out - 1) hi = out - 1;
}

#define DLC_HW_POOL_GEOMETRY                                                   \
  const DlcPoolArgs &g = a.pool;                                               \
  const long long n = g.n, ch = g.c, h = g.h, w = g.w;                         \
  const long long kh = g.kernelH, kw = g.kernelW, sh = g.strideH, sw = g.strideW; \
  const long long ph = g.padH, pw = g.padW, oh = g.outH, ow = g.outW;          \
  const bool nhwc = g.nhwc != 0;                                               \
  const long long ps = nhwc ? ch : 1;

extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_max_pool2d(const DlcHandArgs a, const long long *step) {
  DLC_HW_POOL_GEOMETRY
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < n * ch * oh * ow;
       e += (long long)gridDim.x * blockDim.x) {
    long long nc, oy, ox;
    dlc_hw_pixel_of(nhwc, e, ch, oh, ow, nc, oy, ox);
    const long long plane = dlc_hw_plane(nhwc, nc, ch, h * w);
    DlcWindow wy = dlc_hw_window(oy, h, kh, sh, ph), wx = dlc_hw_window(ox, w, kw, sw, pw);
    dlc_hw_st(a, DLC_POOL_Y, e,
              dlc_hw_ld(a, DLC_POOL_X,
                        plane + dlc_hw_argmax(a, DLC_POOL_X, plane, ps, w, wy, wx) * ps));
  }
}

/// dx at plane element (iy, ix): dy of every window covering it whose first
/// maximum it is, in the CPU's (oy, ox) order, in double. argmaxOf(oy, ox)
/// gives a window's maximum and dyOf(oy, ox) its gradient; `plane` is the
/// element's plane.
#define DLC_HW_MAX_POOL_GATHER(argmaxOf, dyOf)                                 \
  {                                                                            \
    long long ylo, yhi, xlo, xhi;                                              \
    dlc_hw_covering(iy, kh, sh, ph, oh, ylo, yhi);                             \
    dlc_hw_covering(ix, kw, sw, pw, ow, xlo, xhi);                             \
    double acc = 0;                                                            \
    for (long long oy = ylo; oy <= yhi; ++oy)                                  \
      for (long long ox = xlo; ox <= xhi; ++ox)                                \
        if ((argmaxOf) == iy * w + ix) acc += (dyOf);                          \
    dlc_hw_st(a, DLC_MAX_POOL_BACKWARD_DX, plane + (iy * w + ix) * ps, (float)acc); \
  }

// One block per tile of inputs: the block first finds the
// maximum of every window that covers the tile, once each, into shared
// memory (a 3x3 window of stride 2 covers up to 4 inputs, and the first
// version found it again for each), then every input gathers from those. A
// tile whose windows do not fit (large strides or kernels) finds each
// window's maximum where it needs it.
// NCHW: a tile is DLC_HW_POOL_TILE_H x _W pixels of one plane, neighbouring
// threads on neighbouring pixels. NHWC: _NHWC_H x _NHWC_W pixels of
// _NHWC_C channels, neighbouring threads on neighbouring channels, so that
// a warp's loads and stores are contiguous (one plane's pixels are C
// elements apart there: a warp on one plane touches 32 sectors).
#define DLC_HW_POOL_TILE_H 16
#define DLC_HW_POOL_TILE_W 32
#define DLC_HW_POOL_TILE_NHWC_H 4
#define DLC_HW_POOL_TILE_NHWC_W 8
#define DLC_HW_POOL_TILE_NHWC_C 32
#define DLC_HW_POOL_WINDOWS 1024
// Launched with 256 threads (HandKernel::blockSize): a bound of 1024 capped
// it at 64 registers and ptxas spilled 120 bytes.
extern "C" __global__ void __launch_bounds__(256)
dlc_hw_max_pool2d_backward(const DlcHandArgs a, const long long *step) {
  DLC_HW_POOL_GEOMETRY
  __shared__ long long argmax[DLC_HW_POOL_WINDOWS];
  __shared__ float grad[DLC_HW_POOL_WINDOWS];
  const long long th = nhwc ? DLC_HW_POOL_TILE_NHWC_H : DLC_HW_POOL_TILE_H;
  const long long tw = nhwc ? DLC_HW_POOL_TILE_NHWC_W : DLC_HW_POOL_TILE_W;
  const long long tc = nhwc ? DLC_HW_POOL_TILE_NHWC_C : 1;
  const long long tilesY = (h + th - 1) / th, tilesX = (w + tw - 1) / tw;
  const long long tilesC = (ch + tc - 1) / tc;
  for (long long t = blockIdx.x; t < n * tilesC * tilesY * tilesX; t += gridDim.x) {
    // The tile: image b, channels [c0, c0 + cw), pixels [y0, y1) x [x0, x1).
    const long long bc = t / (tilesY * tilesX), tile = t % (tilesY * tilesX);
    const long long b = bc / tilesC, c0 = bc % tilesC * tc;
    const long long cw = c0 + tc < ch ? tc : ch - c0;
    const long long y0 = tile / tilesX * th, x0 = tile % tilesX * tw;
    const long long y1 = y0 + th < h ? y0 + th : h;
    const long long x1 = x0 + tw < w ? x0 + tw : w;
    // The windows covering the tile: covering() is monotonic in its input.
    long long oy0, oyEnd, ox0, oxEnd, unused;
    dlc_hw_covering(y0, kh, sh, ph, oh, oy0, unused);
    dlc_hw_covering(y1 - 1, kh, sh, ph, oh, unused, oyEnd);
    dlc_hw_covering(x0, kw, sw, pw, ow, ox0, unused);
    dlc_hw_covering(x1 - 1, kw, sw, pw, ow, unused, oxEnd);
    const long long wh = oyEnd - oy0 + 1 > 0 ? oyEnd - oy0 + 1 : 0;
    const long long ww = oxEnd - ox0 + 1 > 0 ? oxEnd - ox0 + 1 : 0;
    const bool shared = wh * ww * cw <= DLC_HW_POOL_WINDOWS;
    __syncthreads(); // the last tile's windows are read
    // Shared entry (window, channel of the tile) at window * cw + channel.
    if (shared)
      for (long long i = threadIdx.x; i < wh * ww * cw; i += blockDim.x) {
        const long long win = i / cw, nc = b * ch + c0 + i % cw;
        const long long oy = oy0 + win / ww, ox = ox0 + win % ww;
        const long long plane = dlc_hw_plane(nhwc, nc, ch, h * w);
        argmax[i] = dlc_hw_argmax(a, DLC_MAX_POOL_BACKWARD_X, plane, ps, w,
                                  dlc_hw_window(oy, h, kh, sh, ph),
                                  dlc_hw_window(ox, w, kw, sw, pw));
        grad[i] = dlc_hw_ld(a, DLC_MAX_POOL_BACKWARD_DY,
                            dlc_hw_plane(nhwc, nc, ch, oh * ow) + (oy * ow + ox) * ps);
      }
    __syncthreads();
    const long long rowPixels = x1 - x0;
    for (long long i = threadIdx.x; i < (y1 - y0) * rowPixels * cw; i += blockDim.x) {
      const long long ci = i % cw, pixel = i / cw, nc = b * ch + c0 + ci;
      const long long iy = y0 + pixel / rowPixels, ix = x0 + pixel % rowPixels;
      const long long plane = dlc_hw_plane(nhwc, nc, ch, h * w);
      const long long dyPlane = dlc_hw_plane(nhwc, nc, ch, oh * ow);
      if (shared)
        DLC_HW_MAX_POOL_GATHER(argmax[((oy - oy0) * ww + (ox - ox0)) * cw + ci],
                               grad[((oy - oy0) * ww + (ox - ox0)) * cw + ci])
      else
        DLC_HW_MAX_POOL_GATHER(
            dlc_hw_argmax(a, DLC_MAX_POOL_BACKWARD_X, plane, ps, w,
                          dlc_hw_window(oy, h, kh, sh, ph), dlc_hw_window(ox, w, kw, sw, pw)),
            dlc_hw_ld(a, DLC_MAX_POOL_BACKWARD_DY, dyPlane + (oy * ow + ox) * ps))
    }
  }
}

// NHWC with 32-bit indices (HandKernels.cpp routes NHWC tensors under
// 2^31 elements here; the kernel above keeps 64-bit ones): a tile is
// DLC_HW_POOL_NHWC32_ROWS x _COLS pixels of DLC_HW_POOL_TILE_NHWC_C
// channels. Thread (channel, column) walks the column's rows, so that a
// warp's loads and stores are 32 neighbouring channels of one pixel and
// the per-element loop divides nothing: a column's covering windows are
// found once, a row's once per tile in shared memory. Each covering
// window's maximum is found once per tile, as above.
#define DLC_HW_POOL_NHWC32_ROWS 16
#define DLC_HW_POOL_NHWC32_COLS 8
#define DLC_HW_POOL_NHWC32_WINDOWS 2048
/// The tile's dx: each (channel ci, column) of the tile walks the
/// column's rows; each element gathers the dy of every window covering it
/// whose first maximum it is, in the CPU's (oy, ox) order, in double.
/// argmaxOf and dyOf read window (oy, ox) of channel c = c0 + ci. (Two
/// expansions, not a branch in the innermost loop: with the branch, ptxas
/// spilled 28 bytes.)
#define DLC_HW_NHWC32_GATHER(argmaxOf, dyOf)                                   \
  for (int e = threadIdx.x; e < tw * tc; e += blockDim.x) {                   \
    const int ci = e % tc, ix = x0 + e / tc, c = c0 + ci;                      \
    if (ci >= cw || ix >= x1) continue;                                        \
    int xlo, xhi;                                                              \
    dlc_hw_covering(ix, kw, sw, pw, ow, xlo, xhi);                             \
    for (int iy = y0; iy < y1; ++iy) {                                         \
      const int pixel = iy * w + ix;                                           \
      double acc = 0;                                                          \
      for (int oy = rowLo[iy - y0]; oy <= rowHi[iy - y0]; ++oy)                \
        for (int ox = xlo; ox <= xhi; ++ox)                                    \
          if ((argmaxOf) == pixel) acc += (dyOf);                              \
      dlc_hw_st(a, DLC_MAX_POOL_BACKWARD_DX, image + pixel * ch + c, (float)acc); \
    }                                                                          \
  }
extern "C" __global__ void __launch_bounds__(256)
dlc_hw_max_pool2d_backward_nhwc(const DlcHandArgs a, const long long *step) {
  const DlcPoolArgs &g = a.pool;
  const int ch = (int)g.c, h = (int)g.h, w = (int)g.w, oh = (int)g.outH, ow = (int)g.outW;
  const int kh = (int)g.kernelH, kw = (int)g.kernelW, sh = (int)g.strideH, sw = (int)g.strideW;
  const int ph = (int)g.padH, pw = (int)g.padW;
  const int tc = DLC_HW_POOL_TILE_NHWC_C, th = DLC_HW_POOL_NHWC32_ROWS,
            tw = DLC_HW_POOL_NHWC32_COLS;
  __shared__ int argmax[DLC_HW_POOL_NHWC32_WINDOWS];
  __shared__ float grad[DLC_HW_POOL_NHWC32_WINDOWS];
  __shared__ int rowLo[DLC_HW_POOL_NHWC32_ROWS], rowHi[DLC_HW_POOL_NHWC32_ROWS];
  const int tilesC = (ch + tc - 1) / tc, tilesX = (w + tw - 1) / tw, tilesY = (h + th - 1) / th;
  for (int t = blockIdx.x; t < (int)g.n * tilesY * tilesX * tilesC; t += gridDim.x) {
    // Image b, pixels [y0, y1) x [x0, x1), channels [c0, c0 + cw): a
    // pixel's channel tiles in neighbouring blocks, then its row's pixels.
    const int c0 = t % tilesC * tc, x0 = t / tilesC % tilesX * tw;
    const int y0 = t / (tilesC * tilesX) % tilesY * th, b = t / (tilesC * tilesX * tilesY);
    const int cw = c0 + tc < ch ? tc : ch - c0;
    const int y1 = y0 + th < h ? y0 + th : h, x1 = x0 + tw < w ? x0 + tw : w;
    const int image = b * h * w * ch, dyImage = b * oh * ow * ch;
    int oy0, oyEnd, ox0, oxEnd, unused;
    dlc_hw_covering(y0, kh, sh, ph, oh, oy0, unused);
    dlc_hw_covering(y1 - 1, kh, sh, ph, oh, unused, oyEnd);
    dlc_hw_covering(x0, kw, sw, pw, ow, ox0, unused);
    dlc_hw_covering(x1 - 1, kw, sw, pw, ow, unused, oxEnd);
    const int wh = oyEnd - oy0 + 1 > 0 ? oyEnd - oy0 + 1 : 0;
    const int ww = oxEnd - ox0 + 1 > 0 ? oxEnd - ox0 + 1 : 0;
    const bool shared = (long long)wh * ww * tc <= DLC_HW_POOL_NHWC32_WINDOWS;
    __syncthreads(); // the last tile's windows and rows are read
    // Shared entry (window, channel of the tile) at window * tc + channel.
    if (shared)
      for (int e = threadIdx.x; e < wh * ww * tc; e += blockDim.x) {
        const int ci = e % tc, win = e / tc;
        if (ci >= cw) continue;
        const int oy = oy0 + win / ww, ox = ox0 + win % ww;
        argmax[e] = dlc_hw_argmax(a, DLC_MAX_POOL_BACKWARD_X, image + c0 + ci, ch, w,
                                  dlc_hw_window(oy, h, kh, sh, ph),
                                  dlc_hw_window(ox, w, kw, sw, pw));
        grad[e] = dlc_hw_ld(a, DLC_MAX_POOL_BACKWARD_DY, dyImage + (oy * ow + ox) * ch + c0 + ci);
      }
    for (int r = threadIdx.x; r < y1 - y0; r += blockDim.x)
      dlc_hw_covering(y0 + r, kh, sh, ph, oh, rowLo[r], rowHi[r]);
    __syncthreads();
    if (shared)
      DLC_HW_NHWC32_GATHER(argmax[((oy - oy0) * ww + ox - ox0) * tc + ci],
                           grad[((oy - oy0) * ww + ox - ox0) * tc + ci])
    else
      DLC_HW_NHWC32_GATHER(
          dlc_hw_argmax(a, DLC_MAX_POOL_BACKWARD_X, image + c, ch, w,
                        dlc_hw_window(oy, h, kh, sh, ph), dlc_hw_window(ox, w, kw, sw, pw)),
          dlc_hw_ld(a, DLC_MAX_POOL_BACKWARD_DY, dyImage + (oy * ow + ox) * ch + c))
  }
}

extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_avg_pool2d(const DlcHandArgs a, const long long *step) {
  DLC_HW_POOL_GEOMETRY
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < n * ch * oh * ow;
       e += (long long)gridDim.x * blockDim.x) {
    long long nc, oy, ox;
    dlc_hw_pixel_of(nhwc, e, ch, oh, ow, nc, oy, ox);
    const long long plane = dlc_hw_plane(nhwc, nc, ch, h * w);
    DlcWindow wy = dlc_hw_window(oy, h, kh, sh, ph), wx = dlc_hw_window(ox, w, kw, sw, pw);
    double sum = 0;
    for (long long iy = wy.begin; iy < wy.end; ++iy)
      for (long long ix = wx.begin; ix < wx.end; ++ix)
        sum += dlc_hw_ld(a, DLC_POOL_X, plane + (iy * w + ix) * ps);
    dlc_hw_st(a, DLC_POOL_Y, e, (float)(sum / dlc_hw_divisor(a, wy, wx)));
  }
}

extern "C" __global__ void __launch_bounds__(1024)
dlc_hw_avg_pool2d_backward(const DlcHandArgs a, const long long *step) {
  DLC_HW_POOL_GEOMETRY
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < n * ch * h * w;
       e += (long long)gridDim.x * blockDim.x) {
    long long nc, iy, ix;
    dlc_hw_pixel_of(nhwc, e, ch, h, w, nc, iy, ix);
    const long long dyPlane = dlc_hw_plane(nhwc, nc, ch, oh * ow);
    long long ylo, yhi, xlo, xhi;
    dlc_hw_covering(iy, kh, sh, ph, oh, ylo, yhi);
    dlc_hw_covering(ix, kw, sw, pw, ow, xlo, xhi);
    double acc = 0;
    for (long long oy = ylo; oy <= yhi; ++oy) {
      DlcWindow wy = dlc_hw_window(oy, h, kh, sh, ph);
      for (long long ox = xlo; ox <= xhi; ++ox) {
        DlcWindow wx = dlc_hw_window(ox, w, kw, sw, pw);
        acc += dlc_hw_ld(a, DLC_AVG_POOL_BACKWARD_DY, dyPlane + (oy * ow + ox) * ps) /
               dlc_hw_divisor(a, wy, wx);
      }
    }
    dlc_hw_st(a, DLC_AVG_POOL_BACKWARD_DX, e, (float)acc);
  }
}
