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
//    again, so channels-last data is routed here directly instead, one
//    read of x and dy; A NaN wins a window in the reference (and PyTorch), not in
//    oneDNN: an input holding a NaN runs the reference;
//  - average pooling without count_include_pad divides by the real input
//    elements of a window in both. With count_include_pad the reference
//    divides by the window clipped to the input plus its `padding`; oneDNN
//    by the whole kernel. They agree except where ceil mode adds a window
//    (it then always reaches past the padding): that runs the reference.
//
//===----------------------------------------------------------------------===//

#include "dnnl/DnnlCommon.h"

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

Status poolForward(const KernelContext &c, bool max) {
  static Cache<Prim> maxCache, avgCache;
  return guarded(c, [&]() -> Status {
    auto g = geometry(c, c.in(0), c.out(0), max);
    if (!g.isOk())
      return g.status();
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

/// Max pooling's gradient over channels-last data without oneDNN: each
/// window's argmax per channel, the reference's rule (strict `>` keeps the
/// first of equal values, a NaN always wins), gradients summed into dx in
/// float. One task per image, which owns its part of dx.
void maxPoolBackwardNhwc(const PoolGeometry &g, const float *x, const float *dy, float *dx) {
  const int64_t n = g.src[0], c = g.src[1], h = g.src[2], w = g.src[3];
  const int64_t oh = g.dst[2], ow = g.dst[3];
  parallelFor(0, n, [&](int64_t b) {
    const float *xb = x + b * h * w * c, *dyb = dy + b * oh * ow * c;
    float *dxb = dx + b * h * w * c;
    std::fill(dxb, dxb + h * w * c, 0.0f);
    std::vector<int64_t> best(c);
    std::vector<float> bestValue(c);
    for (int64_t oy = 0; oy < oh; ++oy) {
      int64_t y0 = oy * g.strides[0] - g.padL[0];
      int64_t y1 = std::min(y0 + g.kernel[0], h);
      y0 = std::max<int64_t>(y0, 0);
      for (int64_t ox = 0; ox < ow; ++ox) {
        int64_t x0 = ox * g.strides[1] - g.padL[1];
        int64_t x1 = std::min(x0 + g.kernel[1], w);
        x0 = std::max<int64_t>(x0, 0);
        std::fill(best.begin(), best.end(), y0 * w + x0);
        std::fill(bestValue.begin(), bestValue.end(), -INFINITY);
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix) {
            const float *v = xb + (iy * w + ix) * c;
            for (int64_t ch = 0; ch < c; ++ch)
              if (v[ch] > bestValue[ch] || v[ch] != v[ch]) {
                bestValue[ch] = v[ch];
                best[ch] = iy * w + ix;
              }
          }
        const float *grad = dyb + (oy * ow + ox) * c;
        for (int64_t ch = 0; ch < c; ++ch)
          dxb[best[ch] * c + ch] += grad[ch];
      }
    }
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
      maxPoolBackwardNhwc(*g, c.in(1).f32(), c.in(0).f32(), c.out(0).f32());
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
  r["max_pool2d"] = [](const KernelContext &c) { return poolForward(c, true); };
  r["avg_pool2d"] = [](const KernelContext &c) { return poolForward(c, false); };
  r["max_pool2d_backward"] = [](const KernelContext &c) { return poolBackward(c, true); };
  r["avg_pool2d_backward"] = [](const KernelContext &c) { return poolBackward(c, false); };
}

} // namespace dlc::rt::cpu::onednn
