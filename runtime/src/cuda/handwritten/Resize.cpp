//===- Resize.cpp - bilinear resize and its gradient ----------------------===//
//
// The CPU reference (runtime/src/cpu/Resize.cpp: ATen's bilinear
// interpolation given an output size, align_corners either way). Each
// axis's taps (two source neighbours and their weights) are recomputed
// per index by dlc_hw_tap, the CPU's formula with every double product
// rounded on its own (no fused multiply-add), so both sides pick the same
// neighbours and weights bit for bit.
//
// Forward: one thread per output element (grid-stride), the four taps
// gathered in the CPU's expression order.
//
// Backward: the CPU scatters each output gradient to its four taps. Here
// each input element gathers instead, one thread per element: it finds the
// output rows and columns that read it (a tap's first neighbour is non-
// decreasing in the output index, so a binary search gives the first one),
// then adds their contributions in the order the CPU's scatter adds them
// to that element (rows, then columns, then the four taps in turn), in
// double. No atomics, deterministic, and the same sum as the CPU's.
//
// Either layout: with nhwc a thread's element index is decomposed
// channels-last and every load and store indexed so; the taps and the
// order of the sums do not change, so NHWC gives the NCHW result's values.
//
//===----------------------------------------------------------------------===//

#include "Sources.h"

namespace dlc::rt::cuda::handwritten {

namespace {
#include "kHandResizeText.inc"
} // namespace

const char *resizeBody() { return kHandResizeText; }

} // namespace dlc::rt::cuda::handwritten
