//===- TestPlan.h - plans built by hand in runtime unit tests ---*- C++ -*-===//

#ifndef DLC_TEST_UNITTEST_RUNTIME_TESTPLAN_H
#define DLC_TEST_UNITTEST_RUNTIME_TESTPLAN_H

#include "dlc/runtime/Plan.h"

#include <string>
#include <vector>

namespace dlc_test {

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
    plan.kernels.push_back(
        dlc::rt::PlanKernel{op, std::move(in), std::move(out), std::move(attrs)});
  }
};

} // namespace dlc_test

#endif // DLC_TEST_UNITTEST_RUNTIME_TESTPLAN_H
