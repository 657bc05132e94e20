//===- FormSupport.cpp - what the kernel forms share ----------------------===//

#include "FormSupport.h"

#include "Emitter.h"
#include "KernelTargets.h"
#include "dlc/runtime/DiskCache.h"
#include "dlc/runtime/codegen/KernelPrelude.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace dlc::rt::codegen {

std::string shapeText(const Shape &s) {
  std::string text = "[";
  for (size_t i = 0; i < s.size(); ++i)
    text += (i ? "," : "") + std::to_string(s[i]);
  return text + "]";
}

std::string typeText(const PlanBuffer &b) {
  return std::string(dtypeName(b.dtype)) + shapeText(b.shape);
}

std::string doubleLiteral(double v) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.17g", v);
  std::string s = text;
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

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

bool isRowOp(const PlanKernel &k) {
  return k.opClass == OpClass::kRowNormalization &&
         (k.id == OpId::kSoftmax || k.id == OpId::kLayerNorm || k.id == OpId::kSoftmaxBackward ||
          k.id == OpId::kLayerNormBackward);
}

//===----------------------------------------------------------------------===//
// The launch's dataflow
//===----------------------------------------------------------------------===//

PlanIndex indexPlan(const Plan &plan, const std::vector<Launch> &launches) {
  PlanIndex index;
  index.launchOf.resize(plan.kernels.size());
  for (const Launch &l : launches)
    for (size_t k : l.kernels)
      index.launchOf[k] = l.index;
  index.inputs = resolvedInputs(plan);
  return index;
}

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
  // Which of the launch's results another launch reads: one pass over the
  // plan's reads, each checked against the launch's results (routing asks
  // this of every launch, so it is quadratic in the plan's size).
  enum : char { kNotOurs, kOurs, kReadOutside };
  std::vector<char> mark(plan.buffers.size(), kNotOurs);
  for (size_t k : launch.kernels)
    for (int32_t id : plan.kernels[k].outputs)
      mark[id] = kOurs;
  for (size_t k = 0; k < plan.kernels.size(); ++k)
    if (index.launchOf[k] != launch.index)
      for (int32_t id : (*index.inputs)[k])
        if (mark[id] == kOurs)
          mark[id] = kReadOutside;
  for (size_t k : launch.kernels)
    for (int32_t id : plan.kernels[k].outputs)
      if (plan.buffers[id].role != BufferRole::kTemporary || mark[id] == kReadOutside)
        f.exported.push_back(id);
  return f;
}

bool overlaps(const PlanBuffer &a, const PlanBuffer &b) {
  return a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
}

//===----------------------------------------------------------------------===//
// The kernel's frame
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

std::string paramList(const Emitter &e, const Dataflow &flow, bool restrict,
                      KernelTarget target, bool scratch) {
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
  if (scratch)
    text += ", unsigned char *__restrict__ dlc_scratch";
  return text + targetWriter(target).extraParams();
}

std::string stepLine(const Emitter &e) {
  return e.usesStep ? "  const long long dlc_step = *dlc_step_counter; // a graph replays it\n"
                    : "";
}

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
                   const std::string &opsHeader) {
  const TargetWriter &w = targetWriter(target);
  std::string text = w.halfIncludes(e.usesF16, e.usesBF16) + kernelPrelude() + "\n" +
                     w.afterPrelude() + signatureAndBody;
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

} // namespace dlc::rt::codegen
