//===- DnnlConv.cpp - 2-D convolution and its gradients through oneDNN ----===//
//
// conv2d (x, w[, bias]) -> y; conv2d_backward_data (dy, w) -> dx;
// conv2d_backward_filter (dy, x) -> dw: the reference's operands and
// attributes (OpsSpatial.cpp), in NCHW / OIHW or NHWC / OHWI.
//
// Filters are declared with format `any`: oneDNN's direct convolutions
// want them blocked (OIhw8i8o on AVX2), so each call reorders the filter in
// (forward, backward data) or its gradient out (backward filter): one pass
// over O*I*KH*KW floats. NHWC activations are bound as they are (oneDNN has
// direct kernels for them). NCHW ones are `any` too: oneDNN then runs
// blocked nChw8c kernels instead of im2col + GEMM, and the two reorders
// (in, and out for the result) cost less than they save (about a quarter of
// a ResNet 3x3 convolution on one AVX2 core).
//
//===----------------------------------------------------------------------===//

#include "dnnl/DnnlCommon.h"

namespace dlc::rt::cpu::onednn {

namespace {

enum OpTag : int64_t { kForward = 1, kBackwardData, kBackwardFilter };

/// The convolution as oneDNN describes it, from the plan's buffers.
struct ConvGeometry {
  Layout layout = Layout::kNchw;
  dims src, dst;  ///< logical [n, c, h, w] and [n, k, oh, ow]
  dims weights;   ///< [k, c, kh, kw], or [g, k/g, c/g, kh, kw] when grouped
  md weightsUser; ///< the filter buffer: OIHW or OHWI
  dims strides, dilates, padL, padR;
  int64_t groups = 1;
  /// f32, or bf16 where the plan's buffers are (dnnlNativeBf16Ops()).
  dnnl::memory::data_type srcType = kF32, weightsType = kF32, dstType = kF32;

  md srcDesc() const { return activationDesc(src, layout, srcType); }
  md dstDesc() const { return activationDesc(dst, layout, dstType); }
  /// What the primitive is asked to take (see the file header).
  md srcWant() const { return want(src, srcType); }
  md dstWant() const { return want(dst, dstType); }
  md weightsAny() const { return md(weights, weightsType, tag::any); }

private:
  md want(const dims &d, dnnl::memory::data_type type) const {
    return layout == Layout::kNchw ? md(d, type, tag::any) : activationDesc(d, layout, type);
  }
};

/// The geometry of a convolution of input x, filter w and output y, read
/// as the reference reads it (convParams in OpsSpatial.cpp).
StatusOr<ConvGeometry> geometry(const KernelContext &c, const TensorRef &x,
                                const TensorRef &w, const TensorRef &y) {
  auto layout = layoutOf(c);
  if (!layout.isOk())
    return layout.status();
  if (x.rank() != 4 || w.rank() != 4 || y.rank() != 4)
    return c.error("expects 4-d input, filter and output");
  std::vector<int64_t> stride = c.kernel().intsAttr("stride", {1, 1}),
                       pad = c.kernel().intsAttr("padding", {0, 0}),
                       dil = c.kernel().intsAttr("dilation", {1, 1});
  if (stride.size() != 2 || pad.size() != 2 || dil.size() != 2)
    return c.error("expects two strides, paddings and dilations");
  ConvGeometry g;
  g.layout = *layout;
  g.srcType = dataType(x);
  g.weightsType = dataType(w);
  g.dstType = dataType(y);
  g.groups = c.kernel().intAttr("groups", 1);
  g.src = nchwDims(*x.shape, g.layout);
  g.dst = nchwDims(*y.shape, g.layout);
  const std::vector<int64_t> &ws = *w.shape;
  bool ohwi = g.layout == Layout::kNhwc;
  int64_t o = ws[0], i = ohwi ? ws[3] : ws[1], kh = ohwi ? ws[1] : ws[2],
          kw = ohwi ? ws[2] : ws[3];
  if (g.groups < 1 || o % g.groups || g.src[1] != i * g.groups || g.dst[1] != o)
    return c.error("filter, channels and groups do not agree");
  if (g.groups == 1) {
    g.weights = {o, i, kh, kw};
    g.weightsUser = md(g.weights, g.weightsType, ohwi ? tag::ohwi : tag::oihw);
  } else {
    int64_t og = o / g.groups;
    g.weights = {g.groups, og, i, kh, kw};
    // The same bytes as OIHW / OHWI, read as [g, o/g, i, kh, kw].
    dims strides = ohwi ? dims{og * kh * kw * i, kh * kw * i, 1, kw * i, i}
                        : dims{og * i * kh * kw, i * kh * kw, kh * kw, kw, 1};
    g.weightsUser = md(g.weights, g.weightsType, strides);
  }
  g.strides = {stride[0], stride[1]};
  g.dilates = {dil[0] - 1, dil[1] - 1}; // oneDNN counts the holes
  g.padL = {pad[0], pad[1]};
  g.padR = g.padL;
  return g;
}

Key convKey(const KernelContext &c, OpTag op, const ConvGeometry &g) {
  Key key = shapeKey(c, op);
  key.push_back(static_cast<int64_t>(g.layout));
  key.push_back(g.groups);
  for (const dims *d : {&g.strides, &g.dilates, &g.padL})
    key.insert(key.end(), d->begin(), d->end());
  return key;
}

/// The forward primitive descriptor: the primitive itself, or the hint
/// the backward ones are made from.
dnnl::convolution_forward::primitive_desc
forwardPd(const ConvGeometry &g, bool bias, dnnl::memory::data_type biasType = kF32) {
  using dnnl::convolution_forward;
  auto kind = dnnl::prop_kind::forward_training;
  auto alg = dnnl::algorithm::convolution_direct;
  md biasDesc({g.dst[1]}, biasType, tag::a);
  auto d = bias ? convolution_forward::desc(kind, alg, g.srcWant(), g.weightsAny(),
                                            biasDesc, g.dstWant(), g.strides,
                                            g.dilates, g.padL, g.padR)
                : convolution_forward::desc(kind, alg, g.srcWant(), g.weightsAny(),
                                            g.dstWant(), g.strides, g.dilates,
                                            g.padL, g.padR);
  return convolution_forward::primitive_desc(d, userScratchpad(), engine());
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// A convolution primitive and its operands in the plan's buffers: for
/// the backward ones, src / dst are the gradients where they flow.
struct ConvEntry {
  Prim conv;
  Operand src, weights, dst;
};

/// Which of src, weights and dst a primitive reads (the others it writes).
struct Reads {
  bool src, weights, dst;
};

template <typename PrimitiveT, typename PD>
std::shared_ptr<ConvEntry> makeEntry(const ConvGeometry &g, const PD &pd, const md &src,
                                     const md &weights, const md &dst, Reads reads) {
  return std::make_shared<ConvEntry>(ConvEntry{
      makePrim<PrimitiveT>(pd), Operand::make(g.srcDesc(), src, reads.src),
      Operand::make(g.weightsUser, weights, reads.weights),
      Operand::make(g.dstDesc(), dst, reads.dst)});
}

/// Binds the three operands, runs the convolution with `extra` arguments,
/// and reorders the result back where it was reordered.
void run(const ConvEntry &e, int srcArg, void *src, int weightsArg, void *weights,
         int dstArg, void *dst, std::unordered_map<int, dnnl::memory> extra = {}) {
  dnnl::memory s = e.src.bind(src, Slot::kSrc), w = e.weights.bind(weights, Slot::kWeights),
               d = e.dst.bind(dst, Slot::kDst);
  extra.emplace(srcArg, s);
  extra.emplace(weightsArg, w);
  extra.emplace(dstArg, d);
  execute(e.conv, std::move(extra));
  e.src.finish(s, src);
  e.weights.finish(w, weights);
  e.dst.finish(d, dst);
}

Status conv2d(const KernelContext &c) {
  static Cache<ConvEntry> cache;
  return guarded(c, [&]() -> Status {
    auto g = geometry(c, c.in(0), c.in(1), c.out(0));
    if (!g.isOk())
      return g.status();
    bool bias = c.numInputs() > 2;
    auto biasType = bias ? dataType(c.in(2)) : kF32;
    auto entry = cache.get(convKey(c, kForward, *g), [&] {
      auto pd = forwardPd(*g, bias, biasType);
      return makeEntry<dnnl::convolution_forward>(*g, pd, pd.src_desc(),
                                                  pd.weights_desc(), pd.dst_desc(),
                                                  Reads{true, true, false});
    });
    if (!entry)
      return runReference(c);
    std::unordered_map<int, dnnl::memory> extra;
    if (bias)
      extra.emplace(DNNL_ARG_BIAS,
                    dnnl::memory(md({g->dst[1]}, biasType, tag::a), engine(), c.in(2).data));
    run(*entry, DNNL_ARG_SRC, c.in(0).data, DNNL_ARG_WEIGHTS, c.in(1).data,
        DNNL_ARG_DST, c.out(0).data, std::move(extra));
    return Status::ok();
  }, /*bf16=*/true);
}

Status conv2dBackwardData(const KernelContext &c) {
  // in: dy, w; out: dx.
  static Cache<ConvEntry> cache;
  return guarded(c, [&]() -> Status {
    auto g = geometry(c, c.out(0), c.in(1), c.in(0));
    if (!g.isOk())
      return g.status();
    auto entry = cache.get(convKey(c, kBackwardData, *g), [&] {
      using dnnl::convolution_backward_data;
      convolution_backward_data::desc d(dnnl::algorithm::convolution_direct,
                                        g->srcWant(), g->weightsAny(), g->dstWant(),
                                        g->strides, g->dilates, g->padL, g->padR);
      convolution_backward_data::primitive_desc pd(d, userScratchpad(), engine(),
                                                   forwardPd(*g, false));
      return makeEntry<convolution_backward_data>(*g, pd, pd.diff_src_desc(),
                                                  pd.weights_desc(), pd.diff_dst_desc(),
                                                  Reads{false, true, true});
    });
    if (!entry)
      return runReference(c);
    run(*entry, DNNL_ARG_DIFF_SRC, c.out(0).data, DNNL_ARG_WEIGHTS, c.in(1).data,
        DNNL_ARG_DIFF_DST, c.in(0).data);
    return Status::ok();
  }, /*bf16=*/true);
}

Status conv2dBackwardFilter(const KernelContext &c) {
  // in: dy, x; out: dw.
  static Cache<ConvEntry> cache;
  return guarded(c, [&]() -> Status {
    auto g = geometry(c, c.in(1), c.out(0), c.in(0));
    if (!g.isOk())
      return g.status();
    auto entry = cache.get(convKey(c, kBackwardFilter, *g), [&] {
      using dnnl::convolution_backward_weights;
      convolution_backward_weights::desc d(dnnl::algorithm::convolution_direct,
                                           g->srcWant(), g->weightsAny(), g->dstWant(),
                                           g->strides, g->dilates, g->padL, g->padR);
      convolution_backward_weights::primitive_desc pd(d, userScratchpad(), engine(),
                                                      forwardPd(*g, false));
      return makeEntry<convolution_backward_weights>(*g, pd, pd.src_desc(),
                                                     pd.diff_weights_desc(),
                                                     pd.diff_dst_desc(),
                                                     Reads{true, false, true});
    });
    if (!entry)
      return runReference(c);
    run(*entry, DNNL_ARG_SRC, c.in(1).data, DNNL_ARG_DIFF_WEIGHTS, c.out(0).data,
        DNNL_ARG_DIFF_DST, c.in(0).data);
    return Status::ok();
  }, /*bf16=*/true);
}

} // namespace

void registerConvKernels(KernelRegistry &r) {
  r[OpId::kConv2d] = conv2d;
  r[OpId::kConv2dBackwardData] = conv2dBackwardData;
  r[OpId::kConv2dBackwardFilter] = conv2dBackwardFilter;
}

} // namespace dlc::rt::cpu::onednn
