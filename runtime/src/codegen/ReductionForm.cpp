//===- ReductionForm.cpp - reductions with their producers and epilogue ---===//
//
// The reduction form: a loop body feeding sum_to_shape / reduce_sum /
// reduce_mean / reduce_max / global_avg_pool over the same dimensions, one
// block per output row (or per tile of outputs of a column reduction),
// then an element-wise epilogue at each output (KernelCodegen.h).
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"
#include "KernelTargets.h"
#include "dlc/runtime/Shape.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace dlc::rt::codegen {

namespace {

/// Column reductions: outputs per block (one warp's worth of consecutive
/// addresses) and the rows of threads that split each output's sum. A bias
/// gradient has few tiles (BERT's [4096, 768] -> [768]: 24 blocks on 132
/// SMs), so each block brings many warps: with 8 rows the H100 spent 6.4 ms
/// per BERT-base step in them, latency-bound at a few GB/s per SM; 32 rows
/// put 4x the loads in flight (predicted about 4x faster; not yet timed).
constexpr int kColumnTile = 32;
constexpr int kColumnRows = 32;
/// A host column reduction's tile: up to 1024 consecutive outputs (4 KB of
/// float accumulators per reduction, which stay in L1), summed row after
/// row, so that each row is read in runs of 2-4 KB. With 64 outputs (runs
/// of 128 bytes of bf16, a jump of a row between them) BERT-base's GELU
/// gradient with its bias gradient streamed at a few GB/s; a whole row at
/// a time is no faster than 256 outputs or more.
constexpr int kHostColumnTile = 1024;

/// What a reduction does to its input: which input dimensions it sums.
struct ReductionShape {
  Shape input;
  std::vector<bool> reduced;
  bool mean = false, max = false;
  int64_t rows = 1, count = 1;
  bool operator==(const ReductionShape &o) const {
    return input == o.input && reduced == o.reduced;
  }
};

StatusOr<ReductionShape> reductionShape(const Plan &plan, const PlanKernel &k) {
  ReductionShape r;
  r.input = plan.buffers[k.inputs[0]].shape;
  const Shape &out = plan.buffers[k.outputs[0]].shape;
  int64_t rank = static_cast<int64_t>(r.input.size());
  r.reduced.assign(rank, false);
  if (k.id == OpId::kSumToShape) {
    size_t lead = r.input.size() - out.size();
    for (size_t d = 0; d < r.input.size(); ++d)
      r.reduced[d] = d < lead || (out[d - lead] == 1 && r.input[d] != 1);
  } else if (k.id == OpId::kGlobalAvgPool) {
    if (rank != 4)
      return Status(StatusCode::kInvalidArgument, "global_avg_pool of a rank-" +
                                                       std::to_string(rank) + " input");
    r.reduced[2] = r.reduced[3] = true;
    r.mean = true;
  } else {
    const std::vector<int64_t> *axes = findAttr<std::vector<int64_t>>(k.attrs, "axes");
    if (!axes)
      return Status(StatusCode::kInvalidArgument, k.op + " without 'axes'");
    for (int64_t a : *axes) {
      int64_t d = a < 0 ? a + rank : a;
      if (d < 0 || d >= rank)
        return Status(StatusCode::kInvalidArgument,
                      k.op + " axis " + std::to_string(a) + " out of range");
      r.reduced[d] = true;
    }
    r.mean = k.id == OpId::kReduceMean;
    r.max = k.id == OpId::kReduceMax;
  }
  for (int64_t d = 0; d < rank; ++d)
    (r.reduced[d] ? r.count : r.rows) *= r.input[d];
  return r;
}

/// Where the reduction's input reads `id` element for element through
/// transposes and casts (a layout change before the reduction): for each
/// input dimension, the dimension of `id` it lands on; empty if it does not.
std::vector<size_t> permutationTo(const Plan &plan, const Dataflow &flow, int32_t input,
                                  int32_t id) {
  const size_t rank = plan.buffers[input].shape.size();
  std::vector<size_t> dimOf(rank);
  for (size_t d = 0; d < rank; ++d)
    dimOf[d] = d;
  for (int32_t v = input;;) {
    if (auto view = flow.views.find(v); view != flow.views.end())
      v = view->second;
    if (v == id)
      return dimOf;
    auto producer = flow.producer.find(v);
    if (producer == flow.producer.end())
      return {};
    const PlanKernel &k = plan.kernels[producer->second];
    if (k.inputs.size() != 1 || plan.buffers[k.inputs[0]].shape.size() != rank)
      return {};
    if (k.id == OpId::kTranspose) {
      const std::vector<int64_t> *perm = findAttr<std::vector<int64_t>>(k.attrs, "permutation");
      if (!perm || perm->size() != rank)
        return {};
      for (size_t &d : dimOf)
        d = static_cast<size_t>((*perm)[d]);
    } else if (k.id != OpId::kCast || plan.buffers[k.inputs[0]].shape != plan.buffers[v].shape) {
      return {};
    }
    v = k.inputs[0];
  }
}

} // namespace

StatusOr<GeneratedKernel> generateReduction(const Plan &plan, const Launch &launch,
                                            const Dataflow &flow,
                                            const std::vector<size_t> &reductions,
                                            KernelTarget target) {
  auto shapeOr = reductionShape(plan, plan.kernels[reductions[0]]);
  if (!shapeOr.isOk())
    return shapeOr.status();
  ReductionShape red = *shapeOr;
  for (size_t r : reductions) {
    auto other = reductionShape(plan, plan.kernels[r]);
    if (!other.isOk())
      return other.status();
    if (!(*other == red))
      return Status(StatusCode::kInvalidArgument,
                    "reductions over different dimensions (" + plan.kernels[reductions[0]].op +
                        " of " + shapeText(red.input) + " and " + plan.kernels[r].op + " of " +
                        shapeText(other->input) + ") in one launch");
  }
  bool anyOverlap = false;
  std::string hazard = aliasHazard(plan, flow, false, anyOverlap);
  if (!hazard.empty())
    return Status(StatusCode::kInvalidArgument, hazard);
  // Which exported values are written in the loop over the input, and
  // which after the reduction, once per output row.
  // A value the input reads through a transpose is written in the loop
  // too, at the index the input reads it at: each of its elements once.
  std::vector<int32_t> inLoop, perRow;
  std::map<int32_t, std::vector<size_t>> permuted;
  for (int32_t id : flow.exported) {
    const PlanBuffer &b = plan.buffers[id];
    std::vector<size_t> dimOf;
    if (b.shape == red.input)
      inLoop.push_back(id);
    else if (b.numElements() == red.rows)
      perRow.push_back(id);
    else if (dimOf = permutationTo(plan, flow, plan.kernels[reductions[0]].inputs[0], id);
             !dimOf.empty())
      permuted[id] = std::move(dimOf);
    else
      return Status(StatusCode::kInvalidArgument,
                    "exports '" + b.name + "' (" + typeText(b) +
                        "), neither the reduction's input " + shapeText(red.input) +
                        " (nor read by it through transposes and casts)" +
                        " nor one value per output row (" + std::to_string(red.rows) + ")");
  }

  int block = 32;
  while (block < kBlockSize && block < red.count)
    block *= 2;
  Shape keptShape, keptStrides, redShape, redStrides;
  Shape inStrides = rowMajorStrides(red.input);
  size_t firstReduced = red.input.size(), lastKept = 0;
  bool anyKept = false;
  for (size_t d = 0; d < red.input.size(); ++d) {
    (red.reduced[d] ? redShape : keptShape).push_back(red.input[d]);
    (red.reduced[d] ? redStrides : keptStrides).push_back(inStrides[d]);
    if (red.input[d] == 1)
      continue; // a unit dimension does not change any linear index
    if (red.reduced[d])
      firstReduced = std::min(firstReduced, d);
    else {
      lastKept = d;
      anyKept = true;
    }
  }
  bool rowsOuter = !anyKept || lastKept < firstReduced; // reduced dims innermost
  bool rowsInner = true; // reduced dims outermost: a column reduction
  for (size_t d = 0, seenKept = 0; d < red.input.size(); ++d) {
    if (red.input[d] == 1)
      continue;
    if (!red.reduced[d])
      seenKept = 1;
    else if (seenKept)
      rowsInner = false;
  }

  GeneratedKernel g;
  g.form = KernelForm::kReduction;
  Emitter e(plan, flow, target);
  // Inputs first, as in the loop form.
  {
    Emitter dry(plan, flow, target);
    for (size_t r : reductions)
      dry.value(plan.kernels[r].inputs[0], "ii");
    for (int32_t id : inLoop)
      dry.value(id, "ii");
    for (const auto &[id, dimOf] : permuted)
      dry.value(id, "ii");
    if (!dry.error.empty())
      return Status(StatusCode::kInvalidArgument, dry.error);
    e.params = dry.params;
  }
  e.indent = 1;
  std::string rows = std::to_string(red.rows) + "LL", count = std::to_string(red.count) + "LL";
  // A column reduction (the reduced dimensions outermost: bias gradients)
  // with enough outputs is tiled: 32 consecutive outputs per block, one per
  // lane, so each warp's loads are coalesced; 32 rows of threads split the
  // reduction and add through shared memory. Otherwise one block per output.
  bool columns = rowsInner && !rowsOuter && red.rows >= kColumnTile;
  // A bias gradient over padded rows (RowStride.h: BERT's MLM bias reads
  // the loss gradient with rows of 30,522 halves 30,528 apart): where the
  // outputs are one row's elements, row r of the sum starts at r * stride,
  // an address without a division per element (Emitter::address).
  const PlanBuffer &in = plan.buffers[plan.kernels[reductions[0]].inputs[0]];
  const int64_t inStride = rowStride(in);
  const bool paddedRows = inStride > 0 && rowsInner && !rowsOuter && !in.shape.empty() &&
                          red.rows == in.shape.back();
  auto rowStart = [&]() { return "r * " + std::to_string(inStride) + "LL"; };
  const TargetWriter &w = targetWriter(target);
  // The type reduction `a` accumulates in: the target's for sums.
  auto accType = [&](size_t a) -> std::string {
    return plan.kernels[reductions[a]].id == OpId::kReduceMax ? "float" : w.sumType();
  };
  auto combine = [&](size_t a, const std::string &x, const std::string &lane = "") {
    std::string acc = "acc" + std::to_string(a) + lane;
    bool isMax = plan.kernels[reductions[a]].id == OpId::kReduceMax;
    return acc + " = " + (isMax ? "dlc_max_nan(" + acc + ", " + x + ")" : acc + " + " + x) + ";";
  };
  // The value one output's reduction leaves (a mean divides its sum),
  // seeded for the consumers that follow it at index `o`.
  auto seedResults = [&](const std::string &lane) {
    for (size_t a = 0; a < reductions.size(); ++a) {
      const PlanKernel &k = plan.kernels[reductions[a]];
      bool mean = k.id == OpId::kReduceMean || k.id == OpId::kGlobalAvgPool;
      std::string acc = "acc" + std::to_string(a) + lane;
      std::string reg = e.temp("red", "float",
                               "(float)(" +
                                   (mean ? acc + " / " + floatLiteral(double(red.count)) : acc) +
                                   ")");
      e.seed(k.outputs[0], "o", reg);
    }
    for (int32_t id : perRow)
      e.line("dlc_st(" + e.param(id) + ", o, " + e.value(id, "o") + ");");
  };
  // The stores of the loop over the input, at its index `ii`.
  auto storeInLoop = [&]() {
    for (int32_t id : inLoop)
      e.line("dlc_st(" + e.param(id) + ", ii, " + e.value(id, "ii") + ");");
    for (const auto &[id, dimOf] : permuted) {
      Shape strides = rowMajorStrides(plan.buffers[id].shape);
      std::string expr;
      for (size_t d = 0; d < red.input.size(); ++d)
        if (red.input[d] != 1)
          expr += (expr.empty() ? "" : " + ") + e.coord("ii", red.input, d) + " * " +
                  std::to_string(strides[dimOf[d]]) + "LL";
      std::string j = e.temp("jp", "long long", expr.empty() ? "0LL" : expr);
      e.line("dlc_st(" + e.param(id) + ", " + j + ", " + e.value(id, j) + ");");
    }
  };
  if (rowsInner && !rowsOuter && w.sumsColumnsByRows()) {
    // A core's column reduction reads its input row after row, each row's
    // part of a tile of outputs into a tile of accumulators: contiguous
    // loads and a loop the compiler vectorizes, where a GPU's form (a lane
    // per output) would walk each column down the rows. Every output still
    // adds its rows in order, on one thread.
    const std::string tile = std::to_string(kHostColumnTile);
    e.open(w.itemLoop("c", rows));
    e.line("const long long o0 = c;");
    e.line("const long long w = c_end - c < " + tile + "LL ? c_end - c : " + tile + "LL;");
    e.line("c += w - 1;");
    for (size_t a = 0; a < reductions.size(); ++a) {
      bool isMax = plan.kernels[reductions[a]].id == OpId::kReduceMax;
      e.line(accType(a) + " acc" + std::to_string(a) + "[" + tile + "];");
      e.line("for (long long j = 0; j < w; ++j) acc" + std::to_string(a) + "[j] = " +
             (isMax ? "DLC_NEG_INF" : "0.f") + ";");
    }
    e.open("for (long long r = 0; r < " + count + "; ++r)");
    e.line("DLC_IVDEP");
    e.open("for (long long j = 0; j < w; ++j)");
    e.line("const long long ii = r * " + rows + " + o0 + j;");
    if (paddedRows)
      e.paddedIndex["ii"] = {in.shape.back(), inStride, rowStart() + " + o0 + j"};
    for (size_t a = 0; a < reductions.size(); ++a)
      e.line(combine(a, e.value(plan.kernels[reductions[a]].inputs[0], "ii"), "[j]"));
    storeInLoop();
    e.close();
    e.close();
    e.open("for (long long j = 0; j < w; ++j)");
    e.line("const long long o = o0 + j;");
    seedResults("[j]");
    e.close();
    e.close();
    if (!e.error.empty())
      return Status(StatusCode::kInvalidArgument, e.error);
    std::ostringstream s;
    s << w.kernelHead(0) << "DLC_KERNEL_NAME(" << paramList(e, flow, !anyOverlap, target)
      << ") {\n"
      << stepLine(e) << "  // " << red.rows << " outputs, each summing " << red.count
      << " rows: this part's outputs in tiles of " << tile << ", row after row.\n"
      << e.body << "}\n";
    g.args = e.params;
    g.blockSize = 1;
    g.work = red.rows;
    finish(g, plan, launch, e, s.str(), "reduce", target);
    return g;
  }
  if (columns) {
    for (size_t a = 0; a < reductions.size(); ++a)
      e.line(w.sharedArray(accType(a), "part" + std::to_string(a),
                           "[" + std::to_string(kColumnRows) + "][" +
                               std::to_string(kColumnTile + 1) + "]"));
    e.open(w.tileLoop("o0", rows));
    e.line("const long long o = o0 + " + w.threadIndex('x') + ";");
  } else {
    for (size_t a = 0; a < reductions.size(); ++a)
      e.line(w.sharedArray(accType(a), "smem" + std::to_string(a), "[32]"));
    e.open(w.itemLoop("o", rows));
  }
  std::string base;
  if (!rowsOuter && !rowsInner) {
    std::string expr;
    for (size_t d = 0; d < keptShape.size(); ++d)
      expr += (expr.empty() ? "" : " + ") + e.coord("o", keptShape, d) + " * " +
              std::to_string(keptStrides[d]) + "LL";
    base = e.temp("b", "long long", expr.empty() ? "0LL" : expr);
  }
  for (size_t a = 0; a < reductions.size(); ++a) {
    bool isMax = plan.kernels[reductions[a]].id == OpId::kReduceMax;
    e.line(accType(a) + " acc" + std::to_string(a) + " = " + (isMax ? "DLC_NEG_INF" : "0.f") + ";");
  }
  if (columns) {
    e.open("if (o < " + rows + ")");
    e.open(w.threadLoop("long long", "r", 'y', count));
  } else {
    e.open(w.threadLoop("long long", "r", 'x', count));
  }
  if (rowsOuter)
    e.line("const long long ii = o * " + count + " + r;");
  else if (rowsInner) {
    e.line("const long long ii = r * " + rows + " + o;");
    if (paddedRows)
      e.paddedIndex["ii"] = {in.shape.back(), inStride, rowStart() + " + o"};
  }
  else {
    std::string expr = base;
    for (size_t d = 0; d < redShape.size(); ++d)
      expr += " + " + e.coord("r", redShape, d) + " * " + std::to_string(redStrides[d]) + "LL";
    e.line("const long long ii = " + expr + ";");
  }
  for (size_t a = 0; a < reductions.size(); ++a)
    e.line(combine(a, e.value(plan.kernels[reductions[a]].inputs[0], "ii")));
  storeInLoop();
  e.close();
  if (columns) {
    e.close();
    for (size_t a = 0; a < reductions.size(); ++a)
      e.line("part" + std::to_string(a) + "[" + w.threadIndex('y') + "][" + w.threadIndex('x') +
             "] = acc" + std::to_string(a) + ";");
    e.line(w.barrier());
    e.open("if (" + w.threadIndex('y') + " == 0 && o < " + rows + ")");
    e.open("for (int k = 1; k < (int)" + w.blockThreads('y') + "; ++k)");
    for (size_t a = 0; a < reductions.size(); ++a)
      e.line(combine(a, "part" + std::to_string(a) + "[k][" + w.threadIndex('x') + "]"));
    e.close();
  } else {
    for (size_t a = 0; a < reductions.size(); ++a) {
      bool isMax = plan.kernels[reductions[a]].id == OpId::kReduceMax;
      std::string acc = "acc" + std::to_string(a);
      e.line(w.blockReduce(acc, block, isMax, "smem" + std::to_string(a),
                           /*everyThread=*/false));
    }
    e.open("if (" + w.threadIndex('x') + " == 0)");
  }
  seedResults("");
  e.close();
  if (columns)
    e.line(w.barrier() + " // the partials are reused by the next tile");
  e.close();
  if (!e.error.empty())
    return Status(StatusCode::kInvalidArgument, e.error);

  std::ostringstream s;
  if (columns)
    s << w.kernelHead(kColumnTile * kColumnRows) << "DLC_KERNEL_NAME("
      << paramList(e, flow, !anyOverlap, target) << ") {\n"
      << stepLine(e) << "  // " << red.rows << " outputs in tiles of " << kColumnTile << " (blockDim.x), each "
      << "summing " << red.count << " rows split over blockDim.y = " << kColumnRows << ".\n";
  else
    s << w.kernelHead(block) << "DLC_KERNEL_NAME("
      << paramList(e, flow, !anyOverlap, target) << ") {\n"
      << stepLine(e) << "  // One block per output row: " << red.rows << " rows of " << red.count
      << " elements" << (rowsOuter ? ", contiguous" : rowsInner ? ", strided by the row count" : "")
      << ".\n";
  s << e.body << "}\n";
  g.args = e.params;
  g.blockSize = columns ? kColumnTile : block;
  g.blockSizeY = columns ? kColumnRows : 1;
  g.work = columns ? (red.rows + kColumnTile - 1) / kColumnTile : red.rows;
  finish(g, plan, launch, e, s.str(), "reduce", target);
  return g;
}

} // namespace dlc::rt::codegen
