//===- Softmax.cpp - softmax and its gradient, one block per line ---------===//
//
// One block per line along the axis (grid-stride over lines), as many
// threads as the line needs up to 256, maxima and sums in double through
// the block reductions, as
// runtime/src/cpu/OpsDense.cpp computes them. The exponentials are
// recomputed in the last pass rather than kept in the output, so a half
// output is rounded once, from the same float the CPU divides.
//
//===----------------------------------------------------------------------===//

#include "Sources.h"

namespace dlc::rt::cuda::handwritten {

namespace {
#include "kHandSoftmaxText.inc"
} // namespace

const char *softmaxBody() { return kHandSoftmaxText; }

} // namespace dlc::rt::cuda::handwritten
