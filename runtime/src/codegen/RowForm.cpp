//===- RowForm.cpp - producers, a row op, its consumers -------------------===//
//
// The row form: element-wise producers feeding one softmax, layer_norm or
// softmax_backward over the last axis, and element-wise consumers of its
// result, one block per row (KernelCodegen.h); slices of the result that
// select whole rows are stored at their rows.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"
#include "KernelTargets.h"
#include "dlc/runtime/Shape.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

namespace dlc::rt::codegen {

namespace {

/// Accumulators a host row kernel's sums and maxima keep (fold, in
/// generateRow): 16 doubles, two AVX-512 registers.
constexpr int kRowLanes = 16;

/// layer_norm_backward's column sums: the rows in at most this many
/// chunks, fixed by the shape (so the sums' order does not depend on the
/// grid or the host's threads), each chunk's partial sums in the launch's
/// scratch (2 d doubles a chunk: 3 MiB at BERT-base's d = 768).
constexpr int64_t kColumnSumChunks = 256;

/// A slice of a row-shaped value that selects whole rows, which the row
/// form stores in its last pass: input row r (coordinate x of `axis`) goes
/// to the slice's row when start <= x, (x - start) % step == 0 and
/// (x - start) / step < extent.
struct RowSlice {
  int32_t out = -1, in = -1;
  int64_t axis = 0, start = 0, step = 1, extent = 0;
  /// Rows of `space` per step of `axis` (the dimensions between it and
  /// the last).
  int64_t inner = 1;
};

/// Legality of an exported value whose shape is not the rows' (`space`):
/// the result of a slice, in the launch, of a value of the rows' shape
/// along a dimension other than the last (so it keeps whole rows), stored
/// to no bytes the launch reads. Otherwise the reason, as before.
StatusOr<RowSlice> rowSliceExport(const Plan &plan, const Dataflow &flow, int32_t id,
                                  const Shape &space, const std::string &op) {
  const PlanBuffer &b = plan.buffers[id];
  auto refuse = [&](const std::string &why) {
    return Status(StatusCode::kInvalidArgument,
                  "exports '" + b.name + "' (" + typeText(b) +
                      "), not of the shape of the rows of its " + op + " " + shapeText(space) +
                      why);
  };
  auto producer = flow.producer.find(id);
  if (producer == flow.producer.end() || plan.kernels[producer->second].id != OpId::kSlice)
    return refuse("");
  const PlanKernel &slice = plan.kernels[producer->second];
  if (slice.inputs.size() != 1 || slice.outputs.size() != 1 ||
      plan.buffers[slice.inputs[0]].shape != space)
    return refuse(", and a slice of a value not of that shape");
  int64_t rank = static_cast<int64_t>(space.size());
  RowSlice s;
  s.out = id;
  s.in = slice.inputs[0];
  s.axis = slice.intAttr("axis", 0);
  s.axis = s.axis < 0 ? s.axis + rank : s.axis;
  s.start = slice.intAttr("start", 0);
  s.step = slice.intAttr("step", 1);
  if (s.axis < 0 || s.axis >= rank - 1 || b.shape.size() != space.size() || s.step < 1)
    return refuse(", and a slice of the rows' elements, not of whole rows");
  for (int64_t d = 0; d < rank; ++d)
    if (d != s.axis && b.shape[d] != space[d])
      return refuse(", and a slice that changes dimension " + std::to_string(d));
  s.extent = b.shape[s.axis];
  if (s.start < 0 || s.start + (s.extent - 1) * s.step >= space[s.axis])
    return refuse(", and a slice past the rows");
  for (int64_t d = s.axis + 1; d < rank - 1; ++d)
    s.inner *= space[d];
  // The slice's row is another row than the element's: its bytes must be
  // no input's.
  for (int32_t in : flow.inputs)
    if (overlaps(b, plan.buffers[in]))
      return Status(StatusCode::kInvalidArgument,
                    "exports the slice '" + b.name + "', which shares arena bytes with input '" +
                        plan.buffers[in].name + "': the row form stores it to other rows");
  return s;
}

} // namespace

/// The row form: element-wise producers, one softmax / layer_norm /
/// softmax_backward over the last axis, element-wise consumers of its
/// result. One block per row; each pass over the row asks the emitter for
/// the row op's operands at the element's index (the producers recomputed
/// per pass, as XLA's input fusion does), the statistics combine in
/// double as the CPU reference's (cpu/OpsDense.cpp), and the last pass
/// seeds the row op's result at the index, so consumers and every
/// exported value are computed and stored there (a slice of whole rows at
/// its row: rowSliceExport).
StatusOr<GeneratedKernel> generateRow(const Plan &plan, const Launch &launch,
                                      const Dataflow &flow, size_t rowKernel,
                                      KernelTarget target) {
  const PlanKernel &k = plan.kernels[rowKernel];
  const std::string &op = k.op;
  auto refuse = [&](const std::string &why) {
    return Status(StatusCode::kInvalidArgument, op + " " + why);
  };
  bool softmax = k.id == OpId::kSoftmax, norm = k.id == OpId::kLayerNorm,
       backward = k.id == OpId::kSoftmaxBackward, normBackward = k.id == OpId::kLayerNormBackward;
  size_t minIn = norm || normBackward ? 3 : 2 - softmax,
         maxIn = softmax ? 2 : norm || normBackward ? 3 : 2;
  if (k.inputs.size() < minIn || k.inputs.size() > maxIn ||
      k.outputs.size() != (normBackward ? 3u : 1u))
    return refuse("with " + std::to_string(k.inputs.size()) + " operands and " +
                  std::to_string(k.outputs.size()) + " results");
  const Shape space = plan.buffers[k.inputs[0]].shape;
  int64_t rank = static_cast<int64_t>(space.size());
  if (rank == 0 || space.back() == 0)
    return refuse("of a scalar or empty input");
  int64_t d = space.back(), rows = numElements(space) / d;
  if (!norm && !normBackward) {
    int64_t axis = k.intAttr("axis", -1);
    if (axis != -1 && axis != rank - 1)
      return refuse("over axis " + std::to_string(axis) + " of a rank-" + std::to_string(rank) +
                    " input: the row form normalizes the last axis only");
  }
  bool causal = softmax && k.intAttr("causal", 0) != 0;
  if (causal && rank < 2)
    return refuse("with causal masking of a rank-1 input");
  for (int32_t id : {k.outputs[0], backward || normBackward ? k.inputs[1] : k.outputs[0]})
    if (plan.buffers[id].shape != space)
      return refuse("with '" + plan.buffers[id].name + "' of type " + typeText(plan.buffers[id]) +
                    ", not of the input's shape " + shapeText(space));
  // One value per column: layer_norm's gamma and beta,
  // layer_norm_backward's gamma and the column sums it computes.
  std::vector<int32_t> perColumn;
  if (norm)
    perColumn = {k.inputs[1], k.inputs[2]};
  if (normBackward)
    perColumn = {k.inputs[2], k.outputs[1], k.outputs[2]};
  for (int32_t id : perColumn)
    if (plan.buffers[id].numElements() != d)
      return refuse("with '" + plan.buffers[id].name + "' of type " + typeText(plan.buffers[id]) +
                    ", not one value per column (" + std::to_string(d) + ")");
  // The column sums are stored once, after every row: no op of the launch
  // may read them.
  std::set<int32_t> columnSums;
  if (normBackward) {
    columnSums = {k.outputs[1], k.outputs[2]};
    for (size_t j : launch.kernels)
      for (int32_t in : plan.kernels[j].inputs)
        if (columnSums.count(in))
          return refuse("with its column sum '" + plan.buffers[in].name +
                        "' read in the launch: the row form stores them after every row");
  }
  // Exports of another shape: slices of whole rows (a BERT pooler's first
  // token), stored in the last pass at the slice's row.
  std::map<int32_t, RowSlice> slices;
  for (int32_t id : flow.exported)
    if (plan.buffers[id].shape != space && !columnSums.count(id)) {
      auto s = rowSliceExport(plan, flow, id, space, op);
      if (!s.isOk())
        return s.status();
      slices[id] = *s;
    }

  const int64_t chunks = std::min(rows, kColumnSumChunks);
  int block = 32;
  while (block < kBlockSize && block < d)
    block *= 2;
  // Inputs read at an index other than the element's own (gamma, beta, a
  // broadcast mask, producers' remapped operands).
  std::set<int32_t> remapped;
  auto body = [&](Emitter &e, bool stores) {
    e.loadHook = [&](int32_t id, const std::string &idx) -> std::string {
      if (idx != "i")
        remapped.insert(id);
      return "";
    };
    // Each pass has i = r * d + c.
    e.rowSpace = &space;
    e.rowVar = "r";
    e.innerVar = "c";
    e.indent = 1;
    const TargetWriter &w = targetWriter(target);
    e.line(w.sharedArray("double", "smem", "[32]"));
    // On the host, the row op's operands that the launch computes (a
    // dropout's mask, a residual add) are computed in the first pass and
    // kept for the others: a GPU recomputes them rather than spill, a core
    // has the cache for a row.
    std::vector<std::pair<int32_t, std::string>> kept;
    if (targetWriter(target).keepsRowValues())
      for (size_t j = 0; j < (backward || normBackward ? 2u : 1u); ++j) {
        int32_t id = k.inputs[j];
        if (auto view = flow.views.find(id); view != flow.views.end())
          id = view->second;
        if (!flow.producer.count(id))
          continue;
        kept.emplace_back(id, "dlc_in" + std::to_string(j));
        e.line(w.sharedArray("float", kept.back().second, "[" + std::to_string(d) + "]"));
      }
    e.line("const long long d = " + std::to_string(d) + "LL;");
    std::string rowCount = std::to_string(rows) + "LL";
    if (normBackward) {
      // Chunk ch's rows, and its partial column sums, which the thread
      // that owns column c (in every pass) adds to.
      const std::string C = std::to_string(chunks) + "LL";
      e.line("double *dlc_partials = (double *)(dlc_scratch + 16);");
      e.open(w.itemLoop("ch", C));
      e.line("double *pg = dlc_partials + 2 * d * ch, *pb = pg + d;");
      e.open(w.threadLoop("long long", "c", 'x', "d"));
      e.line("pg[c] = 0.0;");
      e.line("pb[c] = 0.0;");
      e.close();
      e.open("for (long long r = ch * " + rowCount + " / " + C + "; r < (ch + 1) * " + rowCount +
             " / " + C + "; ++r)");
    } else {
      e.open(w.itemLoop("r", rowCount));
    }
    if (causal) // the last visible key of the row's query
      e.line("const long long last = r % " + std::to_string(space[rank - 2]) + "LL + " +
             std::to_string(d - space[rank - 2]) + "LL;");
    // One pass over the row: `each` emits the work at element i. With
    // `lanes`, the host's form: the row in runs of kLanes columns (`l` the
    // column's lane) and a tail, so that a fold into per-lane accumulators
    // vectorizes.
    int passes = 0;
    auto pass = [&](const std::function<void()> &each, bool lanes = false) {
      auto element = [&] {
        e.line("const long long i = r * d + c;");
        for (const auto &[id, array] : kept)
          if (passes > 0)
            e.seed(id, "i", array + "[c]");
        each();
        for (const auto &[id, array] : kept)
          if (passes == 0)
            e.line(array + "[c] = " + e.value(id, "i") + ";");
      };
      if (!lanes) {
        e.open(w.threadLoop("long long", "c", 'x', "d"));
        element();
        e.close();
      } else {
        const std::string L = std::to_string(kRowLanes);
        e.open("for (long long c0 = 0; c0 < d / " + L + " * " + L + "; c0 += " + L + ")");
        e.open("for (int l = 0; l < " + L + "; ++l)");
        e.line("const long long c = c0 + l;");
        element();
        e.close();
        e.close();
        e.open("for (long long c = d / " + L + " * " + L + "; c < d; ++c)");
        e.line("const int l = (int)(c - d / " + L + " * " + L + ");");
        element();
        e.close();
      }
      ++passes;
    };
    auto reduce = [&](const std::string &acc, bool max) {
      e.line(w.blockReduce(acc, block, max, "smem", /*everyThread=*/true));
    };
    // A pass that folds `term`'s value at each element (of those `guard`
    // admits) into `acc`: a sum, or a maximum that keeps acc where the
    // term is NaN. On the host, into kRowLanes accumulators combined in
    // lane order: a double sum in one accumulator does not vectorize
    // without reordering it, and these lanes are that order, written out.
    auto fold = [&](const std::string &acc, bool max, const std::function<std::string()> &term,
                    const std::string &guard = "") {
      const bool lanes = targetWriter(target).keepsRowValues();
      const std::string a = lanes ? acc + "_l[l]" : acc;
      if (lanes)
        e.line("double " + acc + "_l[" + std::to_string(kRowLanes) + "];\n" +
               std::string(2 * e.indent, ' ') + "for (int l = 0; l < " +
               std::to_string(kRowLanes) + "; ++l) " + acc + "_l[l] = " + acc + ";");
      pass([&] {
        std::string z = term();
        if (!lanes)
          e.line((guard.empty() ? "" : "if (" + guard + ") ") + a + " = " +
                 (max ? a + " < " + z + " ? " + z + " : " + a : a + " + " + z) + ";");
        else if (max) // a select, not a branch: the loop vectorizes
          e.line(a + " = " + (guard.empty() ? "" : "(" + guard + ") && ") + a + " < " + z +
                 " ? " + z + " : " + a + ";");
        else
          e.line(a + " = " + a + " + " + (guard.empty() ? z : "(" + guard + " ? " + z + " : 0.0)") +
                 ";");
      }, lanes);
      if (lanes)
        e.line("for (int l = 0; l < " + std::to_string(kRowLanes) + "; ++l) " + acc + " = " +
               (max ? acc + " < " + acc + "_l[l] ? " + acc + "_l[l] : " + acc
                    : "l ? " + acc + " + " + acc + "_l[l] : " + acc + "_l[l]") +
               ";");
      reduce(acc, max);
    };
    // softmax's logit at i: scale * x + mask, in double.
    double scale = k.floatAttr("scale", 1.0);
    auto logit = [&] {
      std::string z = "(" + doubleLiteral(scale) + " * (double)" + e.value(k.inputs[0], "i");
      if (k.inputs.size() > 1)
        z += " + (double)" +
             e.value(k.inputs[1], e.broadcastIndex("i", space, plan.buffers[k.inputs[1]].shape));
      return e.temp("z", "double", z + ")");
    };
    std::string visible = causal ? "c <= last" : "";
    // The passes that gather the row's statistics; `last` then emits the
    // row op's result at i in the final pass.
    std::function<std::string()> last;
    if (softmax) {
      e.line("double mx = DLC_NEG_INF, sum = 0.0;");
      fold("mx", true, logit, visible);
      if (targetWriter(target).keepsRowValues()) {
        // A core computes what a GPU would recompute: each exponential
        // once, kept (as the CPU keeps it, a float) for the last pass. In
        // float, by the host prelude's dlc_expf: libm's double exp kept the
        // pass scalar, and the float it is kept as differs by a rounding.
        e.line(w.sharedArray("float", "dlc_e", "[" + std::to_string(d) + "]"));
        fold("sum", false, [&] {
          std::string z = logit();
          e.line("const double dlc_ex = " + (causal ? visible + " ? " : std::string()) +
                 "(double)dlc_expf((float)(" + z + " - mx))" + (causal ? " : 0.0" : "") + ";");
          e.line("dlc_e[c] = (float)dlc_ex;");
          return std::string("dlc_ex");
        });
        last = [&] { return e.temp("y", "float", "(float)((double)dlc_e[c] / sum)"); };
      } else {
        fold("sum", false, [&] { return "exp(" + logit() + " - mx)"; }, visible);
        last = [&] {
          // The CPU stores the exponential as a float, then divides it.
          std::string y = "(float)((double)(float)exp(" + logit() + " - mx) / sum)";
          return e.temp("y", "float", causal ? visible + " ? " + y + " : 0.f" : y);
        };
      }
    } else if (norm) {
      e.line("double mean = 0.0, var = 0.0;");
      fold("mean", false, [&] { return "(double)" + e.value(k.inputs[0], "i"); });
      e.line("mean /= (double)d;");
      fold("var", false, [&] {
        std::string dv =
            e.temp("dv", "double", "(double)" + e.value(k.inputs[0], "i") + " - mean");
        return dv + " * " + dv;
      });
      e.line("const double rstd = 1.0 / sqrt(var / (double)d + " +
             doubleLiteral(k.floatAttr("epsilon", 1e-5)) + ");");
      last = [&] {
        return e.temp("y", "float",
                      "(float)(((double)" + e.value(k.inputs[0], "i") +
                          " - mean) * rstd * (double)" + e.value(k.inputs[1], "c") +
                          " + (double)" + e.value(k.inputs[2], "c") + ")");
      };
    } else if (normBackward) {
      // As the CPU reference (cpu/OpsDense.cpp): the row's mean and rstd,
      // the sums of g = dy * gamma and of g * xhat, then dx; dy and
      // dy * xhat join the chunk's column sums.
      const int32_t dy = k.inputs[0], x = k.inputs[1], gamma = k.inputs[2];
      e.line("double mean = 0.0, var = 0.0, sg = 0.0, sgx = 0.0;");
      fold("mean", false, [&] { return "(double)" + e.value(x, "i"); });
      e.line("mean /= (double)d;");
      fold("var", false, [&] {
        std::string dv = e.temp("dv", "double", "(double)" + e.value(x, "i") + " - mean");
        return dv + " * " + dv;
      });
      e.line("const double rstd = 1.0 / sqrt(var / (double)d + " +
             doubleLiteral(k.floatAttr("epsilon", 1e-5)) + ");");
      // `last` runs after this block: the lambdas copy the ids.
      auto g = [&e, dy, gamma] {
        return e.temp("g", "double",
                      "(double)" + e.value(dy, "i") + " * (double)" + e.value(gamma, "c"));
      };
      auto xhat = [&e, x] {
        return e.temp("xhat", "double", "((double)" + e.value(x, "i") + " - mean) * rstd");
      };
      fold("sg", false, g);
      fold("sgx", false, [&] { return g() + " * " + xhat(); });
      last = [&e, g, xhat, dy] {
        std::string dyv = e.temp("dy", "double", "(double)" + e.value(dy, "i"));
        std::string gv = g(), xv = xhat();
        e.line("pg[c] += " + dyv + " * " + xv + ";");
        e.line("pb[c] += " + dyv + ";");
        return e.temp("y", "float",
                      "(float)(rstd / (double)d * ((double)d * " + gv + " - sg - " + xv +
                          " * sgx))");
      };
    } else {
      e.line("double dot = 0.0;");
      fold("dot", false, [&] {
        return "(double)" + e.value(k.inputs[0], "i") + " * (double)" + e.value(k.inputs[1], "i");
      });
      last = [&] {
        return e.temp("y", "float",
                      "(float)(" + doubleLiteral(scale) + " * (double)" +
                          e.value(k.inputs[1], "i") + " * ((double)" +
                          e.value(k.inputs[0], "i") + " - dot))");
      };
    }
    // Each slice's row for this row, or -1 where the slice skips it.
    std::map<int32_t, std::string> sliceRow;
    for (const auto &[id, s] : slices) {
      const std::string x = e.fresh("sx"), row = e.fresh("sr");
      e.line("const long long " + x + " = (r / " + std::to_string(s.inner) + "LL) % " +
             std::to_string(space[s.axis]) + "LL - " + std::to_string(s.start) + "LL;");
      e.line("const long long " + row + " = " + x + " >= 0 && " + x + " % " +
             std::to_string(s.step) + "LL == 0 && " + x + " / " + std::to_string(s.step) +
             "LL < " + std::to_string(s.extent) + "LL ? ((r / " +
             std::to_string(s.inner * space[s.axis]) + "LL) * " + std::to_string(s.extent) +
             "LL + " + x + " / " + std::to_string(s.step) + "LL) * " + std::to_string(s.inner) +
             "LL + r % " + std::to_string(s.inner) + "LL : -1LL;");
      sliceRow[id] = row;
    }
    pass([&] {
      std::string y = last();
      // What the result's buffer would hold, for the consumers.
      DType type = plan.buffers[k.outputs[0]].dtype;
      if (type == DType::kF16 || type == DType::kBF16) {
        (type == DType::kF16 ? e.usesF16 : e.usesBF16) = true;
        y = e.temp("y", "float",
                   (type == DType::kF16 ? "dlc_round_f16(" : "dlc_round_bf16(") + y + ")");
      }
      e.seed(k.outputs[0], "i", y);
      for (int32_t id : flow.exported) {
        if (columnSums.count(id))
          continue;
        if (auto s = slices.find(id); s != slices.end()) {
          // The slice's element is its input's at i.
          std::string v = e.value(s->second.in, "i");
          if (stores)
            e.line("if (" + sliceRow[id] + " >= 0) dlc_st(" + e.param(id) + ", " + sliceRow[id] +
                   " * d + c, " + v + ");");
          continue;
        }
        std::string v = e.value(id, "i");
        if (stores)
          e.line("dlc_st(" + e.param(id) + ", i, " + v + ");");
      }
    });
    e.close();
    if (!normBackward)
      return;
    e.close();
    // The last block to arrive sums the chunks' partials in chunk order.
    e.open("if (dlc_last_arrival((unsigned *)dlc_scratch, " + w.arrivals() + "))");
    e.open(w.threadLoop("long long", "c", 'x', "d"));
    e.line("double dg = 0.0, db = 0.0;");
    e.open("for (long long ch = 0; ch < " + std::to_string(chunks) + "LL; ++ch)");
    e.line("dg += dlc_ld_partial(dlc_partials + 2 * d * ch + c);");
    e.line("db += dlc_ld_partial(dlc_partials + 2 * d * ch + d + c);");
    e.close();
    for (auto [id, sum] : {std::pair{k.outputs[1], "dg"}, std::pair{k.outputs[2], "db"}})
      if (stores && std::count(flow.exported.begin(), flow.exported.end(), id))
        e.line("dlc_st(" + e.param(id) + ", c, (float)" + sum + ");");
    e.close();
    e.close();
  };

  GeneratedKernel g;
  g.form = KernelForm::kRow;
  Emitter e(plan, flow, target);
  // Inputs first, as in the other forms: a dry run registers them.
  {
    Emitter dry(plan, flow, target);
    body(dry, false);
    if (!dry.error.empty())
      return Status(StatusCode::kInvalidArgument, dry.error);
    e.params = dry.params;
    for (int32_t id : flow.exported)
      e.param(id);
  }
  remapped.clear();
  body(e, true);
  if (!e.error.empty())
    return Status(StatusCode::kInvalidArgument, e.error);
  // A result may take the bytes of an input (the memory planner ends an
  // input's life at the op that reads it): safe where the input is read at
  // the element's own index only, as the same element, since each thread
  // reads its elements before it writes them, after the row's statistics.
  bool anyOverlap = false;
  for (int32_t o : flow.exported)
    for (int32_t in : flow.inputs) {
      const PlanBuffer &ob = plan.buffers[o], &ib = plan.buffers[in];
      if (!overlaps(ob, ib))
        continue;
      anyOverlap = true;
      // The column sums are stored after every block has read its rows;
      // a slice shares no input's bytes (rowSliceExport).
      if (columnSums.count(o) || slices.count(o))
        continue;
      if (remapped.count(in) || ob.offset != ib.offset || ib.shape != space ||
          dtypeBytes(ob.dtype) != dtypeBytes(ib.dtype))
        return Status(StatusCode::kInvalidArgument,
                      "output '" + ob.name + "' shares arena bytes with input '" + ib.name +
                          "', which is not read as the same element only");
    }

  std::ostringstream src;
  src << targetWriter(target).kernelHead(block) << "DLC_KERNEL_NAME("
      << paramList(e, flow, !anyOverlap, target, normBackward) << ") {\n"
      << stepLine(e) << "  // One block per row: " << rows << " rows of " << d << ", " << op
      << (causal ? " (causal)" : "") << " statistics in double"
      << (normBackward ? "; the rows in " + std::to_string(chunks) +
                             " chunks, one block each, for the column sums.\n"
                       : std::string(".\n"))
      << e.body << "}\n";
  g.args = e.params;
  g.blockSize = block;
  g.work = normBackward ? chunks : rows;
  if (normBackward)
    g.scratchBytes = 16 + 2 * d * chunks * int64_t(sizeof(double));
  finish(g, plan, launch, e, src.str(), "row", target);
  return g;
}

} // namespace dlc::rt::codegen
