//===- HandKernels.cpp - which hand-written kernel runs a plan kernel -----===//
//
// For each op: the operand counts and element types the kernel handles,
// the attributes read exactly as the CPU reference reads them (same names,
// same defaults, same attribute types), the shapes folded into the integer
// parameters, and the grid. Anything else is refused with a reason, and
// the executor keeps such a kernel on the host. Operands go to the slots
// and attributes to the fields HandKernelArgs.h names. An op with more
// operands than DlcHandArgs' ten pointers (loss_scale_status) gets an
// operand table (HandKernel::table).
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/cuda/HandKernels.h"
#include "dlc/runtime/OpRules.h"

#include "dlc/runtime/cpu/Spatial.h"
#include "HandKernelBuilder.h"
#include "handwritten/Sources.h"

#include <algorithm>
#include <functional>
#include <map>

namespace dlc::rt::cuda {

namespace {

using namespace hand;

/// The most blocks a kernel that combines per-block partials uses (its
/// scratch grows with them).
constexpr int64_t kCombiningBlocks = 256;
/// The most blocks softmax_cross_entropy uses, one per position below it:
/// 3 doubles of scratch each (768 KiB at the cap).
constexpr int64_t kLossBlocks = 32768;
/// Blocks that fill an H100 a few times over (132 multiprocessors): a
/// kernel that splits one unit of work (a channel) over blocks aims here.
constexpr int64_t kSpreadBlocks = 512;
/// max_pool2d_backward's input tile (DLC_HW_POOL_TILE_H, DLC_HW_POOL_TILE_W),
/// and under NHWC its pixels and channels (DLC_HW_POOL_TILE_NHWC_*); the
/// 32-bit NHWC kernel's pixels (DLC_HW_POOL_NHWC32_ROWS, _COLS).
constexpr int64_t kPoolTileH = 16, kPoolTileW = 32;
constexpr int64_t kPoolTileNhwcH = 4, kPoolTileNhwcW = 8, kPoolTileNhwcC = 32;
constexpr int64_t kPoolNhwc32Rows = 16, kPoolNhwc32Cols = 8;
/// Elements a tensor holds under 32-bit indices.
constexpr int64_t kIndex32Elements = int64_t(1) << 31;
/// Table rows one embedding_backward block owns (DLC_HW_EMBEDDING_ROWS).
constexpr int64_t kEmbeddingRowsPerBlock = 32;


/// (outer, n, inner) around `axis` of `shape`.
void splitAround(const std::vector<int64_t> &shape, int64_t axis, long long &outer,
                 long long &n, long long &inner) {
  outer = inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  n = shape[axis];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
}

/// A kernel of one block per line of n elements gets the smallest power of
/// two of threads covering the line (32 to kBlock): BERT's 128-key softmax
/// rows left half of 256 threads idle through every block reduction.
StatusOr<HandKernel> lineBlocks(StatusOr<HandKernel> kernel, int64_t n) {
  if (kernel.isOk()) {
    int threads = 32;
    while (threads < kBlock && threads < n)
      threads *= 2;
    kernel->blockSize = threads;
  }
  return kernel;
}

StatusOr<HandKernel> softmax(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 1, 2, 1))
    return refuse(k, "expects x, an optional mask and one output");
  const std::vector<int64_t> &shape = b.buf(k.inputs[0]).shape;
  int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0)
    return refuse(k, "a scalar input");
  // The axis, and causal masking's last axis, are the plan's validated
  // facts (OpRules.h).
  int64_t axis = kernelAxis(k, "axis", -1, rank);
  bool causal = k.intAttr("causal", 0);
  DlcSoftmaxArgs &a = b.out.args.softmax;
  splitAround(shape, axis, a.outer, a.n, a.inner);
  a.causal = causal;
  a.queries = causal ? shape[rank - 2] : 0;
  a.keys = causal ? shape[rank - 1] : 0;
  a.scale = k.floatAttr("scale", 1.0);
  b.floating(DLC_SOFTMAX_X, k.inputs[0]);
  b.floating(DLC_SOFTMAX_MASK, k.inputs.size() > 1 ? k.inputs[1] : -1);
  b.floating(DLC_SOFTMAX_Y, k.outputs[0]);
  if (k.inputs.size() > 1) {
    const std::vector<int64_t> &mask = b.buf(k.inputs[1]).shape;
    if (rank > DLC_SOFTMAX_MAX_RANK || mask.size() > shape.size())
      return refuse(k, "a mask broadcast over more than " +
                           std::to_string(DLC_SOFTMAX_MAX_RANK) +
                           " dimensions, or of higher rank than the input");
    a.hasMask = 1;
    a.rank = rank;
    int64_t stride = 1, lead = rank - static_cast<int64_t>(mask.size());
    for (int64_t d = rank - 1; d >= 0; --d) {
      a.shape[d] = shape[d];
      int64_t md = d - lead;
      bool broadcast = md < 0 || mask[md] == 1;
      if (md >= 0 && mask[md] != 1 && mask[md] != shape[d])
        return refuse(k, "the mask does not broadcast to the input");
      a.maskStrides[d] = broadcast ? 0 : stride;
      if (md >= 0)
        stride *= mask[md];
    }
  }
  a.axis = axis;
  return lineBlocks(b.done("softmax", a.outer * a.inner), a.n);
}

StatusOr<HandKernel> softmaxBackward(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 2, 2, 1))
    return refuse(k, "expects dy, y and one output");
  const std::vector<int64_t> &shape = b.buf(k.inputs[0]).shape;
  int64_t axis = kernelAxis(k, "axis", -1, static_cast<int64_t>(shape.size()));
  DlcSoftmaxArgs &a = b.out.args.softmax;
  splitAround(shape, axis, a.outer, a.n, a.inner);
  a.scale = k.floatAttr("scale", 1.0);
  b.floating(DLC_SOFTMAX_BACKWARD_DY, k.inputs[0]);
  b.floating(DLC_SOFTMAX_BACKWARD_Y, k.inputs[1]);
  b.floating(DLC_SOFTMAX_BACKWARD_DX, k.outputs[0]);
  return lineBlocks(b.done("softmax", a.outer * a.inner), a.n);
}

StatusOr<HandKernel> layerNorm(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (k.inputs.size() != 3 || k.outputs.empty())
    return refuse(k, "expects x, gamma, beta and an output");
  const PlanBuffer &x = b.buf(k.inputs[0]);
  if (x.shape.empty() || x.shape.back() == 0)
    return refuse(k, "a scalar or empty input");
  DlcLayerNormArgs &a = b.out.args.layerNorm;
  a.d = x.shape.back();
  a.rows = x.numElements() / a.d;
  a.epsilon = k.floatAttr("epsilon", 1e-5);
  b.floating(DLC_LAYER_NORM_X, k.inputs[0]);
  b.floating(DLC_LAYER_NORM_GAMMA, k.inputs[1]);
  b.floating(DLC_LAYER_NORM_BETA, k.inputs[2]);
  b.floating(DLC_LAYER_NORM_Y, k.outputs[0]);
  return b.done("norm", a.rows);
}

StatusOr<HandKernel> layerNormBackward(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (k.inputs.size() != 3 || k.outputs.size() != 3)
    return refuse(k, "expects dy, x, gamma and three outputs");
  const PlanBuffer &x = b.buf(k.inputs[1]);
  if (x.shape.empty() || x.shape.back() == 0)
    return refuse(k, "a scalar or empty input");
  DlcLayerNormArgs &a = b.out.args.layerNorm;
  a.d = x.shape.back();
  a.rows = x.numElements() / a.d;
  a.epsilon = k.floatAttr("epsilon", 1e-5);
  b.floating(DLC_LAYER_NORM_BACKWARD_DY, k.inputs[0]);
  b.floating(DLC_LAYER_NORM_BACKWARD_X, k.inputs[1]);
  b.floating(DLC_LAYER_NORM_BACKWARD_GAMMA, k.inputs[2]);
  b.floating(DLC_LAYER_NORM_BACKWARD_DX, k.outputs[0]);
  b.floating(DLC_LAYER_NORM_BACKWARD_DGAMMA, k.outputs[1]);
  b.floating(DLC_LAYER_NORM_BACKWARD_DBETA, k.outputs[2]);
  // Each block keeps its rows' gamma and beta gradient partials (2 d
  // doubles); 256 blocks hold 3 MiB of them at BERT-base's d = 768.
  int64_t blocks = std::min<int64_t>(a.rows, kCombiningBlocks);
  b.scratch(DLC_LAYER_NORM_BACKWARD_SCRATCH, 2 * a.d * blocks);
  return b.done("norm", blocks);
}

/// (outer, classes, inner, ignore_index) as crossEntropyShape reads them.
Status crossEntropyShape(Builder &b, int32_t logits) {
  const PlanKernel &k = b.kernel;
  const std::vector<int64_t> &shape = b.buf(logits).shape;
  // class_axis within the logits' rank and one label per position are the
  // plan's validated facts (OpRules.h).
  int64_t axis = kernelAxis(k, "class_axis", 1, static_cast<int64_t>(shape.size()));
  DlcCrossEntropyArgs &a = b.out.args.crossEntropy;
  splitAround(shape, axis, a.outer, a.classes, a.inner);
  a.ignoreIndex = k.intAttr("ignore_index", -100);
  // Padded rows (RowStride.h: the class axis is then the last).
  int64_t ld = rowStride(b.buf(logits));
  a.ld = ld > 0 ? ld : a.classes;
  a.ldGrad = a.classes;
  if (k.id == OpId::kSoftmaxCrossEntropyBackward && !k.outputs.empty())
    if (int64_t ldGrad = rowStride(b.buf(k.outputs[0])); ldGrad > 0)
      a.ldGrad = ldGrad;
  return Status::ok();
}

StatusOr<HandKernel> crossEntropy(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 2, 2, 1))
    return refuse(k, "expects logits, labels and one output");
  if (Status s = crossEntropyShape(b, k.inputs[0]); !s.isOk())
    return s;
  b.floating(DLC_CROSS_ENTROPY_LOGITS, k.inputs[0]);
  b.integer(DLC_CROSS_ENTROPY_LABELS, k.inputs[1]);
  b.floating(DLC_CROSS_ENTROPY_LOSS, k.outputs[0]);
  // Each block's (sum, count, bad label) over its positions: a block per
  // position up to kLossBlocks. 256 blocks (kCombiningBlocks) kept a
  // quarter of an H100's threads busy and streamed GPT-2's 1.6 GB of
  // logits at a fraction of the bandwidth (6.1 ms, 2026-11-26).
  const DlcCrossEntropyArgs &a = b.out.args.crossEntropy;
  int64_t blocks = std::min<int64_t>(a.outer * a.inner, kLossBlocks);
  b.scratch(DLC_CROSS_ENTROPY_SCRATCH, 3 * blocks);
  return lineBlocks(b.done("loss", blocks), a.classes);
}

StatusOr<HandKernel> crossEntropyBackward(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 3, 3, 1))
    return refuse(k, "expects dloss, logits, labels and one output");
  if (Status s = crossEntropyShape(b, k.inputs[1]); !s.isOk())
    return s;
  b.floating(DLC_CROSS_ENTROPY_BACKWARD_DLOSS, k.inputs[0]);
  b.floating(DLC_CROSS_ENTROPY_BACKWARD_LOGITS, k.inputs[1]);
  b.integer(DLC_CROSS_ENTROPY_BACKWARD_LABELS, k.inputs[2]);
  b.floating(DLC_CROSS_ENTROPY_BACKWARD_DLOGITS, k.outputs[0]);
  const DlcCrossEntropyArgs &a = b.out.args.crossEntropy;
  return lineBlocks(b.done("loss", a.outer * a.inner), a.classes);
}

StatusOr<HandKernel> embedding(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 2, 2, 1) || b.buf(k.inputs[0]).shape.size() != 2)
    return refuse(k, "expects a 2-d table, indices and one output");
  DlcEmbeddingArgs &a = b.out.args.embedding;
  a.rows = b.buf(k.inputs[0]).shape[0];
  a.d = b.buf(k.inputs[0]).shape[1];
  a.n = b.buf(k.inputs[1]).numElements();
  b.floating(DLC_EMBEDDING_TABLE, k.inputs[0]);
  b.integer(DLC_EMBEDDING_IDS, k.inputs[1]);
  b.floating(DLC_EMBEDDING_Y, k.outputs[0]);
  return b.done("embedding", ceilDiv(a.d * a.n, kBlock));
}

StatusOr<HandKernel> embeddingBackward(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 2, 2, 1) || b.buf(k.outputs[0]).shape.size() != 2)
    return refuse(k, "expects dy, indices and one 2-d output");
  DlcEmbeddingArgs &a = b.out.args.embedding;
  a.rows = b.buf(k.outputs[0]).shape[0];
  a.d = b.buf(k.outputs[0]).shape[1];
  a.n = b.buf(k.inputs[1]).numElements();
  b.floating(DLC_EMBEDDING_BACKWARD_DY, k.inputs[0]);
  b.integer(DLC_EMBEDDING_BACKWARD_IDS, k.inputs[1]);
  b.floating(DLC_EMBEDDING_BACKWARD_DTABLE, k.outputs[0]);
  // A small table (BERT's 2-row token types, its 512 positions) has few
  // row groups to spread over the GPU: the indices are split too, each
  // split summing its range into float partials that the group's last
  // split adds in order. Splits hold 16 MiB of partials at most; a large
  // table keeps one split, whose sums are the CPU's bit for bit.
  int64_t groups = ceilDiv(a.rows, kEmbeddingRowsPerBlock);
  int64_t splits = std::clamp<int64_t>(
      std::min({kCombiningBlocks / groups, ceilDiv(a.n, int64_t(kBlock)),
                (int64_t(4) << 20) / std::max<int64_t>(a.rows * a.d, 1)}),
      1, 64);
  a.splits = splits;
  if (splits > 1) // a counter per row group (16-byte aligned), then the partials
    b.scratchBytes(DLC_EMBEDDING_BACKWARD_SCRATCH,
                   ceilDiv(groups * int64_t(sizeof(unsigned)), int64_t(16)) * 16 +
                       splits * a.rows * a.d * int64_t(sizeof(float)));
  return b.done("embedding", groups * splits);
}

StatusOr<HandKernel> dropout(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 1, 1, 1))
    return refuse(k, "expects x and one output");
  double rate = k.floatAttr("rate", 0); // in [0, 1): validated (OpRules.h)
  DlcDropoutArgs &a = b.out.args.dropout;
  a.n = b.buf(k.outputs[0]).numElements();
  a.seed = k.intAttr("seed", 0);
  a.rate = rate;
  b.floating(DLC_DROPOUT_X, k.inputs[0]);
  b.floating(DLC_DROPOUT_Y, k.outputs[0]);
  b.out.readsDropoutCounter = true;
  return b.done("dropout", ceilDiv(a.n, kBlock));
}

/// Whether a pooling or resize kernel's data is NHWC; another layout than
/// NCHW or NHWC is refused.
StatusOr<bool> isNhwc(const PlanKernel &k) {
  std::string layout = kernelLayout(k);
  if (layout != "NCHW" && layout != "NHWC")
    return refuse(k, "unknown layout '" + layout + "'");
  return layout == "NHWC";
}

/// A 4-d shape as [n, c, h, w], whichever layout it is stored in.
std::vector<int64_t> dimsAsNchw(std::vector<int64_t> shape, bool nhwc) {
  if (nhwc && shape.size() == 4)
    shape = {shape[0], shape[3], shape[1], shape[2]};
  return shape;
}

/// The pooling geometry of a [n, c, h, w] input, as poolParams reads it
/// (an NHWC input's dimensions given in that order).
Status poolGeometry(Builder &b, const std::vector<int64_t> &in) {
  const PlanKernel &k = b.kernel;
  if (in.size() != 4)
    return refuse(k, "expects a 4-d input");
  std::vector<int64_t> ks = k.intsAttr("kernel_size", {1, 1}), s = k.intsAttr("stride", {1, 1}),
                       pad = k.intsAttr("padding", {0, 0});
  if (ks.size() != 2 || s.size() != 2 || pad.size() != 2 || s[0] <= 0 || s[1] <= 0)
    return refuse(k, "kernel_size, stride and padding must be pairs, strides positive");
  bool ceilMode = k.intAttr("ceil_mode", 0);
  DlcPoolArgs &a = b.out.args.pool;
  a.n = in[0], a.c = in[1], a.h = in[2], a.w = in[3];
  a.kernelH = ks[0], a.kernelW = ks[1], a.strideH = s[0], a.strideW = s[1], a.padH = pad[0],
  a.padW = pad[1];
  a.countIncludePad = k.intAttr("count_include_pad", 1);
  a.outH = cpu::poolOutputSize(in[2], ks[0], s[0], pad[0], ceilMode);
  a.outW = cpu::poolOutputSize(in[3], ks[1], s[1], pad[1], ceilMode);
  if (a.outH <= 0 || a.outW <= 0)
    return refuse(k, "an empty output");
  return Status::ok();
}

StatusOr<HandKernel> pool(Builder &b) {
  const PlanKernel &k = b.kernel;
  bool backward = k.id == OpId::kMaxPool2dBackward || k.id == OpId::kAvgPool2dBackward;
  bool max = k.id == OpId::kMaxPool2d || k.id == OpId::kMaxPool2dBackward;
  // Forward: x -> y. max backward: dy, x -> dx. avg backward: dy -> dx.
  size_t inputs = backward && max ? 2 : 1;
  if (!arity(k, inputs, inputs, 1))
    return refuse(k, "unexpected operands");
  StatusOr<bool> nhwc = isNhwc(k);
  if (!nhwc.isOk())
    return nhwc.status();
  std::vector<int64_t> in = dimsAsNchw(
      !backward ? b.buf(k.inputs[0]).shape
                : (max ? b.buf(k.inputs[1]).shape : b.buf(k.outputs[0]).shape),
      *nhwc);
  if (Status s = poolGeometry(b, in); !s.isOk())
    return s;
  DlcPoolArgs &a = b.out.args.pool;
  a.nhwc = *nhwc;
  if (!backward) {
    b.floating(DLC_POOL_X, k.inputs[0]);
    b.floating(DLC_POOL_Y, k.outputs[0]);
  } else if (max) {
    b.floating(DLC_MAX_POOL_BACKWARD_DY, k.inputs[0]);
    b.floating(DLC_MAX_POOL_BACKWARD_X, k.inputs[1]);
    b.floating(DLC_MAX_POOL_BACKWARD_DX, k.outputs[0]);
  } else {
    b.floating(DLC_AVG_POOL_BACKWARD_DY, k.inputs[0]);
    b.floating(DLC_AVG_POOL_BACKWARD_DX, k.outputs[0]);
  }
  // max_pool2d_backward: one block per input tile. NHWC tensors under
  // 2^31 elements take the kernel with 32-bit indices (its name's
  // "_nhwc"); NCHW and larger ones the general kernel.
  if (backward && max && *nhwc &&
      std::max(b.buf(k.inputs[0]).numElements(), b.buf(k.inputs[1]).numElements()) <
          kIndex32Elements) {
    StatusOr<HandKernel> hand =
        b.done("pool", in[0] * ceilDiv(in[1], kPoolTileNhwcC) * ceilDiv(in[2], kPoolNhwc32Rows) *
                           ceilDiv(in[3], kPoolNhwc32Cols));
    if (hand.isOk())
      hand->name += "_nhwc";
    return hand;
  }
  if (backward && max)
    return b.done("pool", *nhwc ? in[0] * ceilDiv(in[1], kPoolTileNhwcC) *
                                      ceilDiv(in[2], kPoolTileNhwcH) *
                                      ceilDiv(in[3], kPoolTileNhwcW)
                                : in[0] * in[1] * ceilDiv(in[2], kPoolTileH) *
                                      ceilDiv(in[3], kPoolTileW));
  int64_t work = backward ? in[0] * in[1] * in[2] * in[3] : in[0] * in[1] * a.outH * a.outW;
  return b.done("pool", ceilDiv(work, kBlock));
}

StatusOr<HandKernel> sgdUpdate(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 3, 4, 2))
    return refuse(k, "expects param, grad, momentum, an optional loss-scale status and two "
                     "outputs");
  DlcSgdArgs &a = b.out.args.sgd;
  a.n = b.buf(k.inputs[0]).numElements();
  a.hasStatus = k.inputs.size() > 3;
  a.nesterov = k.intAttr("nesterov", 0);
  a.lr = k.floatAttr("lr", 0), a.momentum = k.floatAttr("momentum", 0),
  a.weightDecay = k.floatAttr("weight_decay", 0);
  b.floating(DLC_SGD_PARAM, k.inputs[0]);
  b.floating(DLC_SGD_GRAD, k.inputs[1]);
  b.floating(DLC_SGD_MOMENTUM, k.inputs[2]);
  b.floating(DLC_SGD_STATUS, k.inputs.size() > 3 ? k.inputs[3] : -1);
  b.floating(DLC_SGD_NEW_PARAM, k.outputs[0]);
  b.floating(DLC_SGD_NEW_MOMENTUM, k.outputs[1]);
  return b.done("optimizer", ceilDiv(a.n, kBlock));
}

StatusOr<HandKernel> adamwUpdate(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 4, 5, 3))
    return refuse(k, "expects param, grad, m, v, an optional loss-scale status and three "
                     "outputs");
  DlcAdamwArgs &a = b.out.args.adamw;
  a.n = b.buf(k.inputs[0]).numElements();
  a.hasStatus = k.inputs.size() > 4;
  a.lr = k.floatAttr("lr", 0), a.beta1 = k.floatAttr("beta1", 0.9),
  a.beta2 = k.floatAttr("beta2", 0.999), a.epsilon = k.floatAttr("epsilon", 1e-8),
  a.weightDecay = k.floatAttr("weight_decay", 0.01);
  b.floating(DLC_ADAMW_PARAM, k.inputs[0]);
  b.floating(DLC_ADAMW_GRAD, k.inputs[1]);
  b.floating(DLC_ADAMW_M, k.inputs[2]);
  b.floating(DLC_ADAMW_V, k.inputs[3]);
  b.floating(DLC_ADAMW_STATUS, k.inputs.size() > 4 ? k.inputs[4] : -1);
  b.floating(DLC_ADAMW_NEW_PARAM, k.outputs[0]);
  b.floating(DLC_ADAMW_NEW_M, k.outputs[1]);
  b.floating(DLC_ADAMW_NEW_V, k.outputs[2]);
  return b.done("optimizer", ceilDiv(a.n, kBlock));
}

StatusOr<HandKernel> updateLossScale(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 3, 3, 2) || b.buf(k.inputs[2]).numElements() < 2)
    return refuse(k, "expects scale, good steps, a 2-element status and two outputs");
  DlcUpdateLossScaleArgs &a = b.out.args.updateLossScale;
  a.growthInterval = k.intAttr("growth_interval", 2000);
  a.backoffFactor = k.floatAttr("backoff_factor", 0.5);
  a.growthFactor = k.floatAttr("growth_factor", 2.0);
  b.floating(DLC_UPDATE_LOSS_SCALE_SCALE, k.inputs[0]);
  b.floating(DLC_UPDATE_LOSS_SCALE_GOOD_STEPS, k.inputs[1]);
  b.floating(DLC_UPDATE_LOSS_SCALE_STATUS, k.inputs[2]);
  b.floating(DLC_UPDATE_LOSS_SCALE_NEW_SCALE, k.outputs[0]);
  b.floating(DLC_UPDATE_LOSS_SCALE_NEW_GOOD_STEPS, k.outputs[1]);
  return b.done("optimizer", 1);
}

StatusOr<HandKernel> lossScaleStatus(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (k.inputs.empty() || k.outputs.size() != 1 || b.buf(k.inputs[0]).numElements() < 1 ||
      b.buf(k.outputs[0]).numElements() < 2)
    return refuse(k, "expects the scale, the gradients and one 2-element status");
  DlcLossScaleStatusArgs &a = b.out.args.lossScaleStatus;
  b.floating(DLC_LOSS_SCALE_STATUS_SCALE, k.inputs[0]);
  b.floating(DLC_LOSS_SCALE_STATUS_STATUS, k.outputs[0]);
  b.tableSlot(DLC_LOSS_SCALE_STATUS_GRADS);
  for (size_t g = 1; g < k.inputs.size(); ++g)
    b.tabledFloating(k.inputs[g]);
  a.grads = static_cast<int64_t>(k.inputs.size()) - 1;
  int64_t largest = 0;
  for (size_t g = 1; g < k.inputs.size(); ++g)
    largest = std::max(largest, b.buf(k.inputs[g]).numElements());
  // Each block's overflow flag: enough blocks to fill the GPU
  // (kCombiningBlocks left three quarters of an H100's threads idle).
  int64_t blocks = std::clamp<int64_t>(ceilDiv(largest, 4 * kBlock), 1, 4 * kSpreadBlocks);
  b.scratch(DLC_LOSS_SCALE_STATUS_SCRATCH, blocks);
  return b.done("optimizer", blocks);
}

/// batchNormParams' (n, channels, spatial) of an [n, c, ...] input, its
/// epsilon, and per-channel operands of c elements.
Status batchNormShape(Builder &b, int32_t x, std::vector<int32_t> perChannel,
                      std::vector<int32_t> likeX) {
  const PlanKernel &k = b.kernel;
  const std::vector<int64_t> &shape = b.buf(x).shape;
  if (shape.size() < 2)
    return refuse(k, "expects an input of rank >= 2 (N, C, ...)");
  StatusOr<bool> nhwc = isNhwc(k);
  if (!nhwc.isOk())
    return nhwc.status();
  if (*nhwc && shape.size() != 4)
    return refuse(k, "an NHWC batch norm of a rank-" + std::to_string(shape.size()) + " input");
  DlcBatchNormArgs &a = b.out.args.batchNorm;
  // [n, channels, spatial] as stored: NCHW, or NHWC's [n, spatial, channels].
  a.n = shape[0], a.channels = *nhwc ? shape[3] : shape[1];
  a.nhwc = *nhwc;
  if (a.n * a.channels == 0 || b.buf(x).numElements() == 0)
    return refuse(k, "an empty input");
  a.spatial = b.buf(x).numElements() / (a.n * a.channels);
  a.epsilon = k.floatAttr("epsilon", 1e-5);
  for (int32_t id : perChannel)
    if (b.buf(id).numElements() != a.channels)
      return refuse(k, "buffer '" + b.buf(id).name + "' does not hold one value per channel");
  for (int32_t id : likeX)
    if (b.buf(id).numElements() != b.buf(x).numElements())
      return refuse(k, "buffer '" + b.buf(id).name + "' is not the input's size");
  return Status::ok();
}

/// Splits each channel over `splits` blocks (enough blocks to fill a GPU,
/// at least 4096 elements each) whose per-phase partials (4 doubles per
/// channel and split) live in scratch at p[scratchSlot].
StatusOr<HandKernel> batchNormPhases(Builder &b, int phases, int scratchSlot) {
  DlcBatchNormArgs &a = b.out.args.batchNorm;
  const int64_t channels = a.channels, count = a.n * a.spatial;
  const int64_t splits =
      std::clamp<int64_t>(std::min(ceilDiv(kSpreadBlocks, channels), ceilDiv(count, 4096)), 1,
                          kSpreadBlocks);
  a.splits = splits;
  b.scratch(scratchSlot, 4 * channels * splits);
  b.out.phases = phases;
  return b.done("batch_norm", channels * splits);
}

StatusOr<HandKernel> batchNorm(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 5, 5, 3))
    return refuse(k, "expects x, scale, bias, the running mean and variance and three "
                     "outputs");
  const std::vector<int32_t> &in = k.inputs, &out = k.outputs;
  if (Status s = batchNormShape(b, in[0], {in[1], in[2], in[3], in[4], out[1], out[2]},
                                {out[0]});
      !s.isOk())
    return s;
  b.out.args.batchNorm.momentum = k.floatAttr("momentum", 0.1);
  b.floating(DLC_BATCH_NORM_X, in[0]);
  b.floating(DLC_BATCH_NORM_SCALE, in[1]);
  b.floating(DLC_BATCH_NORM_BIAS, in[2]);
  b.floating(DLC_BATCH_NORM_RUNNING_MEAN, in[3]);
  b.floating(DLC_BATCH_NORM_RUNNING_VAR, in[4]);
  b.floating(DLC_BATCH_NORM_Y, out[0]);
  b.floating(DLC_BATCH_NORM_NEW_RUNNING_MEAN, out[1]);
  b.floating(DLC_BATCH_NORM_NEW_RUNNING_VAR, out[2]);
  return batchNormPhases(b, 3, DLC_BATCH_NORM_SCRATCH);
}

StatusOr<HandKernel> batchNormBackward(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 3, 3, 3))
    return refuse(k, "expects dy, x, scale and three outputs");
  const std::vector<int32_t> &in = k.inputs, &out = k.outputs;
  if (Status s = batchNormShape(b, in[1], {in[2], out[1], out[2]}, {in[0], out[0]});
      !s.isOk())
    return s;
  b.floating(DLC_BATCH_NORM_BACKWARD_DY, in[0]);
  b.floating(DLC_BATCH_NORM_BACKWARD_X, in[1]);
  b.floating(DLC_BATCH_NORM_BACKWARD_SCALE, in[2]);
  b.floating(DLC_BATCH_NORM_BACKWARD_DX, out[0]);
  b.floating(DLC_BATCH_NORM_BACKWARD_DSCALE, out[1]);
  b.floating(DLC_BATCH_NORM_BACKWARD_DBIAS, out[2]);
  return batchNormPhases(b, 4, DLC_BATCH_NORM_BACKWARD_SCRATCH);
}

/// resizeParams' geometry: the [n, c, inH, inW] input and [n, c, outH,
/// outW] output (the forward's; the backward's are the other way round),
/// stored NCHW or, with layout = "NHWC", channels last.
StatusOr<HandKernel> resize(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 1, 1, 1))
    return refuse(k, "expects one input and one output");
  bool backward = k.id == OpId::kResizeBilinearBackward;
  StatusOr<bool> nhwc = isNhwc(k);
  if (!nhwc.isOk())
    return nhwc.status();
  std::vector<int64_t> in = dimsAsNchw(b.buf(backward ? k.outputs[0] : k.inputs[0]).shape, *nhwc),
                       out = dimsAsNchw(b.buf(backward ? k.inputs[0] : k.outputs[0]).shape, *nhwc);
  if (in.size() != 4 || out.size() != 4)
    return refuse(k, "expects a 4-d input and output");
  if (in[0] != out[0] || in[1] != out[1])
    return refuse(k, "expects input and output with the same N and C");
  for (int64_t d : {in[2], in[3], out[2], out[3]})
    if (d <= 0)
      return refuse(k, "an empty spatial dimension");
  DlcResizeArgs &a = b.out.args.resize;
  a.n = in[0], a.c = in[1], a.inH = in[2], a.inW = in[3], a.outH = out[2], a.outW = out[3];
  a.alignCorners = k.intAttr("align_corners", 0) != 0;
  a.nhwc = *nhwc;
  if (backward) {
    b.floating(DLC_RESIZE_BACKWARD_DY, k.inputs[0]);
    b.floating(DLC_RESIZE_BACKWARD_DX, k.outputs[0]);
  } else {
    b.floating(DLC_RESIZE_X, k.inputs[0]);
    b.floating(DLC_RESIZE_Y, k.outputs[0]);
  }
  int64_t work = in[0] * in[1] * (backward ? in[2] * in[3] : out[2] * out[3]);
  return b.done("resize", ceilDiv(work, kBlock));
}

const std::map<OpId, Planner> &planners() {
  static const std::map<OpId, Planner> table = {
      {OpId::kSoftmax, softmax},
      {OpId::kSoftmaxBackward, softmaxBackward},
      {OpId::kLayerNorm, layerNorm},
      {OpId::kLayerNormBackward, layerNormBackward},
      {OpId::kSoftmaxCrossEntropy, crossEntropy},
      {OpId::kSoftmaxCrossEntropyBackward, crossEntropyBackward},
      {OpId::kEmbedding, embedding},
      {OpId::kEmbeddingBackward, embeddingBackward},
      {OpId::kDropout, dropout},
      {OpId::kMaxPool2d, pool},
      {OpId::kMaxPool2dBackward, pool},
      {OpId::kAvgPool2d, pool},
      {OpId::kAvgPool2dBackward, pool},
      {OpId::kSgdUpdate, sgdUpdate},
      {OpId::kAdamWUpdate, adamwUpdate},
      {OpId::kUpdateLossScale, updateLossScale},
      {OpId::kLossScaleStatus, lossScaleStatus},
      {OpId::kBatchNorm, batchNorm},
      {OpId::kBatchNormBackward, batchNormBackward},
      {OpId::kResizeBilinear, resize},
      {OpId::kResizeBilinearBackward, resize},
      {OpId::kAttention, attention},
      {OpId::kAttentionBackward, attentionBackward},
  };
  return table;
}

} // namespace

StatusOr<HandKernel> planHandKernel(const Plan &plan, const PlanKernel &kernel) {
  auto it = planners().find(kernel.id);
  if (it == planners().end())
    return refuse(kernel, "no hand-written kernel");
  for (const std::vector<int32_t> *ids : {&kernel.inputs, &kernel.outputs})
    for (int32_t id : *ids)
      if (id < 0 || static_cast<size_t>(id) >= plan.buffers.size())
        return refuse(kernel, "a buffer id outside the plan");
  Builder builder{plan, kernel, {}, {}};
  return it->second(builder);
}

const std::vector<std::string> &handKernelFamilies() {
  static const std::vector<std::string> families = {
      "softmax", "norm", "loss", "embedding", "dropout", "pool", "optimizer", "batch_norm",
      "resize", "attention"};
  return families;
}

std::string handKernelSource(const std::string &family) {
  using namespace handwritten;
  static const std::map<std::string, const char *(*)()> bodies = {
      {"softmax", softmaxBody}, {"norm", normBody},       {"loss", lossBody},
      {"embedding", embeddingBody}, {"dropout", dropoutBody}, {"pool", poolBody},
      {"optimizer", optimizerBody}, {"batch_norm", batchNormBody}, {"resize", resizeBody},
      {"attention", attentionBody}};
  auto it = bodies.find(family);
  return it == bodies.end() ? std::string() : commonHeader() + it->second();
}

const std::vector<std::string> &handKernelOps() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> names;
    // OpId follows the sorted mnemonics, so the names come out sorted too.
    for (const auto &[id, planner] : planners())
      names.push_back(std::string(opName(id)));
    return names;
  }();
  return ops;
}

} // namespace dlc::rt::cuda
