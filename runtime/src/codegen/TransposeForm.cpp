//===- TransposeForm.cpp - a lone transpose in shared-memory tiles --------===//
//
// The transpose form: a lone batched transpose (NCHW <-> NHWC) in tiles of
// kTransposeTile x kTransposeTile elements (KernelCodegen.h).
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"
#include "KernelTargets.h"

#include <sstream>

namespace dlc::rt::codegen {

namespace {

/// The narrowest side a transpose takes the tiled form for (below it, the
/// loop form: generateTranspose).
constexpr int64_t kNarrowTranspose = 8;

/// A transpose that is a batched matrix transpose: dimensions [a, b, c]
/// (each a run of the input's) to [a, c, b]. NCHW <-> NHWC is one ([N, C,
/// HW] <-> [N, HW, C]). Nullopt otherwise.
struct BatchedTranspose {
  int64_t batch = 1, rows = 1, cols = 1; // the input as [batch][rows][cols]
};
std::optional<BatchedTranspose> batchedTranspose(const Shape &in,
                                                 const std::vector<int64_t> &perm) {
  const size_t rank = in.size();
  if (perm.size() != rank)
    return std::nullopt;
  // perm = [0 .. a), [s .. rank), [a .. s) with a <= s < rank.
  size_t a = 0;
  while (a < rank && perm[a] == static_cast<int64_t>(a))
    ++a;
  if (a == rank)
    return std::nullopt; // the identity
  size_t s = static_cast<size_t>(perm[a]);
  size_t i = a;
  for (size_t d = s; d < rank; ++d, ++i)
    if (i >= rank || perm[i] != static_cast<int64_t>(d))
      return std::nullopt;
  for (size_t d = a; d < s; ++d, ++i)
    if (i >= rank || perm[i] != static_cast<int64_t>(d))
      return std::nullopt;
  BatchedTranspose t;
  for (size_t d = 0; d < rank; ++d)
    (d < a ? t.batch : d < s ? t.rows : t.cols) *= in[d];
  return t;
}

} // namespace

/// A lone transpose as tiles of 32 x 32 elements staged in shared memory,
/// so that both the reads and the writes are coalesced (the loop form reads
/// at a remapped index: one element per cache line touched when the
/// innermost dimension moves). Exact for every type: values pass through a
/// float unchanged.
std::optional<StatusOr<GeneratedKernel>> generateTranspose(const Plan &plan,
                                                           const Launch &launch,
                                                           const Dataflow &flow,
                                                           KernelTarget target) {
  if (launch.kernels.size() != 1 || flow.inputs.size() != 1 || flow.exported.size() != 1)
    return std::nullopt;
  const PlanKernel &k = plan.kernels[launch.kernels[0]];
  const std::vector<int64_t> *perm = findAttr<std::vector<int64_t>>(k.attrs, "permutation");
  if (k.id != OpId::kTranspose || !perm || k.inputs.size() != 1 || k.outputs.size() != 1)
    return std::nullopt;
  const PlanBuffer &in = plan.buffers[flow.inputs[0]], &out = plan.buffers[flow.exported[0]];
  auto t = batchedTranspose(plan.buffers[k.inputs[0]].shape, *perm);
  // A side under kNarrowTranspose (an image's 3 channels) fills a few rows
  // of each 32 x 32 tile, and the loop form's reads already come in runs:
  // ResNet-50's input NCHW -> NHWC took 0.94 ms as tiles on an H100, and
  // 0.083 ms as xla's loop group with its cast (2026-11-26).
  if (!t || t->rows < kNarrowTranspose || t->cols < kNarrowTranspose || in.dtype != out.dtype ||
      !cType(in.dtype) || overlaps(in, out))
    return std::nullopt;
  GeneratedKernel g;
  g.form = KernelForm::kTranspose;
  Emitter e(plan, flow, target);
  e.usesF16 = in.dtype == DType::kF16;
  e.usesBF16 = in.dtype == DType::kBF16;
  const int64_t tilesRows = (t->rows + kTransposeTile - 1) / kTransposeTile;
  const int64_t tilesCols = (t->cols + kTransposeTile - 1) / kTransposeTile;
  const std::string T = cType(in.dtype), tile = std::to_string(kTransposeTile);
  const TargetWriter &w = targetWriter(target);
  // A loop over the tile's rows (y) or columns (x), shared by the block's
  // threads along the axis.
  auto overTile = [&](char axis) {
    return w.threadLoop("int", std::string(1, axis), axis, tile);
  };
  std::ostringstream src;
  src << w.kernelHead(static_cast<int>(kTransposeTile * kTransposeRows))
      << "DLC_KERNEL_NAME(const " << T << " *__restrict__ in0, " << T
      << " *__restrict__ out1" << w.extraParams() << ") {\n"
      << "  // in0 as [" << t->batch << "][" << t->rows << "][" << t->cols << "], out1 as ["
      << t->batch << "][" << t->cols << "][" << t->rows << "]; one " << tile << " x " << tile
      << " tile per block and turn.\n"
      << "  " << w.sharedArray("float", "tile", "[" + tile + "][" + tile + " + 1]") << "\n"
      << "  const long long rows = " << t->rows << "LL, cols = " << t->cols << "LL;\n"
      << "  const long long tilesRows = " << tilesRows << "LL, tilesCols = " << tilesCols
      << "LL;\n"
      << "  const long long tiles = " << t->batch << "LL * tilesRows * tilesCols;\n"
      << "  "
      << w.itemLoop("q", "tiles")
      << " {\n"
      << "    const long long b = q / (tilesRows * tilesCols), r = q % (tilesRows * tilesCols);\n"
      << "    const long long row0 = r / tilesCols * " << tile << ", col0 = r % tilesCols * "
      << tile << ";\n"
      << "    const " << T << " *src = in0 + b * rows * cols;\n"
      << "    " << T << " *dst = out1 + b * rows * cols;\n"
      << "    // Read rows of the input tile along its columns (coalesced) ...\n"
      << "    " << overTile('y') << "\n"
      << "      " << overTile('x') << "\n"
      << "        if (row0 + y < rows && col0 + x < cols)\n"
      << "          tile[y][x] = dlc_ld(src, (row0 + y) * cols + col0 + x);\n"
      << "    " << w.barrier() << "\n"
      << "    // ... and write them as columns of the output tile (coalesced too).\n"
      << "    " << overTile('y') << "\n"
      << "      " << overTile('x') << "\n"
      << "        if (col0 + y < cols && row0 + x < rows)\n"
      << "          dlc_st(dst, (col0 + y) * rows + row0 + x, tile[x][y]);\n"
      << "    " << w.barrier() << "\n"
      << "  }\n"
      << "}\n";
  g.args = {flow.inputs[0], flow.exported[0]};
  g.blockSize = static_cast<int>(kTransposeTile);
  g.blockSizeY = static_cast<int>(kTransposeRows);
  g.work = t->batch * tilesRows * tilesCols;
  finish(g, plan, launch, e, src.str(), "transpose", target);
  return StatusOr<GeneratedKernel>(std::move(g));
}

} // namespace dlc::rt::codegen
