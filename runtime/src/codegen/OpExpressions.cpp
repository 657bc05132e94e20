//===- OpExpressions.cpp - each op's value at an index, one table ---------===//

#include "OpExpressions.h"

#include "Emitter.h"
#include "dlc/runtime/Shape.h"

namespace dlc::rt::codegen {

namespace {

OpPattern fixed(const char *text) {
  return [text](const PlanKernel &) { return std::string(text); };
}

bool tanhGelu(const PlanKernel &k) {
  const std::string *a = findAttr<std::string>(k.attrs, "approximate");
  return a && *a == "tanh";
}

//===----------------------------------------------------------------------===//
// Ops that are no expression of their operands at the result's index
//===----------------------------------------------------------------------===//

std::string emitBroadcastTo(Emitter &e, const PlanKernel &k, int32_t result,
                            const std::string &idx) {
  return e.operand(k, 0, result, idx);
}

std::string emitCast(Emitter &e, const PlanKernel &k, int32_t result, const std::string &idx) {
  std::string x = e.operand(k, 0, result, idx);
  switch (e.plan.buffers[result].dtype) {
  case DType::kF16: e.usesF16 = true; return e.temp("v", "float", "dlc_round_f16(" + x + ")");
  case DType::kBF16: e.usesBF16 = true; return e.temp("v", "float", "dlc_round_bf16(" + x + ")");
  default: return x; // to f32: every float type is exact in a float register
  }
}

std::string emitTranspose(Emitter &e, const PlanKernel &k, int32_t result,
                          const std::string &idx) {
  const Shape &out = e.plan.buffers[result].shape;
  const std::vector<int64_t> *perm = findAttr<std::vector<int64_t>>(k.attrs, "permutation");
  const Shape &in = e.plan.buffers[k.inputs[0]].shape;
  if (!perm || perm->size() != out.size()) {
    e.fail("transpose without a permutation of rank " + std::to_string(out.size()));
    return "0.f";
  }
  Shape strides = rowMajorStrides(in);
  std::string expr;
  for (size_t d = 0; d < out.size(); ++d)
    if (out[d] != 1)
      expr += (expr.empty() ? "" : " + ") + e.coord(idx, out, d) + " * " +
              std::to_string(strides[(*perm)[d]]) + "LL";
  return e.value(k.inputs[0], e.temp("j", "long long", expr.empty() ? "0LL" : expr));
}

std::string emitSlice(Emitter &e, const PlanKernel &k, int32_t result, const std::string &idx) {
  const Shape &out = e.plan.buffers[result].shape;
  const Shape &in = e.plan.buffers[k.inputs[0]].shape;
  int64_t rank = static_cast<int64_t>(in.size());
  int64_t axis = k.intAttr("axis", 0);
  axis = axis < 0 ? axis + rank : axis;
  Shape strides = rowMajorStrides(in);
  std::string expr = std::to_string(k.intAttr("start", 0) * strides[axis]) + "LL";
  for (int64_t d = 0; d < rank; ++d)
    if (out[d] != 1)
      expr += " + " + e.coord(idx, out, d) + " * " +
              std::to_string(strides[d] * (d == axis ? k.intAttr("step", 1) : 1)) + "LL";
  return e.value(k.inputs[0], e.temp("j", "long long", expr));
}

/// dx is zero except where the slice took its elements from.
std::string emitSliceBackward(Emitter &e, const PlanKernel &k, int32_t result,
                              const std::string &idx) {
  const Shape &out = e.plan.buffers[result].shape;
  const Shape &dy = e.plan.buffers[k.inputs[0]].shape;
  int64_t rank = static_cast<int64_t>(out.size());
  int64_t axis = k.intAttr("axis", 0);
  axis = axis < 0 ? axis + rank : axis;
  int64_t start = k.intAttr("start", 0), step = k.intAttr("step", 1);
  Shape strides = rowMajorStrides(dy);
  std::string c = e.coord(idx, out, axis), expr;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && out[d] != 1)
      expr += e.coord(idx, out, d) + " * " + std::to_string(strides[d]) + "LL + ";
  std::string reg = e.fresh("v");
  std::string s = std::to_string(start) + "LL", st = std::to_string(step) + "LL";
  e.line("float " + reg + " = 0.f;");
  e.open("if (" + c + " >= " + s + " && (" + c + " - " + s + ") % " + st + " == 0 && (" + c +
         " - " + s + ") / " + st + " < " + std::to_string(dy[axis]) + "LL)");
  std::string j = e.temp("j", "long long", expr + "((" + c + " - " + s + ") / " + st + ") * " +
                                               std::to_string(strides[axis]) + "LL");
  e.line(reg + " = " + e.value(k.inputs[0], j) + ";");
  e.close();
  return reg;
}

std::string emitConcat(Emitter &e, const PlanKernel &k, int32_t result, const std::string &idx) {
  if (k.outputs.size() != 1 || k.inputs.empty()) {
    e.fail("concat without operands");
    return "0.f";
  }
  const Shape &out = e.plan.buffers[result].shape;
  int64_t rank = static_cast<int64_t>(out.size());
  int64_t axis = k.intAttr("axis", 0);
  axis = axis < 0 ? axis + rank : axis;
  std::string c = e.coord(idx, out, axis);
  std::vector<std::string> coords(rank);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && out[d] != 1)
      coords[d] = e.coord(idx, out, d);
  std::string reg = e.fresh("v");
  e.line("float " + reg + ";");
  int64_t offset = 0;
  for (size_t i = 0; i < k.inputs.size(); ++i) {
    const Shape &in = e.plan.buffers[k.inputs[i]].shape;
    Shape strides = rowMajorStrides(in);
    int64_t end = offset + in[axis];
    bool last = i + 1 == k.inputs.size();
    std::string cond = last ? "" : "if (" + c + " < " + std::to_string(end) + "LL)";
    e.open((i ? "else " : "") + cond);
    std::string expr = "(" + c + " - " + std::to_string(offset) + "LL) * " +
                       std::to_string(strides[axis]) + "LL";
    for (int64_t d = 0; d < rank; ++d)
      if (!coords[d].empty())
        expr += " + " + coords[d] + " * " + std::to_string(strides[d]) + "LL";
    e.line(reg + " = " + e.value(k.inputs[i], e.temp("j", "long long", expr)) + ";");
    e.close();
    offset = end;
  }
  return reg;
}

/// y = keep ? x * 1/(1 - rate) : 0, the keep decision the CPU's, at the
/// element's index in y (the same as x's).
std::string emitDropout(Emitter &e, const PlanKernel &k, int32_t result,
                        const std::string &idx) {
  const Shape &out = e.plan.buffers[result].shape;
  double rate = k.floatAttr("rate", 0);
  if (!(rate >= 0 && rate < 1)) {
    e.fail("dropout with rate " + std::to_string(rate) + ", not in [0, 1)");
    return "0.f";
  }
  if (e.plan.buffers[k.inputs[0]].shape != out) {
    e.fail("dropout of " + shapeText(e.plan.buffers[k.inputs[0]].shape) + " into " +
           shapeText(out));
    return "0.f";
  }
  e.usesStep = true;
  std::string x = e.operand(k, 0, result, idx);
  return e.temp("v", "float",
                "dlc_keep(" + std::to_string(static_cast<uint64_t>(k.intAttr("seed", 0))) +
                    "ull, dlc_step, " + idx + ", " + doubleLiteral(rate) + ") ? " + x + " * " +
                    floatLiteral(1.0 / (1.0 - rate)) + " : 0.f");
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

const std::map<OpId, OpExpression> &table() {
  static const std::map<OpId, OpExpression> entries = [] {
    std::map<OpId, OpExpression> t;
    auto unary = [&](OpId op, OpPattern p) { t[op] = OpExpression{1, std::move(p)}; };
    auto binary = [&](OpId op, OpPattern p) { t[op] = OpExpression{2, std::move(p)}; };
    auto remaps = [&](OpId op, size_t operands, OpEmission emit) {
      OpExpression x;
      x.operands = operands;
      x.emit = emit;
      t[op] = std::move(x);
    };
    // Activations and their gradients (%0 the gradient, %1 the forward's
    // input or result, as the CPU reference takes them).
    unary(OpId::kRelu, fixed("dlc_relu(%0)"));
    unary(OpId::kTanh, fixed("dlc_tanhf(%0)"));
    unary(OpId::kSigmoid, fixed("dlc_sigmoid(%0)"));
    unary(OpId::kSilu, fixed("%0 * dlc_sigmoid(%0)"));
    unary(OpId::kRelu6, fixed("dlc_relu6(%0)"));
    unary(OpId::kHardswish, fixed("%0 * dlc_relu6(%0 + 3.f) / 6.f"));
    unary(OpId::kHardsigmoid, fixed("dlc_relu6(%0 + 3.f) / 6.f"));
    unary(OpId::kGelu, [](const PlanKernel &k) {
      return std::string(tanhGelu(k) ? "dlc_gelu_tanh(%0)" : "dlc_gelu(%0)");
    });
    unary(OpId::kScale, [](const PlanKernel &k) {
      return "%0 * " + floatLiteral(k.floatAttr("scale", 1)) + " + " +
             floatLiteral(k.floatAttr("bias", 0));
    });
    binary(OpId::kAdd, fixed("%0 + %1"));
    binary(OpId::kSub, fixed("%0 - %1"));
    binary(OpId::kMul, fixed("%0 * %1"));
    binary(OpId::kDiv, fixed("%0 / %1"));
    binary(OpId::kReluBackward, fixed("%1 <= 0.f ? 0.f : %0"));
    binary(OpId::kTanhBackward, fixed("%0 * (1.f - %1 * %1)"));
    binary(OpId::kSigmoidBackward, fixed("%0 * %1 * (1.f - %1)"));
    binary(OpId::kSiluBackward,
           fixed("%0 * dlc_sigmoid(%1) * (1.f + %1 * (1.f - dlc_sigmoid(%1)))"));
    binary(OpId::kRelu6Backward, fixed("(%1 <= 0.f || %1 >= 6.f) ? 0.f : %0"));
    binary(OpId::kHardswishBackward,
           fixed("%1 < -3.f ? 0.f : (%1 <= 3.f ? %0 * (%1 / 3.f + 0.5f) : %0)"));
    binary(OpId::kHardsigmoidBackward, fixed("(%1 > -3.f && %1 < 3.f) ? %0 * (1.f / 6.f) : 0.f"));
    binary(OpId::kGeluBackward, [](const PlanKernel &k) {
      return std::string(tanhGelu(k) ? "%0 * dlc_gelu_tanh_grad(%1)" : "%0 * dlc_gelu_grad(%1)");
    });
    // Casts, dropout and data movement.
    remaps(OpId::kBroadcastTo, 1, emitBroadcastTo);
    remaps(OpId::kCast, 1, emitCast);
    remaps(OpId::kDropout, 1, emitDropout);
    remaps(OpId::kTranspose, 1, emitTranspose);
    remaps(OpId::kSlice, 1, emitSlice);
    remaps(OpId::kSliceBackward, 1, emitSliceBackward);
    remaps(OpId::kConcat, 0, emitConcat);
    return t;
  }();
  return entries;
}

} // namespace

const OpExpression *opExpression(OpId op) {
  auto it = table().find(op);
  return it == table().end() ? nullptr : &it->second;
}

} // namespace dlc::rt::codegen
