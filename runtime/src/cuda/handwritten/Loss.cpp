//===- Loss.cpp - softmax cross-entropy and its gradient ------------------===//
//
// Both kernels run one block per position (every gridDim.x-th, past the
// grid's cap), threads over the classes, in double. A position's maximum
// and sum of exp(logit - max) come from one pass over its logits: each
// thread keeps a running maximum and rescales its sum when the maximum
// grows (the online softmax), then the block combines the threads' pairs.
//
// The loss is one scalar: each block sums its positions' terms, and the
// last block to finish adds the blocks' partials, its threads each over a
// fixed stride of blocks, then a tree: a fixed order, in double, so the
// float result is the CPU's but for a last-bit tie. A label outside
// [0, classes) that is not ignore_index, an error on the CPU, makes the
// loss NaN. The gradient's blocks first count the labels that are not
// ignored (the mean's divisor).
//
// Measured on an H100 (2026-11-26, GPT-2 small's 8192 x 50,257 fp32
// logits) before this form: the loss 6.1 ms and its gradient 4.7 ms, when
// the loss ran 256 blocks (a quarter of the SMs' threads, too few loads in
// flight to stream) and both read the logits once for the maximum and once
// for the sum. Predicted, not yet measured: the loss near one read of the
// logits and one double exp per logit, about 1 ms; the gradient two reads
// and a write, about 2 ms.
//
//===----------------------------------------------------------------------===//

#include "Sources.h"

namespace dlc::rt::cuda::handwritten {

namespace {
#include "kHandLossText.inc"
} // namespace

const char *lossBody() { return kHandLossText; }

} // namespace dlc::rt::cuda::handwritten
