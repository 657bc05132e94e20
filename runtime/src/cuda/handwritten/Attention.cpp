//===- Attention.cpp - attention and its gradient, FlashAttention-2 -------===//
//
// Tiles of q, k and v in shared memory, the rows' online softmax, the
// score matrix never written out; the forward also writes each row's
// log-sum-exp, from which the backward recomputes the probabilities. The
// backward runs in two phases (dk and dv per key tile, then dq per query
// tile), so every output is summed by one block in a fixed order, without
// atomics. Dropout draws train.dropout's mask for the [B..., Sq, Sk]
// probabilities (Common.cuh's dlc_hw_keep) from the dropout counter.
// Element-wise over each tile, strided by blockDim.x: right for any block
// size, which the host's one thread and the simulator's sixteen check.
//
//===----------------------------------------------------------------------===//

#include "Sources.h"

namespace dlc::rt::cuda::handwritten {

namespace {
#include "kHandAttentionText.inc"
} // namespace

const char *attentionBody() { return kHandAttentionText; }

} // namespace dlc::rt::cuda::handwritten
