//===- Embedding.cpp - table gathers and their deterministic gradient -----===//
//
// The gather is one thread per output element (an index outside the table,
// an error on the CPU, gives NaN). The gradient uses no atomics on data:
// each work item owns 32 table rows, each thread a column of them in
// registers. The block lists the item's hits (positions whose index falls
// in its rows) in shared memory once, in position order, through a
// block-wide prefix sum of warp votes; each thread then adds the dy rows
// of the listed hits in float, in that order, as the CPU does. A large
// table has one item per row group, and its result is the CPU's bit for
// bit. A small one (few row groups to fill the GPU) splits the indices
// too: each split writes float partials to HandKernel::scratch and the
// group's last split to arrive adds them in split order (the CPU's sum
// re-associated at the split points).
//
// Measured before the hit list (H100, 2026-11-26, CUDA events, no graph),
// when every thread compared every index of its item: GPT-2 small b8 s1024
// amp-bf16's token table (50257 x 768 f32, 8192 indices) 6.59 ms, BERT-base
// b32 amp's three tables 2.71 ms. Predicted with it, not yet run on a GPU:
// about 0.1 ms each, the table's write and dy's read (180 MB for GPT-2,
// 0.06 ms at the 2.9 TB/s a copy reaches) plus one scan of the indices per
// block (32 rounds of 256 for GPT-2) where each thread used to make 24,576
// comparisons.
//
//===----------------------------------------------------------------------===//

#include "Sources.h"

namespace dlc::rt::cuda::handwritten {

namespace {
#include "kHandEmbeddingText.inc"
} // namespace

const char *embeddingBody() { return kHandEmbeddingText; }

} // namespace dlc::rt::cuda::handwritten
