//===- OpRules.cpp - each op's validation rule (OpRules.h) ----------------===//
//
// A rule states what the backends rely on when they run a kernel of its op:
// how many operands and results, of which element types, which shapes
// agree, and which attribute values index inside them. The reference
// kernels (runtime/src/cpu/Ops*.cpp) are the measure: a kernel that passes
// its rule reads and writes inside its buffers there, and in the fast and
// CUDA backends, which take the same facts.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/OpRules.h"

#include "OpRuleCheck.h"

#include <array>
#include <cmath>
#include <limits>

namespace dlc::rt {

namespace {

using namespace oprules;

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

void unary(Check &c) {
  if (!c.counts(1, 1, 1, 1))
    return;
  c.floats(c.in(0));
  c.floats(c.out(0));
  c.same(c.out(0), c.in(0));
}

void gelu(Check &c) {
  unary(c);
  std::string approximate = c.kernel.stringAttr("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    c.fail("approximate '" + approximate + "' is neither none nor tanh");
}

void scale(Check &c) {
  unary(c);
  c.real("scale", 1, -INFINITY, INFINITY);
  c.real("bias", 0, -INFINITY, INFINITY);
}

void dropout(Check &c) {
  unary(c);
  c.real("rate", 0, 0, 1, /*hiOpen=*/true);
}

void cast(Check &c) {
  if (c.counts(1, 1, 1, 1))
    c.same(c.out(0), c.in(0));
}

/// dx from dy and a saved value, all of one shape.
void unaryBackward(Check &c) {
  if (!c.counts(2, 2, 1, 1))
    return;
  for (const Ref &r : {c.in(0), c.in(1), c.out(0)})
    c.floats(r);
  c.same(c.in(1), c.in(0));
  c.same(c.out(0), c.in(0));
}

void geluBackward(Check &c) {
  unaryBackward(c);
  std::string approximate = c.kernel.stringAttr("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    c.fail("approximate '" + approximate + "' is neither none nor tanh");
}

void binary(Check &c) {
  if (!c.counts(2, 2, 1, 1))
    return;
  for (const Ref &r : {c.in(0), c.in(1), c.out(0)})
    c.floats(r);
  c.broadcasts(c.in(0), c.out(0).shape(), "result #0");
  c.broadcasts(c.in(1), c.out(0).shape(), "result #0");
}

//===----------------------------------------------------------------------===//
// Reductions and data movement
//===----------------------------------------------------------------------===//

void reduce(Check &c) {
  if (!c.counts(1, 1, 1, 1))
    return;
  c.floats(c.in(0));
  c.floats(c.out(0));
  Ref x = c.in(0);
  std::vector<bool> reduced(x.rank(), false);
  for (int64_t a : c.kernel.intsAttr("axes", {})) {
    if (a < -x.rank() || a >= x.rank())
      return c.fail("axes " + text(c.kernel.intsAttr("axes", {})) +
                    " has an axis outside its operand's rank " + std::to_string(x.rank()));
    int64_t d = a < 0 ? a + x.rank() : a;
    if (reduced[d])
      return c.fail("axes " + text(c.kernel.intsAttr("axes", {})) + " names axis " +
                    std::to_string(d) + " twice");
    reduced[d] = true;
  }
  int64_t kept = 1;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (!reduced[d])
      kept *= x.dim(d);
  c.elements(c.out(0), kept, "reducing " + text(x.shape()) + " over axes " +
                                 text(c.kernel.intsAttr("axes", {})));
}

void sumToShape(Check &c) {
  if (!c.counts(1, 1, 1, 1))
    return;
  c.floats(c.in(0));
  c.floats(c.out(0));
  Ref x = c.in(0), y = c.out(0);
  bool fits = y.rank() <= x.rank();
  for (int64_t d = 0; fits && d < y.rank(); ++d) {
    int64_t o = y.dim(d), i = x.dim(x.rank() - y.rank() + d);
    fits = o == i || o == 1;
  }
  if (!fits)
    c.fail("result #0 of shape " + text(y.shape()) + " is no sum of operand #0's " +
           text(x.shape()));
}

void broadcastTo(Check &c) {
  if (!c.counts(1, 1, 1, 1))
    return;
  c.floats(c.in(0));
  c.floats(c.out(0));
  c.broadcasts(c.in(0), c.out(0).shape(), "result #0");
}

void transpose(Check &c) {
  if (!c.counts(1, 1, 1, 1))
    return;
  Ref x = c.in(0);
  std::vector<int64_t> perm = c.kernel.intsAttr("permutation", {});
  std::vector<bool> seen(x.rank(), false);
  bool isPerm = static_cast<int64_t>(perm.size()) == x.rank();
  for (size_t i = 0; isPerm && i < perm.size(); ++i) {
    isPerm = perm[i] >= 0 && perm[i] < x.rank() && !seen[perm[i]];
    if (isPerm)
      seen[perm[i]] = true;
  }
  if (!isPerm)
    return c.fail("permutation " + text(perm) + " is no permutation of its operand's " +
                  std::to_string(x.rank()) + " dimensions");
  std::vector<int64_t> want;
  for (int64_t p : perm)
    want.push_back(x.dim(p));
  c.shape(c.out(0), want, "permuting operand #0's " + text(x.shape()));
  if (c.in(0).buffer->dtype != c.out(0).buffer->dtype)
    c.fail("result #0 is " + std::string(dtypeName(c.out(0).buffer->dtype)) + ", operand #0 " +
           dtypeName(c.in(0).buffer->dtype));
}

void reshape(Check &c) {
  if (c.counts(1, 1, 1, 1))
    c.elements(c.out(0), c.in(0).elements(), "operand #0's " + text(c.in(0).shape()));
}

/// The slice of `whole` that `part` is: axis, start, step (slice and its
/// backward, one reading and the other writing it).
void sliceOf(Check &c, const Ref &whole, const Ref &part) {
  if (!c.minRank(whole, 1))
    return;
  int64_t axis = c.axis("axis", 0, whole);
  if (!c.ok())
    return;
  int64_t extent = whole.dim(axis), count = part.rank() == whole.rank() ? part.dim(axis) : 0;
  int64_t start = c.integer("start", 0, 0, extent);
  int64_t step = c.integer("step", 1, 1, std::max<int64_t>(extent, 1));
  std::vector<int64_t> want = whole.shape();
  want[axis] = count;
  c.shape(part, want, "slicing " + whole.name + "'s " + text(whole.shape()) + " on axis " +
                          std::to_string(axis));
  // The last element taken, start + (count - 1) * step, lies in the axis.
  int64_t last = 0;
  if (c.ok() && count > 0 &&
      (__builtin_mul_overflow(count - 1, step, &last) ||
       __builtin_add_overflow(last, start, &last) || last >= extent))
    c.fail("start " + std::to_string(start) + ", step " + std::to_string(step) + " and " +
           std::to_string(count) + " elements reach past axis " + std::to_string(axis) +
           "'s extent " + std::to_string(extent));
}

void slice(Check &c) {
  if (c.counts(1, 1, 1, 1))
    sliceOf(c, c.in(0), c.out(0));
}

void sliceBackward(Check &c) {
  if (!c.counts(1, 1, 1, 1))
    return;
  c.floats(c.in(0));
  c.floats(c.out(0));
  sliceOf(c, c.out(0), c.in(0));
}

void concat(Check &c) {
  if (!c.counts(1, SIZE_MAX, 1, 1) || !c.minRank(c.out(0), 1))
    return;
  Ref y = c.out(0);
  int64_t axis = c.axis("axis", 0, y), total = 0;
  for (size_t i = 0; c.ok() && i < c.numIn(); ++i) {
    Ref x = c.in(i);
    std::vector<int64_t> want = y.shape();
    want[axis] = x.rank() == y.rank() ? x.dim(axis) : 0;
    c.shape(x, want, "concatenating into result #0's " + text(y.shape()) + " on axis " +
                         std::to_string(axis));
    total += want[axis];
  }
  if (c.ok() && total != y.dim(axis))
    c.fail("the operands add up to " + std::to_string(total) + " on axis " +
           std::to_string(axis) + ", result #0 has " + std::to_string(y.dim(axis)));
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

void matmul(Check &c) {
  if (!c.counts(2, 2, 1, 1))
    return;
  Ref a = c.in(0), b = c.in(1), y = c.out(0);
  for (const Ref &r : {a, b, y})
    c.floats(r);
  if (!c.minRank(a, 2) || !c.minRank(b, 2) || !c.minRank(y, 2))
    return;
  bool ta = c.kernel.flag("transpose_lhs"), tb = c.kernel.flag("transpose_rhs");
  int64_t m = ta ? a.dim(-1) : a.dim(-2), k = ta ? a.dim(-2) : a.dim(-1);
  int64_t kb = tb ? b.dim(-1) : b.dim(-2), n = tb ? b.dim(-2) : b.dim(-1);
  if (k != kb)
    return c.fail("operand #0 " + text(a.shape()) + " and operand #1 " + text(b.shape()) +
                  " do not agree on the contracted extent (" + std::to_string(k) + " and " +
                  std::to_string(kb) + ")");
  if (y.dim(-2) != m || y.dim(-1) != n)
    return c.fail("result #0 " + text(y.shape()) + " is not " + std::to_string(m) + " x " +
                  std::to_string(n));
  std::vector<int64_t> batch(y.shape().begin(), y.shape().end() - 2);
  for (const Ref &r : {a, b}) {
    PlanBuffer leading;
    leading.shape.assign(r.shape().begin(), r.shape().end() - 2);
    c.broadcasts(Ref{&leading, r.name + "'s batch"}, batch, "result #0's batch");
  }
}

void linear(Check &c) {
  if (!c.counts(2, 3, 1, 1))
    return;
  Ref x = c.in(0), w = c.in(1), y = c.out(0);
  for (const Ref &r : {x, w, y})
    c.floats(r);
  if (!c.minRank(x, 1))
    return;
  c.rank(w, 2);
  if (!c.ok())
    return;
  if (x.dim(-1) < 1 || w.dim(1) != x.dim(-1))
    return c.fail("operand #1 " + text(w.shape()) + " does not take operand #0's " +
                  std::to_string(x.dim(-1)) + " features");
  std::vector<int64_t> want = x.shape();
  want.back() = w.dim(0);
  c.shape(y, want);
  if (c.numIn() > 2) {
    c.floats(c.in(2));
    c.elements(c.in(2), w.dim(0), "operand #1's output features");
  }
}


//===----------------------------------------------------------------------===//
// Normalization, softmax, embedding, loss
//===----------------------------------------------------------------------===//

void softmax(Check &c) {
  if (!c.counts(1, 2, 1, 1))
    return;
  Ref x = c.in(0);
  c.floats(x);
  c.floats(c.out(0));
  c.same(c.out(0), x);
  int64_t axis = c.axis("axis", -1, x);
  c.real("scale", 1, -INFINITY, INFINITY);
  if (c.numIn() > 1) {
    c.floats(c.in(1));
    c.broadcasts(c.in(1), x.shape(), "operand #0");
  }
  if (c.ok() && c.kernel.flag("causal") && (x.rank() < 2 || axis != x.rank() - 1))
    c.fail("causal masking takes the last axis of a rank >= 2 operand, not axis " +
           std::to_string(axis) + " of rank " + std::to_string(x.rank()));
}

void softmaxBackward(Check &c) {
  if (!c.counts(2, 2, 1, 1))
    return;
  for (const Ref &r : {c.in(0), c.in(1), c.out(0)})
    c.floats(r);
  c.same(c.in(1), c.in(0));
  c.same(c.out(0), c.in(0));
  c.axis("axis", -1, c.in(0));
  c.real("scale", 1, -INFINITY, INFINITY);
}

/// train.attention's operands: q [B..., Sq, D], k [B..., Sk, D], v [B...,
/// Sk, Dv] of one float type, an optional additive mask that broadcasts to
/// the scores [B..., Sq, Sk], and the attributes the kernels read
/// (scale, dropout_rate; causal and seed take any value). Returns the
/// scores' shape.
std::vector<int64_t> attentionOperands(Check &c, const Ref &q, const Ref &k, const Ref &v,
                                       const Ref *mask) {
  for (const Ref &r : {q, k, v})
    if (!c.minRank(r, 2))
      return {};
  c.rank(k, q.rank());
  c.rank(v, q.rank());
  for (const Ref &r : {q, k, v}) {
    c.floats(r);
    if (c.ok() && r.buffer->dtype != q.buffer->dtype)
      c.fail(r.name + " is " + dtypeName(r.buffer->dtype) + ", operand #0 " +
             dtypeName(q.buffer->dtype) + ": the op takes one float type");
  }
  if (!c.ok())
    return {};
  std::vector<int64_t> batch(q.shape().begin(), q.shape().end() - 2);
  std::vector<int64_t> keys = batch, values = batch;
  keys.insert(keys.end(), {k.dim(-2), q.dim(-1)});
  values.insert(values.end(), {k.dim(-2), v.dim(-1)});
  c.shape(k, keys, "the queries' batch and head dimensions");
  c.shape(v, values, "the keys' batch and sequence dimensions");
  std::vector<int64_t> scores = batch;
  scores.insert(scores.end(), {q.dim(-2), k.dim(-2)});
  if (mask) {
    c.floats(*mask);
    c.broadcasts(*mask, scores, "the scores");
  }
  c.real("scale", 1, -INFINITY, INFINITY);
  c.real("dropout_rate", 0, 0, 1, /*hiOpen=*/true);
  return scores;
}

/// o [B..., Sq, Dv] in the operands' type and lse [B..., Sq] in f32.
void attentionResults(Check &c, const Ref &q, const Ref &v, const Ref &o, const Ref &lse) {
  std::vector<int64_t> out(q.shape().begin(), q.shape().end() - 1), rows = out;
  out.push_back(v.dim(-1));
  c.shape(o, out, "queries by values");
  c.shape(lse, rows, "one row per query");
  if (c.ok() && lse.buffer->dtype != DType::kF32)
    c.fail(lse.name + " is " + dtypeName(lse.buffer->dtype) + ", the row statistics are f32");
}

void attention(Check &c) {
  if (!c.counts(3, 4, 2, 2))
    return;
  Ref mask = c.in(3);
  attentionOperands(c, c.in(0), c.in(1), c.in(2), c.numIn() > 3 ? &mask : nullptr);
  if (c.ok())
    attentionResults(c, c.in(0), c.in(2), c.out(0), c.out(1));
  if (c.ok() && c.out(0).buffer->dtype != c.in(0).buffer->dtype)
    c.fail("result #0 is " + std::string(dtypeName(c.out(0).buffer->dtype)) +
           ", the operands " + dtypeName(c.in(0).buffer->dtype));
}

/// (q, k, v, o, do, lse, mask?) -> (dq, dk, dv), each gradient its value's shape.
void attentionBackward(Check &c) {
  if (!c.counts(6, 7, 3, 3))
    return;
  Ref mask = c.in(6);
  attentionOperands(c, c.in(0), c.in(1), c.in(2), c.numIn() > 6 ? &mask : nullptr);
  if (c.ok())
    attentionResults(c, c.in(0), c.in(2), c.in(3), c.in(5));
  c.floats(c.in(4));
  c.same(c.in(4), c.in(3));
  for (size_t i = 0; i < 3; ++i) {
    c.floats(c.out(i));
    c.same(c.out(i), c.in(i));
  }
}

/// Rows of x's last extent, and the per-feature operands of that extent.
void layerNormOf(Check &c, const Ref &x, std::initializer_list<Ref> features) {
  c.real("epsilon", 1e-5, 0, INFINITY, false, /*positive=*/true);
  if (!c.minRank(x, 1))
    return;
  if (x.dim(-1) < 1)
    return c.fail(x.name + " " + text(x.shape()) + " has no features to normalize");
  for (const Ref &f : features)
    c.elements(f, x.dim(-1), x.name + "'s last extent");
}

void layerNorm(Check &c) {
  if (!c.counts(3, 3, 1, 1))
    return;
  for (const Ref &r : {c.in(0), c.in(1), c.in(2), c.out(0)})
    c.floats(r);
  c.same(c.out(0), c.in(0));
  layerNormOf(c, c.in(0), {c.in(1), c.in(2)});
}

void layerNormBackward(Check &c) {
  if (!c.counts(3, 3, 3, 3)) // dy, x, gamma -> dx, dgamma, dbeta
    return;
  for (const Ref &r : {c.in(0), c.in(1), c.in(2), c.out(0), c.out(1), c.out(2)})
    c.floats(r);
  c.same(c.in(0), c.in(1));
  c.same(c.out(0), c.in(1));
  layerNormOf(c, c.in(1), {c.in(2), c.out(1), c.out(2)});
}


void embeddingOf(Check &c, const Ref &table, const Ref &indices, const Ref &rows) {
  c.floats(table);
  c.floats(rows);
  c.indices(indices);
  c.rank(table, 2);
  int64_t want = 0;
  if (c.ok() && __builtin_mul_overflow(indices.elements(), table.dim(1), &want))
    return c.fail("the indices' rows overflow int64");
  if (c.ok())
    c.elements(rows, want, std::to_string(indices.elements()) + " indices into rows of " +
                               std::to_string(table.dim(1)));
}

void embedding(Check &c) {
  if (c.counts(2, 2, 1, 1)) // table, indices -> rows
    embeddingOf(c, c.in(0), c.in(1), c.out(0));
}

void embeddingBackward(Check &c) {
  if (c.counts(2, 2, 1, 1)) // dy, indices -> dtable
    embeddingOf(c, c.out(0), c.in(1), c.in(0));
}

void crossEntropyOf(Check &c, const Ref &logits, const Ref &labels) {
  c.floats(logits);
  c.indices(labels);
  int64_t axis = c.axis("class_axis", 1, logits);
  if (c.ok())
    c.elements(labels, around(logits, axis),
               "operand " + text(logits.shape()) + " without class axis " +
                   std::to_string(axis));
}

void softmaxCrossEntropy(Check &c) {
  if (!c.counts(2, 2, 1, 1)) // logits, labels -> loss
    return;
  c.floats(c.out(0));
  c.atLeast(c.out(0), 1);
  crossEntropyOf(c, c.in(0), c.in(1));
}

void softmaxCrossEntropyBackward(Check &c) {
  if (!c.counts(3, 3, 1, 1)) // dloss, logits, labels -> dlogits
    return;
  c.floats(c.in(0));
  c.atLeast(c.in(0), 1);
  c.floats(c.out(0));
  c.same(c.out(0), c.in(1));
  crossEntropyOf(c, c.in(1), c.in(2));
}


//===----------------------------------------------------------------------===//
// Optimizers, loss scaling, collectives
//===----------------------------------------------------------------------===//

/// An update of `state` buffers besides the parameter: operands param,
/// grad, state..., then optionally the loss-scale status [1 / scale,
/// skip]; results param', state'....
void update(Check &c, size_t state) {
  if (!c.counts(2 + state, 3 + state, 1 + state, 1 + state))
    return;
  for (size_t i = 0; i < 2 + state; ++i) {
    c.floats(c.in(i));
    c.same(c.in(i), c.in(0));
  }
  for (size_t i = 0; i < 1 + state; ++i) {
    c.floats(c.out(i));
    c.same(c.out(i), c.in(0));
  }
  if (c.numIn() > 2 + state) {
    c.floats(c.in(2 + state));
    c.atLeast(c.in(2 + state), 2);
  }
  c.real("lr", 0, -INFINITY, INFINITY);
  c.real("weight_decay", 0, -INFINITY, INFINITY);
}

void sgdUpdate(Check &c) {
  update(c, 1);
  c.real("momentum", 0, 0, INFINITY);
}

void adamwUpdate(Check &c) {
  update(c, 2);
  c.real("beta1", 0.9, 0, 1, /*hiOpen=*/true);
  c.real("beta2", 0.999, 0, 1, /*hiOpen=*/true);
  c.real("epsilon", 1e-8, 0, INFINITY, false, /*positive=*/true);
}

void lossScaleStatus(Check &c) {
  if (!c.counts(1, SIZE_MAX, 1, 1)) // scale, grads... -> [1 / scale, overflow]
    return;
  for (size_t i = 0; i < c.numIn(); ++i)
    c.floats(c.in(i));
  c.floats(c.out(0));
  c.atLeast(c.in(0), 1);
  c.atLeast(c.out(0), 2);
}

void updateLossScale(Check &c) {
  if (!c.counts(3, 3, 2, 2)) // scale, good steps, status -> scale', good steps'
    return;
  for (size_t i = 0; i < 3; ++i)
    c.floats(c.in(i));
  c.floats(c.out(0));
  c.floats(c.out(1));
  c.atLeast(c.in(0), 1);
  c.atLeast(c.in(1), 1);
  c.atLeast(c.in(2), 2);
  c.atLeast(c.out(0), 1);
  c.atLeast(c.out(1), 1);
  c.integer("growth_interval", 2000, 1, std::numeric_limits<int64_t>::max());
  c.real("growth_factor", 2.0, 0, INFINITY, false, /*positive=*/true);
  c.real("backoff_factor", 0.5, 0, INFINITY, false, /*positive=*/true);
}

/// Data parallelism: every all-reduce for the same ranks, each output the
/// shape and type of its input.
void allReduce(Check &c) {
  const int64_t *count = findAttr<int64_t>(c.kernel.attrs, "ranks");
  if (!count || *count < 2)
    return c.fail("has no integer 'ranks' >= 2");
  if (int64_t ranks = planRanks(c.plan); *count != ranks)
    return c.fail("averages over " + std::to_string(*count) + " ranks, another over " +
                  std::to_string(ranks));
  if (c.kernel.inputs.empty() || c.kernel.inputs.size() != c.kernel.outputs.size())
    return c.fail("has " + std::to_string(c.kernel.inputs.size()) + " inputs and " +
                  std::to_string(c.kernel.outputs.size()) + " outputs");
  for (size_t i = 0; i < c.numIn(); ++i) {
    const PlanBuffer &in = *c.in(i).buffer, &out = *c.out(i).buffer;
    c.floats(c.in(i));
    if (in.dtype != out.dtype || in.shape != out.shape)
      return c.fail("output '" + out.name + "' differs in shape or type from input '" +
                    in.name + "'");
  }
}

void constant(Check &c) {
  c.fail("train.constant is a buffer of the plan, never a kernel's op");
}

void expand(Check &c) {
  c.fail("train.expand becomes train.broadcast_to in dlc-specialize-batch, never a kernel's op");
}

constexpr size_t at(OpId id) { return static_cast<size_t>(id); }

/// The rule of each op, by OpId; null where an op has none (OpRulesTest
/// fails, and a plan with such a kernel is refused).
const std::array<Rule, kNumOps> &rules() {
  static const std::array<Rule, kNumOps> table = [] {
    std::array<Rule, kNumOps> t{};
    for (OpId id : {OpId::kRelu, OpId::kRelu6, OpId::kTanh, OpId::kSigmoid, OpId::kSilu,
                    OpId::kHardswish, OpId::kHardsigmoid})
      t[at(id)] = unary;
    for (OpId id : {OpId::kReluBackward, OpId::kRelu6Backward, OpId::kTanhBackward,
                    OpId::kSigmoidBackward, OpId::kSiluBackward, OpId::kHardswishBackward,
                    OpId::kHardsigmoidBackward})
      t[at(id)] = unaryBackward;
    for (OpId id : {OpId::kAdd, OpId::kSub, OpId::kMul, OpId::kDiv})
      t[at(id)] = binary;
    for (OpId id : {OpId::kReduceSum, OpId::kReduceMean, OpId::kReduceMax})
      t[at(id)] = reduce;
    for (OpId id : {OpId::kMaxPool2d, OpId::kAvgPool2d})
      t[at(id)] = pool;
    t[at(OpId::kGelu)] = gelu;
    t[at(OpId::kGeluBackward)] = geluBackward;
    t[at(OpId::kScale)] = scale;
    t[at(OpId::kDropout)] = dropout;
    t[at(OpId::kCast)] = cast;
    t[at(OpId::kSumToShape)] = sumToShape;
    t[at(OpId::kBroadcastTo)] = broadcastTo;
    t[at(OpId::kTranspose)] = transpose;
    t[at(OpId::kReshape)] = reshape;
    t[at(OpId::kSlice)] = slice;
    t[at(OpId::kSliceBackward)] = sliceBackward;
    t[at(OpId::kConcat)] = concat;
    t[at(OpId::kMatmul)] = matmul;
    t[at(OpId::kLinear)] = linear;
    t[at(OpId::kConv2d)] = conv2d;
    t[at(OpId::kConv2dBackwardData)] = conv2dBackwardData;
    t[at(OpId::kConv2dBackwardFilter)] = conv2dBackwardFilter;
    t[at(OpId::kSoftmax)] = softmax;
    t[at(OpId::kSoftmaxBackward)] = softmaxBackward;
    t[at(OpId::kAttention)] = attention;
    t[at(OpId::kAttentionBackward)] = attentionBackward;
    t[at(OpId::kLayerNorm)] = layerNorm;
    t[at(OpId::kLayerNormBackward)] = layerNormBackward;
    t[at(OpId::kBatchNorm)] = batchNorm;
    t[at(OpId::kBatchNormBackward)] = batchNormBackward;
    t[at(OpId::kEmbedding)] = embedding;
    t[at(OpId::kEmbeddingBackward)] = embeddingBackward;
    t[at(OpId::kSoftmaxCrossEntropy)] = softmaxCrossEntropy;
    t[at(OpId::kSoftmaxCrossEntropyBackward)] = softmaxCrossEntropyBackward;
    t[at(OpId::kMaxPool2dBackward)] = maxPoolBackward;
    t[at(OpId::kAvgPool2dBackward)] = avgPoolBackward;
    t[at(OpId::kGlobalAvgPool)] = globalAvgPool;
    t[at(OpId::kResizeBilinear)] = resizeBilinear;
    t[at(OpId::kResizeBilinearBackward)] = resizeBilinearBackward;
    t[at(OpId::kSgdUpdate)] = sgdUpdate;
    t[at(OpId::kAdamWUpdate)] = adamwUpdate;
    t[at(OpId::kLossScaleStatus)] = lossScaleStatus;
    t[at(OpId::kUpdateLossScale)] = updateLossScale;
    t[at(OpId::kAllReduce)] = allReduce;
    t[at(OpId::kConstant)] = constant;
    t[at(OpId::kExpand)] = expand;
    return t;
  }();
  return table;
}

} // namespace

bool hasKernelRule(OpId id) {
  return static_cast<size_t>(id) < kNumOps && rules()[at(id)] != nullptr;
}

Status checkKernelRule(const Plan &plan, size_t k) {
  Check c(plan, k);
  const PlanKernel &kernel = plan.kernels[k];
  // The kernels multiply extents in int64: those of a buffer with no
  // elements (a 0 among them) must multiply without wrapping, too.
  for (const std::vector<int32_t> *list : {&kernel.inputs, &kernel.outputs})
    for (int32_t id : *list) {
      int64_t product = 1;
      for (int64_t d : plan.buffers[id].shape)
        if (d != 0 && __builtin_mul_overflow(product, d, &product)) {
          c.fail("buffer '" + plan.buffers[id].name + "' has extents " +
                 text(plan.buffers[id].shape) + " whose product overflows int64");
          return c.result();
        }
    }
  if (!hasKernelRule(kernel.id)) {
    c.fail("the op has no validation rule (runtime/src/OpRules.cpp)");
    return c.result();
  }
  rules()[at(kernel.id)](c);
  return c.result();
}

int64_t kernelAxis(const PlanKernel &kernel, std::string_view name, int64_t fallback,
                   int64_t rank) {
  int64_t axis = kernel.intAttr(name, fallback);
  return axis < 0 ? axis + rank : axis;
}

} // namespace dlc::rt
