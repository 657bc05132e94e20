//===- LoopForm.cpp - element-wise chains in one loop ---------------------===//
//
// The loop form: element-wise and broadcast chains, casts, transposes,
// slices and concatenations computed at each output index of the largest
// exported value (KernelCodegen.h); on CUDA in 16-byte vectors with a
// scalar tail, on the host as a loop over elements or rows the compiler
// vectorizes (TargetWriter::packsVectors).
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"
#include "KernelTargets.h"
#include "dlc/runtime/Shape.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace dlc::rt::codegen {

namespace {
/// Where a concatenation's operand sits in the concat's result.
struct ConcatSlot {
  size_t axis = 0;
  int64_t offset = 0;
};

/// The launch's values read by one of its concatenations whose result has
/// the shape `space`, with their slices of it (the first, where a value is
/// read twice).
std::map<int32_t, ConcatSlot> concatSlots(const Plan &plan, const Launch &launch,
                                          const Dataflow &flow, const Shape &space) {
  std::map<int32_t, ConcatSlot> slots;
  for (size_t k : launch.kernels) {
    const PlanKernel &concat = plan.kernels[k];
    if (concat.op != "concat" || concat.outputs.size() != 1 ||
        plan.buffers[concat.outputs[0]].shape != space)
      continue;
    int64_t rank = static_cast<int64_t>(space.size());
    int64_t axis = concat.intAttr("axis", 0);
    axis = axis < 0 ? axis + rank : axis;
    if (axis < 0 || axis >= rank)
      continue;
    int64_t offset = 0;
    for (int32_t in : concat.inputs) {
      auto view = flow.views.find(in);
      int32_t value = view == flow.views.end() ? in : view->second;
      const Shape &shape = plan.buffers[in].shape;
      if (shape.size() != space.size() || plan.buffers[value].shape != shape)
        break;
      slots.insert({value, ConcatSlot{static_cast<size_t>(axis), offset}});
      offset += shape[axis];
    }
  }
  return slots;
}
} // namespace

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
  // An operand of a concatenation over the loop's space is stored by the
  // iterations of its slice (multi-output fusion of a concat and its
  // operands: each operand element is one concat element).
  std::map<int32_t, ConcatSlot> slots = concatSlots(plan, launch, flow, space);
  for (int32_t id : flow.exported) {
    const Shape &s = plan.buffers[id].shape;
    bool broadcasts = s.size() <= space.size();
    for (size_t d = 0; broadcasts && d < s.size(); ++d)
      broadcasts = s[d] == 1 || s[d] == space[space.size() - s.size() + d];
    if (!broadcasts && !slots.count(id))
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

  Emitter e(plan, flow, target);
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
      if (auto slot = slots.find(id); slot != slots.end() && shape != space) {
        remappedRead = true; // a write at another index: aliasing is unsafe
        const ConcatSlot &at = slot->second;
        std::string c = e.coord("i", space, at.axis);
        Shape strides = rowMajorStrides(shape);
        std::string j = "(" + c + " - " + std::to_string(at.offset) + "LL) * " +
                        std::to_string(strides[at.axis]) + "LL";
        for (size_t d = 0; d < space.size(); ++d)
          if (d != at.axis && space[d] != 1)
            j += " + " + e.coord("i", space, d) + " * " + std::to_string(strides[d]) + "LL";
        e.open("if (" + c + " >= " + std::to_string(at.offset) + "LL && " + c + " < " +
               std::to_string(at.offset + shape[at.axis]) + "LL)");
        std::string jv = e.temp("j", "long long", j);
        std::string v = e.value(id, jv);
        e.line("dlc_st(" + e.param(id) + ", " + jv + ", " + v + ");");
        e.close();
        continue;
      }
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
    Emitter dry(plan, flow, target);
    dry.loadHook = nullptr;
    for (int32_t id : flow.exported)
      dry.value(id, slots.count(id) ? std::string("i")
                                    : dry.broadcastIndex("i", space, plan.buffers[id].shape));
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
  s << writer.kernelHead(kBlockSize) << "DLC_KERNEL_NAME("
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

} // namespace dlc::rt::codegen
