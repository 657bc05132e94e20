//===- PadRows.h - aligned rows for the plan's GEMM operands ----*- C++ -*-===//
//
// A layout decision of the lowering, made after buffers and kernels exist
// and before offsets: a temporary whose rows would start off a 16-byte
// boundary gets a padded row stride (rowStride in dlc/runtime/Plan.h) where
// every kernel that touches it takes one (dlc/runtime/RowStride.h).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TARGET_PLAN_PADROWS_H
#define DLC_TARGET_PLAN_PADROWS_H

#include "dlc/runtime/Plan.h"

#include <cstdint>
#include <vector>

namespace mlir::dlc {

/// Buffers keep dense rows unless the largest of those padded together
/// holds this many bytes: a GEMM over less is too small for its alignment
/// to matter.
constexpr int64_t kPadRowsMinBytes = 1 << 20;

/// Pads the rows of `plan`'s temporaries whose rows break 16-byte alignment
/// (GPT-2's 50,257-wide logits, BERT's 30,522-wide ones) to the next
/// multiple of 16 bytes of their narrowest element type, where:
///   - every kernel reading or writing the buffer takes a row stride
///     (rt::rowStrideRefusal), or is an element-wise op outside any fused
///     group whose operands and result all have the buffer's shape: that
///     op then runs over the padded rows as a dense view of them (a new
///     buffer sharing the storage), padding included, so the buffers it
///     links are padded alike or not at all;
///   - every view of the storage (a reshape) keeps the last dimension.
/// `storageOf` maps each buffer to the buffer owning its storage (views
/// share it); new views are appended to it and to the plan. Returns the
/// bytes the padding adds, over all padded storages.
int64_t padRows(::dlc::rt::Plan &plan, std::vector<int32_t> &storageOf);

} // namespace mlir::dlc

#endif // DLC_TARGET_PLAN_PADROWS_H
