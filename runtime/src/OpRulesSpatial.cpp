//===- OpRulesSpatial.cpp - the spatial ops' validation rules -------------===//
//
// Convolutions, batch norm, pooling and bilinear resizing (OpRules.h): the
// geometry their kernels compute from the shapes and the window attributes,
// in NCHW order whichever layout the buffers are stored in.
//
//===----------------------------------------------------------------------===//

#include "OpRuleCheck.h"

namespace dlc::rt::oprules {

/// A convolution's input, filter and output in NCHW order, against the
/// stride, padding, dilation and groups attributes.
void convolution(Check &c, const Ref &x, const Ref &w, const Ref &y) {
  for (const Ref &r : {x, w, y}) {
    c.floats(r);
    c.rank(r, 4);
    c.extents(r);
  }
  std::string layout = c.layout();
  std::vector<int64_t> stride = c.pair("stride", {1, 1}, 1, kMaxExtent),
                       pad = c.pair("padding", {0, 0}, 0, kMaxExtent),
                       dil = c.pair("dilation", {1, 1}, 1, kMaxExtent);
  int64_t groups = c.integer("groups", 1, 1, kMaxExtent);
  if (!c.ok())
    return;
  std::vector<int64_t> xs = c.nchw(x, layout), ws = c.nchw(w, layout);
  if (xs[1] % groups != 0 || ws[0] % groups != 0)
    return c.fail("groups " + std::to_string(groups) + " does not divide the " +
                  std::to_string(xs[1]) + " input and " + std::to_string(ws[0]) +
                  " output channels");
  if (ws[1] * groups != xs[1])
    return c.fail("the filter " + text(ws) + " takes " + std::to_string(ws[1] * groups) +
                  " input channels in " + std::to_string(groups) + " groups, the input " +
                  text(xs) + " has " + std::to_string(xs[1]));
  std::vector<int64_t> want = {xs[0], ws[0],
                               convOutputSize(xs[2], ws[2], stride[0], pad[0], dil[0]),
                               convOutputSize(xs[3], ws[3], stride[1], pad[1], dil[1])};
  if (c.nchw(y, layout) != want)
    c.fail(y.name + " is " + text(c.nchw(y, layout)) + " (NCHW) where the input " + text(xs) +
           ", filter " + text(ws) + ", stride " + text(stride) + ", padding " + text(pad) +
           " and dilation " + text(dil) + " give " + text(want));
}

void conv2d(Check &c) {
  if (!c.counts(2, 3, 1, 1))
    return;
  convolution(c, c.in(0), c.in(1), c.out(0));
  if (c.ok() && c.numIn() > 2) {
    c.floats(c.in(2));
    c.elements(c.in(2), c.nchw(c.in(1), kernelLayout(c.kernel))[0], "the filter's outputs");
  }
}

void conv2dBackwardData(Check &c) {
  if (c.counts(2, 2, 1, 1)) // dy, filter -> dx
    convolution(c, c.out(0), c.in(1), c.in(0));
}

void conv2dBackwardFilter(Check &c) {
  if (c.counts(2, 2, 1, 1)) // dy, x -> dw
    convolution(c, c.in(1), c.out(0), c.in(0));
}

/// train.batch_norm and its backward: x is [n, c, spatial...] (NCHW) or
/// NHWC when 4-d under that layout.
void batchNormOf(Check &c, const Ref &x, std::initializer_list<Ref> channels) {
  std::string layout = c.layout();
  c.real("epsilon", 1e-5, 0, INFINITY, false, /*positive=*/true);
  if (!c.minRank(x, 2))
    return;
  int64_t n = x.dim(0), ch = layout == "NHWC" && x.rank() == 4 ? x.dim(3) : x.dim(1);
  if (n < 1 || ch < 1)
    return c.fail(x.name + " " + text(x.shape()) + " has no samples or no channels");
  for (const Ref &r : channels)
    c.elements(r, ch, x.name + "'s channels");
}

void batchNorm(Check &c) {
  if (!c.counts(5, 5, 3, 3)) // x, scale, bias, mean, var -> y, mean', var'
    return;
  for (size_t i = 0; i < 5; ++i)
    c.floats(c.in(i));
  for (size_t i = 0; i < 3; ++i)
    c.floats(c.out(i));
  c.same(c.out(0), c.in(0));
  c.real("momentum", 0.1, 0, 1);
  batchNormOf(c, c.in(0), {c.in(1), c.in(2), c.in(3), c.in(4), c.out(1), c.out(2)});
}

void batchNormBackward(Check &c) {
  if (!c.counts(3, 3, 3, 3)) // dy, x, scale -> dx, dscale, dbias
    return;
  for (size_t i = 0; i < 3; ++i) {
    c.floats(c.in(i));
    c.floats(c.out(i));
  }
  c.same(c.in(0), c.in(1));
  c.same(c.out(0), c.in(1));
  batchNormOf(c, c.in(1), {c.in(2), c.out(1), c.out(2)});
}

//===----------------------------------------------------------------------===//
// Pooling and resizing
//===----------------------------------------------------------------------===//

/// A pooling window over x (NCHW) giving y.
void poolOf(Check &c, const Ref &x, const Ref &y) {
  for (const Ref &r : {x, y}) {
    c.floats(r);
    c.rank(r, 4);
    c.extents(r);
  }
  std::string layout = c.layout();
  std::vector<int64_t> k = c.pair("kernel_size", {1, 1}, 1, kMaxExtent),
                       s = c.pair("stride", {1, 1}, 1, kMaxExtent),
                       pad = c.pair("padding", {0, 0}, 0, kMaxExtent);
  if (!c.ok())
    return;
  // As PyTorch: a window always overlaps the input.
  if (pad[0] > k[0] / 2 || pad[1] > k[1] / 2)
    return c.fail("padding " + text(pad) + " is more than half of kernel_size " + text(k));
  bool ceil = c.kernel.flag("ceil_mode");
  std::vector<int64_t> xs = c.nchw(x, layout);
  std::vector<int64_t> want = {xs[0], xs[1], poolOutputSize(xs[2], k[0], s[0], pad[0], ceil),
                               poolOutputSize(xs[3], k[1], s[1], pad[1], ceil)};
  if (c.nchw(y, layout) != want)
    c.fail(y.name + " is " + text(c.nchw(y, layout)) + " (NCHW) where the input " + text(xs) +
           ", kernel_size " + text(k) + ", stride " + text(s) + " and padding " + text(pad) +
           " give " + text(want));
}

void pool(Check &c) {
  if (c.counts(1, 1, 1, 1))
    poolOf(c, c.in(0), c.out(0));
}

void maxPoolBackward(Check &c) {
  if (!c.counts(2, 2, 1, 1)) // dy, x -> dx
    return;
  c.same(c.out(0), c.in(1));
  poolOf(c, c.in(1), c.in(0));
}

void avgPoolBackward(Check &c) {
  if (c.counts(1, 1, 1, 1)) // dy -> dx
    poolOf(c, c.out(0), c.in(0));
}

void globalAvgPool(Check &c) {
  if (!c.counts(1, 1, 1, 1))
    return;
  c.floats(c.in(0));
  c.floats(c.out(0));
  c.rank(c.in(0), 4);
  if (c.ok())
    c.elements(c.out(0), c.in(0).dim(0) * c.in(0).dim(1), "one mean per plane");
}

/// Bilinear resizing of `small` (the forward's input) to `large`.
void resizeOf(Check &c, const Ref &small, const Ref &large) {
  for (const Ref &r : {small, large}) {
    c.floats(r);
    c.rank(r, 4);
    c.extents(r);
  }
  std::string layout = c.layout();
  if (!c.ok())
    return;
  std::vector<int64_t> s = c.nchw(small, layout), l = c.nchw(large, layout);
  if (s[0] != l[0] || s[1] != l[1])
    return c.fail("resizing " + text(s) + " to " + text(l) +
                  " (NCHW) changes the images or channels");
  if (large.elements() > 0 && (s[2] < 1 || s[3] < 1))
    c.fail("resizing " + text(s) + " to " + text(l) + " (NCHW) samples an empty image");
}

void resizeBilinear(Check &c) {
  if (c.counts(1, 1, 1, 1))
    resizeOf(c, c.in(0), c.out(0));
}

void resizeBilinearBackward(Check &c) {
  if (c.counts(1, 1, 1, 1)) // dy (large) -> dx (small)
    resizeOf(c, c.out(0), c.in(0));
}

} // namespace dlc::rt::oprules
