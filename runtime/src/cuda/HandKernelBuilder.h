//===- HandKernelBuilder.h - what every hand-written kernel's planner uses ===//
//
// Private to runtime/src/cuda: the Builder that collects one plan kernel's
// buffers at its DlcHandArgs slots and checks their element types, and the
// small rules every planner shares. HandKernels.cpp holds most planners;
// a family large enough to want a file of its own (HandAttention.cpp)
// declares its planners here.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CUDA_HANDKERNELBUILDER_H
#define DLC_RUNTIME_CUDA_HANDKERNELBUILDER_H

#include "dlc/runtime/cuda/HandKernels.h"

#include <algorithm>
#include <functional>
#include <string>

namespace dlc::rt::cuda::hand {

/// The block size most kernels launch with.
constexpr int kBlock = 256;

inline Status refuse(const PlanKernel &k, const std::string &why) {
  return Status(StatusCode::kInvalidArgument, k.op + ": " + why);
}

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Collects the launch's buffers at their slots and checks their element
/// types.
struct Builder {
  const Plan &plan;
  const PlanKernel &kernel;
  HandKernel out;
  std::string error;

  /// A slot no operand was given yet.
  static constexpr int32_t kUnset = -2;

  const PlanBuffer &buf(int32_t id) const { return plan.buffers[id]; }
  /// A float buffer's element type (DLC_T_F32, DLC_T_F16 or DLC_T_BF16).
  int floatType(int32_t id) {
    switch (buf(id).dtype) {
    case DType::kF32: return DLC_T_F32;
    case DType::kF16: return DLC_T_F16;
    case DType::kBF16: return DLC_T_BF16;
    default:
      error = "buffer '" + buf(id).name + "' is " + dtypeName(buf(id).dtype) +
              ", not a float type";
      return DLC_T_F32;
    }
  }
  /// Puts buffer `id` (-1: none) at p[slot]; false past p's slots.
  bool place(int slot, int32_t id) {
    if (slot < 0 || slot >= HandKernelArgs::kPointers) {
      error = "pointer slot " + std::to_string(slot) + ", past DlcHandArgs' " +
              std::to_string(HandKernelArgs::kPointers);
      return false;
    }
    if (out.buffers.size() <= size_t(slot))
      out.buffers.resize(slot + 1, kUnset);
    out.buffers[slot] = id;
    return true;
  }
  /// A float operand (f32, f16 or bf16), or -1 for an absent optional one.
  void floating(int slot, int32_t id) {
    if (place(slot, id) && id >= 0)
      out.args.t[slot] = floatType(id);
  }
  /// p[slot] holds the operand table.
  void tableSlot(int slot) {
    if (place(slot, -1))
      out.tableSlot = slot;
  }
  /// p[slot] holds `partials` doubles of scratch for the blocks' partial
  /// results, after dlc_hw_last_block's 16-byte counter.
  void scratch(int slot, int64_t partials) {
    scratchBytes(slot, 16 + partials * int64_t(sizeof(double)));
  }
  /// p[slot] holds `bytes` of scratch laid out by the kernel.
  void scratchBytes(int slot, int64_t bytes) {
    if (!place(slot, -1))
      return;
    out.scratchSlot = slot;
    out.scratchBytes = bytes;
  }
  /// A float operand in the operand table.
  void tabledFloating(int32_t id) {
    out.tableBuffers.push_back(id);
    HandOperand entry;
    entry.n = buf(id).numElements();
    entry.t = floatType(id);
    out.table.push_back(entry);
  }
  /// An integer operand (indices, labels): int32 or int64.
  void integer(int slot, int32_t id) {
    if (!place(slot, id))
      return;
    if (buf(id).dtype == DType::kI32)
      out.args.t[slot] = DLC_T_I32;
    else if (buf(id).dtype == DType::kI64)
      out.args.t[slot] = DLC_T_I64;
    else
      error = "buffer '" + buf(id).name + "' is " + dtypeName(buf(id).dtype) +
              ", not int32 or int64";
  }
  StatusOr<HandKernel> done(const std::string &family, int64_t blocks) {
    for (size_t slot = 0; slot < out.buffers.size() && error.empty(); ++slot)
      if (out.buffers[slot] == kUnset)
        error = "pointer slot " + std::to_string(slot) + " left without an operand";
    if (!error.empty())
      return refuse(kernel, error);
    out.family = family;
    out.name = "dlc_hw_" + kernel.op;
    out.blockSize = kBlock;
    out.blocks = std::max<int64_t>(blocks, 1);
    return out;
  }
};

using Planner = std::function<StatusOr<HandKernel>(Builder &)>;

inline bool arity(const PlanKernel &k, size_t inMin, size_t inMax, size_t outs) {
  return k.inputs.size() >= inMin && k.inputs.size() <= inMax && k.outputs.size() == outs;
}

// The planners kept in HandAttention.cpp.
StatusOr<HandKernel> attention(Builder &b);
StatusOr<HandKernel> attentionBackward(Builder &b);

} // namespace dlc::rt::cuda::hand

#endif // DLC_RUNTIME_CUDA_HANDKERNELBUILDER_H
