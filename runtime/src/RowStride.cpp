//===- RowStride.cpp - which kernels take a buffer with padded rows -------===//

#include "dlc/runtime/RowStride.h"

#include <algorithm>

namespace dlc::rt {

namespace {

bool holds(const std::vector<int32_t> &ids, size_t position, int32_t id) {
  return position < ids.size() && ids[position] == id;
}

/// Whether `id` appears in `ids` anywhere but at `allowed` positions.
bool elsewhere(const std::vector<int32_t> &ids, std::initializer_list<size_t> allowed,
               int32_t id) {
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] == id && std::find(allowed.begin(), allowed.end(), i) == allowed.end())
      return true;
  return false;
}

} // namespace

int64_t paddedRows(const PlanBuffer &buffer) {
  if (buffer.shape.empty() || buffer.shape.back() == 0)
    return 0;
  return buffer.numElements() / buffer.shape.back();
}

int64_t leadingDimension(const PlanBuffer &buffer) {
  if (int64_t stride = rowStride(buffer); stride > 0)
    return stride;
  return buffer.shape.empty() ? 1 : buffer.shape.back();
}

std::string rowStrideRefusal(const Plan &plan, const PlanKernel &kernel, int32_t id) {
  const std::string what = kernel.op + " reads or writes '" + plan.buffers[id].name + "'";
  if (kernel.fusionGroup() >= 0)
    return what + " inside fused group " + std::to_string(kernel.fusionGroup()) +
           ", which runs as one launch over dense buffers";
  if (plan.buffers[id].shape.size() < 2)
    return what + " of rank below 2";
  switch (kernel.id) {
  case OpId::kMatmul:
    if (elsewhere(kernel.inputs, {0, 1}, id) || elsewhere(kernel.outputs, {0}, id))
      return what + " as an operand other than its matrices";
    return "";
  case OpId::kLinear:
    if (elsewhere(kernel.inputs, {0}, id) || elsewhere(kernel.outputs, {0}, id))
      return what + " as its weight or bias, which are read densely";
    return "";
  case OpId::kSumToShape:
    // A bias gradient over padded rows (BERT's MLM bias reads the loss
    // gradient the LM head's GEMMs read): the reference sums through the
    // stride, the generated reduction loads through it.
    if (elsewhere(kernel.inputs, {0}, id) || holds(kernel.outputs, 0, id))
      return what + " as its result, which is written densely";
    return "";
  case OpId::kSoftmaxCrossEntropy:
  case OpId::kSoftmaxCrossEntropyBackward: {
    bool backward = kernel.id == OpId::kSoftmaxCrossEntropyBackward;
    size_t logits = backward ? 1 : 0;
    if (elsewhere(kernel.inputs, {logits}, id) ||
        (backward ? elsewhere(kernel.outputs, {0}, id) : holds(kernel.outputs, 0, id)))
      return what + " as an operand other than the logits" +
             (backward ? " or their gradient" : "");
    int64_t rank = static_cast<int64_t>(plan.buffers[id].shape.size());
    int64_t axis = kernel.intAttr("class_axis", 1);
    if (axis < 0)
      axis += rank;
    if (axis != rank - 1)
      return what + " with the classes on axis " + std::to_string(axis) +
             ", not the last: its rows are not classes";
    return "";
  }
  default:
    return what + ", and " + kernel.op + " reads and writes its buffers densely";
  }
}

} // namespace dlc::rt
