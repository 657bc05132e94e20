//===- RowStride.h - which kernels take a buffer with padded rows -*- C++ -*-===//
//
// A buffer whose last dimension makes its rows start off a 16-byte boundary
// (GPT-2's and BERT's logits: 50,257 and 30,522 classes) sends cuBLASLt to
// its slow, 2-byte-aligned kernels. The compiler then pads the rows
// (compiler/lib/Target/Plan/PadRows.cpp, rowStride in Plan.h) where every
// kernel that reads or writes the buffer can take a row stride. This is the
// one place that says which can: the pass asks it before padding, and
// validatePlan asks it of every plan that loads, so no backend ever sees a
// padded buffer in a kernel that would read it as dense.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_ROWSTRIDE_H
#define DLC_RUNTIME_ROWSTRIDE_H

#include "dlc/runtime/Plan.h"

#include <cstdint>
#include <string>

namespace dlc::rt {

/// Why `kernel` cannot read or write buffer `id` with padded rows (one
/// line, naming the op and the operand), or "" where it can. Every backend
/// implements a row stride for exactly these operands:
///   - matmul: either operand and the result (its leading dimension);
///   - linear: the input and the result (not the weight, not the bias);
///   - softmax_cross_entropy: the logits, softmax_cross_entropy_backward:
///     the logits and the gradient, where the class axis is the last one;
///   - sum_to_shape: its input (not its result).
/// A kernel in a fused group is refused: its group runs as one launch
/// (a GEMM epilogue, a generated kernel) that reads its buffers densely.
std::string rowStrideRefusal(const Plan &plan, const PlanKernel &kernel, int32_t id);

/// Elements from one row's start to the next: the row stride where the
/// plan padded the rows, else the last dimension (1 for a scalar).
int64_t leadingDimension(const PlanBuffer &buffer);

/// The rows a padded buffer's leading dimensions flatten: its element
/// count over the last dimension (0 for an empty or rank-0 buffer).
int64_t paddedRows(const PlanBuffer &buffer);

} // namespace dlc::rt

#endif // DLC_RUNTIME_ROWSTRIDE_H
