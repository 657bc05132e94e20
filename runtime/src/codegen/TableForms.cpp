//===- TableForms.cpp - kernels that walk a table of segments -------------===//
//
// The table forms: a horizontal group of optimizer updates, and one of
// independent casts (KernelCodegen.h). Their source does not depend on the
// table, which the launcher packs (TablePacking.cpp) and uploads, so every
// launch of a form shares one kernel.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"
#include "KernelTargets.h"
#include "dlc/runtime/codegen/KernelPrelude.h"

#include <algorithm>
#include <map>

namespace dlc::rt::codegen {

namespace {

/// The optimizer kernel's table and updates, which the target's kernel
/// (TargetWriter::optimizerKernel) calls per segment.
const char *const kOptimizerParts = R"cuda(// The table the launcher uploads: one segment per parameter, in the
// layout of packOptimizerTable (112 bytes). `status`, under mixed
// precision, is the loss scale's {gradient multiplier, skip flag}.
// `grad` is f32, or f16 / bf16 (grad_dtype 1 / 2) when the group widens a
// half-precision gradient to its float32 master's type on the fly.
struct DlcSegment {
  float *new_param, *new_state1, *new_state2;
  const float *param;
  const void *grad;
  const float *state1, *state2, *status;
  long long n;
  float lr, momentum, weight_decay, beta1, beta2, epsilon;
  int adamw, nesterov, grad_dtype, pad;
};
static_assert(sizeof(DlcSegment) == 112, "DlcSegment must match packOptimizerTable");

// A gradient element widened to float: f32, or f16 / bf16 bits (grad_dtype
// 1 / 2). The dtype is a template parameter of each update below, so that
// no loop branches on it per element.
template <int kDtype> DLC_DEVICE float dlc_grad_at(const void *grad, long long i) {
  if (kDtype == 1) return dlc_f16_bits_to_float(((const unsigned short *)grad)[i]);
  if (kDtype == 2) return dlc_bf16_bits_to_float(((const unsigned short *)grad)[i]);
  return ((const float *)grad)[i];
}

// Each update covers elements begin, begin + inc, ... below end of one
// segment. An update may be in place (new_param the param), but each
// element is read and written by its own iteration only: DLC_IVDEP says so
// to the host compiler, which otherwise keeps these loops scalar.
DLC_DEVICE void dlc_keep_range(const DlcSegment &seg, long long begin, long long end,
                               long long inc) {
  DLC_IVDEP
  for (long long i = begin; i < end; i += inc) {
    seg.new_param[i] = seg.param[i];
    seg.new_state1[i] = seg.state1[i];
  }
  if (seg.adamw) {
    DLC_IVDEP
    for (long long i = begin; i < end; i += inc) seg.new_state2[i] = seg.state2[i];
  }
}

template <int kDtype>
DLC_DEVICE void dlc_adamw_range(const DlcSegment &seg, long long begin, long long end,
                                long long inc, float factor, float c1, float rc2) {
  DLC_IVDEP
  for (long long i = begin; i < end; i += inc) {
    const float g = dlc_grad_at<kDtype>(seg.grad, i) * factor;
    const float p = seg.param[i] * (1.f - seg.lr * seg.weight_decay);
    const float m = seg.beta1 * seg.state1[i] + (1.f - seg.beta1) * g;
    const float v = seg.beta2 * seg.state2[i] + (1.f - seg.beta2) * g * g;
    const float denom = sqrtf(v) * rc2 + seg.epsilon;
    seg.new_state1[i] = m;
    seg.new_state2[i] = v;
    seg.new_param[i] = p - seg.lr / c1 * m / denom;
  }
}

template <int kDtype>
DLC_DEVICE void dlc_sgd_range(const DlcSegment &seg, long long begin, long long end,
                              long long inc, float factor, long long step) {
  DLC_IVDEP
  for (long long i = begin; i < end; i += inc) {
    const float p = seg.param[i];
    const float g = dlc_grad_at<kDtype>(seg.grad, i) * factor + seg.weight_decay * p;
    float m = seg.state1[i], d = g;
    if (seg.momentum != 0.f) {
      m = step == 0 ? g : seg.momentum * m + g;
      d = seg.nesterov ? g + seg.momentum * m : m;
    }
    seg.new_state1[i] = m;
    seg.new_param[i] = p - seg.lr * d;
  }
}

)cuda";

/// The table forms' source, from `body` as the target runs it: it does not
/// depend on the table, so every launch of the form in every model shares
/// one kernel (the header still lists this launch's ops).
void finishTableKernel(GeneratedKernel &g, const Plan &plan, const Launch &launch,
                       const std::string &body, const char *form, const char *comment,
                       KernelTarget target) {
  Dataflow none;
  Emitter e(plan, none, target);
  g.blockSize = kBlockSize;
  Launch generic = launch;
  generic.kernels.clear();
  // Half-precision values handled as their bits and widened as the CPU
  // widens them (Half.h), so that a table kernel also runs as plain C++ on
  // the host (no cuda_fp16.h there) and matches the CPU bit for bit.
  finish(g, plan, generic, e,
         std::string(halfToFloatText()) + "\n" + body, form, target, comment);
}

/// The horizontal cast kernel's element types and table, which both
/// targets' loops (castTableKernel) read.
const char *const kCastTypes = R"cuda(
// The element types, by their storage and their widening to float.
struct DlcF32 {
  typedef float T;
  static DLC_DEVICE float widen(T v) { return v; }
  static DLC_DEVICE T narrow(float v) { return v; }
};
struct DlcF16 {
  typedef unsigned short T;
  static DLC_DEVICE float widen(T v) { return dlc_f16_bits_to_float(v); }
  static DLC_DEVICE T narrow(float v) { return dlc_float_to_f16_bits(v); }
};
struct DlcBF16 {
  typedef unsigned short T;
  static DLC_DEVICE float widen(T v) { return dlc_bf16_bits_to_float(v); }
  static DLC_DEVICE T narrow(float v) { return dlc_float_to_bf16_bits(v); }
};

// The table the launcher uploads: one segment per cast, in the layout of
// packCastTable (48 bytes). Each cast is cut into vectors of 16 bytes of
// its narrower type; [begin, end) numbers its vectors among all segments'.
struct DlcCastSegment {
  const void *in;
  void *out;
  long long n, begin, end;
  int from, to; // 0 f32, 1 f16, 2 bf16
};
static_assert(sizeof(DlcCastSegment) == 48, "DlcCastSegment must match packCastTable");

// FN<From, To>(...) for the segment's pair of types, by their codes above:
// each target's loop (castTableKernel) dispatches with it.
#define DLC_CAST_DISPATCH(seg, FN, ...)                          \
  switch ((seg).from * 3 + (seg).to) {                           \
  case 0: FN<DlcF32, DlcF32>(__VA_ARGS__); break;                \
  case 1: FN<DlcF32, DlcF16>(__VA_ARGS__); break;                \
  case 2: FN<DlcF32, DlcBF16>(__VA_ARGS__); break;               \
  case 3: FN<DlcF16, DlcF32>(__VA_ARGS__); break;                \
  case 4: FN<DlcF16, DlcF16>(__VA_ARGS__); break;                \
  case 5: FN<DlcF16, DlcBF16>(__VA_ARGS__); break;               \
  case 6: FN<DlcBF16, DlcF32>(__VA_ARGS__); break;               \
  case 7: FN<DlcBF16, DlcF16>(__VA_ARGS__); break;               \
  case 8: FN<DlcBF16, DlcBF16>(__VA_ARGS__); break;              \
  }
)cuda";

/// The horizontal cast kernel: the rounding to half types, the element
/// types and the table, then the target's loop over the table.
std::string castBody(KernelTarget target) {
  const TargetWriter &w = targetWriter(target);
  return w.castTableIncludes() + floatToHalfText() + kCastTypes + w.castTableKernel();
}

} // namespace

StatusOr<GeneratedKernel> generateOptimizer(const Plan &plan, const Launch &launch,
                                            KernelTarget target) {
  GeneratedKernel g;
  g.form = KernelForm::kOptimizer;
  // Casts in the group widen a half-precision gradient for one update:
  // the update reads the half value and widens it itself.
  std::map<int32_t, int32_t> widened; // cast output -> its half input
  for (size_t k : launch.kernels)
    if (const PlanKernel &kernel = plan.kernels[k]; kernel.id == OpId::kCast) {
      const PlanBuffer &in = plan.buffers[kernel.inputs[0]];
      if ((in.dtype != DType::kF16 && in.dtype != DType::kBF16) ||
          plan.buffers[kernel.outputs[0]].dtype != DType::kF32)
        return Status(StatusCode::kInvalidArgument,
                      "a cast of '" + in.name + "' (" + typeText(in) +
                          ") in an optimizer group: only half-to-f32 gradient casts fuse");
      widened[kernel.outputs[0]] = kernel.inputs[0];
    }
  for (size_t k : launch.kernels) {
    const PlanKernel &kernel = plan.kernels[k];
    if (kernel.id == OpId::kCast)
      continue;
    OptimizerSegment seg;
    seg.adamw = kernel.id == OpId::kAdamWUpdate;
    size_t ins = seg.adamw ? 4 : 3, outs = seg.adamw ? 3 : 2;
    // An optional last operand: the loss scale's status (mixed precision).
    bool scaled = kernel.inputs.size() == ins + 1;
    if ((kernel.inputs.size() != ins && !scaled) || kernel.outputs.size() != outs)
      return Status(StatusCode::kInvalidArgument,
                    kernel.op + " with " + std::to_string(kernel.inputs.size()) +
                        " operands and " + std::to_string(kernel.outputs.size()) + " results");
    if (scaled) {
      seg.lossScaleStatus = kernel.inputs[ins];
      const PlanBuffer &status = plan.buffers[seg.lossScaleStatus];
      if (status.dtype != DType::kF32 || status.numElements() != 2)
        return Status(StatusCode::kInvalidArgument,
                      kernel.op + " with a loss-scale status '" + status.name + "' of type " +
                          typeText(status) + ", not f32[2]");
    }
    for (size_t j = 0; j < ins; ++j)
      if (int32_t id = kernel.inputs[j];
          plan.buffers[id].dtype != DType::kF32 ||
          plan.buffers[id].numElements() != plan.buffers[kernel.inputs[0]].numElements())
        return Status(StatusCode::kInvalidArgument,
                      kernel.op + " of '" + plan.buffers[id].name + "' (" +
                          typeText(plan.buffers[id]) +
                          "): the optimizer kernel updates f32 tensors of one size");
    seg.param = kernel.inputs[0];
    seg.grad = kernel.inputs[1];
    if (auto it = widened.find(seg.grad); it != widened.end()) {
      seg.grad = it->second;
      seg.gradDtype = plan.buffers[seg.grad].dtype == DType::kF16 ? 1 : 2;
    }
    seg.state1 = kernel.inputs[2];
    seg.newParam = kernel.outputs[0];
    seg.newState1 = kernel.outputs[1];
    if (seg.adamw) {
      seg.state2 = kernel.inputs[3];
      seg.newState2 = kernel.outputs[2];
    }
    seg.elements = plan.buffers[seg.param].numElements();
    seg.lr = kernel.floatAttr("lr", 0);
    seg.momentum = kernel.floatAttr("momentum", 0);
    seg.weightDecay = kernel.floatAttr("weight_decay", seg.adamw ? 0.01 : 0);
    seg.beta1 = kernel.floatAttr("beta1", 0.9);
    seg.beta2 = kernel.floatAttr("beta2", 0.999);
    seg.epsilon = kernel.floatAttr("epsilon", 1e-8);
    seg.nesterov = kernel.intAttr("nesterov", 0) != 0;
    g.segments.push_back(seg);
    g.work += seg.elements;
  }
  finishTableKernel(g, plan, launch,
                    std::string(kOptimizerParts) + targetWriter(target).optimizerKernel(),
                    "optimizer",
                    "// fuses sgd_update and adamw_update horizontally: one launch walks a\n"
                    "// table of (param, grad, state, n) segments, one per updated tensor\n",
                    target);
  return g;
}

std::string horizontalCastRefusal(const Plan &plan, const Launch &launch,
                                  const PlanIndex &index) {
  std::map<int32_t, size_t> results; // output -> its cast
  for (size_t k : launch.kernels)
    for (int32_t id : plan.kernels[k].outputs)
      results[id] = k;
  for (size_t k : launch.kernels) {
    const PlanKernel &kernel = plan.kernels[k];
    if (kernel.inputs.size() != 1 || kernel.outputs.size() != 1)
      return "kernel #" + std::to_string(k) + " is a cast with " +
             std::to_string(kernel.inputs.size()) + " operands and " +
             std::to_string(kernel.outputs.size()) + " results";
    for (int32_t id : {kernel.inputs[0], kernel.outputs[0]})
      if (tableDtype(plan.buffers[id].dtype) < 0)
        return "kernel #" + std::to_string(k) + " casts '" + plan.buffers[id].name + "' (" +
               typeText(plan.buffers[id]) + "); the horizontal cast kernel converts f32, f16 "
               "and bf16 only";
    // Through a view, too: a reshape of another cast's result.
    for (int32_t id : {kernel.inputs[0], (*index.inputs)[k][0]})
      if (auto it = results.find(id); it != results.end())
        return "kernel #" + std::to_string(k) + " reads '" + plan.buffers[id].name +
               "', the result of kernel #" + std::to_string(it->second) +
               " in the same launch: the casts are not independent";
  }
  return "";
}

StatusOr<GeneratedKernel> generateHorizontalCast(const Plan &plan, const Launch &launch,
                                                 const Dataflow &flow, KernelTarget target) {
  bool anyOverlap = false;
  std::string hazard = aliasHazard(plan, flow, false, anyOverlap);
  if (!hazard.empty())
    return Status(StatusCode::kInvalidArgument, hazard);
  GeneratedKernel g;
  g.form = KernelForm::kHorizontalCast;
  // Only the casts whose results leave the launch; in plan order.
  for (size_t k : launch.kernels) {
    const PlanKernel &kernel = plan.kernels[k];
    if (std::find(flow.exported.begin(), flow.exported.end(), kernel.outputs[0]) ==
        flow.exported.end())
      continue;
    CastSegment seg;
    seg.input = kernel.inputs[0];
    seg.output = kernel.outputs[0];
    seg.from = plan.buffers[seg.input].dtype;
    seg.to = plan.buffers[seg.output].dtype;
    seg.elements = plan.buffers[seg.output].numElements();
    if (seg.elements == 0)
      continue;
    g.castSegments.push_back(seg);
    g.work += castVectors(seg);
  }
  if (g.castSegments.empty())
    return Status(StatusCode::kInvalidArgument, "computes nothing that is read later");
  finishTableKernel(g, plan, launch, castBody(target), "horizontal_cast",
                    "// fuses independent casts horizontally: one launch walks a table of\n"
                    "// (in, out, n, types) segments, one per cast, f32 / f16 / bf16 each way\n",
                    target);
  return g;
}

} // namespace dlc::rt::codegen
