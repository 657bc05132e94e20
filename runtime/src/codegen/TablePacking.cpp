//===- TablePacking.cpp - the table kernels' tables as the device reads them ===//
//
// The ABI between the table forms' kernels (TableForms.cpp: struct
// DlcSegment, struct DlcCastSegment) and the launchers that upload their
// tables (packSegmentTable, KernelCodegen.h).
//
//===----------------------------------------------------------------------===//

#include "FormSupport.h"

#include <algorithm>

namespace dlc::rt::codegen {

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
namespace {
int64_t castVectorElements(const CastSegment &seg) {
  return kVectorBytes / std::min(dtypeBytes(seg.from), dtypeBytes(seg.to));
}
} // namespace

int64_t castVectors(const CastSegment &seg) {
  int64_t v = castVectorElements(seg);
  return (seg.elements + v - 1) / v;
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
