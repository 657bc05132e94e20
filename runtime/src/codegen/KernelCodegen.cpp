//===- KernelCodegen.cpp - kernels for a plan's generated launches --------===//
//
// The generator is an elemental emitter, as XLA's: every value a launch
// computes is produced "at an index" by its op, which asks its operands for
// their values at the indices it needs (the same index for element-wise
// ops, a broadcast, transposed or sliced index for the others). Values are
// memoized per (buffer, index expression), so a chain of element-wise ops
// becomes straight-line register code, and a broadcast operand costs its
// index math only. The loop, reduction and optimizer forms wrap that code
// in their launch geometry. Any op, shape or dtype the emitter cannot
// handle is an error that names it, and isGeneratable reports that error
// as its reason: one source of truth for what is generated. The forms are
// written once for both targets; KernelTargets.h holds what the CUDA and the
// host target write differently (how items are shared out, what a kernel
// includes).
//
// Semantics follow the CPU reference kernels (cpu/OpsDense.cpp,
// cpu/OpsShape.cpp, cpu/Pool.cpp) in float32.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/codegen/KernelCodegen.h"

#include "KernelTargets.h"
#include "dlc/runtime/codegen/KernelPrelude.h"
#include "dlc/runtime/DiskCache.h"
#include "dlc/runtime/PlanSummary.h"
#include "dlc/runtime/Shape.h"

#include <algorithm>
#include <optional>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <sstream>

namespace dlc::rt::codegen {

namespace {

using Shape = std::vector<int64_t>;

/// Threads per block of loop and optimizer kernels, and the most of a
/// reduction's: 8 warps keep enough loads in flight per SM without
/// limiting occupancy by registers.
constexpr int kBlockSize = 256;
/// The narrowest side a transpose takes the tiled form for (below it, the
/// loop form: generateTranspose).
constexpr int64_t kNarrowTranspose = 8;
/// Bytes of one vector access: the widest global load (ld.global.v4.b32).
constexpr int kVectorBytes = 16;
/// Accumulators a host row kernel's sums and maxima keep (fold, in
/// generateRow): 16 doubles, two AVX-512 registers.
constexpr int kRowLanes = 16;
/// Column reductions: outputs per block (one warp's worth of consecutive
/// addresses) and the rows of threads that split each output's sum. A bias
/// gradient has few tiles (BERT's [4096, 768] -> [768]: 24 blocks on 132
/// SMs), so each block brings many warps: with 8 rows the H100 spent 6.4 ms
/// per BERT-base step in them, latency-bound at a few GB/s per SM; 32 rows
/// put 4x the loads in flight (predicted about 4x faster; not yet timed).
constexpr int kColumnTile = 32;
constexpr int kColumnRows = 32;
/// A host column reduction's tile: up to 1024 consecutive outputs (4 KB of
/// float accumulators per reduction, which stay in L1), summed row after
/// row, so that each row is read in runs of 2-4 KB. With 64 outputs (runs
/// of 128 bytes of bf16, a jump of a row between them) BERT-base's GELU
/// gradient with its bias gradient streamed at a few GB/s; a whole row at
/// a time is no faster than 256 outputs or more.
constexpr int kHostColumnTile = 1024;

std::string shapeText(const Shape &s) {
  std::string text = "[";
  for (size_t i = 0; i < s.size(); ++i)
    text += (i ? "," : "") + std::to_string(s[i]);
  return text + "]";
}

std::string typeText(const PlanBuffer &b) {
  return std::string(dtypeName(b.dtype)) + shapeText(b.shape);
}

/// A double constant as CUDA source, exactly.
std::string doubleLiteral(double v) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.17g", v);
  std::string s = text;
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

/// A float constant as CUDA source that rounds to the same float.
std::string floatLiteral(double v) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.9g", static_cast<double>(static_cast<float>(v)));
  std::string s = text;
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s + "f";
}

const char *cType(DType t) {
  switch (t) {
  case DType::kF32: return "float";
  case DType::kF16: return "__half";
  case DType::kBF16: return "__nv_bfloat16";
  default: return nullptr;
  }
}

/// The ops the row form computes: statistics over the last axis, then an
/// element-wise pass over the same row that uses them.
bool isRowOp(const PlanKernel &k) {
  return k.opClass == OpClass::kRowNormalization &&
         (k.op == "softmax" || k.op == "layer_norm" || k.op == "softmax_backward");
}

/// What a reduction does to its input: which input dimensions it sums.
struct ReductionShape {
  Shape input;
  std::vector<bool> reduced;
  bool mean = false, max = false;
  int64_t rows = 1, count = 1;
  bool operator==(const ReductionShape &o) const {
    return input == o.input && reduced == o.reduced;
  }
};

StatusOr<ReductionShape> reductionShape(const Plan &plan, const PlanKernel &k) {
  ReductionShape r;
  r.input = plan.buffers[k.inputs[0]].shape;
  const Shape &out = plan.buffers[k.outputs[0]].shape;
  int64_t rank = static_cast<int64_t>(r.input.size());
  r.reduced.assign(rank, false);
  if (k.op == "sum_to_shape") {
    size_t lead = r.input.size() - out.size();
    for (size_t d = 0; d < r.input.size(); ++d)
      r.reduced[d] = d < lead || (out[d - lead] == 1 && r.input[d] != 1);
  } else if (k.op == "global_avg_pool") {
    if (rank != 4)
      return Status(StatusCode::kInvalidArgument, "global_avg_pool of a rank-" +
                                                       std::to_string(rank) + " input");
    r.reduced[2] = r.reduced[3] = true;
    r.mean = true;
  } else {
    const std::vector<int64_t> *axes = findAttr<std::vector<int64_t>>(k.attrs, "axes");
    if (!axes)
      return Status(StatusCode::kInvalidArgument, k.op + " without 'axes'");
    for (int64_t a : *axes) {
      int64_t d = a < 0 ? a + rank : a;
      if (d < 0 || d >= rank)
        return Status(StatusCode::kInvalidArgument,
                      k.op + " axis " + std::to_string(a) + " out of range");
      r.reduced[d] = true;
    }
    r.mean = k.op == "reduce_mean";
    r.max = k.op == "reduce_max";
  }
  for (int64_t d = 0; d < rank; ++d)
    (r.reduced[d] ? r.count : r.rows) *= r.input[d];
  return r;
}

//===----------------------------------------------------------------------===//
// The launch's dataflow
//===----------------------------------------------------------------------===//

/// What the generator needs to know of the whole plan.
struct PlanIndex {
  std::vector<size_t> launchOf; // kernel -> launch
  /// Each kernel's inputs with views resolved: a reshape is a buffer no
  /// kernel writes, sharing the bytes of the value it reshapes, which is
  /// the last kernel output written at its offset before the reader.
  ResolvedInputs inputs;
};

PlanIndex indexPlan(const Plan &plan, const std::vector<Launch> &launches) {
  PlanIndex index;
  index.launchOf.resize(plan.kernels.size());
  for (const Launch &l : launches)
    for (size_t k : l.kernels)
      index.launchOf[k] = l.index;
  index.inputs = resolvedInputs(plan);
  return index;
}

struct Dataflow {
  std::map<int32_t, size_t> producer; // buffer -> plan kernel index
  std::vector<int32_t> inputs;        // read from memory, first-read order
  std::vector<int32_t> exported;      // written to memory, production order
  std::map<int32_t, int32_t> views;   // a view read in the launch -> its value
};

/// Which values leave the launch: the same rule as PlanSummary's byte count
/// (read by another launch, or not a temporary), with reads through views.
Dataflow dataflowOf(const Plan &plan, const Launch &launch, const PlanIndex &index) {
  Dataflow f;
  for (size_t k : launch.kernels) {
    const std::vector<int32_t> &resolved = (*index.inputs)[k];
    for (size_t j = 0; j < resolved.size(); ++j) {
      int32_t id = plan.kernels[k].inputs[j];
      if (resolved[j] != id && f.producer.count(resolved[j])) {
        f.views[id] = resolved[j];
        continue;
      }
      if (!f.producer.count(id) &&
          std::find(f.inputs.begin(), f.inputs.end(), id) == f.inputs.end())
        f.inputs.push_back(id);
    }
    for (int32_t id : plan.kernels[k].outputs)
      f.producer[id] = k;
  }
  std::set<int32_t> readOutside;
  for (size_t k = 0; k < plan.kernels.size(); ++k)
    if (index.launchOf[k] != launch.index)
      for (int32_t id : (*index.inputs)[k])
        readOutside.insert(id);
  for (size_t k : launch.kernels)
    for (int32_t id : plan.kernels[k].outputs)
      if (plan.buffers[id].role != BufferRole::kTemporary || readOutside.count(id))
        f.exported.push_back(id);
  return f;
}

bool overlaps(const PlanBuffer &a, const PlanBuffer &b) {
  return a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
}

//===----------------------------------------------------------------------===//
// The elemental emitter
//===----------------------------------------------------------------------===//

class Emitter {
public:
  Emitter(const Plan &plan, const Dataflow &flow) : plan(plan), flow(flow) {}

  /// How a value read from memory is spelled at an index; empty for the
  /// default scalar load.
  std::function<std::string(int32_t, const std::string &)> loadHook;

  std::string value(int32_t buffer, const std::string &idx);
  void line(const std::string &text) {
    body += std::string(2 * indent, ' ') + text + "\n";
  }
  void open(const std::string &text) {
    line(text.empty() ? "{" : text + " {");
    ++indent;
    memo.emplace_back();
  }
  void close(const std::string &suffix = "") {
    memo.pop_back();
    --indent;
    line("}" + suffix);
  }
  void seed(int32_t buffer, const std::string &idx, const std::string &reg) {
    memo.back()[key(buffer, idx)] = reg;
  }
  std::string fresh(const char *prefix) { return prefix + std::to_string(counter++); }
  std::string temp(const char *prefix, const std::string &type, const std::string &expr) {
    std::string name = fresh(prefix);
    line("const " + type + " " + name + " = " + expr + ";");
    return name;
  }
  std::string coord(const std::string &idx, const Shape &shape, size_t d);
  std::string broadcastIndex(const std::string &idx, const Shape &out, const Shape &in);
  void fail(const std::string &message) {
    if (error.empty())
      error = message;
  }

  /// The kernel's pointer parameter for a buffer, added on first use.
  std::string param(int32_t buffer) {
    auto it = std::find(params.begin(), params.end(), buffer);
    if (it == params.end()) {
      params.push_back(buffer);
      it = params.end() - 1;
    }
    bool written = std::find(flow.exported.begin(), flow.exported.end(), buffer) !=
                   flow.exported.end();
    return (written ? "out" : "in") + std::to_string(it - params.begin());
  }

  const Plan &plan;
  const Dataflow &flow;
  std::string body, error;
  int indent = 1;
  std::vector<int32_t> params;
  bool usesF16 = false, usesBF16 = false;
  /// A dropout reads the step counter: the kernel's last parameter.
  bool usesStep = false;
  /// Loops over `rowSpace` as rows `rowVar` around its innermost dimension
  /// `innerVar`, with i = row * inner + column: the host's loop form, and
  /// the row form on both targets. The coordinates of `i` then come from
  /// the row (the compiler hoists them out of the inner loop) and the
  /// column, so a transpose or a broadcast costs no division per element
  /// and the inner loop vectorizes. `usedRowCoords` says whether the body
  /// needed them.
  const Shape *rowSpace = nullptr;
  std::string rowVar = "o", innerVar = "ic";
  bool usedRowCoords = false;

private:
  static std::string key(int32_t b, const std::string &idx) {
    return std::to_string(b) + "@" + idx;
  }
  const std::string *lookup(const std::string &k) const {
    for (auto it = memo.rbegin(); it != memo.rend(); ++it)
      if (auto f = it->find(k); f != it->end())
        return &f->second;
    return nullptr;
  }
  std::string emitOp(const PlanKernel &k, int32_t result, const std::string &idx);

  std::vector<std::map<std::string, std::string>> memo{1};
  int counter = 0;
};

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

//===----------------------------------------------------------------------===//
// Kernel forms
//===----------------------------------------------------------------------===//

std::string opsSummary(const Plan &plan, const Launch &launch) {
  std::string text;
  for (size_t k : launch.kernels) {
    const PlanKernel &kernel = plan.kernels[k];
    text += "//   " + kernel.op + "(";
    for (size_t i = 0; i < kernel.inputs.size(); ++i)
      text += (i ? ", " : "") + typeText(plan.buffers[kernel.inputs[i]]);
    text += ") -> ";
    for (size_t i = 0; i < kernel.outputs.size(); ++i)
      text += (i ? ", " : "") + typeText(plan.buffers[kernel.outputs[i]]);
    text += "\n";
  }
  return text;
}

/// The kernel's parameter list, inputs and outputs in the emitter's order;
/// __restrict__ only when no written buffer shares bytes with another.
std::string paramList(const Emitter &e, const Dataflow &flow, bool restrict,
                      KernelTarget target) {
  std::string text;
  for (size_t i = 0; i < e.params.size(); ++i) {
    const PlanBuffer &b = e.plan.buffers[e.params[i]];
    bool written = std::find(flow.exported.begin(), flow.exported.end(), e.params[i]) !=
                   flow.exported.end();
    text += std::string(i ? ", " : "") + (written ? "" : "const ") + cType(b.dtype) + " *" +
            (restrict ? "__restrict__ " : "") + (written ? "out" : "in") + std::to_string(i);
  }
  if (e.usesStep)
    text += ", const long long *__restrict__ dlc_step_counter";
  return text + targetWriter(target).extraParams();
}

/// The first line of a kernel whose dropouts read the step counter.
std::string stepLine(const Emitter &e) {
  return e.usesStep ? "  const long long dlc_step = *dlc_step_counter; // a graph replays it\n"
                    : "";
}

/// Outputs that share arena bytes with an input (the memory planner gives
/// each kernel of a group its own lifetime, so a later op's result may
/// reuse an earlier op's input) are safe only where each thread reads an
/// element before writing the same element.
std::string aliasHazard(const Plan &plan, const Dataflow &flow, bool identityOnly,
                        bool &anyOverlap) {
  anyOverlap = false;
  for (int32_t o : flow.exported)
    for (int32_t i : flow.inputs) {
      if (!overlaps(plan.buffers[o], plan.buffers[i]))
        continue;
      anyOverlap = true;
      if (!identityOnly)
        return "output '" + plan.buffers[o].name + "' shares arena bytes with input '" +
               plan.buffers[i].name +
               "', which other threads still read (the memory planner must keep a "
               "fused group's inputs alive until its last op)";
    }
  return "";
}

std::string finish(GeneratedKernel &g, const Plan &plan, const Launch &launch,
                   const Emitter &e, const std::string &signatureAndBody,
                   const std::string &form, KernelTarget target,
                   const std::string &opsHeader = "") {
  std::string includes;
  if (e.usesF16)
    includes += "#include <cuda_fp16.h>\n#define DLC_F16 1\n";
  if (e.usesBF16)
    includes += "#include <cuda_bf16.h>\n#define DLC_BF16 1\n";
  std::string text =
      includes + kernelPrelude() + "\n" + targetWriter(target).afterPrelude() + signatureAndBody;
  // The name hashes everything but itself, so equal computations share it.
  std::set<std::string> seen;
  std::string ops;
  int named = 0;
  for (size_t k : launch.kernels) {
    const std::string &op = plan.kernels[k].op;
    if (seen.insert(op).second && named++ < 4)
      ops += "_" + op;
  }
  if (named > 4)
    ops += "_etc";
  char hash[17];
  std::snprintf(hash, sizeof(hash), "%016llx",
                static_cast<unsigned long long>(fnv1a(opsSummary(plan, launch) + text)));
  g.name = "dlc_" + form + ops + "_" + std::string(hash, 8);
  std::string header = "// dlc generated kernel " + g.name + " (" + form + ")\n" +
                       (opsHeader.empty() ? "// fuses " + std::to_string(launch.kernels.size()) +
                                                " op(s):\n" + opsSummary(plan, launch)
                                          : opsHeader);
  for (size_t at; (at = text.find("DLC_KERNEL_NAME")) != std::string::npos;)
    text.replace(at, 15, g.name);
  g.source = header + text;
  g.target = target;
  g.readsStep = e.usesStep;
  return g.name;
}

StatusOr<GeneratedKernel> generateLoop(const Plan &plan, const Launch &launch,
                                       const Dataflow &flow, KernelTarget target) {
  // The loop runs over the largest exported value; a smaller one must
  // broadcast to it, and is stored by the iterations at its broadcast
  // dimensions' first index (multi-output fusion of a value and its
  // broadcast use).
  int32_t largest = flow.exported.front();
  for (int32_t id : flow.exported)
    if (plan.buffers[id].numElements() > plan.buffers[largest].numElements())
      largest = id;
  const Shape space = plan.buffers[largest].shape;
  for (int32_t id : flow.exported) {
    const Shape &s = plan.buffers[id].shape;
    bool broadcasts = s.size() <= space.size();
    for (size_t d = 0; broadcasts && d < s.size(); ++d)
      broadcasts = s[d] == 1 || s[d] == space[space.size() - s.size() + d];
    if (!broadcasts)
      return Status(StatusCode::kInvalidArgument,
                    "exports values of shapes that do not broadcast to one loop (" +
                        typeText(plan.buffers[largest]) + " and " + typeText(plan.buffers[id]) +
                        ") without a reduction, and is not a horizontal group of independent "
                        "casts");
  }
  bool anyOverlap = false;
  // Aliasing is safe only when every input is read at the loop index; the
  // emitter records any other read, checked below.
  std::string hazard = aliasHazard(plan, flow, true, anyOverlap);
  int64_t n = numElements(space);

  // Elements per vector access: 16 bytes of the narrowest type touched at
  // the loop index.
  int64_t narrowest = 4;
  for (int32_t id : flow.exported)
    if (plan.buffers[id].shape == space)
      narrowest = std::min(narrowest, dtypeBytes(plan.buffers[id].dtype));
  for (int32_t id : flow.inputs)
    if (plan.buffers[id].shape == space)
      narrowest = std::min(narrowest, dtypeBytes(plan.buffers[id].dtype));
  int vec = static_cast<int>(kVectorBytes / narrowest);

  Emitter e(plan, flow);
  bool remappedRead = false;
  auto body = [&](bool vectorMode, std::set<int32_t> &vectorInputs) {
    e.loadHook = [&](int32_t id, const std::string &idx) -> std::string {
      if (idx != "i") {
        remappedRead = true;
        return "";
      }
      if (!vectorMode || plan.buffers[id].shape != space)
        return "";
      vectorInputs.insert(id);
      return e.param(id) + "_v[l]";
    };
    for (int32_t id : flow.exported) {
      const Shape &shape = plan.buffers[id].shape;
      if (shape != space) {
        remappedRead = true; // a write at another index: aliasing is unsafe
        std::string cond;
        size_t lead = space.size() - shape.size();
        for (size_t d = 0; d < space.size(); ++d)
          if (space[d] != 1 && (d < lead || shape[d - lead] == 1))
            cond += (cond.empty() ? "" : " && ") + e.coord("i", space, d) + " == 0";
        std::string j = e.broadcastIndex("i", space, shape);
        std::string v = e.value(id, j);
        e.open("if (" + (cond.empty() ? std::string("true") : cond) + ")");
        e.line("dlc_st(" + e.param(id) + ", " + j + ", " + v + ");");
        e.close();
        continue;
      }
      std::string v = e.value(id, "i");
      e.line(vectorMode ? e.param(id) + "_v[l] = " + v + ";"
                        : "dlc_st(" + e.param(id) + ", i, " + v + ");");
    }
  };
  // Parameters in a fixed order: outputs are numbered after the inputs the
  // computation reads, so register the inputs first through a dry run.
  {
    std::set<int32_t> ignored;
    Emitter dry(plan, flow);
    dry.loadHook = nullptr;
    for (int32_t id : flow.exported)
      dry.value(id, dry.broadcastIndex("i", space, plan.buffers[id].shape));
    if (!dry.error.empty())
      return Status(StatusCode::kInvalidArgument, dry.error);
    e.params = dry.params;
    for (int32_t id : flow.exported)
      e.param(id);
  }
  std::string vectorBody, scalarBody;
  std::set<int32_t> vectorInputs, unused;
  e.indent = 3;
  e.open("");
  body(true, vectorInputs);
  e.close();
  vectorBody.swap(e.body);
  // The host's loops over rows and the innermost dimension, where that is
  // long enough to fill a vector.
  const TargetWriter &writer = targetWriter(target);
  constexpr int64_t kMinRowLoop = 8;
  if (!writer.packsVectors() && space.size() > 1 && space.back() >= kMinRowLoop)
    e.rowSpace = &space;
  e.indent = e.rowSpace ? 3 : 2;
  e.open("");
  body(false, unused);
  e.close();
  scalarBody.swap(e.body);
  const bool rowLoops = e.usedRowCoords;
  if (e.rowSpace && !rowLoops) {
    // Nothing needed a coordinate: one flat loop, its body one level out.
    e.rowSpace = nullptr;
    e.indent = 2;
    e.open("");
    body(false, unused);
    e.close();
    scalarBody = std::move(e.body);
    e.body.clear();
  }
  if (!e.error.empty())
    return Status(StatusCode::kInvalidArgument, e.error);
  if (!hazard.empty() || (anyOverlap && remappedRead))
    return Status(StatusCode::kInvalidArgument,
                  hazard.empty() ? aliasHazard(plan, flow, false, anyOverlap) : hazard);

  std::string v = std::to_string(vec);
  std::ostringstream s;
  s << "extern \"C\" __global__ void __launch_bounds__(" << kBlockSize << ") DLC_KERNEL_NAME("
    << paramList(e, flow, !anyOverlap, target) << ") {\n"
    << stepLine(e) << "  const long long n = " << n << "LL;\n";
  if (writer.packsVectors()) {
    s << writer.vectorLoop(v);
    s << "    const long long base = q * " << v << ";\n";
    for (int32_t id : vectorInputs)
      s << "    float " << e.param(id) << "_v[" << v << "];\n    dlc_ldv<" << v << ">("
        << e.param(id) << ", base, " << e.param(id) << "_v);\n";
    for (int32_t id : flow.exported)
      if (plan.buffers[id].shape == space)
        s << "    float " << e.param(id) << "_v[" << v << "];\n";
    s << "#pragma unroll\n"
      << "    for (int l = 0; l < " << v << "; ++l) {\n"
      << "      const long long i = base + l;\n"
      << vectorBody << "    }\n";
    for (int32_t id : flow.exported)
      if (plan.buffers[id].shape == space)
        s << "    dlc_stv<" << v << ">(" << e.param(id) << ", base, " << e.param(id) << "_v);\n";
    s << "  }\n" << writer.tailLoop(v);
  } else if (rowLoops) {
    vec = space.back();
    s << writer.rowLoops(std::to_string(vec));
    // The body's temporaries sit one level deeper: close both loops.
    scalarBody += "    }\n";
  } else {
    vec = 1;
    s << writer.elementLoop();
  }
  s << scalarBody << "  }\n}\n";
  GeneratedKernel g;
  g.form = KernelForm::kLoop;
  g.args = e.params;
  g.blockSize = kBlockSize;
  g.work = std::max<int64_t>(1, (n + vec - 1) / vec);
  finish(g, plan, launch, e, s.str(), "loop", target);
  return g;
}

/// A transpose that is a batched matrix transpose: dimensions [a, b, c]
/// (each a run of the input's) to [a, c, b]. NCHW <-> NHWC is one ([N, C,
/// HW] <-> [N, HW, C]). Nullopt otherwise.
struct BatchedTranspose {
  int64_t batch = 1, rows = 1, cols = 1; // the input as [batch][rows][cols]
};
std::optional<BatchedTranspose> batchedTranspose(const Shape &in,
                                                 const std::vector<int64_t> &perm) {
  const size_t rank = in.size();
  if (perm.size() != rank)
    return std::nullopt;
  // perm = [0 .. a), [s .. rank), [a .. s) with a <= s < rank.
  size_t a = 0;
  while (a < rank && perm[a] == static_cast<int64_t>(a))
    ++a;
  if (a == rank)
    return std::nullopt; // the identity
  size_t s = static_cast<size_t>(perm[a]);
  size_t i = a;
  for (size_t d = s; d < rank; ++d, ++i)
    if (i >= rank || perm[i] != static_cast<int64_t>(d))
      return std::nullopt;
  for (size_t d = a; d < s; ++d, ++i)
    if (i >= rank || perm[i] != static_cast<int64_t>(d))
      return std::nullopt;
  BatchedTranspose t;
  for (size_t d = 0; d < rank; ++d)
    (d < a ? t.batch : d < s ? t.rows : t.cols) *= in[d];
  return t;
}

/// A lone transpose as tiles of 32 x 32 elements staged in shared memory,
/// so that both the reads and the writes are coalesced (the loop form reads
/// at a remapped index: one element per cache line touched when the
/// innermost dimension moves). Exact for every type: values pass through a
/// float unchanged.
std::optional<StatusOr<GeneratedKernel>> generateTranspose(const Plan &plan,
                                                           const Launch &launch,
                                                           const Dataflow &flow,
                                                           KernelTarget target) {
  if (launch.kernels.size() != 1 || flow.inputs.size() != 1 || flow.exported.size() != 1)
    return std::nullopt;
  const PlanKernel &k = plan.kernels[launch.kernels[0]];
  const std::vector<int64_t> *perm = findAttr<std::vector<int64_t>>(k.attrs, "permutation");
  if (k.op != "transpose" || !perm || k.inputs.size() != 1 || k.outputs.size() != 1)
    return std::nullopt;
  const PlanBuffer &in = plan.buffers[flow.inputs[0]], &out = plan.buffers[flow.exported[0]];
  auto t = batchedTranspose(plan.buffers[k.inputs[0]].shape, *perm);
  // A side under kNarrowTranspose (an image's 3 channels) fills a few rows
  // of each 32 x 32 tile, and the loop form's reads already come in runs:
  // ResNet-50's input NCHW -> NHWC took 0.94 ms as tiles on an H100, and
  // 0.083 ms as xla's loop group with its cast (2026-11-26).
  if (!t || t->rows < kNarrowTranspose || t->cols < kNarrowTranspose || in.dtype != out.dtype ||
      !cType(in.dtype) || overlaps(in, out))
    return std::nullopt;
  GeneratedKernel g;
  g.form = KernelForm::kTranspose;
  Emitter e(plan, flow);
  e.usesF16 = in.dtype == DType::kF16;
  e.usesBF16 = in.dtype == DType::kBF16;
  const int64_t tilesRows = (t->rows + kTransposeTile - 1) / kTransposeTile;
  const int64_t tilesCols = (t->cols + kTransposeTile - 1) / kTransposeTile;
  const std::string T = cType(in.dtype), tile = std::to_string(kTransposeTile);
  std::ostringstream src;
  src << "extern \"C\" __global__ void __launch_bounds__(" << kTransposeTile * kTransposeRows
      << ") DLC_KERNEL_NAME(const " << T << " *__restrict__ in0, " << T
      << " *__restrict__ out1" << targetWriter(target).extraParams() << ") {\n"
      << "  // in0 as [" << t->batch << "][" << t->rows << "][" << t->cols << "], out1 as ["
      << t->batch << "][" << t->cols << "][" << t->rows << "]; one " << tile << " x " << tile
      << " tile per block and turn.\n"
      << "  __shared__ float tile[" << tile << "][" << tile << " + 1];\n"
      << "  const long long rows = " << t->rows << "LL, cols = " << t->cols << "LL;\n"
      << "  const long long tilesRows = " << tilesRows << "LL, tilesCols = " << tilesCols
      << "LL;\n"
      << "  const long long tiles = " << t->batch << "LL * tilesRows * tilesCols;\n"
      << "  "
      << targetWriter(target).itemLoop("for (long long q = blockIdx.x; q < tiles; q += gridDim.x)", "q",
                  "tiles")
      << " {\n"
      << "    const long long b = q / (tilesRows * tilesCols), r = q % (tilesRows * tilesCols);\n"
      << "    const long long row0 = r / tilesCols * " << tile << ", col0 = r % tilesCols * "
      << tile << ";\n"
      << "    const " << T << " *src = in0 + b * rows * cols;\n"
      << "    " << T << " *dst = out1 + b * rows * cols;\n"
      << "    // Read rows of the input tile along its columns (coalesced) ...\n"
      << "    for (int y = threadIdx.y; y < " << tile << "; y += blockDim.y)\n"
      << "      for (int x = threadIdx.x; x < " << tile << "; x += blockDim.x)\n"
      << "        if (row0 + y < rows && col0 + x < cols)\n"
      << "          tile[y][x] = dlc_ld(src, (row0 + y) * cols + col0 + x);\n"
      << "    __syncthreads();\n"
      << "    // ... and write them as columns of the output tile (coalesced too).\n"
      << "    for (int y = threadIdx.y; y < " << tile << "; y += blockDim.y)\n"
      << "      for (int x = threadIdx.x; x < " << tile << "; x += blockDim.x)\n"
      << "        if (col0 + y < cols && row0 + x < rows)\n"
      << "          dlc_st(dst, (col0 + y) * rows + row0 + x, tile[x][y]);\n"
      << "    __syncthreads();\n"
      << "  }\n"
      << "}\n";
  g.args = {flow.inputs[0], flow.exported[0]};
  g.blockSize = static_cast<int>(kTransposeTile);
  g.blockSizeY = static_cast<int>(kTransposeRows);
  g.work = t->batch * tilesRows * tilesCols;
  finish(g, plan, launch, e, src.str(), "transpose", target);
  return StatusOr<GeneratedKernel>(std::move(g));
}

StatusOr<GeneratedKernel> generateReduction(const Plan &plan, const Launch &launch,
                                            const Dataflow &flow,
                                            const std::vector<size_t> &reductions,
                                            KernelTarget target) {
  auto shapeOr = reductionShape(plan, plan.kernels[reductions[0]]);
  if (!shapeOr.isOk())
    return shapeOr.status();
  ReductionShape red = *shapeOr;
  for (size_t r : reductions) {
    auto other = reductionShape(plan, plan.kernels[r]);
    if (!other.isOk())
      return other.status();
    if (!(*other == red))
      return Status(StatusCode::kInvalidArgument,
                    "reductions over different dimensions (" + plan.kernels[reductions[0]].op +
                        " of " + shapeText(red.input) + " and " + plan.kernels[r].op + " of " +
                        shapeText(other->input) + ") in one launch");
  }
  bool anyOverlap = false;
  std::string hazard = aliasHazard(plan, flow, false, anyOverlap);
  if (!hazard.empty())
    return Status(StatusCode::kInvalidArgument, hazard);
  // Which exported values are written in the loop over the input, and
  // which after the reduction, once per output row.
  std::vector<int32_t> inLoop, perRow;
  for (int32_t id : flow.exported) {
    const PlanBuffer &b = plan.buffers[id];
    if (b.shape == red.input)
      inLoop.push_back(id);
    else if (b.numElements() == red.rows)
      perRow.push_back(id);
    else
      return Status(StatusCode::kInvalidArgument,
                    "exports '" + b.name + "' (" + typeText(b) +
                        "), neither the reduction's input " + shapeText(red.input) +
                        " nor one value per output row (" + std::to_string(red.rows) + ")");
  }

  int block = 32;
  while (block < kBlockSize && block < red.count)
    block *= 2;
  Shape keptShape, keptStrides, redShape, redStrides;
  Shape inStrides = rowMajorStrides(red.input);
  size_t firstReduced = red.input.size(), lastKept = 0;
  bool anyKept = false;
  for (size_t d = 0; d < red.input.size(); ++d) {
    (red.reduced[d] ? redShape : keptShape).push_back(red.input[d]);
    (red.reduced[d] ? redStrides : keptStrides).push_back(inStrides[d]);
    if (red.input[d] == 1)
      continue; // a unit dimension does not change any linear index
    if (red.reduced[d])
      firstReduced = std::min(firstReduced, d);
    else {
      lastKept = d;
      anyKept = true;
    }
  }
  bool rowsOuter = !anyKept || lastKept < firstReduced; // reduced dims innermost
  bool rowsInner = true; // reduced dims outermost: a column reduction
  for (size_t d = 0, seenKept = 0; d < red.input.size(); ++d) {
    if (red.input[d] == 1)
      continue;
    if (!red.reduced[d])
      seenKept = 1;
    else if (seenKept)
      rowsInner = false;
  }

  GeneratedKernel g;
  g.form = KernelForm::kReduction;
  Emitter e(plan, flow);
  // Inputs first, as in the loop form.
  {
    Emitter dry(plan, flow);
    for (size_t r : reductions)
      dry.value(plan.kernels[r].inputs[0], "ii");
    for (int32_t id : inLoop)
      dry.value(id, "ii");
    if (!dry.error.empty())
      return Status(StatusCode::kInvalidArgument, dry.error);
    e.params = dry.params;
  }
  e.indent = 1;
  std::string rows = std::to_string(red.rows) + "LL", count = std::to_string(red.count) + "LL";
  // A column reduction (the reduced dimensions outermost: bias gradients)
  // with enough outputs is tiled: 32 consecutive outputs per block, one per
  // lane, so each warp's loads are coalesced; 32 rows of threads split the
  // reduction and add through shared memory. Otherwise one block per output.
  bool columns = rowsInner && !rowsOuter && red.rows >= kColumnTile;
  auto combine = [&](size_t a, const std::string &x, const std::string &lane = "") {
    std::string acc = "acc" + std::to_string(a) + lane;
    bool isMax = plan.kernels[reductions[a]].op == "reduce_max";
    return acc + " = " + (isMax ? "dlc_max_nan(" + acc + ", " + x + ")" : acc + " + " + x) + ";";
  };
  // The value one output's reduction leaves (a mean divides its sum),
  // seeded for the consumers that follow it at index `o`.
  auto seedResults = [&](const std::string &lane) {
    for (size_t a = 0; a < reductions.size(); ++a) {
      const PlanKernel &k = plan.kernels[reductions[a]];
      bool mean = k.op == "reduce_mean" || k.op == "global_avg_pool";
      std::string acc = "acc" + std::to_string(a) + lane;
      std::string reg = e.temp("red", "float", mean ? acc + " / " + floatLiteral(double(red.count))
                                                    : acc);
      e.seed(k.outputs[0], "o", reg);
    }
    for (int32_t id : perRow)
      e.line("dlc_st(" + e.param(id) + ", o, " + e.value(id, "o") + ");");
  };
  if (rowsInner && !rowsOuter && targetWriter(target).sumsColumnsByRows()) {
    // A core's column reduction reads its input row after row, each row's
    // part of a tile of outputs into a tile of accumulators: contiguous
    // loads and a loop the compiler vectorizes, where a GPU's form (a lane
    // per output) would walk each column down the rows. Every output still
    // adds its rows in order, on one thread.
    const std::string tile = std::to_string(kHostColumnTile);
    e.open(targetWriter(target).itemLoop("", "c", rows));
    e.line("const long long o0 = c;");
    e.line("const long long w = c_end - c < " + tile + "LL ? c_end - c : " + tile + "LL;");
    e.line("c += w - 1;");
    for (size_t a = 0; a < reductions.size(); ++a) {
      bool isMax = plan.kernels[reductions[a]].op == "reduce_max";
      e.line("float acc" + std::to_string(a) + "[" + tile + "];");
      e.line("for (long long j = 0; j < w; ++j) acc" + std::to_string(a) + "[j] = " +
             (isMax ? "DLC_NEG_INF" : "0.f") + ";");
    }
    e.open("for (long long r = 0; r < " + count + "; ++r)");
    e.line("DLC_IVDEP");
    e.open("for (long long j = 0; j < w; ++j)");
    e.line("const long long ii = r * " + rows + " + o0 + j;");
    for (size_t a = 0; a < reductions.size(); ++a)
      e.line(combine(a, e.value(plan.kernels[reductions[a]].inputs[0], "ii"), "[j]"));
    for (int32_t id : inLoop)
      e.line("dlc_st(" + e.param(id) + ", ii, " + e.value(id, "ii") + ");");
    e.close();
    e.close();
    e.open("for (long long j = 0; j < w; ++j)");
    e.line("const long long o = o0 + j;");
    seedResults("[j]");
    e.close();
    e.close();
    if (!e.error.empty())
      return Status(StatusCode::kInvalidArgument, e.error);
    std::ostringstream s;
    s << "extern \"C\" __global__ void DLC_KERNEL_NAME(" << paramList(e, flow, !anyOverlap, target)
      << ") {\n"
      << stepLine(e) << "  // " << red.rows << " outputs, each summing " << red.count
      << " rows: this part's outputs in tiles of " << tile << ", row after row.\n"
      << e.body << "}\n";
    g.args = e.params;
    g.blockSize = 1;
    g.work = red.rows;
    finish(g, plan, launch, e, s.str(), "reduce", target);
    return g;
  }
  if (columns) {
    for (size_t a = 0; a < reductions.size(); ++a)
      e.line("__shared__ float part" + std::to_string(a) + "[" + std::to_string(kColumnRows) +
             "][" + std::to_string(kColumnTile + 1) + "];");
    e.open(targetWriter(target).itemLoop("for (long long o0 = (long long)blockIdx.x * blockDim.x; o0 < " + rows +
                        "; o0 += (long long)gridDim.x * blockDim.x)",
                    "o0", rows));
    e.line("const long long o = o0 + threadIdx.x;");
  } else {
    for (size_t a = 0; a < reductions.size(); ++a)
      e.line("__shared__ float smem" + std::to_string(a) + "[32];");
    e.open(targetWriter(target).itemLoop("for (long long o = blockIdx.x; o < " + rows + "; o += gridDim.x)",
                    "o", rows));
  }
  std::string base;
  if (!rowsOuter && !rowsInner) {
    std::string expr;
    for (size_t d = 0; d < keptShape.size(); ++d)
      expr += (expr.empty() ? "" : " + ") + e.coord("o", keptShape, d) + " * " +
              std::to_string(keptStrides[d]) + "LL";
    base = e.temp("b", "long long", expr.empty() ? "0LL" : expr);
  }
  for (size_t a = 0; a < reductions.size(); ++a) {
    bool isMax = plan.kernels[reductions[a]].op == "reduce_max";
    e.line("float acc" + std::to_string(a) + " = " + (isMax ? "DLC_NEG_INF" : "0.f") + ";");
  }
  if (columns) {
    e.open("if (o < " + rows + ")");
    e.open("for (long long r = threadIdx.y; r < " + count + "; r += blockDim.y)");
  } else {
    e.open("for (long long r = threadIdx.x; r < " + count + "; r += blockDim.x)");
  }
  if (rowsOuter)
    e.line("const long long ii = o * " + count + " + r;");
  else if (rowsInner)
    e.line("const long long ii = r * " + rows + " + o;");
  else {
    std::string expr = base;
    for (size_t d = 0; d < redShape.size(); ++d)
      expr += " + " + e.coord("r", redShape, d) + " * " + std::to_string(redStrides[d]) + "LL";
    e.line("const long long ii = " + expr + ";");
  }
  for (size_t a = 0; a < reductions.size(); ++a)
    e.line(combine(a, e.value(plan.kernels[reductions[a]].inputs[0], "ii")));
  for (int32_t id : inLoop)
    e.line("dlc_st(" + e.param(id) + ", ii, " + e.value(id, "ii") + ");");
  e.close();
  if (columns) {
    e.close();
    for (size_t a = 0; a < reductions.size(); ++a)
      e.line("part" + std::to_string(a) + "[threadIdx.y][threadIdx.x] = acc" +
             std::to_string(a) + ";");
    e.line("__syncthreads();");
    e.open("if (threadIdx.y == 0 && o < " + rows + ")");
    e.open("for (int k = 1; k < (int)blockDim.y; ++k)");
    for (size_t a = 0; a < reductions.size(); ++a)
      e.line(combine(a, "part" + std::to_string(a) + "[k][threadIdx.x]"));
    e.close();
  } else {
    for (size_t a = 0; a < reductions.size(); ++a) {
      bool isMax = plan.kernels[reductions[a]].op == "reduce_max";
      std::string acc = "acc" + std::to_string(a);
      e.line(acc + " = dlc_block_reduce<" + std::to_string(block) + ", " +
             (isMax ? "true" : "false") + ">(" + acc + ", smem" + std::to_string(a) + ");");
    }
    e.open("if (threadIdx.x == 0)");
  }
  seedResults("");
  e.close();
  if (columns)
    e.line("__syncthreads(); // the partials are reused by the next tile");
  e.close();
  if (!e.error.empty())
    return Status(StatusCode::kInvalidArgument, e.error);

  std::ostringstream s;
  if (columns)
    s << "extern \"C\" __global__ void __launch_bounds__(" << kColumnTile * kColumnRows
      << ") DLC_KERNEL_NAME(" << paramList(e, flow, !anyOverlap, target) << ") {\n"
      << stepLine(e) << "  // " << red.rows << " outputs in tiles of " << kColumnTile << " (blockDim.x), each "
      << "summing " << red.count << " rows split over blockDim.y = " << kColumnRows << ".\n";
  else
    s << "extern \"C\" __global__ void __launch_bounds__(" << block << ") DLC_KERNEL_NAME("
      << paramList(e, flow, !anyOverlap, target) << ") {\n"
      << stepLine(e) << "  // One block per output row: " << red.rows << " rows of " << red.count
      << " elements" << (rowsOuter ? ", contiguous" : rowsInner ? ", strided by the row count" : "")
      << ".\n";
  s << e.body << "}\n";
  g.args = e.params;
  g.blockSize = columns ? kColumnTile : block;
  g.blockSizeY = columns ? kColumnRows : 1;
  g.work = columns ? (red.rows + kColumnTile - 1) / kColumnTile : red.rows;
  finish(g, plan, launch, e, s.str(), "reduce", target);
  return g;
}


/// The row form: element-wise producers, one softmax / layer_norm /
/// softmax_backward over the last axis, element-wise consumers of its
/// result. One block per row; each pass over the row asks the emitter for
/// the row op's operands at the element's index (the producers recomputed
/// per pass, as XLA's input fusion does), the statistics combine in
/// double as the CPU reference's (cpu/OpsDense.cpp), and the last pass
/// seeds the row op's result at the index, so consumers and every
/// exported value are computed and stored there.
StatusOr<GeneratedKernel> generateRow(const Plan &plan, const Launch &launch,
                                      const Dataflow &flow, size_t rowKernel,
                                      KernelTarget target) {
  const PlanKernel &k = plan.kernels[rowKernel];
  const std::string &op = k.op;
  auto refuse = [&](const std::string &why) {
    return Status(StatusCode::kInvalidArgument, op + " " + why);
  };
  bool softmax = op == "softmax", norm = op == "layer_norm", backward = op == "softmax_backward";
  size_t minIn = norm ? 3 : 2 - softmax, maxIn = softmax ? 2 : norm ? 3 : 2;
  if (k.inputs.size() < minIn || k.inputs.size() > maxIn || k.outputs.size() != 1)
    return refuse("with " + std::to_string(k.inputs.size()) + " operands and " +
                  std::to_string(k.outputs.size()) + " results");
  const Shape space = plan.buffers[k.inputs[0]].shape;
  int64_t rank = static_cast<int64_t>(space.size());
  if (rank == 0 || space.back() == 0)
    return refuse("of a scalar or empty input");
  int64_t d = space.back(), rows = numElements(space) / d;
  if (!norm) {
    int64_t axis = k.intAttr("axis", -1);
    if (axis != -1 && axis != rank - 1)
      return refuse("over axis " + std::to_string(axis) + " of a rank-" + std::to_string(rank) +
                    " input: the row form normalizes the last axis only");
  }
  bool causal = softmax && k.intAttr("causal", 0) != 0;
  if (causal && rank < 2)
    return refuse("with causal masking of a rank-1 input");
  for (int32_t id : {k.outputs[0], backward ? k.inputs[1] : k.outputs[0]})
    if (plan.buffers[id].shape != space)
      return refuse("with '" + plan.buffers[id].name + "' of type " + typeText(plan.buffers[id]) +
                    ", not of the input's shape " + shapeText(space));
  if (norm)
    for (int32_t id : {k.inputs[1], k.inputs[2]})
      if (plan.buffers[id].numElements() != d)
        return refuse("with '" + plan.buffers[id].name + "' of type " +
                      typeText(plan.buffers[id]) + ", not one value per column (" +
                      std::to_string(d) + ")");
  for (int32_t id : flow.exported)
    if (plan.buffers[id].shape != space)
      return Status(StatusCode::kInvalidArgument,
                    "exports '" + plan.buffers[id].name + "' (" + typeText(plan.buffers[id]) +
                        "), not of the shape of the rows of its " + op + " " +
                        shapeText(space));

  int block = 32;
  while (block < kBlockSize && block < d)
    block *= 2;
  std::string B = std::to_string(block);
  // Inputs read at an index other than the element's own (gamma, beta, a
  // broadcast mask, producers' remapped operands).
  std::set<int32_t> remapped;
  auto body = [&](Emitter &e, bool stores) {
    e.loadHook = [&](int32_t id, const std::string &idx) -> std::string {
      if (idx != "i")
        remapped.insert(id);
      return "";
    };
    // Each pass has i = r * d + c.
    e.rowSpace = &space;
    e.rowVar = "r";
    e.innerVar = "c";
    e.indent = 1;
    e.line("__shared__ double smem[32];");
    // On the host, the row op's operands that the launch computes (a
    // dropout's mask, a residual add) are computed in the first pass and
    // kept for the others: a GPU recomputes them rather than spill, a core
    // has the cache for a row.
    std::vector<std::pair<int32_t, std::string>> kept;
    if (targetWriter(target).keepsRowValues())
      for (size_t j = 0; j < (backward ? 2u : 1u); ++j) {
        int32_t id = k.inputs[j];
        if (auto view = flow.views.find(id); view != flow.views.end())
          id = view->second;
        if (!flow.producer.count(id))
          continue;
        kept.emplace_back(id, "dlc_in" + std::to_string(j));
        e.line("__shared__ float " + kept.back().second + "[" + std::to_string(d) + "];");
      }
    e.line("const long long d = " + std::to_string(d) + "LL;");
    std::string rowCount = std::to_string(rows) + "LL";
    e.open(targetWriter(target).itemLoop("for (long long r = blockIdx.x; r < " + rowCount + "; r += gridDim.x)",
                    "r", rowCount));
    if (causal) // the last visible key of the row's query
      e.line("const long long last = r % " + std::to_string(space[rank - 2]) + "LL + " +
             std::to_string(d - space[rank - 2]) + "LL;");
    // One pass over the row: `each` emits the work at element i. With
    // `lanes`, the host's form: the row in runs of kLanes columns (`l` the
    // column's lane) and a tail, so that a fold into per-lane accumulators
    // vectorizes.
    int passes = 0;
    auto pass = [&](const std::function<void()> &each, bool lanes = false) {
      auto element = [&] {
        e.line("const long long i = r * d + c;");
        for (const auto &[id, array] : kept)
          if (passes > 0)
            e.seed(id, "i", array + "[c]");
        each();
        for (const auto &[id, array] : kept)
          if (passes == 0)
            e.line(array + "[c] = " + e.value(id, "i") + ";");
      };
      if (!lanes) {
        e.open("for (long long c = threadIdx.x; c < d; c += blockDim.x)");
        element();
        e.close();
      } else {
        const std::string L = std::to_string(kRowLanes);
        e.open("for (long long c0 = 0; c0 < d / " + L + " * " + L + "; c0 += " + L + ")");
        e.open("for (int l = 0; l < " + L + "; ++l)");
        e.line("const long long c = c0 + l;");
        element();
        e.close();
        e.close();
        e.open("for (long long c = d / " + L + " * " + L + "; c < d; ++c)");
        e.line("const int l = (int)(c - d / " + L + " * " + L + ");");
        element();
        e.close();
      }
      ++passes;
    };
    auto reduce = [&](const std::string &acc, bool max) {
      e.line(acc + " = dlc_block_allreduce<" + B + ", " + (max ? "true" : "false") + ">(" + acc +
             ", smem);");
    };
    // A pass that folds `term`'s value at each element (of those `guard`
    // admits) into `acc`: a sum, or a maximum that keeps acc where the
    // term is NaN. On the host, into kRowLanes accumulators combined in
    // lane order: a double sum in one accumulator does not vectorize
    // without reordering it, and these lanes are that order, written out.
    auto fold = [&](const std::string &acc, bool max, const std::function<std::string()> &term,
                    const std::string &guard = "") {
      const bool lanes = targetWriter(target).keepsRowValues();
      const std::string a = lanes ? acc + "_l[l]" : acc;
      if (lanes)
        e.line("double " + acc + "_l[" + std::to_string(kRowLanes) + "];\n" +
               std::string(2 * e.indent, ' ') + "for (int l = 0; l < " +
               std::to_string(kRowLanes) + "; ++l) " + acc + "_l[l] = " + acc + ";");
      pass([&] {
        std::string z = term();
        if (!lanes)
          e.line((guard.empty() ? "" : "if (" + guard + ") ") + a + " = " +
                 (max ? a + " < " + z + " ? " + z + " : " + a : a + " + " + z) + ";");
        else if (max) // a select, not a branch: the loop vectorizes
          e.line(a + " = " + (guard.empty() ? "" : "(" + guard + ") && ") + a + " < " + z +
                 " ? " + z + " : " + a + ";");
        else
          e.line(a + " = " + a + " + " + (guard.empty() ? z : "(" + guard + " ? " + z + " : 0.0)") +
                 ";");
      }, lanes);
      if (lanes)
        e.line("for (int l = 0; l < " + std::to_string(kRowLanes) + "; ++l) " + acc + " = " +
               (max ? acc + " < " + acc + "_l[l] ? " + acc + "_l[l] : " + acc
                    : "l ? " + acc + " + " + acc + "_l[l] : " + acc + "_l[l]") +
               ";");
      reduce(acc, max);
    };
    // softmax's logit at i: scale * x + mask, in double.
    double scale = k.floatAttr("scale", 1.0);
    auto logit = [&] {
      std::string z = "(" + doubleLiteral(scale) + " * (double)" + e.value(k.inputs[0], "i");
      if (k.inputs.size() > 1)
        z += " + (double)" +
             e.value(k.inputs[1], e.broadcastIndex("i", space, plan.buffers[k.inputs[1]].shape));
      return e.temp("z", "double", z + ")");
    };
    std::string visible = causal ? "c <= last" : "";
    // The passes that gather the row's statistics; `last` then emits the
    // row op's result at i in the final pass.
    std::function<std::string()> last;
    if (softmax) {
      e.line("double mx = DLC_NEG_INF, sum = 0.0;");
      fold("mx", true, logit, visible);
      if (targetWriter(target).keepsRowValues()) {
        // A core computes what a GPU would recompute: each exponential
        // once, kept (as the CPU keeps it, a float) for the last pass. In
        // float, by the host prelude's dlc_expf: libm's double exp kept the
        // pass scalar, and the float it is kept as differs by a rounding.
        e.line("__shared__ float dlc_e[" + std::to_string(d) + "];");
        fold("sum", false, [&] {
          std::string z = logit();
          e.line("const double dlc_ex = " + (causal ? visible + " ? " : std::string()) +
                 "(double)dlc_expf((float)(" + z + " - mx))" + (causal ? " : 0.0" : "") + ";");
          e.line("dlc_e[c] = (float)dlc_ex;");
          return std::string("dlc_ex");
        });
        last = [&] { return e.temp("y", "float", "(float)((double)dlc_e[c] / sum)"); };
      } else {
        fold("sum", false, [&] { return "exp(" + logit() + " - mx)"; }, visible);
        last = [&] {
          // The CPU stores the exponential as a float, then divides it.
          std::string y = "(float)((double)(float)exp(" + logit() + " - mx) / sum)";
          return e.temp("y", "float", causal ? visible + " ? " + y + " : 0.f" : y);
        };
      }
    } else if (norm) {
      e.line("double mean = 0.0, var = 0.0;");
      fold("mean", false, [&] { return "(double)" + e.value(k.inputs[0], "i"); });
      e.line("mean /= (double)d;");
      fold("var", false, [&] {
        std::string dv =
            e.temp("dv", "double", "(double)" + e.value(k.inputs[0], "i") + " - mean");
        return dv + " * " + dv;
      });
      e.line("const double rstd = 1.0 / sqrt(var / (double)d + " +
             doubleLiteral(k.floatAttr("epsilon", 1e-5)) + ");");
      last = [&] {
        return e.temp("y", "float",
                      "(float)(((double)" + e.value(k.inputs[0], "i") +
                          " - mean) * rstd * (double)" + e.value(k.inputs[1], "c") +
                          " + (double)" + e.value(k.inputs[2], "c") + ")");
      };
    } else {
      e.line("double dot = 0.0;");
      fold("dot", false, [&] {
        return "(double)" + e.value(k.inputs[0], "i") + " * (double)" + e.value(k.inputs[1], "i");
      });
      last = [&] {
        return e.temp("y", "float",
                      "(float)(" + doubleLiteral(scale) + " * (double)" +
                          e.value(k.inputs[1], "i") + " * ((double)" +
                          e.value(k.inputs[0], "i") + " - dot))");
      };
    }
    pass([&] {
      std::string y = last();
      // What the result's buffer would hold, for the consumers.
      DType type = plan.buffers[k.outputs[0]].dtype;
      if (type == DType::kF16 || type == DType::kBF16) {
        (type == DType::kF16 ? e.usesF16 : e.usesBF16) = true;
        y = e.temp("y", "float",
                   (type == DType::kF16 ? "dlc_round_f16(" : "dlc_round_bf16(") + y + ")");
      }
      e.seed(k.outputs[0], "i", y);
      for (int32_t id : flow.exported) {
        std::string v = e.value(id, "i");
        if (stores)
          e.line("dlc_st(" + e.param(id) + ", i, " + v + ");");
      }
    });
    e.close();
  };

  GeneratedKernel g;
  g.form = KernelForm::kRow;
  Emitter e(plan, flow);
  // Inputs first, as in the other forms: a dry run registers them.
  {
    Emitter dry(plan, flow);
    body(dry, false);
    if (!dry.error.empty())
      return Status(StatusCode::kInvalidArgument, dry.error);
    e.params = dry.params;
    for (int32_t id : flow.exported)
      e.param(id);
  }
  remapped.clear();
  body(e, true);
  if (!e.error.empty())
    return Status(StatusCode::kInvalidArgument, e.error);
  // A result may take the bytes of an input (the memory planner ends an
  // input's life at the op that reads it): safe where the input is read at
  // the element's own index only, as the same element, since each thread
  // reads its elements before it writes them, after the row's statistics.
  bool anyOverlap = false;
  for (int32_t o : flow.exported)
    for (int32_t in : flow.inputs) {
      const PlanBuffer &ob = plan.buffers[o], &ib = plan.buffers[in];
      if (!overlaps(ob, ib))
        continue;
      anyOverlap = true;
      if (remapped.count(in) || ob.offset != ib.offset || ib.shape != space ||
          dtypeBytes(ob.dtype) != dtypeBytes(ib.dtype))
        return Status(StatusCode::kInvalidArgument,
                      "output '" + ob.name + "' shares arena bytes with input '" + ib.name +
                          "', which is not read as the same element only");
    }

  std::ostringstream src;
  src << "extern \"C\" __global__ void __launch_bounds__(" << block << ") DLC_KERNEL_NAME("
      << paramList(e, flow, !anyOverlap, target) << ") {\n"
      << stepLine(e) << "  // One block per row: " << rows << " rows of " << d << ", " << op
      << (causal ? " (causal)" : "") << " statistics in double.\n"
      << e.body << "}\n";
  g.args = e.params;
  g.blockSize = block;
  g.work = rows;
  finish(g, plan, launch, e, src.str(), "row", target);
  return g;
}

const char *const kOptimizerBody = R"cuda(// The table the launcher uploads: one segment per parameter, in the
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

// torch.optim's SGD (momentum buffer starts as the gradient) and AdamW,
// as the CPU reference computes them.
extern "C" __global__ void __launch_bounds__(256)
DLC_KERNEL_NAME(const DlcSegment *__restrict__ table, int segments,
                const long long *__restrict__ step_counter) {
  const long long step = *step_counter; // on the device: a graph replays it
  const long long stride = (long long)gridDim.x * blockDim.x;
  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  // AdamW's bias corrections, for the betas of the last segment that needed
  // them: every segment of a model shares its betas, so each thread takes
  // the two double pow()s once, not once per segment. Per segment, the
  // million threads of an H100's grid spent about 3 ms of BERT-base's
  // 4.3 ms update in them (2026-11-26).
  float beta1 = -1.f, beta2 = -1.f, c1 = 0.f, rc2 = 0.f;
  for (int s = 0; s < segments; ++s) {
    const DlcSegment seg = table[s];
    const float factor = seg.status ? seg.status[0] : 1.f;
    if (seg.status && seg.status[1] != 0.f) {
      // A gradient overflowed: the step is skipped, the values kept.
      dlc_keep_range(seg, first, seg.n, stride);
    } else if (seg.adamw) {
      if (seg.beta1 != beta1 || seg.beta2 != beta2) {
        const double t = (double)(step + 1);
        beta1 = seg.beta1;
        beta2 = seg.beta2;
        c1 = (float)(1.0 - pow((double)beta1, t));
        rc2 = (float)(1.0 / sqrt(1.0 - pow((double)beta2, t)));
      }
      if (seg.grad_dtype == 1) dlc_adamw_range<1>(seg, first, seg.n, stride, factor, c1, rc2);
      else if (seg.grad_dtype == 2) dlc_adamw_range<2>(seg, first, seg.n, stride, factor, c1, rc2);
      else dlc_adamw_range<0>(seg, first, seg.n, stride, factor, c1, rc2);
    } else {
      if (seg.grad_dtype == 1) dlc_sgd_range<1>(seg, first, seg.n, stride, factor, step);
      else if (seg.grad_dtype == 2) dlc_sgd_range<2>(seg, first, seg.n, stride, factor, step);
      else dlc_sgd_range<0>(seg, first, seg.n, stride, factor, step);
    }
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
  Emitter e(plan, none);
  g.blockSize = kBlockSize;
  Launch generic = launch;
  generic.kernels.clear();
  // Half-precision values handled as their bits and widened as the CPU
  // widens them (Half.h), so that a table kernel also runs as plain C++ on
  // the host (no cuda_fp16.h there) and matches the CPU bit for bit.
  finish(g, plan, generic, e,
         std::string(halfToFloatText()) + "\n" + body, form, target, comment);
}

StatusOr<GeneratedKernel> generateOptimizer(const Plan &plan, const Launch &launch,
                                            KernelTarget target) {
  GeneratedKernel g;
  g.form = KernelForm::kOptimizer;
  // Casts in the group widen a half-precision gradient for one update:
  // the update reads the half value and widens it itself.
  std::map<int32_t, int32_t> widened; // cast output -> its half input
  for (size_t k : launch.kernels)
    if (const PlanKernel &kernel = plan.kernels[k]; kernel.op == "cast") {
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
    if (kernel.op == "cast")
      continue;
    OptimizerSegment seg;
    seg.adamw = kernel.op == "adamw_update";
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
  finishTableKernel(g, plan, launch, targetWriter(target).tableBody(kOptimizerBody), "optimizer",
                    "// fuses sgd_update and adamw_update horizontally: one launch walks a\n"
                    "// table of (param, grad, state, n) segments, one per updated tensor\n",
                    target);
  return g;
}

/// Type codes of the table kernels: 0 f32, 1 f16, 2 bf16; -1 otherwise.
int32_t tableDtype(DType t) {
  switch (t) {
  case DType::kF32: return 0;
  case DType::kF16: return 1;
  case DType::kBF16: return 2;
  default: return -1;
  }
}

/// Elements per vector of a cast: 16 bytes of its narrower type, as both
/// targets' kernels (castTableKernel) compute it.
int64_t castVectorElements(const CastSegment &seg) {
  return kVectorBytes / std::min(dtypeBytes(seg.from), dtypeBytes(seg.to));
}
int64_t castVectors(const CastSegment &seg) {
  int64_t v = castVectorElements(seg);
  return (seg.elements + v - 1) / v;
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
  return std::string("#if defined(__CUDACC__)\n"
                     "#include <cuda_fp16.h>\n"
                     "#endif\n") +
         floatToHalfText() + kCastTypes + targetWriter(target).castTableKernel();
}

/// Why the launch's casts are not a horizontal group (one reads another's
/// result, or one is not a float-to-float cast); "" when they are.
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

} // namespace

const char *kernelFormName(KernelForm form) {
  switch (form) {
  case KernelForm::kLoop: return "loop";
  case KernelForm::kReduction: return "reduction";
  case KernelForm::kRow: return "row";
  case KernelForm::kOptimizer: return "optimizer";
  case KernelForm::kHorizontalCast: return "horizontal_cast";
  case KernelForm::kTranspose: return "transpose";
  }
  return "?";
}

bool walksSegmentTable(KernelForm form) {
  return form == KernelForm::kOptimizer || form == KernelForm::kHorizontalCast;
}

namespace {
/// Every op of the launch is an optimizer update or a cast whose result
/// only an update of the launch reads, as its gradient.
bool onlyUpdatesAndTheirGradientCasts(const Launch &launch, const Plan &plan) {
  for (size_t k : launch.kernels) {
    const PlanKernel &kernel = plan.kernels[k];
    if (kernel.opClass == OpClass::kOptimizer)
      continue;
    if (kernel.op != "cast")
      return false;
    int32_t out = kernel.outputs[0];
    for (size_t j = 0; j < plan.kernels.size(); ++j) {
      const PlanKernel &reader = plan.kernels[j];
      for (size_t i = 0; i < reader.inputs.size(); ++i)
        if (reader.inputs[i] == out &&
            (reader.opClass != OpClass::kOptimizer || i != 1 ||
             std::find(launch.kernels.begin(), launch.kernels.end(), j) ==
                 launch.kernels.end()))
          return false;
    }
  }
  return true;
}

StatusOr<GeneratedKernel> generate(const Plan &plan, const Launch &launch,
                                   const PlanIndex &index,
                                   KernelTarget target = KernelTarget::kCuda) {
  if (launch.kernels.empty())
    return Status(StatusCode::kInvalidArgument, "an empty launch");
  bool allOptimizer = true, anyOptimizer = false;
  std::vector<size_t> reductions, rowOps;
  for (size_t k : launch.kernels) {
    const PlanKernel &kernel = plan.kernels[k];
    const std::string &op = kernel.op;
    bool optimizer = kernel.opClass == OpClass::kOptimizer;
    bool reduction = kernel.opClass == OpClass::kReduction;
    if (!isElemental(kernel.opClass) && !reduction && !optimizer && !isRowOp(kernel))
      return Status(StatusCode::kInvalidArgument,
                    op + " is a " + implementationOf(kernel.opClass) +
                        " op, not one the generator covers (element-wise, broadcast, "
                        "data movement, dropout, reductions, softmax / layer_norm / "
                        "softmax_backward rows, optimizer updates)");
    allOptimizer &= optimizer;
    anyOptimizer |= optimizer;
    if (reduction)
      reductions.push_back(k);
    if (isRowOp(kernel))
      rowOps.push_back(k);
  }
  // Mixed precision: a horizontal update group may hold the casts of its
  // half-precision gradients (dlc-fuse-optimizer-updates).
  bool castsForUpdates = anyOptimizer && onlyUpdatesAndTheirGradientCasts(launch, plan);
  if (allOptimizer || castsForUpdates)
    return generateOptimizer(plan, launch, target);
  if (anyOptimizer)
    return Status(StatusCode::kInvalidArgument,
                  "mixes optimizer updates with other ops; only a horizontal group of "
                  "updates has a generated kernel");
  Dataflow flow = dataflowOf(plan, launch, index);
  if (flow.exported.empty())
    return Status(StatusCode::kInvalidArgument, "computes nothing that is read later");
  if (!rowOps.empty()) {
    const std::string &first = plan.kernels[rowOps[0]].op;
    if (rowOps.size() > 1)
      return Status(StatusCode::kInvalidArgument,
                    "holds " + std::to_string(rowOps.size()) + " row ops (" + first + " and " +
                        plan.kernels[rowOps[1]].op + "); the row form computes one per launch");
    if (!reductions.empty())
      return Status(StatusCode::kInvalidArgument,
                    "holds a row op (" + first + ") and a reduction (" +
                        plan.kernels[reductions[0]].op + "); the row form computes no other "
                        "reduction");
    return generateRow(plan, launch, flow, rowOps[0], target);
  }
  if (!reductions.empty())
    return generateReduction(plan, launch, flow, reductions, target);
  // Casts whose results differ in shape (mixed precision's weight casts,
  // fused by FuseParameterCasts) are no loop: the horizontal cast kernel
  // takes them when they are independent.
  bool allCasts = launch.kernels.size() > 1 &&
                  std::all_of(launch.kernels.begin(), launch.kernels.end(),
                              [&](size_t k) { return plan.kernels[k].op == "cast"; });
  bool oneShape = std::all_of(flow.exported.begin(), flow.exported.end(), [&](int32_t id) {
    return plan.buffers[id].shape == plan.buffers[flow.exported.front()].shape;
  });
  if (allCasts && !oneShape) {
    std::string refusal = horizontalCastRefusal(plan, launch, index);
    if (!refusal.empty())
      return Status(StatusCode::kInvalidArgument,
                    "casts of different shapes, which only a horizontal group of independent "
                    "casts computes in one launch, but " + refusal);
    return generateHorizontalCast(plan, launch, flow, target);
  }
  if (auto transposed = generateTranspose(plan, launch, flow, target))
    return std::move(*transposed);
  return generateLoop(plan, launch, flow, target);
}

} // namespace

GenerateDecision isGeneratable(const Plan &plan, const Launch &launch) {
  auto launches = planLaunches(plan);
  auto g = generate(plan, launch, indexPlan(plan, launches));
  return g.isOk() ? GenerateDecision{true, ""}
                  : GenerateDecision{false, g.status().message()};
}

StatusOr<GeneratedKernel> generateKernel(const Plan &plan, const Launch &launch) {
  return generateKernel(plan, launch, planLaunches(plan));
}

StatusOr<GeneratedKernel> generateKernel(const Plan &plan, const Launch &launch,
                                         const std::vector<Launch> &launches,
                                         KernelTarget target) {
  auto g = generate(plan, launch, indexPlan(plan, launches), target);
  if (!g.isOk())
    return Status(g.status().code(),
                  launchLabel(launch) + " is not generated: " + g.status().message());
  g->launch = launch.index;
  g->kernels = launch.kernels;
  return g;
}

PlanKernels generatePlanKernels(const Plan &plan, KernelTarget target) {
  PlanKernels result;
  auto launches = planLaunches(plan);
  PlanIndex index = indexPlan(plan, launches);
  for (const Launch &launch : launches) {
    if (launch.implementation != "generated")
      continue;
    auto g = generate(plan, launch, index, target);
    if (!g.isOk()) {
      result.refused.emplace_back(launch, g.status().message());
      continue;
    }
    g->launch = launch.index;
    g->kernels = launch.kernels;
    result.kernels.push_back(std::move(*g));
  }
  return result;
}

namespace {
/// A table's rows as the device reads them: fields appended in the device
/// struct's order, buffer ids as device addresses (null for -1).
struct TableWriter {
  const std::function<uint64_t(int32_t)> &address;
  std::string bytes;
  template <typename T> void put(T value) {
    bytes.append(reinterpret_cast<const char *>(&value), sizeof value);
  }
  void pointer(int32_t id) { put<uint64_t>(id < 0 ? 0 : address(id)); }
};
} // namespace

std::string packOptimizerTable(const std::vector<OptimizerSegment> &segments,
                               const std::function<uint64_t(int32_t)> &address) {
  TableWriter table{address, {}};
  for (const OptimizerSegment &s : segments) {
    for (int32_t id : {s.newParam, s.newState1, s.newState2, s.param, s.grad, s.state1,
                       s.state2, s.lossScaleStatus})
      table.pointer(id);
    table.put<int64_t>(s.elements);
    for (double v : {s.lr, s.momentum, s.weightDecay, s.beta1, s.beta2, s.epsilon})
      table.put(static_cast<float>(v));
    for (int32_t v : {int32_t(s.adamw), int32_t(s.nesterov), s.gradDtype, int32_t(0)})
      table.put(v);
  }
  return table.bytes;
}

std::string packCastTable(const std::vector<CastSegment> &segments,
                          const std::function<uint64_t(int32_t)> &address) {
  TableWriter table{address, {}};
  int64_t vectors = 0;
  for (const CastSegment &s : segments) {
    table.pointer(s.input);
    table.pointer(s.output);
    table.put<int64_t>(s.elements);
    table.put<int64_t>(vectors);
    vectors += castVectors(s);
    table.put<int64_t>(vectors);
    table.put(tableDtype(s.from));
    table.put(tableDtype(s.to));
  }
  return table.bytes;
}

std::string packSegmentTable(const GeneratedKernel &kernel,
                             const std::function<uint64_t(int32_t)> &address) {
  switch (kernel.form) {
  case KernelForm::kOptimizer: return packOptimizerTable(kernel.segments, address);
  case KernelForm::kHorizontalCast: return packCastTable(kernel.castSegments, address);
  default: return "";
  }
}

} // namespace dlc::rt::codegen
