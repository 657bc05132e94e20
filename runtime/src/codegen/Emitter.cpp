//===- Emitter.cpp - a launch's values, written at an index ---------------===//

#include "Emitter.h"

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
    std::string spelled = loadHook ? loadHook(buffer, idx) : "";
    if (spelled.empty())
      spelled = "dlc_ld(" + param(buffer) + ", " + idx + ")";
    reg = temp("v", "float", spelled);
  } else {
    const PlanKernel &k = plan.kernels[producer->second];
    reg = emitOp(k, buffer, idx);
    // A half-precision result is rounded as the CPU stores it, so that a
    // later op of the launch reads what it would read from memory (a cast
    // rounds itself).
    bool rounds = k.opClass != OpClass::kDataMovement && k.op != "cast";
    if (rounds && b.dtype == DType::kF16)
      reg = temp("v", "float", "dlc_round_f16(" + reg + ")");
    else if (rounds && b.dtype == DType::kBF16)
      reg = temp("v", "float", "dlc_round_bf16(" + reg + ")");
  }
  memo.back()[key(buffer, idx)] = reg;
  return reg;
}

std::string Emitter::emitOp(const PlanKernel &k, int32_t result, const std::string &idx) {
  const std::string &op = k.op;
  const Shape &out = plan.buffers[result].shape;
  auto operand = [&](size_t i) {
    int32_t id = k.inputs.at(i);
    return value(id, broadcastIndex(idx, out, plan.buffers[id].shape));
  };
  auto arity = [&](size_t n) {
    if (k.inputs.size() != n || k.outputs.size() != 1) {
      fail(op + " with " + std::to_string(k.inputs.size()) + " operands and " +
           std::to_string(k.outputs.size()) + " results");
      return false;
    }
    return true;
  };
  bool tanhGelu = [&] {
    const std::string *a = findAttr<std::string>(k.attrs, "approximate");
    return a && *a == "tanh";
  }();
  static const std::map<std::string, const char *> unary = {
      {"relu", "dlc_relu(%0)"}, {"tanh", "dlc_tanhf(%0)"}, {"sigmoid", "dlc_sigmoid(%0)"},
      {"silu", "%0 * dlc_sigmoid(%0)"}, {"relu6", "dlc_relu6(%0)"},
      {"hardswish", "%0 * dlc_relu6(%0 + 3.f) / 6.f"}, {"hardsigmoid", "dlc_relu6(%0 + 3.f) / 6.f"}};
  static const std::map<std::string, const char *> binary = {
      {"add", "%0 + %1"}, {"sub", "%0 - %1"}, {"mul", "%0 * %1"}, {"div", "%0 / %1"},
      {"relu_backward", "%1 <= 0.f ? 0.f : %0"},
      {"tanh_backward", "%0 * (1.f - %1 * %1)"},
      {"sigmoid_backward", "%0 * %1 * (1.f - %1)"},
      {"silu_backward", "%0 * dlc_sigmoid(%1) * (1.f + %1 * (1.f - dlc_sigmoid(%1)))"},
      {"relu6_backward", "(%1 <= 0.f || %1 >= 6.f) ? 0.f : %0"},
      {"hardswish_backward", "%1 < -3.f ? 0.f : (%1 <= 3.f ? %0 * (%1 / 3.f + 0.5f) : %0)"},
      {"hardsigmoid_backward", "(%1 > -3.f && %1 < 3.f) ? %0 * (1.f / 6.f) : 0.f"}};
  auto fill = [](std::string pattern, const std::vector<std::string> &args) {
    for (size_t i = 0; i < args.size(); ++i)
      for (size_t at; (at = pattern.find("%" + std::to_string(i))) != std::string::npos;)
        pattern.replace(at, 2, args[i]);
    return pattern;
  };

  if (auto u = unary.find(op); u != unary.end()) {
    if (!arity(1))
      return "0.f";
    return temp("v", "float", fill(u->second, {operand(0)}));
  }
  if (op == "gelu") {
    if (!arity(1))
      return "0.f";
    return temp("v", "float", (tanhGelu ? "dlc_gelu_tanh(" : "dlc_gelu(") + operand(0) + ")");
  }
  if (op == "scale") {
    if (!arity(1))
      return "0.f";
    return temp("v", "float", operand(0) + " * " + floatLiteral(k.floatAttr("scale", 1)) +
                                  " + " + floatLiteral(k.floatAttr("bias", 0)));
  }
  if (auto b = binary.find(op); b != binary.end()) {
    if (!arity(2))
      return "0.f";
    std::string l = operand(0), r = operand(1);
    return temp("v", "float", fill(b->second, {l, r}));
  }
  if (op == "gelu_backward") {
    if (!arity(2))
      return "0.f";
    std::string dy = operand(0), x = operand(1);
    return temp("v", "float", dy + " * " + (tanhGelu ? "dlc_gelu_tanh_grad(" : "dlc_gelu_grad(") +
                                  x + ")");
  }
  if (op == "broadcast_to") {
    if (!arity(1))
      return "0.f";
    return operand(0);
  }
  if (op == "cast") {
    if (!arity(1))
      return "0.f";
    std::string x = operand(0);
    switch (plan.buffers[result].dtype) {
    case DType::kF16: usesF16 = true; return temp("v", "float", "dlc_round_f16(" + x + ")");
    case DType::kBF16: usesBF16 = true; return temp("v", "float", "dlc_round_bf16(" + x + ")");
    default: return x; // to f32: every float type is exact in a float register
    }
  }
  if (op == "transpose") {
    if (!arity(1))
      return "0.f";
    const std::vector<int64_t> *perm = findAttr<std::vector<int64_t>>(k.attrs, "permutation");
    const Shape &in = plan.buffers[k.inputs[0]].shape;
    if (!perm || perm->size() != out.size()) {
      fail("transpose without a permutation of rank " + std::to_string(out.size()));
      return "0.f";
    }
    Shape strides = rowMajorStrides(in);
    std::string expr;
    for (size_t d = 0; d < out.size(); ++d)
      if (out[d] != 1)
        expr += (expr.empty() ? "" : " + ") + coord(idx, out, d) + " * " +
                std::to_string(strides[(*perm)[d]]) + "LL";
    return value(k.inputs[0], temp("j", "long long", expr.empty() ? "0LL" : expr));
  }
  if (op == "slice") {
    if (!arity(1))
      return "0.f";
    const Shape &in = plan.buffers[k.inputs[0]].shape;
    int64_t rank = static_cast<int64_t>(in.size());
    int64_t axis = k.intAttr("axis", 0);
    axis = axis < 0 ? axis + rank : axis;
    Shape strides = rowMajorStrides(in);
    std::string expr = std::to_string(k.intAttr("start", 0) * strides[axis]) + "LL";
    for (int64_t d = 0; d < rank; ++d)
      if (out[d] != 1)
        expr += " + " + coord(idx, out, d) + " * " +
                std::to_string(strides[d] * (d == axis ? k.intAttr("step", 1) : 1)) + "LL";
    return value(k.inputs[0], temp("j", "long long", expr));
  }
  if (op == "slice_backward") {
    // dx is zero except where the slice took its elements from.
    if (!arity(1))
      return "0.f";
    const Shape &dy = plan.buffers[k.inputs[0]].shape;
    int64_t rank = static_cast<int64_t>(out.size());
    int64_t axis = k.intAttr("axis", 0);
    axis = axis < 0 ? axis + rank : axis;
    int64_t start = k.intAttr("start", 0), step = k.intAttr("step", 1);
    Shape strides = rowMajorStrides(dy);
    std::string c = coord(idx, out, axis), expr;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && out[d] != 1)
        expr += coord(idx, out, d) + " * " + std::to_string(strides[d]) + "LL + ";
    std::string reg = fresh("v");
    std::string s = std::to_string(start) + "LL", st = std::to_string(step) + "LL";
    line("float " + reg + " = 0.f;");
    open("if (" + c + " >= " + s + " && (" + c + " - " + s + ") % " + st + " == 0 && (" +
         c + " - " + s + ") / " + st + " < " + std::to_string(dy[axis]) + "LL)");
    std::string j = temp("j", "long long", expr + "((" + c + " - " + s + ") / " + st +
                                               ") * " + std::to_string(strides[axis]) + "LL");
    line(reg + " = " + value(k.inputs[0], j) + ";");
    close();
    return reg;
  }
  if (op == "concat") {
    if (k.outputs.size() != 1 || k.inputs.empty()) {
      fail("concat without operands");
      return "0.f";
    }
    int64_t rank = static_cast<int64_t>(out.size());
    int64_t axis = k.intAttr("axis", 0);
    axis = axis < 0 ? axis + rank : axis;
    std::string c = coord(idx, out, axis);
    std::vector<std::string> coords(rank);
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && out[d] != 1)
        coords[d] = coord(idx, out, d);
    std::string reg = fresh("v");
    line("float " + reg + ";");
    int64_t offset = 0;
    for (size_t i = 0; i < k.inputs.size(); ++i) {
      const Shape &in = plan.buffers[k.inputs[i]].shape;
      Shape strides = rowMajorStrides(in);
      int64_t end = offset + in[axis];
      bool last = i + 1 == k.inputs.size();
      std::string cond = last ? "" : "if (" + c + " < " + std::to_string(end) + "LL)";
      open((i ? "else " : "") + cond);
      std::string expr = "(" + c + " - " + std::to_string(offset) + "LL) * " +
                         std::to_string(strides[axis]) + "LL";
      for (int64_t d = 0; d < rank; ++d)
        if (!coords[d].empty())
          expr += " + " + coords[d] + " * " + std::to_string(strides[d]) + "LL";
      line(reg + " = " + value(k.inputs[i], temp("j", "long long", expr)) + ";");
      close();
      offset = end;
    }
    return reg;
  }
  if (op == "dropout") {
    // y = keep ? x * 1/(1 - rate) : 0, the keep decision the CPU's, at the
    // element's index in y (the same as x's).
    if (!arity(1))
      return "0.f";
    double rate = k.floatAttr("rate", 0);
    if (!(rate >= 0 && rate < 1)) {
      fail("dropout with rate " + std::to_string(rate) + ", not in [0, 1)");
      return "0.f";
    }
    if (plan.buffers[k.inputs[0]].shape != out) {
      fail("dropout of " + shapeText(plan.buffers[k.inputs[0]].shape) + " into " +
           shapeText(out));
      return "0.f";
    }
    usesStep = true;
    std::string x = operand(0);
    return temp("v", "float",
                "dlc_keep(" + std::to_string(static_cast<uint64_t>(k.intAttr("seed", 0))) +
                    "ull, dlc_step, " + idx + ", " + doubleLiteral(rate) + ") ? " + x + " * " +
                    floatLiteral(1.0 / (1.0 - rate)) + " : 0.f");
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
