//===- BatchNorm.cpp - training-mode batch normalization and its gradient -===//
//
// The CPU reference (runtime/src/cpu/BatchNorm.cpp and its caller in
// OpsSpatial.cpp) step by step, each channel split over blocks (one block
// per channel leaves a 64-channel layer's GPU half idle) and run in phases
// (HandKernel::phases), since a split needs
// its channel's statistics from every other split: the splits' sums, then
// the mean and the splits' centred squares, then the output. Partials are
// doubles in HandKernel::scratch, added in split order by every block that
// needs them (block tree sums within a split): a launch is deterministic,
// no block waits for another, and the statistics are the CPU's two-pass
// ones in double. Element types are any float type per operand (mixed
// precision: x and y in f16 or bf16, the statistics in f32).
//
// The backward recomputes the batch statistics from x, as the CPU does,
// and rounds them to float before use, as the CPU hands its backward
// kernel float statistics.
//
//===----------------------------------------------------------------------===//

#include "Sources.h"

namespace dlc::rt::cuda::handwritten {

namespace {
#include "kHandBatchNormText.inc"
} // namespace

const char *batchNormBody() { return kHandBatchNormText; }

} // namespace dlc::rt::cuda::handwritten
