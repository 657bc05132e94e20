//===- TestPlan.h - plans built by hand in runtime unit tests ---*- C++ -*-===//

#ifndef DLC_TEST_UNITTEST_RUNTIME_TESTPLAN_H
#define DLC_TEST_UNITTEST_RUNTIME_TESTPLAN_H

#include "dlc/runtime/Plan.h"

#include <map>
#include <string>
#include <vector>

namespace dlc_test {

/// The class of an op in plans these tests build by hand, as the train
/// dialect's ODS gives it (the compiler writes it into real plans);
/// OpCatalogTest checks every row against the dialect.
inline const std::map<std::string, dlc::rt::OpClass> &testOpClasses() {
  using dlc::rt::OpClass;
  static const std::map<std::string, OpClass> classes = {
      {"relu", OpClass::kElementwise}, {"tanh", OpClass::kElementwise},
      {"sigmoid", OpClass::kElementwise}, {"gelu", OpClass::kElementwise},
      {"silu", OpClass::kElementwise}, {"silu_backward", OpClass::kElementwise},
      {"relu6", OpClass::kElementwise}, {"relu6_backward", OpClass::kElementwise},
      {"hardswish", OpClass::kElementwise}, {"hardswish_backward", OpClass::kElementwise},
      {"hardsigmoid", OpClass::kElementwise}, {"hardsigmoid_backward", OpClass::kElementwise},
      {"scale", OpClass::kElementwise}, {"add", OpClass::kElementwise},
      {"sub", OpClass::kElementwise}, {"mul", OpClass::kElementwise},
      {"div", OpClass::kElementwise}, {"cast", OpClass::kElementwise},
      {"relu_backward", OpClass::kElementwise}, {"tanh_backward", OpClass::kElementwise},
      {"sigmoid_backward", OpClass::kElementwise}, {"gelu_backward", OpClass::kElementwise},
      {"dropout", OpClass::kRandom},
      {"broadcast_to", OpClass::kDataMovement}, {"transpose", OpClass::kDataMovement},
      {"slice", OpClass::kDataMovement}, {"slice_backward", OpClass::kDataMovement},
      {"concat", OpClass::kDataMovement},
      {"reduce_sum", OpClass::kReduction}, {"reduce_mean", OpClass::kReduction},
      {"reduce_max", OpClass::kReduction}, {"sum_to_shape", OpClass::kReduction},
      {"global_avg_pool", OpClass::kReduction},
      {"softmax", OpClass::kRowNormalization}, {"softmax_backward", OpClass::kRowNormalization},
      {"layer_norm", OpClass::kRowNormalization},
      {"layer_norm_backward", OpClass::kRowNormalization},
      {"batch_norm", OpClass::kBatchNormalization},
      {"batch_norm_backward", OpClass::kBatchNormalization},
      {"conv2d", OpClass::kContraction}, {"conv2d_backward_data", OpClass::kContraction},
      {"conv2d_backward_filter", OpClass::kContraction}, {"matmul", OpClass::kContraction},
      {"linear", OpClass::kContraction},
      {"sgd_update", OpClass::kOptimizer}, {"adamw_update", OpClass::kOptimizer},
      {"all_reduce", OpClass::kCollective},
  };
  return classes;
}

/// kOpaque for the ops above not listed (pooling, losses, embeddings, ...).
inline dlc::rt::OpClass testOpClass(const std::string &op) {
  auto it = testOpClasses().find(op);
  return it == testOpClasses().end() ? dlc::rt::OpClass::kOpaque : it->second;
}

/// A kernel of a hand-built plan, with its op's class. A "fusion.kind"
/// attribute, spelled as the IR spells kinds, becomes the kernel's
/// fusionKind, as the lowering to the plan does.
inline dlc::rt::PlanKernel makeKernel(const std::string &op, std::vector<int32_t> in,
                                      std::vector<int32_t> out, dlc::rt::PlanAttrs attrs = {}) {
  dlc::rt::FusionKind kind = dlc::rt::FusionKind::kNone;
  if (auto it = attrs.find("fusion.kind"); it != attrs.end()) {
    kind = dlc::rt::parseFusionKind(std::get<std::string>(it->second)).value();
    attrs.erase(it);
  }
  return dlc::rt::PlanKernel{op,           std::move(in),     std::move(out),
                             std::move(attrs), testOpClass(op), kind};
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
