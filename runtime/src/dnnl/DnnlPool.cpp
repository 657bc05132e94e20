//===- DnnlPool.cpp - max and average pooling through oneDNN --------------===//
//
// max_pool2d / avg_pool2d (x) -> y and their gradients (dy, x) -> dx and
// (dy) -> dx, with the reference's window rules (Pool.cpp, PyTorch's):
//
//  - ceil mode is a larger right padding, chosen so that oneDNN's floor
//    formula gives the reference's output size;
//  - max pooling ignores padding in both; backward routes each gradient to
//    the first maximum of its window, as the reference (ties matter after a
//    relu). oneDNN's backward reads the forward's workspace (each window's
//    argmax), which the plan does not keep: it would run the forward
//    again. A NaN wins a window in the reference (and PyTorch), not in
//    oneDNN: an NCHW input holding a NaN runs the reference. Channels-last
//    max pooling, forward and backward, runs here instead (maxPoolNhwc):
//    one read of x (and dy), vector selects over contiguous channels;
//  - average pooling without count_include_pad divides by the real input
//    elements of a window in both. With count_include_pad the reference
//    divides by the window clipped to the input plus its `padding`; oneDNN
//    by the whole kernel. They agree except where ceil mode adds a window
//    (it then always reaches past the padding): that runs the reference.
//
//===----------------------------------------------------------------------===//

#include "dnnl/DnnlCommon.h"
#include "cpu/HostClones.h"
#include "dlc/runtime/cpu/Spatial.h"

#include "dlc/runtime/Parallel.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace dlc::rt::cpu::onednn {

namespace {

enum OpTag : int64_t { kForward = 48, kBackward };

struct PoolGeometry {
  Layout layout = Layout::kNchw;
  dims src, dst, kernel, strides, padL, padR;
  dnnl::algorithm algorithm = dnnl::algorithm::pooling_max;
  /// Whether oneDNN computes what the reference does (see the file header).
  bool matchesReference = true;

  md srcDesc() const { return activationDesc(src, layout); }
  md dstDesc() const { return activationDesc(dst, layout); }
};

/// The pooling of x into y, read as the reference reads it (poolParams in
/// OpsSpatial.cpp); `max` or average.
StatusOr<PoolGeometry> geometry(const KernelContext &c, const TensorRef &x,
                                const TensorRef &y, bool max) {
  auto layout = layoutOf(c);
  if (!layout.isOk())
    return layout.status();
  if (x.rank() != 4 || y.rank() != 4)
    return c.error("expects 4-d input and output");
  std::vector<int64_t> k = c.kernel().intsAttr("kernel_size", {1, 1}),
                       s = c.kernel().intsAttr("stride", {1, 1}),
                       pad = c.kernel().intsAttr("padding", {0, 0});
  if (k.size() != 2 || s.size() != 2 || pad.size() != 2)
    return c.error("expects two kernel sizes, strides and paddings");
  bool includePad = c.kernel().intAttr("count_include_pad", 1);
  PoolGeometry g;
  g.layout = *layout;
  g.src = nchwDims(*x.shape, g.layout);
  g.dst = nchwDims(*y.shape, g.layout);
  g.kernel = {k[0], k[1]};
  g.strides = {s[0], s[1]};
  g.padL = {pad[0], pad[1]};
  g.padR = g.padL;
  for (int d = 0; d < 2; ++d) {
    // The right padding that makes floor((in + l + r - k) / s) + 1 the
    // output size; the left padding where that is enough (floor mode).
    int64_t exact = (g.dst[2 + d] - 1) * s[d] + k[d] - g.src[2 + d] - pad[d];
    g.padR[d] = std::max(pad[d], exact);
  }
  if (max)
    g.algorithm = dnnl::algorithm::pooling_max;
  else if (includePad)
    g.algorithm = dnnl::algorithm::pooling_avg_include_padding;
  else
    g.algorithm = dnnl::algorithm::pooling_avg_exclude_padding;
  if (!max && includePad && g.padR != g.padL)
    g.matchesReference = false;
  return g;
}

Key poolKey(const KernelContext &c, OpTag op, const PoolGeometry &g) {
  Key key = shapeKey(c, op);
  key.push_back(static_cast<int64_t>(g.layout));
  key.push_back(static_cast<int64_t>(g.algorithm));
  for (const dims *d : {&g.kernel, &g.strides, &g.padL, &g.padR})
    key.insert(key.end(), d->begin(), d->end());
  return key;
}

dnnl::pooling_forward::primitive_desc forwardPd(const PoolGeometry &g,
                                                dnnl::prop_kind kind) {
  dnnl::pooling_forward::desc d(kind, g.algorithm, g.srcDesc(), g.dstDesc(), g.strides,
                                g.kernel, g.padL, g.padR);
  return dnnl::pooling_forward::primitive_desc(d, userScratchpad(), engine());
}

/// Whether x holds a NaN: one read of it, vectorized (no early exit).
bool anyNan(const TensorRef &x) {
  const float *v = x.f32();
  int64_t n = x.numElements();
  int nan = 0;
  for (int64_t i = 0; i < n; ++i)
    nan |= v[i] != v[i];
  return nan != 0;
}

/// Channels a task of the channels-last max pooling kernels takes: the
/// window's best value and offset per channel stay in vector registers
/// (ResNet's stem pool has 64 channels: one block).
constexpr int64_t kPoolChannels = 64;

/// One channels-last image's channels [c0, c0 + width) of max pooling
/// (dx null: the forward pass into y) or of its gradient (into dx). Per
/// output pixel, each channel keeps the best value of its window and that
/// value's offset in window order, both updated by selects over
/// contiguous channels with the reference's rule (strict `>` keeps the
/// first of equal values; a NaN replaces whatever came before). The
/// gradient then adds `best == k ? dy : 0` to window pixel k: + 0 leaves
/// a float unchanged (dx is never -0: it starts at +0 and a sum that
/// cancels rounds to +0), so each dx element receives the same additions
/// in the same order, output pixel by output pixel, as a scatter would.
/// dx rows are zeroed as the first window reaches them, to add while
/// they are in cache. Inlined into each clone of poolBlock.
template <int64_t kWidth>
[[gnu::always_inline]] inline void poolBlockOf(const PoolGeometry &g, const float *x,
                                               const float *dy, float *y, float *dx,
                                               int64_t c0, int64_t width) {
  if (kWidth)
    width = kWidth;
  const int64_t c = g.src[1], h = g.src[2], w = g.src[3];
  const int64_t oh = g.dst[2], ow = g.dst[3];
  float bestValue[kPoolChannels];
  int32_t best[kPoolChannels];
  int64_t zeroedRows = 0;
  auto zeroRowsTo = [&](int64_t end) {
    if (width == c)
      std::fill(dx + zeroedRows * w * c, dx + end * w * c, 0.0f);
    else
      for (int64_t p = zeroedRows * w; p < end * w; ++p)
        std::fill_n(dx + p * c + c0, width, 0.0f);
    zeroedRows = std::max(zeroedRows, end);
  };
  for (int64_t oy = 0; oy < oh; ++oy) {
    PoolWindow sy = poolWindow(oy, h, g.kernel[0], g.strides[0], g.padL[0]);
    if (dx)
      zeroRowsTo(sy.end);
    for (int64_t ox = 0; ox < ow; ++ox) {
      PoolWindow sx = poolWindow(ox, w, g.kernel[1], g.strides[1], g.padL[1]);
      for (int64_t ch = 0; ch < width; ++ch) {
        bestValue[ch] = -INFINITY;
        best[ch] = 0;
      }
      int32_t k = 0;
      for (int64_t iy = sy.begin; iy < sy.end; ++iy)
        for (int64_t ix = sx.begin; ix < sx.end; ++ix, ++k) {
          const float *v = x + (iy * w + ix) * c + c0;
          for (int64_t ch = 0; ch < width; ++ch) {
            bool wins = v[ch] > bestValue[ch] || v[ch] != v[ch];
            bestValue[ch] = wins ? v[ch] : bestValue[ch];
            best[ch] = wins ? k : best[ch];
          }
        }
      const int64_t o = (oy * ow + ox) * c + c0;
      if (!dx) {
        for (int64_t ch = 0; ch < width; ++ch)
          y[o + ch] = bestValue[ch];
        continue;
      }
      k = 0;
      for (int64_t iy = sy.begin; iy < sy.end; ++iy)
        for (int64_t ix = sx.begin; ix < sx.end; ++ix, ++k) {
          float *d = dx + (iy * w + ix) * c + c0;
          for (int64_t ch = 0; ch < width; ++ch)
            d[ch] += best[ch] == k ? dy[o + ch] : 0.0f;
        }
    }
  }
  // Rows no window reaches (a stride longer than the kernel) get no gradient.
  if (dx)
    zeroRowsTo(h);
}

/// A whole block has a constant width, which the compiler vectorizes.
DLC_HOST_CLONES void poolBlock(const PoolGeometry &g, const float *x, const float *dy, float *y,
                               float *dx, int64_t c0, int64_t width) {
  if (width == kPoolChannels)
    poolBlockOf<kPoolChannels>(g, x, dy, y, dx, c0, width);
  else
    poolBlockOf<0>(g, x, dy, y, dx, c0, width);
}

/// Max pooling over channels-last data without oneDNN, forward (dx null)
/// or backward: the reference's rule, where oneDNN differs on a NaN and
/// its backward pass would need the forward's argmax again. One task per
/// (image, block of channels), which alone writes its part of y or dx, so
/// the bytes do not depend on the thread count.
void maxPoolNhwc(const PoolGeometry &g, const float *x, const float *dy, float *y, float *dx) {
  const int64_t n = g.src[0], c = g.src[1], h = g.src[2], w = g.src[3];
  const int64_t blocks = (c + kPoolChannels - 1) / kPoolChannels;
  const int64_t outPixels = g.dst[2] * g.dst[3];
  parallelFor(0, n * blocks, [&](int64_t task) {
    int64_t b = task / blocks, c0 = task % blocks * kPoolChannels;
    int64_t width = std::min(kPoolChannels, c - c0);
    poolBlock(g, x + b * h * w * c, dy ? dy + b * outPixels * c : nullptr,
              y ? y + b * outPixels * c : nullptr, dx ? dx + b * h * w * c : nullptr, c0,
              width);
  });
}

Status poolForward(const KernelContext &c, bool max) {
  static Cache<Prim> maxCache, avgCache;
  return guarded(c, [&]() -> Status {
    auto g = geometry(c, c.in(0), c.out(0), max);
    if (!g.isOk())
      return g.status();
    if (max && g->layout == Layout::kNhwc) {
      maxPoolNhwc(*g, c.in(0).f32(), nullptr, c.out(0).f32(), nullptr);
      return Status::ok();
    }
    if (!g->matchesReference || (max && anyNan(c.in(0))))
      return runReference(c);
    auto prim = (max ? maxCache : avgCache).get(poolKey(c, kForward, *g), [&] {
      // Inference: no workspace (the argmax) to write.
      return std::make_shared<Prim>(makePrim<dnnl::pooling_forward>(
          forwardPd(*g, dnnl::prop_kind::forward_inference)));
    });
    if (!prim)
      return runReference(c);
    execute(*prim, {{DNNL_ARG_SRC, dnnl::memory(g->srcDesc(), engine(), c.in(0).data)},
                    {DNNL_ARG_DST, dnnl::memory(g->dstDesc(), engine(), c.out(0).data)}});
    return Status::ok();
  });
}

struct BackwardEntry {
  /// Max pooling: the forward pass again, for the workspace (the argmax
  /// of each window) its backward pass reads; the plan keeps none.
  std::optional<Prim> forward;
  md workspace;
  Prim backward;
};

Status poolBackward(const KernelContext &c, bool max) {
  // in: dy (and x for max); out: dx.
  static Cache<BackwardEntry> maxCache, avgCache;
  return guarded(c, [&]() -> Status {
    auto g = geometry(c, c.out(0), c.in(0), max);
    if (!g.isOk())
      return g.status();
    if (max && g->layout == Layout::kNhwc) {
      maxPoolNhwc(*g, c.in(1).f32(), c.in(0).f32(), nullptr, c.out(0).f32());
      return Status::ok();
    }
    if (!g->matchesReference || (max && anyNan(c.in(1))))
      return runReference(c);
    auto entry = (max ? maxCache : avgCache).get(poolKey(c, kBackward, *g), [&] {
      auto hint = forwardPd(*g, dnnl::prop_kind::forward_training);
      dnnl::pooling_backward::desc d(g->algorithm, g->srcDesc(), g->dstDesc(),
                                     g->strides, g->kernel, g->padL, g->padR);
      dnnl::pooling_backward::primitive_desc pd(d, userScratchpad(), engine(), hint);
      auto e = std::make_shared<BackwardEntry>();
      if (max) {
        e->forward = makePrim<dnnl::pooling_forward>(hint);
        e->workspace = hint.workspace_desc();
      }
      e->backward = makePrim<dnnl::pooling_backward>(pd);
      return e;
    });
    if (!entry)
      return runReference(c);
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_DIFF_DST, dnnl::memory(g->dstDesc(), engine(), c.in(0).data)},
        {DNNL_ARG_DIFF_SRC, dnnl::memory(g->srcDesc(), engine(), c.out(0).data)}};
    if (entry->forward) {
      md dst = g->dstDesc();
      dnnl::memory workspace(entry->workspace, engine(),
                             threadBuffer(Slot::kWorkspace, entry->workspace.get_size()));
      execute(*entry->forward,
              {{DNNL_ARG_SRC, dnnl::memory(g->srcDesc(), engine(), c.in(1).data)},
               {DNNL_ARG_DST, dnnl::memory(dst, engine(),
                                           threadBuffer(Slot::kDst, dst.get_size()))},
               {DNNL_ARG_WORKSPACE, workspace}});
      args.emplace(DNNL_ARG_WORKSPACE, workspace);
    }
    execute(entry->backward, std::move(args));
    return Status::ok();
  });
}

} // namespace

void registerPoolKernels(KernelRegistry &r) {
  r[OpId::kMaxPool2d] = [](const KernelContext &c) { return poolForward(c, true); };
  r[OpId::kAvgPool2d] = [](const KernelContext &c) { return poolForward(c, false); };
  r[OpId::kMaxPool2dBackward] = [](const KernelContext &c) { return poolBackward(c, true); };
  r[OpId::kAvgPool2dBackward] = [](const KernelContext &c) { return poolBackward(c, false); };
}

} // namespace dlc::rt::cpu::onednn
