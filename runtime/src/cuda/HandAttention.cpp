//===- HandAttention.cpp - which flash kernel runs an attention launch ----===//
//
// train.attention and train.attention_backward (docs/TrainOps.md) on the
// hand-written flash kernels, kernels/Attention.cuh: q [B..., Sq, D], k
// [B..., Sk, D], v [B..., Sk, Dv] of one float type, lse [B..., Sq] f32,
// an optional additive mask that broadcasts to [B..., Sq, Sk], the
// attributes read as the CPU reference reads them. Head dimensions past
// DLC_ATTENTION_MAX_D (the kernels' shared-memory tiles) are refused, and
// the launch goes to the host.
//
//===----------------------------------------------------------------------===//

#include "HandKernelBuilder.h"

#include <cstdlib>

namespace dlc::rt::cuda::hand {

namespace {

/// The shapes, attributes and mask strides both kernels read, from q, k,
/// v and the optional mask; empty when they fit.
std::string attentionShape(Builder &b, int32_t q, int32_t k, int32_t v, int32_t mask) {
  const PlanKernel &kernel = b.kernel;
  const std::vector<int64_t> &qs = b.buf(q).shape, &ks = b.buf(k).shape, &vs = b.buf(v).shape;
  const size_t rank = qs.size();
  if (rank < 2 || ks.size() != rank || vs.size() != rank)
    return "expects q, k and v of one rank >= 2 ([B..., S, D])";
  DlcAttentionArgs &a = b.out.args.attention;
  a.batch = 1;
  for (size_t d = 0; d + 2 < rank; ++d) {
    if (ks[d] != qs[d] || vs[d] != qs[d])
      return "q, k and v differ in their batch dimensions";
    a.batch *= qs[d];
  }
  a.queries = qs[rank - 2], a.keys = ks[rank - 2], a.d = qs[rank - 1], a.dv = vs[rank - 1];
  if (ks[rank - 1] != a.d || vs[rank - 2] != a.keys)
    return "k is not [B..., Sk, D] or v not [B..., Sk, Dv]";
  if (a.queries == 0 || a.keys == 0 || a.d == 0 || a.dv == 0 || a.batch == 0)
    return "an empty q, k or v";
  if (a.d > DLC_ATTENTION_MAX_D || a.dv > DLC_ATTENTION_MAX_D)
    return "a head dimension past " + std::to_string(DLC_ATTENTION_MAX_D) +
           " (the flash kernels' tiles)";
  if (b.buf(k).dtype != b.buf(q).dtype || b.buf(v).dtype != b.buf(q).dtype)
    return "q, k and v are not of one element type";
  a.causal = kernel.intAttr("causal", 0) != 0;
  a.scale = kernel.floatAttr("scale", 1.0);
  a.rate = kernel.floatAttr("dropout_rate", 0.0);
  a.seed = kernel.intAttr("seed", 0);
  if (a.rate < 0 || a.rate >= 1)
    return "dropout_rate must be in [0, 1)";
  if (mask < 0)
    return "";
  // The mask's strides along [B..., Sq, Sk], 0 where it broadcasts.
  const std::vector<int64_t> &ms = b.buf(mask).shape;
  if (ms.size() > rank)
    return "a mask of higher rank than q";
  if (rank - 2 > DLC_ATTENTION_MAX_BATCH_RANK)
    return "a mask over more than " + std::to_string(DLC_ATTENTION_MAX_BATCH_RANK) +
           " batch dimensions";
  std::vector<int64_t> full(qs.begin(), qs.end() - 2), strides(rank, 0);
  full.push_back(a.queries);
  full.push_back(a.keys);
  const int64_t lead = int64_t(rank) - int64_t(ms.size());
  int64_t stride = 1;
  for (int64_t d = int64_t(rank) - 1; d >= lead; --d) {
    int64_t extent = ms[d - lead];
    if (extent != 1 && extent != full[d])
      return "the mask does not broadcast to [B..., Sq, Sk]";
    strides[d] = extent == 1 ? 0 : stride;
    stride *= extent;
  }
  a.hasMask = 1;
  a.batchRank = int64_t(rank) - 2;
  for (int64_t d = 0; d < a.batchRank; ++d)
    a.batchShape[d] = full[d], a.maskBatchStrides[d] = strides[d];
  a.maskQueryStride = strides[rank - 2];
  a.maskKeyStride = strides[rank - 1];
  return "";
}

/// A float operand of q's shape but with `last` as its last dimension.
bool shapedLike(const PlanBuffer &buffer, const PlanBuffer &q, int64_t last) {
  std::vector<int64_t> want = q.shape;
  want.back() = last;
  return buffer.shape == want;
}

/// lse: [B..., Sq] float32.
std::string lseRefusal(const PlanBuffer &lse, const PlanBuffer &q) {
  std::vector<int64_t> want(q.shape.begin(), q.shape.end() - 1);
  if (lse.dtype != DType::kF32 || lse.shape != want)
    return "expects lse as [B..., Sq] f32";
  return "";
}

/// Whether the tensor-core kernels take the launch: f16 or bf16 operands
/// (all of `operands` of q's type), head dimensions that are multiples of
/// 16 up to DLC_ATTENTION_TC_MAX_D, and DLC_CUDA_ATTENTION not "simt".
bool tensorCores(Builder &b, std::initializer_list<int32_t> operands) {
  if (const char *choice = std::getenv("DLC_CUDA_ATTENTION"); choice && std::string(choice) == "simt")
    return false;
  const DlcAttentionArgs &a = b.out.args.attention;
  const DType t = b.buf(*operands.begin()).dtype;
  if (t != DType::kF16 && t != DType::kBF16)
    return false;
  for (int32_t id : operands)
    if (b.buf(id).dtype != t)
      return false;
  for (int64_t d : {a.d, a.dv})
    if (d % 16 != 0 || d > DLC_ATTENTION_TC_MAX_D)
      return false;
  return true;
}

/// The entry point of the tensor-core kernel for q's type.
std::string tensorCoreName(Builder &b, const std::string &op, int32_t q) {
  return "dlc_hw_" + op + (b.buf(q).dtype == DType::kF16 ? "_tc_f16" : "_tc_bf16");
}

StatusOr<HandKernel> finish(Builder &b, int64_t blocks, int phases) {
  b.out.readsDropoutCounter = b.out.args.attention.rate > 0;
  b.out.phases = phases;
  StatusOr<HandKernel> hand = b.done("attention", blocks);
  if (hand.isOk())
    hand->blockSize = DLC_ATTENTION_THREADS;
  return hand;
}

} // namespace

StatusOr<HandKernel> attention(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 3, 4, 2))
    return refuse(k, "expects q, k, v, an optional mask, and o and lse");
  int32_t mask = k.inputs.size() > 3 ? k.inputs[3] : -1;
  std::string why = attentionShape(b, k.inputs[0], k.inputs[1], k.inputs[2], mask);
  const DlcAttentionArgs &a = b.out.args.attention;
  const PlanBuffer &q = b.buf(k.inputs[0]);
  if (why.empty() && !shapedLike(b.buf(k.outputs[0]), q, a.dv))
    why = "expects o as [B..., Sq, Dv]";
  if (why.empty())
    why = lseRefusal(b.buf(k.outputs[1]), q);
  if (!why.empty())
    return refuse(k, why);
  b.floating(DLC_ATTENTION_Q, k.inputs[0]);
  b.floating(DLC_ATTENTION_K, k.inputs[1]);
  b.floating(DLC_ATTENTION_V, k.inputs[2]);
  b.floating(DLC_ATTENTION_MASK, mask);
  b.floating(DLC_ATTENTION_O, k.outputs[0]);
  b.floating(DLC_ATTENTION_LSE, k.outputs[1]);
  if (!tensorCores(b, {k.inputs[0], k.inputs[1], k.inputs[2], k.outputs[0]}))
    return finish(b, a.batch * ceilDiv(a.queries, DLC_ATTENTION_QUERY_TILE), 1);
  StatusOr<HandKernel> hand =
      finish(b, a.batch * ceilDiv(a.queries, DLC_ATTENTION_TC_QUERY_TILE), 1);
  if (hand.isOk())
    hand->name = tensorCoreName(b, k.op, k.inputs[0]);
  return hand;
}

StatusOr<HandKernel> attentionBackward(Builder &b) {
  const PlanKernel &k = b.kernel;
  if (!arity(k, 6, 7, 3))
    return refuse(k, "expects q, k, v, o, do, lse, an optional mask, and dq, dk and dv");
  const std::vector<int32_t> &in = k.inputs, &out = k.outputs;
  int32_t mask = in.size() > 6 ? in[6] : -1;
  std::string why = attentionShape(b, in[0], in[1], in[2], mask);
  const DlcAttentionArgs &a = b.out.args.attention;
  const PlanBuffer &q = b.buf(in[0]);
  if (why.empty() && (!shapedLike(b.buf(in[3]), q, a.dv) || !shapedLike(b.buf(in[4]), q, a.dv)))
    why = "expects o and do as [B..., Sq, Dv]";
  if (why.empty())
    why = lseRefusal(b.buf(in[5]), q);
  if (why.empty() && (b.buf(out[0]).shape != q.shape ||
                      b.buf(out[1]).shape != b.buf(in[1]).shape ||
                      b.buf(out[2]).shape != b.buf(in[2]).shape))
    why = "expects dq, dk and dv shaped as q, k and v";
  if (!why.empty())
    return refuse(k, why);
  const int slots[] = {DLC_ATTENTION_BACKWARD_Q, DLC_ATTENTION_BACKWARD_K,
                       DLC_ATTENTION_BACKWARD_V, DLC_ATTENTION_BACKWARD_O,
                       DLC_ATTENTION_BACKWARD_DO, DLC_ATTENTION_BACKWARD_LSE};
  for (int i = 0; i < 6; ++i)
    b.floating(slots[i], in[i]);
  b.floating(DLC_ATTENTION_BACKWARD_MASK, mask);
  b.floating(DLC_ATTENTION_BACKWARD_DQ, out[0]);
  b.floating(DLC_ATTENTION_BACKWARD_DK, out[1]);
  b.floating(DLC_ATTENTION_BACKWARD_DV, out[2]);
  // Phase 0 runs a block per key tile, phase 1 one per query tile.
  if (tensorCores(b, {in[0], in[1], in[2], in[3], in[4], out[0], out[1], out[2]})) {
    StatusOr<HandKernel> hand =
        finish(b,
               a.batch * std::max(ceilDiv(a.keys, DLC_ATTENTION_TC_KEY_TILE),
                                  ceilDiv(a.queries, DLC_ATTENTION_TC_BACKWARD_QUERY_TILE)),
               2);
    if (hand.isOk())
      hand->name = tensorCoreName(b, k.op, in[0]);
    return hand;
  }
  int64_t blocks = a.batch * std::max(ceilDiv(a.keys, DLC_ATTENTION_BACKWARD_KEY_TILE),
                                      ceilDiv(a.queries, DLC_ATTENTION_BACKWARD_DQ_QUERY_TILE));
  return finish(b, blocks, 2);
}

} // namespace dlc::rt::cuda::hand
