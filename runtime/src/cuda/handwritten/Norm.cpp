//===- Norm.cpp - layer normalization and its gradient --------------------===//
//
// Forward: one block per row. Backward: one block per row for the input
// gradient, in a grid of at most 256 blocks; each block also adds its
// rows' terms of gamma's and beta's gradients into its own partials (2 d
// doubles of HandKernel::scratch, each column owned by one thread, so no
// atomics), and the last block to finish sums the partials in block order:
// deterministic, in double.
//
//===----------------------------------------------------------------------===//

#include "Sources.h"

namespace dlc::rt::cuda::handwritten {

namespace {
#include "kHandNormText.inc"
} // namespace

const char *normBody() { return kHandNormText; }

} // namespace dlc::rt::cuda::handwritten
