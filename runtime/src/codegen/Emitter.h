//===- Emitter.h - a launch's values, written at an index -------*- C++ -*-===//
//
// The generator is an elemental emitter, as XLA's: every value a launch
// computes is produced "at an index" by its op, which asks its operands for
// their values at the indices it needs (the same index for element-wise
// ops, a broadcast, transposed or sliced index for the others). Values are
// memoized per (buffer, index expression), so a chain of element-wise ops
// becomes straight-line register code, and a broadcast operand costs its
// index math only. Each op's text is its entry in one table
// (OpExpressions.h). The forms (FormSupport.h) wrap that code in their launch
// geometry. Any op, shape or dtype the emitter cannot handle is an error
// that names it, and isGeneratable reports that error as its reason: one
// source of truth for what is generated.
//
// Semantics follow the CPU reference kernels (cpu/OpsDense.cpp,
// cpu/OpsShape.cpp, cpu/Pool.cpp) in float32.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CODEGEN_EMITTER_H
#define DLC_RUNTIME_CODEGEN_EMITTER_H

#include "FormSupport.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace dlc::rt::codegen {

class Emitter {
public:
  Emitter(const Plan &plan, const Dataflow &flow, KernelTarget target)
      : plan(plan), flow(flow), target(target) {}

  /// How a value read from memory is spelled at an index; empty for the
  /// default scalar load. Not asked for a buffer with padded rows.
  std::function<std::string(int32_t, const std::string &)> loadHook;

  std::string value(int32_t buffer, const std::string &idx);
  /// Where element `idx` (an index over the buffer's shape, row-major) of
  /// `buffer` lies in memory: `idx` itself, or past the padding of the rows
  /// before it where the plan padded the buffer's rows (RowStride.h).
  std::string address(int32_t buffer, const std::string &idx) const;
  /// Index variables whose address in a padded buffer a form already
  /// spells without a division: in a buffer of rows of `last` elements
  /// `stride` apart, element `idx` lies at `spelled` (a column reduction's
  /// r * stride + o).
  struct PaddedIndex {
    int64_t last = 0, stride = 0;
    std::string spelled;
  };
  std::map<std::string, PaddedIndex> paddedIndex;
  /// Operand `i` of `k` at the index its result `result` is needed at
  /// (`idx`), broadcast to the result's shape.
  std::string operand(const PlanKernel &k, size_t i, int32_t result, const std::string &idx);
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
    // RowStride.h lets a generated launch only read padded rows: its
    // stores write the dense index.
    if (written && rowStride(plan.buffers[buffer]) > 0)
      fail("writes '" + plan.buffers[buffer].name +
           "', whose rows are padded; generated kernels write dense rows");
    return (written ? "out" : "in") + std::to_string(it - params.begin());
  }

  const Plan &plan;
  const Dataflow &flow;
  /// Whose text an op writes where a target overrides it (OpExpressions.h).
  const KernelTarget target;
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

} // namespace dlc::rt::codegen

#endif // DLC_RUNTIME_CODEGEN_EMITTER_H
