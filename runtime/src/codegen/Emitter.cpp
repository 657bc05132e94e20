//===- Emitter.cpp - a launch's values, written at an index ---------------===//

#include "Emitter.h"

#include "OpExpressions.h"

#include "dlc/runtime/PlanSummary.h"
#include "dlc/runtime/Shape.h"

namespace dlc::rt::codegen {

std::string Emitter::coord(const std::string &idx, const Shape &shape, size_t d) {
  std::string k = "c|" + idx + "|" + shapeText(shape) + "|" + std::to_string(d);
  if (const std::string *v = lookup(k))
    return *v;
  int64_t stride = rowMajorStrides(shape)[d];
  std::string expr = idx;
  if (rowSpace && idx == "i" && shape == *rowSpace) {
    usedRowCoords = true;
    if (d + 1 == shape.size())
      return innerVar;
    stride /= shape.back();
    expr = rowVar;
  }
  if (stride > 1)
    expr = "(" + expr + " / " + std::to_string(stride) + "LL)";
  if (d > 0)
    expr = expr + " % " + std::to_string(shape[d]) + "LL";
  std::string name = temp("c", "long long", expr);
  memo.back()[k] = name;
  return name;
}

std::string Emitter::broadcastIndex(const std::string &idx, const Shape &out,
                                    const Shape &in) {
  if (in == out)
    return idx;
  if (numElements(in) == 1)
    return "0LL";
  if (in.size() > out.size()) {
    fail("cannot broadcast " + shapeText(in) + " to " + shapeText(out));
    return "0LL";
  }
  size_t lead = out.size() - in.size();
  std::vector<bool> varies(out.size(), false);
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] != 1 && in[d] != out[lead + d]) {
      fail("cannot broadcast " + shapeText(in) + " to " + shapeText(out));
      return "0LL";
    }
    varies[lead + d] = in[d] != 1;
  }
  size_t lo = 0, hi = out.size();
  while (lo < hi && !varies[lo])
    ++lo;
  while (hi > lo && !varies[hi - 1])
    --hi;
  // In the host's row loops the coordinates are cheap: sum them.
  bool contiguous = std::all_of(varies.begin() + lo, varies.begin() + hi,
                                [](bool v) { return v; }) &&
                    !(rowSpace && idx == "i" && out == *rowSpace);
  std::string k = "b|" + idx + "|" + shapeText(out) + "|" + shapeText(in);
  if (const std::string *v = lookup(k))
    return *v;
  std::string expr;
  if (contiguous) {
    // The operand is one block of the output's dimensions: a division by
    // what lies inside it and a remainder by its size.
    int64_t inner = 1, block = 1;
    for (size_t d = hi; d < out.size(); ++d)
      inner *= out[d];
    for (size_t d = lo; d < hi; ++d)
      block *= out[d];
    expr = idx;
    if (inner > 1)
      expr = "(" + expr + " / " + std::to_string(inner) + "LL)";
    if (lo > 0)
      expr = expr + " % " + std::to_string(block) + "LL";
  } else {
    Shape strides = rowMajorStrides(in);
    for (size_t d = 0; d < in.size(); ++d)
      if (in[d] != 1)
        expr += (expr.empty() ? "" : " + ") + coord(idx, out, lead + d) + " * " +
                std::to_string(strides[d]) + "LL";
  }
  std::string name = temp("j", "long long", expr);
  memo.back()[k] = name;
  return name;
}

std::string Emitter::value(int32_t buffer, const std::string &idx) {
  // A reshape of a value computed here: the same elements in the same order.
  if (auto view = flow.views.find(buffer); view != flow.views.end())
    buffer = view->second;
  if (const std::string *v = lookup(key(buffer, idx)))
    return *v;
  const PlanBuffer &b = plan.buffers[buffer];
  if (!cType(b.dtype)) {
    fail("buffer '" + b.name + "' is " + dtypeName(b.dtype) +
         "; generated kernels compute on float types only");
    return "0.f";
  }
  usesF16 |= b.dtype == DType::kF16;
  usesBF16 |= b.dtype == DType::kBF16;
  std::string reg;
  auto producer = flow.producer.find(buffer);
  if (producer == flow.producer.end()) {
    std::string spelled = loadHook && rowStride(b) == 0 ? loadHook(buffer, idx) : "";
    if (spelled.empty())
      spelled = "dlc_ld(" + param(buffer) + ", " + address(buffer, idx) + ")";
    reg = temp("v", "float", spelled);
  } else {
    const PlanKernel &k = plan.kernels[producer->second];
    reg = emitOp(k, buffer, idx);
    // A half-precision result is rounded as the CPU stores it, so that a
    // later op of the launch reads what it would read from memory (a cast
    // rounds itself).
    bool rounds = k.opClass != OpClass::kDataMovement && k.id != OpId::kCast;
    if (rounds && b.dtype == DType::kF16)
      reg = temp("v", "float", "dlc_round_f16(" + reg + ")");
    else if (rounds && b.dtype == DType::kBF16)
      reg = temp("v", "float", "dlc_round_bf16(" + reg + ")");
  }
  memo.back()[key(buffer, idx)] = reg;
  return reg;
}

std::string Emitter::address(int32_t buffer, const std::string &idx) const {
  const PlanBuffer &b = plan.buffers[buffer];
  int64_t stride = rowStride(b);
  if (stride == 0 || b.shape.empty() || b.shape.back() <= 0)
    return idx;
  if (auto known = paddedIndex.find(idx);
      known != paddedIndex.end() && known->second.last == b.shape.back() &&
      known->second.stride == stride)
    return known->second.spelled;
  // Each row before element idx adds stride - last unused elements.
  const std::string last = std::to_string(b.shape.back()) + "LL";
  return "(" + idx + ") + (" + idx + ") / " + last + " * " +
         std::to_string(stride - b.shape.back()) + "LL";
}

std::string Emitter::operand(const PlanKernel &k, size_t i, int32_t result,
                             const std::string &idx) {
  int32_t id = k.inputs.at(i);
  return value(id, broadcastIndex(idx, plan.buffers[result].shape, plan.buffers[id].shape));
}

std::string Emitter::emitOp(const PlanKernel &k, int32_t result, const std::string &idx) {
  const std::string &op = k.op;
  if (const OpExpression *x = opExpression(k.id)) {
    if (x->operands && (k.inputs.size() != x->operands || k.outputs.size() != 1)) {
      fail(op + " with " + std::to_string(k.inputs.size()) + " operands and " +
           std::to_string(k.outputs.size()) + " results");
      return "0.f";
    }
    if (x->emit)
      return x->emit(*this, k, result, idx);
    std::vector<std::string> args;
    for (size_t i = 0; i < x->operands; ++i)
      args.push_back(operand(k, i, result, idx));
    // The operands' values for %0, %1, ...
    std::string text = x->patternFor(target, k);
    for (size_t i = 0; i < args.size(); ++i)
      for (size_t at; (at = text.find("%" + std::to_string(i))) != std::string::npos;)
        text.replace(at, 2, args[i]);
    return temp("v", "float", text);
  }
  if (isRowOp(k)) {
    fail("the result of " + op + " is needed at an index other than its row's (a later op "
         "of the launch reads it broadcast or remapped)");
    return "0.f";
  }
  if (k.opClass == OpClass::kReduction) {
    fail("the result of " + op + " is needed at an index its reduction did not "
         "compute (a reduction feeding the same reduction's loop, or its result "
         "read at a remapped index)");
    return "0.f";
  }
  fail(op + " is not an element-wise, broadcast, data-movement or reduction op "
            "(its launch takes the " + std::string(implementationOf(k.opClass)) + " path)");
  return "0.f";
}

} // namespace dlc::rt::codegen
