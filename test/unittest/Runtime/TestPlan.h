//===- TestPlan.h - plans built by hand in runtime unit tests ---*- C++ -*-===//

#ifndef DLC_TEST_UNITTEST_RUNTIME_TESTPLAN_H
#define DLC_TEST_UNITTEST_RUNTIME_TESTPLAN_H

#include "dlc/runtime/Plan.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace dlc_test {

/// The OpId of an op these tests name; a name that is no op fails the test
/// program at once, rather than a kernel that runs another op.
inline dlc::rt::OpId testOpId(const std::string &op) {
  std::optional<dlc::rt::OpId> id = dlc::rt::parseOpId(op);
  if (!id) {
    std::fprintf(stderr, "test plan: '%s' is no train op (dlc/runtime/OpList.inc)\n",
                 op.c_str());
    std::abort();
  }
  return *id;
}

/// The class ODS gives the op (the compiler writes it into real plans).
inline dlc::rt::OpClass testOpClass(const std::string &op) {
  return dlc::rt::opClassOf(testOpId(op));
}

/// A kernel of a hand-built plan, with its op's id and class. A "fusion.kind"
/// attribute, spelled as the IR spells kinds, becomes the kernel's
/// fusionKind, as the lowering to the plan does.
inline dlc::rt::PlanKernel makeKernel(const std::string &op, std::vector<int32_t> in,
                                      std::vector<int32_t> out, dlc::rt::PlanAttrs attrs = {}) {
  dlc::rt::FusionKind kind = dlc::rt::FusionKind::kNone;
  if (auto it = attrs.find("fusion.kind"); it != attrs.end()) {
    kind = dlc::rt::parseFusionKind(std::get<std::string>(it->second)).value();
    attrs.erase(it);
  }
  dlc::rt::PlanKernel kernel;
  kernel.setOp(testOpId(op));
  kernel.inputs = std::move(in);
  kernel.outputs = std::move(out);
  kernel.attrs = std::move(attrs);
  kernel.opClass = testOpClass(op);
  kernel.fusionKind = kind;
  return kernel;
}

/// Appends a buffer to `plan` at the next 256-byte boundary of its arena (as
/// the memory planner aligns) and returns its id.
inline int32_t appendBuffer(dlc::rt::Plan &plan, const std::string &name,
                            dlc::rt::DType dtype, std::vector<int64_t> shape,
                            dlc::rt::BufferRole role) {
  dlc::rt::PlanBuffer b;
  b.name = name;
  b.dtype = dtype;
  b.shape = std::move(shape);
  b.role = role;
  b.bytes = b.numElements() * dlc::rt::dtypeBytes(dtype);
  b.offset = plan.arenaBytes;
  plan.arenaBytes += (b.bytes + 255) / 256 * 256;
  plan.buffers.push_back(std::move(b));
  return static_cast<int32_t>(plan.buffers.size() - 1);
}

/// Builds a plan buffer by buffer (appendBuffer's layout) and kernel by
/// kernel.
struct PlanBuilder {
  dlc::rt::Plan plan;
  int32_t add(const std::string &name, dlc::rt::DType dtype, std::vector<int64_t> shape,
              dlc::rt::BufferRole role) {
    return appendBuffer(plan, name, dtype, std::move(shape), role);
  }
  void kernel(const std::string &op, std::vector<int32_t> in, std::vector<int32_t> out,
              dlc::rt::PlanAttrs attrs = {}) {
    plan.kernels.push_back(makeKernel(op, std::move(in), std::move(out), std::move(attrs)));
  }
};

} // namespace dlc_test

#endif // DLC_TEST_UNITTEST_RUNTIME_TESTPLAN_H
