//===- OpsSpatial.cpp - convolution, batch-norm, pooling, resize kernels --===//
//
// Adapts the plan's calling convention (buffers and the dialect's attribute
// names) to the spatial reference kernels of Spatial.h, which are templated
// on the element type and checked against PyTorch and float64 finite
// differences in SpatialTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "KernelRegistration.h"

#include "dlc/runtime/cpu/Spatial.h"

#include <cmath>
#include <cstring>

namespace dlc::rt::cpu {

namespace {

/// Convolution geometry from the input, filter and output shapes and the
/// stride / padding / dilation / groups attributes.
Conv2dParams convParams(const KernelContext &c, const std::vector<int64_t> &x,
                        const std::vector<int64_t> &w) {
  std::vector<int64_t> stride = c.kernel().intsAttr("stride", {1, 1}),
                       pad = c.kernel().intsAttr("padding", {0, 0}),
                       dil = c.kernel().intsAttr("dilation", {1, 1});
  Conv2dParams p;
  p.n = x[0], p.c = x[1], p.h = x[2], p.w = x[3];
  p.k = w[0], p.kh = w[2], p.kw = w[3];
  p.strideH = stride[0], p.strideW = stride[1];
  p.padH = pad[0], p.padW = pad[1];
  p.dilationH = dil[0], p.dilationW = dil[1];
  p.groups = c.kernel().intAttr("groups", 1);
  return p;
}

Status conv2d(const KernelContext &c) {
  Conv2dParams p = convParams(c, *c.in(0).shape, *c.in(1).shape);
  conv2dForward(p, c.in(0).f32(), c.in(1).f32(),
                c.numInputs() > 2 ? c.in(2).f32() : nullptr, c.out(0).f32());
  return Status::ok();
}

Status conv2dBackwardDataKernel(const KernelContext &c) {
  // in: dy, filter; out: dx.
  Conv2dParams p = convParams(c, *c.out(0).shape, *c.in(1).shape);
  conv2dBackwardData(p, c.in(0).f32(), c.in(1).f32(), c.out(0).f32());
  return Status::ok();
}

Status conv2dBackwardFilterKernel(const KernelContext &c) {
  // in: dy, input; out: dw.
  Conv2dParams p = convParams(c, *c.in(1).shape, *c.out(0).shape);
  conv2dBackwardFilter(p, c.in(1).f32(), c.in(0).f32(), c.out(0).f32(),
                       static_cast<float *>(nullptr));
  return Status::ok();
}

BatchNormParams batchNormParams(const KernelContext &c, const TensorRef &x) {
  BatchNormParams p;
  p.n = x.dim(0), p.c = x.dim(1), p.spatial = x.numElements() / (p.n * p.c);
  p.eps = c.kernel().floatAttr("epsilon", 1e-5);
  p.momentum = c.kernel().floatAttr("momentum", 0.1);
  return p;
}

Status batchNorm(const KernelContext &c) {
  const TensorRef &x = c.in(0);
  BatchNormParams p = batchNormParams(c, x);
  // The running statistics are updated in place: results 1 and 2 usually
  // share storage with operands 3 and 4; copy when they do not.
  float *runningMean = c.out(1).f32(), *runningVar = c.out(2).f32();
  if (runningMean != c.in(3).f32())
    std::memcpy(runningMean, c.in(3).data, p.c * sizeof(float));
  if (runningVar != c.in(4).f32())
    std::memcpy(runningVar, c.in(4).data, p.c * sizeof(float));
  std::vector<float> savedMean(p.c), savedInvstd(p.c);
  batchNormTrainForward(p, x.f32(), c.in(1).f32(), c.in(2).f32(), c.out(0).f32(),
                        savedMean.data(), savedInvstd.data(), runningMean, runningVar);
  return Status::ok();
}

Status batchNormBackward(const KernelContext &c) {
  // in: dy, x, scale; the batch statistics are recomputed from x (the plan
  // does not keep the forward's saved statistics).
  const TensorRef &x = c.in(1);
  BatchNormParams p = batchNormParams(c, x);
  std::vector<float> mean(p.c), invstd(p.c);
  const float *X = x.f32();
  for (int64_t k = 0; k < p.c; ++k) {
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < p.n; ++i)
      for (int64_t j = 0; j < p.spatial; ++j)
        sum += X[(i * p.c + k) * p.spatial + j];
    double m = sum / (p.n * p.spatial);
    for (int64_t i = 0; i < p.n; ++i)
      for (int64_t j = 0; j < p.spatial; ++j) {
        double d = X[(i * p.c + k) * p.spatial + j] - m;
        sq += d * d;
      }
    mean[k] = static_cast<float>(m);
    invstd[k] = static_cast<float>(1 / std::sqrt(sq / (p.n * p.spatial) + p.eps));
  }
  batchNormTrainBackward(p, c.in(0).f32(), X, c.in(2).f32(), mean.data(),
                         invstd.data(), c.out(0).f32(), c.out(1).f32(),
                         c.out(2).f32());
  return Status::ok();
}

/// x permuted to NCHW order from NHWC (`toNchw`) or back: the one copy
/// the NHWC adapter below needs. Exact, element for element.
void permuteNhwc(const float *from, const std::vector<int64_t> &fromShape, float *to,
                 bool toNchw) {
  // Index the NCHW side as [a, b, c, d] = [n, c, h, w].
  int64_t n = fromShape[0];
  int64_t c = toNchw ? fromShape[3] : fromShape[1];
  int64_t h = toNchw ? fromShape[1] : fromShape[2];
  int64_t w = toNchw ? fromShape[2] : fromShape[3];
  parallelFor(0, n * c, [&](int64_t nc) {
    int64_t i = nc / c, k = nc % c;
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        int64_t nchw = ((i * c + k) * h + y) * w + x;
        int64_t nhwc = ((i * h + y) * w + x) * c + k;
        if (toNchw)
          to[nchw] = from[nhwc];
        else
          to[nhwc] = from[nchw];
      }
  });
}

/// An NCHW reference kernel made to run ops of either layout. With
/// layout = "NHWC" every 4-d operand and result (a filter's OHWI is the same
/// permutation) goes through an NCHW copy, so both layouts compute the same
/// sums in the same order: an NHWC step is bit-identical to its NCHW twin,
/// which is what makes the CPU backend the layout pass's reference.
KernelFn layoutAware(KernelFn nchw) {
  return [nchw = std::move(nchw)](const KernelContext &c) -> Status {
    std::string layout = c.kernel().stringAttr("layout", "NCHW");
    if (layout == "NCHW")
      return nchw(c);
    if (layout != "NHWC")
      return c.error("unknown layout '" + layout + "' (NCHW or NHWC)");
    size_t total = c.numInputs() + c.numOutputs();
    std::vector<std::vector<int64_t>> shapes;
    std::vector<std::vector<float>> copies;
    shapes.reserve(total);
    copies.reserve(total);
    auto toNchw = [&](const TensorRef &r, bool read) -> StatusOr<TensorRef> {
      if (r.rank() != 4)
        return r;
      if (r.dtype != DType::kF32)
        return c.error(std::string("an NHWC operand of ") + dtypeName(r.dtype));
      const std::vector<int64_t> &s = *r.shape;
      shapes.push_back({s[0], s[3], s[1], s[2]});
      copies.emplace_back(r.numElements());
      if (read)
        permuteNhwc(r.f32(), s, copies.back().data(), /*toNchw=*/true);
      return TensorRef{copies.back().data(), DType::kF32, &shapes.back()};
    };
    std::vector<TensorRef> inputs, outputs;
    for (size_t i = 0; i < c.numInputs(); ++i) {
      auto r = toNchw(c.in(i), true);
      if (!r.isOk())
        return r.status();
      inputs.push_back(*r);
    }
    for (size_t i = 0; i < c.numOutputs(); ++i) {
      auto r = toNchw(c.out(i), false);
      if (!r.isOk())
        return r.status();
      outputs.push_back(*r);
    }
    if (Status s = nchw(c.withBuffers(inputs, outputs)); !s.isOk())
      return s;
    for (size_t i = 0; i < outputs.size(); ++i)
      if (outputs[i].data != c.out(i).data)
        permuteNhwc(outputs[i].f32(), *outputs[i].shape, c.out(i).f32(), /*toNchw=*/false);
    return Status::ok();
  };
}

Pool2dParams poolParams(const KernelContext &c, const std::vector<int64_t> &in) {
  std::vector<int64_t> k = c.kernel().intsAttr("kernel_size", {1, 1}),
                       s = c.kernel().intsAttr("stride", {1, 1}),
                       pad = c.kernel().intsAttr("padding", {0, 0});
  Pool2dParams p;
  p.n = in[0], p.c = in[1], p.h = in[2], p.w = in[3];
  p.kh = k[0], p.kw = k[1], p.strideH = s[0], p.strideW = s[1];
  p.padH = pad[0], p.padW = pad[1];
  p.ceilMode = c.kernel().intAttr("ceil_mode", 0);
  p.countIncludePad = c.kernel().intAttr("count_include_pad", 1);
  return p;
}

Status maxPool(const KernelContext &c) {
  maxPool2dForward(poolParams(c, *c.in(0).shape), c.in(0).f32(), c.out(0).f32());
  return Status::ok();
}

Status maxPoolBackward(const KernelContext &c) {
  // in: dy, x.
  maxPool2dBackward(poolParams(c, *c.in(1).shape), c.in(1).f32(), c.in(0).f32(),
                    c.out(0).f32());
  return Status::ok();
}

Status avgPool(const KernelContext &c) {
  avgPool2dForward(poolParams(c, *c.in(0).shape), c.in(0).f32(), c.out(0).f32());
  return Status::ok();
}

Status avgPoolBackward(const KernelContext &c) {
  avgPool2dBackward(poolParams(c, *c.out(0).shape), c.in(0).f32(), c.out(0).f32());
  return Status::ok();
}

Status globalAvgPool(const KernelContext &c) {
  const TensorRef &x = c.in(0);
  globalAvgPoolForward(x.dim(0), x.dim(1), x.dim(2), x.dim(3), x.f32(), c.out(0).f32());
  return Status::ok();
}

ResizeParams resizeParams(const KernelContext &c, const TensorRef &in,
                          const TensorRef &out) {
  ResizeParams p;
  p.n = in.dim(0), p.c = in.dim(1), p.inH = in.dim(2), p.inW = in.dim(3);
  p.outH = out.dim(2), p.outW = out.dim(3);
  p.alignCorners = c.kernel().intAttr("align_corners", 0);
  return p;
}

Status resizeBilinear(const KernelContext &c) {
  resizeBilinearForward(resizeParams(c, c.in(0), c.out(0)), c.in(0).f32(),
                        c.out(0).f32());
  return Status::ok();
}

Status resizeBilinearBackwardKernel(const KernelContext &c) {
  // in: dy (the output's size); out: dx (the input's).
  resizeBilinearBackward(resizeParams(c, c.out(0), c.in(0)), c.in(0).f32(),
                         c.out(0).f32());
  return Status::ok();
}

} // namespace

void registerSpatialKernels(KernelRegistry &r) {
  r[OpId::kConv2d] = layoutAware(conv2d);
  r[OpId::kConv2dBackwardData] = layoutAware(conv2dBackwardDataKernel);
  r[OpId::kConv2dBackwardFilter] = layoutAware(conv2dBackwardFilterKernel);
  r[OpId::kBatchNorm] = layoutAware(batchNorm);
  r[OpId::kBatchNormBackward] = layoutAware(batchNormBackward);
  r[OpId::kMaxPool2d] = layoutAware(maxPool);
  r[OpId::kMaxPool2dBackward] = layoutAware(maxPoolBackward);
  r[OpId::kAvgPool2d] = layoutAware(avgPool);
  r[OpId::kAvgPool2dBackward] = layoutAware(avgPoolBackward);
  r[OpId::kGlobalAvgPool] = globalAvgPool;
  r[OpId::kResizeBilinear] = layoutAware(resizeBilinear);
  r[OpId::kResizeBilinearBackward] = layoutAware(resizeBilinearBackwardKernel);
}

} // namespace dlc::rt::cpu
