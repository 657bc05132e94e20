//===- HandKernels.cpp - which hand-written kernel runs a plan kernel -----===//
//
// For each op: the operand counts and element types the kernel handles,
// the attributes read exactly as the CPU reference reads them (same names,
// same defaults, same attribute types), the shapes folded into the integer
// parameters, and the grid. Anything else is refused with a reason, and
// the executor keeps such a kernel on the host. An op with more operands
// than DlcHandArgs' ten pointers (loss_scale_status) gets an operand table
// (HandKernel::table).
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/cuda/HandKernels.h"

#include "dlc/runtime/cpu/Spatial.h"
#include "handwritten/Sources.h"

#include <algorithm>
#include <functional>
#include <map>

namespace dlc::rt::cuda {

namespace {

constexpr int kBlock = 256;
/// The most blocks a kernel that combines per-block partials uses (its
/// scratch grows with them).
constexpr int64_t kCombiningBlocks = 256;
/// Blocks that fill an H100 a few times over (132 multiprocessors): a
/// kernel that splits one unit of work (a channel) over blocks aims here.
constexpr int64_t kSpreadBlocks = 512;
/// max_pool2d_backward's input tile (DLC_HW_POOL_TILE_H, DLC_HW_POOL_TILE_W),
/// and under NHWC its pixels and channels (DLC_HW_POOL_TILE_NHWC_*).
constexpr int64_t kPoolTileH = 16, kPoolTileW = 32;
constexpr int64_t kPoolTileNhwcH = 4, kPoolTileNhwcW = 8, kPoolTileNhwcC = 32;
/// Table rows one embedding_backward block owns (DLC_HW_EMBEDDING_ROWS).
constexpr int64_t kEmbeddingRowsPerBlock = 32;
constexpr int kMaxRank = 6; // softmax's mask broadcast

template <typename T> const T *findAttr(const PlanKernel &k, const std::string &name) {
  auto it = k.attrs.find(name);
  return it == k.attrs.end() ? nullptr : std::get_if<T>(&it->second);
}
int64_t getInt(const PlanKernel &k, const std::string &name, int64_t fallback) {
  const int64_t *v = findAttr<int64_t>(k, name);
  return v ? *v : fallback;
}
double getFloat(const PlanKernel &k, const std::string &name, double fallback) {
  const double *v = findAttr<double>(k, name);
  return v ? *v : fallback;
}
std::vector<int64_t> getInts(const PlanKernel &k, const std::string &name,
                             std::vector<int64_t> fallback) {
  const std::vector<int64_t> *v = findAttr<std::vector<int64_t>>(k, name);
  return v ? *v : fallback;
}

Status refuse(const PlanKernel &k, const std::string &why) {
  return Status(StatusCode::kInvalidArgument, k.op + ": " + why);
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Collects the launch's buffers and checks their element types.
struct Builder {
  const Plan &plan;
  const PlanKernel &kernel;
  HandKernel out;
  std::string error;

  const PlanBuffer &buf(int32_t id) const { return plan.buffers[id]; }
  /// A float buffer's element type code (0 f32, 1 f16, 2 bf16).
  int32_t floatType(int32_t id) {
    switch (buf(id).dtype) {
    case DType::kF32: return 0;
    case DType::kF16: return 1;
    case DType::kBF16: return 2;
    default:
      error = "buffer '" + buf(id).name + "' is " + dtypeName(buf(id).dtype) +
              ", not a float type";
      return 0;
    }
  }
  /// A float operand (f32, f16 or bf16), or -1 for an absent optional one.
  void floating(int32_t id) {
    int n = static_cast<int>(out.buffers.size());
    out.buffers.push_back(id);
    if (id >= 0 && n < HandKernelArgs::kPointers) // done() refuses more
      out.args.t[n] = floatType(id);
  }
  /// The next p slot holds the operand table; returns it.
  int tableSlot() {
    out.tableSlot = static_cast<int>(out.buffers.size());
    out.buffers.push_back(-1);
    return out.tableSlot;
  }
  /// The next p slot holds `partials` doubles of scratch for the blocks'
  /// partial results, after dlc_hw_last_block's 16-byte counter.
  void scratch(int64_t partials) { scratchBytes(16 + partials * int64_t(sizeof(double))); }
  /// The next p slot holds `bytes` of scratch laid out by the kernel.
  void scratchBytes(int64_t bytes) {
    out.scratchSlot = static_cast<int>(out.buffers.size());
    out.buffers.push_back(-1);
    out.scratchBytes = bytes;
  }
  /// A float operand in the operand table.
  void tabledFloating(int32_t id) {
    out.tableBuffers.push_back(id);
    HandOperand entry;
    entry.n = buf(id).numElements();
    entry.t = floatType(id);
    out.table.push_back(entry);
  }
  /// An integer operand (indices, labels): int32 or int64.
  void integer(int32_t id) {
    int n = static_cast<int>(out.buffers.size());
    out.buffers.push_back(id);
    if (n >= HandKernelArgs::kPointers) // done() refuses it
      return;
    if (buf(id).dtype == DType::kI32)
      out.args.t[n] = 3;
    else if (buf(id).dtype == DType::kI64)
      out.args.t[n] = 4;
    else
      error = "buffer '" + buf(id).name + "' is " + dtypeName(buf(id).dtype) +
              ", not int32 or int64";
  }
  StatusOr<HandKernel> done(const std::string &family, int64_t blocks) {
    if (out.buffers.size() > size_t(HandKernelArgs::kPointers))
      error = std::to_string(out.buffers.size()) + " pointer operands, more than DlcHandArgs' " +
              std::to_string(HandKernelArgs::kPointers);
    if (!error.empty())
      return refuse(kernel, error);
    out.family = family;
    out.name = "dlc_hw_" + kernel.op;
    out.blockSize = kBlock;
    out.blocks = std::max<int64_t>(blocks, 1);
    return out;
  }
};

using Planner = std::function<StatusOr<HandKernel>(Builder &)>;

bool arity(const PlanKernel &k, size_t inMin, size_t inMax, size_t outs) {
  return k.inputs.size() >= inMin && k.inputs.size() <= inMax && k.outputs.size() == outs;
}

/// (outer, n, inner) around `axis` of `shape`.
void splitAround(const std::vector<int64_t> &shape, int64_t axis, int64_t &outer, int64_t &n,
                 int64_t &inner) {
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
  int64_t axis = getInt(k, "axis", -1);
  axis = axis < 0 ? axis + rank : axis;
  if (axis < 0 || axis >= rank)
    return refuse(k, "axis out of range");
  bool causal = getInt(k, "causal", 0);
  if (causal && (axis != rank - 1 || rank < 2))
    return refuse(k, "causal masking needs the last axis of a rank >= 2 input");
  HandKernelArgs &a = b.out.args;
  splitAround(shape, axis, a.i[0], a.i[1], a.i[2]);
  a.i[3] = causal;
  a.i[4] = causal ? shape[rank - 2] : 0;
  a.i[5] = causal ? shape[rank - 1] : 0;
  a.f[0] = getFloat(k, "scale", 1.0);
  b.floating(k.inputs[0]);
  b.floating(k.inputs.size() > 1 ? k.inputs[1] : -1);
  b.floating(k.outputs[0]);
  if (k.inputs.size() > 1) {
    const std::vector<int64_t> &mask = b.buf(k.inputs[1]).shape;
    if (rank > kMaxRank || mask.size() > shape.size())
      return refuse(k, "a mask broadcast over more than " + std::to_string(kMaxRank) +
                           " dimensions, or of higher rank than the input");
    a.i[6] = 1;
    a.i[7] = rank;
    int64_t stride = 1, lead = rank - static_cast<int64_t>(mask.size());
    for (int64_t d = rank - 1; d >= 0; --d) {
      a.i[8 + d] = shape[d];
      int64_t md = d - lead;
      bool broadcast = md < 0 || mask[md] == 1;
      if (md >= 0 && mask[md] != 1 && mask[md] != shape[d])
        return refuse(k, "the mask does not broadcast to the input");
      a.i[14 + d] = broadcast ? 0 : stride;
      if (md >= 0)
        stride *= mask[md];
    }
  }
  a.i[20] = axis;
  return lineBlocks(b.done("softmax", a.i[0] * a.i[2]), a.i[1]);
}

StatusOr<HandKernel> softmaxBackward(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 2, 2, 1))
    return refuse(k, "expects dy, y and one output");
  const std::vector<int64_t> &shape = b.buf(k.inputs[0]).shape;
  int64_t rank = static_cast<int64_t>(shape.size()), axis = getInt(k, "axis", -1);
  axis = axis < 0 ? axis + rank : axis;
  if (axis < 0 || axis >= rank)
    return refuse(k, "axis out of range");
  HandKernelArgs &a = b.out.args;
  splitAround(shape, axis, a.i[0], a.i[1], a.i[2]);
  a.f[0] = getFloat(k, "scale", 1.0);
  b.floating(k.inputs[0]);
  b.floating(k.inputs[1]);
  b.floating(k.outputs[0]);
  return lineBlocks(b.done("softmax", a.i[0] * a.i[2]), a.i[1]);
}

StatusOr<HandKernel> layerNorm(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (k.inputs.size() != 3 || k.outputs.empty())
    return refuse(k, "expects x, gamma, beta and an output");
  const PlanBuffer &x = b.buf(k.inputs[0]);
  if (x.shape.empty() || x.shape.back() == 0)
    return refuse(k, "a scalar or empty input");
  HandKernelArgs &a = b.out.args;
  a.i[1] = x.shape.back();
  a.i[0] = x.numElements() / a.i[1];
  a.f[0] = getFloat(k, "epsilon", 1e-5);
  for (int32_t id : {k.inputs[0], k.inputs[1], k.inputs[2], k.outputs[0]})
    b.floating(id);
  return b.done("norm", a.i[0]);
}

StatusOr<HandKernel> layerNormBackward(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (k.inputs.size() != 3 || k.outputs.size() != 3)
    return refuse(k, "expects dy, x, gamma and three outputs");
  const PlanBuffer &x = b.buf(k.inputs[1]);
  if (x.shape.empty() || x.shape.back() == 0)
    return refuse(k, "a scalar or empty input");
  HandKernelArgs &a = b.out.args;
  a.i[1] = x.shape.back();
  a.i[0] = x.numElements() / a.i[1];
  a.f[0] = getFloat(k, "epsilon", 1e-5);
  for (int32_t id : {k.inputs[0], k.inputs[1], k.inputs[2], k.outputs[0], k.outputs[1],
                     k.outputs[2]})
    b.floating(id);
  // Each block keeps its rows' gamma and beta gradient partials (2 d
  // doubles); 256 blocks hold 3 MiB of them at BERT-base's d = 768.
  int64_t blocks = std::min<int64_t>(a.i[0], kCombiningBlocks);
  b.scratch(2 * a.i[1] * blocks);
  return b.done("norm", blocks);
}

/// (outer, classes, inner, ignore_index) as crossEntropyShape reads them.
Status crossEntropyShape(Builder &b, int32_t logits, int32_t labels) {
  const PlanKernel &k = b.kernel;
  const std::vector<int64_t> &shape = b.buf(logits).shape;
  int64_t rank = static_cast<int64_t>(shape.size()), axis = getInt(k, "class_axis", 1);
  axis = axis < 0 ? axis + rank : axis;
  if (axis < 0 || axis >= rank)
    return refuse(k, "class_axis out of range");
  HandKernelArgs &a = b.out.args;
  splitAround(shape, axis, a.i[0], a.i[1], a.i[2]);
  a.i[3] = getInt(k, "ignore_index", -100);
  if (b.buf(labels).numElements() != a.i[0] * a.i[2])
    return refuse(k, "labels do not hold one class per position");
  return Status::ok();
}

StatusOr<HandKernel> crossEntropy(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 2, 2, 1))
    return refuse(k, "expects logits, labels and one output");
  if (Status s = crossEntropyShape(b, k.inputs[0], k.inputs[1]); !s.isOk())
    return s;
  b.floating(k.inputs[0]);
  b.integer(k.inputs[1]);
  b.floating(k.outputs[0]);
  // Each block's (sum, count, bad label) over its positions.
  int64_t blocks = std::min<int64_t>(b.out.args.i[0] * b.out.args.i[2], kCombiningBlocks);
  b.scratch(3 * blocks);
  return b.done("loss", blocks);
}

StatusOr<HandKernel> crossEntropyBackward(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 3, 3, 1))
    return refuse(k, "expects dloss, logits, labels and one output");
  if (Status s = crossEntropyShape(b, k.inputs[1], k.inputs[2]); !s.isOk())
    return s;
  b.floating(k.inputs[0]);
  b.floating(k.inputs[1]);
  b.integer(k.inputs[2]);
  b.floating(k.outputs[0]);
  return b.done("loss", b.out.args.i[0] * b.out.args.i[2]);
}

StatusOr<HandKernel> embedding(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 2, 2, 1) || b.buf(k.inputs[0]).shape.size() != 2)
    return refuse(k, "expects a 2-d table, indices and one output");
  HandKernelArgs &a = b.out.args;
  a.i[0] = b.buf(k.inputs[0]).shape[0];
  a.i[1] = b.buf(k.inputs[0]).shape[1];
  a.i[2] = b.buf(k.inputs[1]).numElements();
  b.floating(k.inputs[0]);
  b.integer(k.inputs[1]);
  b.floating(k.outputs[0]);
  return b.done("embedding", ceilDiv(a.i[1] * a.i[2], kBlock));
}

StatusOr<HandKernel> embeddingBackward(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 2, 2, 1) || b.buf(k.outputs[0]).shape.size() != 2)
    return refuse(k, "expects dy, indices and one 2-d output");
  HandKernelArgs &a = b.out.args;
  a.i[0] = b.buf(k.outputs[0]).shape[0];
  a.i[1] = b.buf(k.outputs[0]).shape[1];
  a.i[2] = b.buf(k.inputs[1]).numElements();
  b.floating(k.inputs[0]);
  b.integer(k.inputs[1]);
  b.floating(k.outputs[0]);
  // A small table (BERT's 2-row token types, its 512 positions) has few
  // row groups to spread over the GPU: the indices are split too, each
  // split summing its range into float partials that the group's last
  // split adds in order. Splits hold 16 MiB of partials at most; a large
  // table keeps one split, whose sums are the CPU's bit for bit.
  int64_t groups = ceilDiv(a.i[0], kEmbeddingRowsPerBlock);
  int64_t splits = std::clamp<int64_t>(
      std::min({kCombiningBlocks / groups, ceilDiv(a.i[2], int64_t(kBlock)),
                (int64_t(4) << 20) / std::max<int64_t>(a.i[0] * a.i[1], 1)}),
      1, 64);
  a.i[3] = splits;
  if (splits > 1) // a counter per row group (16-byte aligned), then the partials
    b.scratchBytes(ceilDiv(groups * int64_t(sizeof(unsigned)), int64_t(16)) * 16 +
                   splits * a.i[0] * a.i[1] * int64_t(sizeof(float)));
  return b.done("embedding", groups * splits);
}

StatusOr<HandKernel> dropout(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 1, 1, 1))
    return refuse(k, "expects x and one output");
  double rate = getFloat(k, "rate", 0);
  if (rate < 0 || rate >= 1)
    return refuse(k, "rate must be in [0, 1)");
  HandKernelArgs &a = b.out.args;
  a.i[0] = b.buf(k.outputs[0]).numElements();
  a.i[1] = getInt(k, "seed", 0);
  a.f[0] = rate;
  b.floating(k.inputs[0]);
  b.floating(k.outputs[0]);
  return b.done("dropout", ceilDiv(a.i[0], kBlock));
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
  std::vector<int64_t> ks = getInts(k, "kernel_size", {1, 1}), s = getInts(k, "stride", {1, 1}),
                       pad = getInts(k, "padding", {0, 0});
  if (ks.size() != 2 || s.size() != 2 || pad.size() != 2 || s[0] <= 0 || s[1] <= 0)
    return refuse(k, "kernel_size, stride and padding must be pairs, strides positive");
  bool ceilMode = getInt(k, "ceil_mode", 0);
  HandKernelArgs &a = b.out.args;
  for (int d = 0; d < 4; ++d)
    a.i[d] = in[d];
  a.i[4] = ks[0], a.i[5] = ks[1], a.i[6] = s[0], a.i[7] = s[1], a.i[8] = pad[0],
  a.i[9] = pad[1];
  a.i[10] = getInt(k, "count_include_pad", 1);
  a.i[11] = cpu::poolOutputSize(in[2], ks[0], s[0], pad[0], ceilMode);
  a.i[12] = cpu::poolOutputSize(in[3], ks[1], s[1], pad[1], ceilMode);
  if (a.i[11] <= 0 || a.i[12] <= 0)
    return refuse(k, "an empty output");
  return Status::ok();
}

StatusOr<HandKernel> pool(Builder &b) {
  const PlanKernel &k = b.kernel;
  bool backward = k.op.size() > 9 && k.op.substr(k.op.size() - 9) == "_backward";
  bool max = k.op.rfind("max", 0) == 0;
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
  b.out.args.i[13] = *nhwc;
  for (int32_t id : k.inputs)
    b.floating(id);
  b.floating(k.outputs[0]);
  const HandKernelArgs &a = b.out.args;
  if (backward && max) // one block per input tile (DLC_HW_POOL_TILE_*)
    return b.done("pool", *nhwc ? in[0] * ceilDiv(in[1], kPoolTileNhwcC) *
                                      ceilDiv(in[2], kPoolTileNhwcH) *
                                      ceilDiv(in[3], kPoolTileNhwcW)
                                : in[0] * in[1] * ceilDiv(in[2], kPoolTileH) *
                                      ceilDiv(in[3], kPoolTileW));
  int64_t work = backward ? in[0] * in[1] * in[2] * in[3] : in[0] * in[1] * a.i[11] * a.i[12];
  return b.done("pool", ceilDiv(work, kBlock));
}

StatusOr<HandKernel> sgdUpdate(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 3, 4, 2))
    return refuse(k, "expects param, grad, momentum, an optional loss-scale status and two "
                     "outputs");
  HandKernelArgs &a = b.out.args;
  a.i[0] = b.buf(k.inputs[0]).numElements();
  a.i[1] = k.inputs.size() > 3;
  a.i[2] = getInt(k, "nesterov", 0);
  a.f[0] = getFloat(k, "lr", 0), a.f[1] = getFloat(k, "momentum", 0),
  a.f[2] = getFloat(k, "weight_decay", 0);
  for (int i = 0; i < 3; ++i)
    b.floating(k.inputs[i]);
  b.floating(k.inputs.size() > 3 ? k.inputs[3] : -1);
  b.floating(k.outputs[0]);
  b.floating(k.outputs[1]);
  return b.done("optimizer", ceilDiv(a.i[0], kBlock));
}

StatusOr<HandKernel> adamwUpdate(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 4, 5, 3))
    return refuse(k, "expects param, grad, m, v, an optional loss-scale status and three "
                     "outputs");
  HandKernelArgs &a = b.out.args;
  a.i[0] = b.buf(k.inputs[0]).numElements();
  a.i[1] = k.inputs.size() > 4;
  a.f[0] = getFloat(k, "lr", 0), a.f[1] = getFloat(k, "beta1", 0.9),
  a.f[2] = getFloat(k, "beta2", 0.999), a.f[3] = getFloat(k, "epsilon", 1e-8),
  a.f[4] = getFloat(k, "weight_decay", 0.01);
  for (int i = 0; i < 4; ++i)
    b.floating(k.inputs[i]);
  b.floating(k.inputs.size() > 4 ? k.inputs[4] : -1);
  for (int i = 0; i < 3; ++i)
    b.floating(k.outputs[i]);
  return b.done("optimizer", ceilDiv(a.i[0], kBlock));
}

StatusOr<HandKernel> updateLossScale(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 3, 3, 2) || b.buf(k.inputs[2]).numElements() < 2)
    return refuse(k, "expects scale, good steps, a 2-element status and two outputs");
  HandKernelArgs &a = b.out.args;
  a.i[0] = getInt(k, "growth_interval", 2000);
  a.f[0] = getFloat(k, "backoff_factor", 0.5);
  a.f[1] = getFloat(k, "growth_factor", 2.0);
  for (int32_t id : {k.inputs[0], k.inputs[1], k.inputs[2], k.outputs[0], k.outputs[1]})
    b.floating(id);
  return b.done("optimizer", 1);
}

StatusOr<HandKernel> lossScaleStatus(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (k.inputs.empty() || k.outputs.size() != 1 || b.buf(k.inputs[0]).numElements() < 1 ||
      b.buf(k.outputs[0]).numElements() < 2)
    return refuse(k, "expects the scale, the gradients and one 2-element status");
  HandKernelArgs &a = b.out.args;
  b.floating(k.inputs[0]);
  b.floating(k.outputs[0]);
  b.tableSlot();
  for (size_t g = 1; g < k.inputs.size(); ++g)
    b.tabledFloating(k.inputs[g]);
  a.i[0] = static_cast<int64_t>(k.inputs.size()) - 1;
  int64_t largest = 0;
  for (size_t g = 1; g < k.inputs.size(); ++g)
    largest = std::max(largest, b.buf(k.inputs[g]).numElements());
  // Each block's overflow flag.
  int64_t blocks = std::clamp<int64_t>(ceilDiv(largest, kBlock), 1, kCombiningBlocks);
  b.scratch(blocks);
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
  HandKernelArgs &a = b.out.args;
  // [n, channels, spatial] as stored: NCHW, or NHWC's [n, spatial, channels].
  a.i[0] = shape[0], a.i[1] = *nhwc ? shape[3] : shape[1];
  a.i[4] = *nhwc;
  if (a.i[0] * a.i[1] == 0 || b.buf(x).numElements() == 0)
    return refuse(k, "an empty input");
  a.i[2] = b.buf(x).numElements() / (a.i[0] * a.i[1]);
  a.f[0] = getFloat(k, "epsilon", 1e-5);
  for (int32_t id : perChannel)
    if (b.buf(id).numElements() != a.i[1])
      return refuse(k, "buffer '" + b.buf(id).name + "' does not hold one value per channel");
  for (int32_t id : likeX)
    if (b.buf(id).numElements() != b.buf(x).numElements())
      return refuse(k, "buffer '" + b.buf(id).name + "' is not the input's size");
  return Status::ok();
}

/// Splits each channel over args.i[3] blocks (enough blocks to fill a GPU,
/// at least 4096 elements each) whose per-phase partials (4 doubles per
/// channel and split) live in scratch.
StatusOr<HandKernel> batchNormPhases(Builder &b, int phases) {
  HandKernelArgs &a = b.out.args;
  const int64_t channels = a.i[1], count = a.i[0] * a.i[2];
  const int64_t splits =
      std::clamp<int64_t>(std::min(ceilDiv(kSpreadBlocks, channels), ceilDiv(count, 4096)), 1,
                          kSpreadBlocks);
  a.i[3] = splits;
  b.scratch(4 * channels * splits);
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
  b.out.args.f[1] = getFloat(k, "momentum", 0.1);
  for (int32_t id : {in[0], in[1], in[2], in[3], in[4], out[0], out[1], out[2]})
    b.floating(id);
  return batchNormPhases(b, 3);
}

StatusOr<HandKernel> batchNormBackward(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 3, 3, 3))
    return refuse(k, "expects dy, x, scale and three outputs");
  const std::vector<int32_t> &in = k.inputs, &out = k.outputs;
  if (Status s = batchNormShape(b, in[1], {in[2], out[1], out[2]}, {in[0], out[0]});
      !s.isOk())
    return s;
  for (int32_t id : {in[0], in[1], in[2], out[0], out[1], out[2]})
    b.floating(id);
  return batchNormPhases(b, 4);
}

/// resizeParams' geometry: the [n, c, inH, inW] input and [n, c, outH,
/// outW] output (the forward's; the backward's are the other way round),
/// stored NCHW or, with layout = "NHWC", channels last.
StatusOr<HandKernel> resize(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 1, 1, 1))
    return refuse(k, "expects one input and one output");
  bool backward = k.op == "resize_bilinear_backward";
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
  HandKernelArgs &a = b.out.args;
  a.i[0] = in[0], a.i[1] = in[1], a.i[2] = in[2], a.i[3] = in[3], a.i[4] = out[2],
  a.i[5] = out[3];
  a.i[6] = getInt(k, "align_corners", 0) != 0;
  a.i[7] = *nhwc;
  b.floating(k.inputs[0]);
  b.floating(k.outputs[0]);
  int64_t work = in[0] * in[1] * (backward ? in[2] * in[3] : out[2] * out[3]);
  return b.done("resize", ceilDiv(work, kBlock));
}

const std::map<std::string, Planner> &planners() {
  static const std::map<std::string, Planner> table = {
      {"softmax", softmax},
      {"softmax_backward", softmaxBackward},
      {"layer_norm", layerNorm},
      {"layer_norm_backward", layerNormBackward},
      {"softmax_cross_entropy", crossEntropy},
      {"softmax_cross_entropy_backward", crossEntropyBackward},
      {"embedding", embedding},
      {"embedding_backward", embeddingBackward},
      {"dropout", dropout},
      {"max_pool2d", pool},
      {"max_pool2d_backward", pool},
      {"avg_pool2d", pool},
      {"avg_pool2d_backward", pool},
      {"sgd_update", sgdUpdate},
      {"adamw_update", adamwUpdate},
      {"update_loss_scale", updateLossScale},
      {"loss_scale_status", lossScaleStatus},
      {"batch_norm", batchNorm},
      {"batch_norm_backward", batchNormBackward},
      {"resize_bilinear", resize},
      {"resize_bilinear_backward", resize},
  };
  return table;
}

} // namespace

StatusOr<HandKernel> planHandKernel(const Plan &plan, const PlanKernel &kernel) {
  auto it = planners().find(kernel.op);
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
      "resize"};
  return families;
}

std::string handKernelSource(const std::string &family) {
  using namespace handwritten;
  static const std::map<std::string, const char *(*)()> bodies = {
      {"softmax", softmaxBody}, {"norm", normBody},       {"loss", lossBody},
      {"embedding", embeddingBody}, {"dropout", dropoutBody}, {"pool", poolBody},
      {"optimizer", optimizerBody}, {"batch_norm", batchNormBody}, {"resize", resizeBody}};
  auto it = bodies.find(family);
  return it == bodies.end() ? std::string() : commonHeader() + it->second();
}

const std::vector<std::string> &handKernelOps() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> names;
    for (const auto &[name, planner] : planners())
      names.push_back(name);
    return names;
  }();
  return ops;
}

} // namespace dlc::rt::cuda
