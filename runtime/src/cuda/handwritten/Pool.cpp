//===- Pool.cpp - max and average 2-d pooling and their gradients ---------===//
//
// The windows of runtime/src/cpu/Pool.cpp: start at o * stride - pad,
// clipped to the input, the divisor clipped to the padded input with
// count_include_pad. Forward: one thread per output. Backward: one thread
// per input element, gathering from the output windows that contain it in
// the CPU's (oy, ox) order, in double, so no atomics and the CPU's sums bit
// for bit; max pooling finds each window's first maximum (a NaN wins) once
// per input tile, in shared memory.
//
// Either layout (nhwc): a plane is one (n, c) of the input, its pixel
// (y, x) at plane + (y * w + x) * stride, the stride 1 in NCHW and C in
// NHWC. Windows, maxima and the order of the sums do not depend on the
// layout, so NHWC gives NCHW's values.
//
// The NHWC max pooling gradient has a second kernel with 32-bit indices,
// which its planner picks under 2^31 elements. Measured before it (H100,
// 2026-11-26, CUDA events, no graph): ResNet-50 b256 amp's one launch
// ([256, 64, 112, 112] stored NHWC, f16) 10.5 ms, 33x the 0.32 ms its
// bytes take at a copy's 2.9 TB/s; about 14 divisions or moduli of 64-bit
// integers per element, 92 registers (2 blocks an SM). Predicted, not yet
// run on a GPU: about 0.9 ms, issue-bound at about 150 instructions an
// element (one 32-bit division left), 40 registers (6 blocks an SM).
//
//===----------------------------------------------------------------------===//

#include "Sources.h"

namespace dlc::rt::cuda::handwritten {

namespace {
#include "kHandPoolText.inc"
} // namespace

const char *poolBody() { return kHandPoolText; }

} // namespace dlc::rt::cuda::handwritten
