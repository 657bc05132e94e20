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

#include "dlc/runtime/Plan.h"
#include "dlc/runtime/Shape.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

namespace dlc::rt {

namespace {

/// Window sizes, strides, paddings, dilations and the extents they meet:
/// at most this, so that their products and sums stay inside int64.
constexpr int64_t kMaxExtent = int64_t(1) << 31;

std::string text(const std::vector<int64_t> &values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

std::string number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", v);
  return buffer;
}

/// An operand or a result of the kernel, with the words that name it.
struct Ref {
  const PlanBuffer *buffer;
  std::string name;
  const std::vector<int64_t> &shape() const { return buffer->shape; }
  int64_t rank() const { return static_cast<int64_t>(buffer->shape.size()); }
  int64_t dim(int64_t d) const { return buffer->shape[d < 0 ? d + rank() : d]; }
  int64_t elements() const { return buffer->numElements(); }
};

/// One kernel's check: the first failure is kept, and every check after
/// it does nothing, so a rule reads as a list of facts. Operands past the
/// kernel's count read as an empty buffer (after counts() failed).
class Check {
public:
  Check(const Plan &plan, size_t k) : plan(plan), kernel(plan.kernels[k]), index(k) {}

  bool ok() const { return failure.empty(); }
  void fail(const std::string &what) {
    if (ok())
      failure = what;
  }
  Status result() const {
    if (ok())
      return Status::ok();
    return Status(StatusCode::kInvalidArgument,
                  "kernel #" + std::to_string(index) + " (" + kernel.op + "): " + failure);
  }

  /// minIn..maxIn operands and minOut..maxOut results; false if not.
  bool counts(size_t minIn, size_t maxIn, size_t minOut, size_t maxOut) {
    size_t in = kernel.inputs.size(), out = kernel.outputs.size();
    auto range = [](size_t lo, size_t hi) {
      return lo == hi ? std::to_string(lo)
                      : std::to_string(lo) + (hi == SIZE_MAX ? " or more" : " to " + std::to_string(hi));
    };
    if (in < minIn || in > maxIn)
      fail("has " + std::to_string(in) + " operands, the op takes " + range(minIn, maxIn));
    else if (out < minOut || out > maxOut)
      fail("has " + std::to_string(out) + " results, the op gives " + range(minOut, maxOut));
    return ok();
  }
  Ref in(size_t i) const {
    return i < kernel.inputs.size()
               ? Ref{&plan.buffers[kernel.inputs[i]], "operand #" + std::to_string(i)}
               : Ref{&empty, "operand #" + std::to_string(i)};
  }
  Ref out(size_t i) const {
    return i < kernel.outputs.size()
               ? Ref{&plan.buffers[kernel.outputs[i]], "result #" + std::to_string(i)}
               : Ref{&empty, "result #" + std::to_string(i)};
  }
  size_t numIn() const { return kernel.inputs.size(); }
  size_t numOut() const { return kernel.outputs.size(); }

  void floats(const Ref &r) {
    if (!isFloatType(r.buffer->dtype))
      fail(r.name + " is " + dtypeName(r.buffer->dtype) + ", not a float type");
  }
  void indices(const Ref &r) {
    if (r.buffer->dtype != DType::kI32 && r.buffer->dtype != DType::kI64)
      fail(r.name + " is " + dtypeName(r.buffer->dtype) + ", not i32 or i64");
  }
  void rank(const Ref &r, int64_t rank) {
    if (r.rank() != rank)
      fail(r.name + " has rank " + std::to_string(r.rank()) + ", the op takes " +
           std::to_string(rank));
  }
  bool minRank(const Ref &r, int64_t rank) {
    if (r.rank() < rank)
      fail(r.name + " has rank " + std::to_string(r.rank()) + ", the op takes at least " +
           std::to_string(rank));
    return ok();
  }
  void shape(const Ref &r, const std::vector<int64_t> &want, const std::string &why = "") {
    if (r.shape() != want)
      fail(r.name + " has shape " + text(r.shape()) + " where " +
           (why.empty() ? "the op gives " : why + " gives ") + text(want));
  }
  void same(const Ref &a, const Ref &b) {
    if (a.shape() != b.shape())
      fail(a.name + " has shape " + text(a.shape()) + ", " + b.name + " " + text(b.shape()) +
           ": the op takes them alike");
  }
  void elements(const Ref &r, int64_t count, const std::string &why) {
    if (r.elements() != count)
      fail(r.name + " has " + std::to_string(r.elements()) + " elements where " + why +
           " gives " + std::to_string(count));
  }
  void atLeast(const Ref &r, int64_t count) {
    if (r.elements() < count)
      fail(r.name + " has " + std::to_string(r.elements()) + " elements, the op reads " +
           std::to_string(count));
  }
  /// `from` broadcasts to `to` (numpy's rule, aligned at the last axis).
  void broadcasts(const Ref &from, const std::vector<int64_t> &to, const std::string &toName) {
    bool fits = from.rank() <= static_cast<int64_t>(to.size());
    for (int64_t d = 0; fits && d < from.rank(); ++d) {
      int64_t f = from.dim(d), t = to[to.size() - from.rank() + d];
      fits = f == t || f == 1;
    }
    if (!fits)
      fail(from.name + " of shape " + text(from.shape()) + " does not broadcast to " + toName +
           "'s " + text(to));
  }
  /// Every extent of `r` at most kMaxExtent (for the window arithmetic).
  void extents(const Ref &r) {
    for (int64_t d : r.shape())
      if (d > kMaxExtent)
        return fail(r.name + " has an extent of " + std::to_string(d) + ", more than " +
                    std::to_string(kMaxExtent));
  }

  /// An axis attribute within `rank`, as an index in [0, rank) (0 after a
  /// failure).
  int64_t axis(const char *name, int64_t fallback, const Ref &of) {
    int64_t v = kernel.intAttr(name, fallback), rank = of.rank();
    if (v < -rank || v >= rank) {
      fail(std::string(name) + " " + std::to_string(v) + " is outside its operand's rank " +
           std::to_string(rank));
      return 0;
    }
    return v < 0 ? v + rank : v;
  }
  /// An integer attribute in [lo, hi].
  int64_t integer(const char *name, int64_t fallback, int64_t lo, int64_t hi) {
    int64_t v = kernel.intAttr(name, fallback);
    if (v < lo || v > hi) {
      fail(std::string(name) + " " + std::to_string(v) + " is outside [" + std::to_string(lo) +
           ", " + std::to_string(hi) + "]");
      return lo;
    }
    return v;
  }
  /// A float attribute that is finite and, unless the bounds are infinite,
  /// in [lo, hi) (hiOpen) or [lo, hi]; `positive` asks lo < v.
  double real(const char *name, double fallback, double lo, double hi, bool hiOpen = false,
              bool positive = false) {
    double v = kernel.floatAttr(name, fallback);
    bool fits = std::isfinite(v) && (positive ? v > lo : v >= lo) && (hiOpen ? v < hi : v <= hi);
    if (!fits) {
      std::string range = std::isinf(lo) && std::isinf(hi)
                              ? "finite"
                          : std::isinf(hi) ? (positive ? "> " : ">= ") + number(lo)
                                           : std::string(positive ? "(" : "[") + number(lo) +
                                                 ", " + number(hi) + (hiOpen ? ")" : "]");
      fail(std::string(name) + " " + number(v) + " is not " +
           (std::isinf(lo) && std::isinf(hi) ? range : "in " + range));
    }
    return fits ? v : fallback;
  }
  /// A pair attribute, each in [lo, hi] (the fallback after a failure).
  std::vector<int64_t> pair(const char *name, std::vector<int64_t> fallback, int64_t lo,
                            int64_t hi) {
    std::vector<int64_t> v = kernel.intsAttr(name, fallback);
    if (v.size() != 2)
      fail(std::string(name) + " " + text(v) + " is not a pair");
    else if (v[0] < lo || v[0] > hi || v[1] < lo || v[1] > hi)
      fail(std::string(name) + " " + text(v) + " is outside [" + std::to_string(lo) + ", " +
           std::to_string(hi) + "]");
    return ok() ? v : fallback;
  }
  std::string layout() {
    std::string layout = kernelLayout(kernel);
    if (layout != "NCHW" && layout != "NHWC")
      fail("layout '" + layout + "' is neither NCHW nor NHWC");
    return layout;
  }
  /// A 4-d operand's shape in NCHW order (the order the spatial kernels
  /// compute in: an NHWC one is permuted first).
  std::vector<int64_t> nchw(const Ref &r, const std::string &layout) {
    if (r.rank() != 4)
      return {0, 0, 0, 0};
    const std::vector<int64_t> &s = r.shape();
    return layout == "NHWC" ? std::vector<int64_t>{s[0], s[3], s[1], s[2]} : s;
  }

  const Plan &plan;
  const PlanKernel &kernel;

private:
  size_t index;
  std::string failure;
  PlanBuffer empty;
};

using Rule = void (*)(Check &);

/// The product of the dimensions other than `axis`.
int64_t around(const Ref &r, int64_t axis) {
  int64_t n = 1;
  for (int64_t d = 0; d < r.rank(); ++d)
    if (d != axis)
      n *= r.dim(d);
  return n;
}

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

/// A convolution's input, filter and output in NCHW order, against the
/// stride, padding, dilation and groups attributes.
void convolution(Check &c, const Ref &x, const Ref &w, const Ref &y) {
  for (const Ref &r : {x, w, y}) {
    c.floats(r);
    c.rank(r, 4);
    c.extents(r);
  }
  std::string layout = c.layout();
  std::vector<int64_t> stride = c.pair("stride", {1, 1}, 1, kMaxExtent),
                       pad = c.pair("padding", {0, 0}, 0, kMaxExtent),
                       dil = c.pair("dilation", {1, 1}, 1, kMaxExtent);
  int64_t groups = c.integer("groups", 1, 1, kMaxExtent);
  if (!c.ok())
    return;
  std::vector<int64_t> xs = c.nchw(x, layout), ws = c.nchw(w, layout);
  if (xs[1] % groups != 0 || ws[0] % groups != 0)
    return c.fail("groups " + std::to_string(groups) + " does not divide the " +
                  std::to_string(xs[1]) + " input and " + std::to_string(ws[0]) +
                  " output channels");
  if (ws[1] * groups != xs[1])
    return c.fail("the filter " + text(ws) + " takes " + std::to_string(ws[1] * groups) +
                  " input channels in " + std::to_string(groups) + " groups, the input " +
                  text(xs) + " has " + std::to_string(xs[1]));
  std::vector<int64_t> want = {xs[0], ws[0],
                               convOutputSize(xs[2], ws[2], stride[0], pad[0], dil[0]),
                               convOutputSize(xs[3], ws[3], stride[1], pad[1], dil[1])};
  if (c.nchw(y, layout) != want)
    c.fail(y.name + " is " + text(c.nchw(y, layout)) + " (NCHW) where the input " + text(xs) +
           ", filter " + text(ws) + ", stride " + text(stride) + ", padding " + text(pad) +
           " and dilation " + text(dil) + " give " + text(want));
}

void conv2d(Check &c) {
  if (!c.counts(2, 3, 1, 1))
    return;
  convolution(c, c.in(0), c.in(1), c.out(0));
  if (c.ok() && c.numIn() > 2) {
    c.floats(c.in(2));
    c.elements(c.in(2), c.nchw(c.in(1), kernelLayout(c.kernel))[0], "the filter's outputs");
  }
}

void conv2dBackwardData(Check &c) {
  if (c.counts(2, 2, 1, 1)) // dy, filter -> dx
    convolution(c, c.out(0), c.in(1), c.in(0));
}

void conv2dBackwardFilter(Check &c) {
  if (c.counts(2, 2, 1, 1)) // dy, x -> dw
    convolution(c, c.in(1), c.out(0), c.in(0));
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

/// train.batch_norm and its backward: x is [n, c, spatial...] (NCHW) or
/// NHWC when 4-d under that layout.
void batchNormOf(Check &c, const Ref &x, std::initializer_list<Ref> channels) {
  std::string layout = c.layout();
  c.real("epsilon", 1e-5, 0, INFINITY, false, /*positive=*/true);
  if (!c.minRank(x, 2))
    return;
  int64_t n = x.dim(0), ch = layout == "NHWC" && x.rank() == 4 ? x.dim(3) : x.dim(1);
  if (n < 1 || ch < 1)
    return c.fail(x.name + " " + text(x.shape()) + " has no samples or no channels");
  for (const Ref &r : channels)
    c.elements(r, ch, x.name + "'s channels");
}

void batchNorm(Check &c) {
  if (!c.counts(5, 5, 3, 3)) // x, scale, bias, mean, var -> y, mean', var'
    return;
  for (size_t i = 0; i < 5; ++i)
    c.floats(c.in(i));
  for (size_t i = 0; i < 3; ++i)
    c.floats(c.out(i));
  c.same(c.out(0), c.in(0));
  c.real("momentum", 0.1, 0, 1);
  batchNormOf(c, c.in(0), {c.in(1), c.in(2), c.in(3), c.in(4), c.out(1), c.out(2)});
}

void batchNormBackward(Check &c) {
  if (!c.counts(3, 3, 3, 3)) // dy, x, scale -> dx, dscale, dbias
    return;
  for (size_t i = 0; i < 3; ++i) {
    c.floats(c.in(i));
    c.floats(c.out(i));
  }
  c.same(c.in(0), c.in(1));
  c.same(c.out(0), c.in(1));
  batchNormOf(c, c.in(1), {c.in(2), c.out(1), c.out(2)});
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
// Pooling and resizing
//===----------------------------------------------------------------------===//

/// A pooling window over x (NCHW) giving y.
void poolOf(Check &c, const Ref &x, const Ref &y) {
  for (const Ref &r : {x, y}) {
    c.floats(r);
    c.rank(r, 4);
    c.extents(r);
  }
  std::string layout = c.layout();
  std::vector<int64_t> k = c.pair("kernel_size", {1, 1}, 1, kMaxExtent),
                       s = c.pair("stride", {1, 1}, 1, kMaxExtent),
                       pad = c.pair("padding", {0, 0}, 0, kMaxExtent);
  if (!c.ok())
    return;
  // As PyTorch: a window always overlaps the input.
  if (pad[0] > k[0] / 2 || pad[1] > k[1] / 2)
    return c.fail("padding " + text(pad) + " is more than half of kernel_size " + text(k));
  bool ceil = c.kernel.flag("ceil_mode");
  std::vector<int64_t> xs = c.nchw(x, layout);
  std::vector<int64_t> want = {xs[0], xs[1], poolOutputSize(xs[2], k[0], s[0], pad[0], ceil),
                               poolOutputSize(xs[3], k[1], s[1], pad[1], ceil)};
  if (c.nchw(y, layout) != want)
    c.fail(y.name + " is " + text(c.nchw(y, layout)) + " (NCHW) where the input " + text(xs) +
           ", kernel_size " + text(k) + ", stride " + text(s) + " and padding " + text(pad) +
           " give " + text(want));
}

void pool(Check &c) {
  if (c.counts(1, 1, 1, 1))
    poolOf(c, c.in(0), c.out(0));
}

void maxPoolBackward(Check &c) {
  if (!c.counts(2, 2, 1, 1)) // dy, x -> dx
    return;
  c.same(c.out(0), c.in(1));
  poolOf(c, c.in(1), c.in(0));
}

void avgPoolBackward(Check &c) {
  if (c.counts(1, 1, 1, 1)) // dy -> dx
    poolOf(c, c.out(0), c.in(0));
}

void globalAvgPool(Check &c) {
  if (!c.counts(1, 1, 1, 1))
    return;
  c.floats(c.in(0));
  c.floats(c.out(0));
  c.rank(c.in(0), 4);
  if (c.ok())
    c.elements(c.out(0), c.in(0).dim(0) * c.in(0).dim(1), "one mean per plane");
}

/// Bilinear resizing of `small` (the forward's input) to `large`.
void resizeOf(Check &c, const Ref &small, const Ref &large) {
  for (const Ref &r : {small, large}) {
    c.floats(r);
    c.rank(r, 4);
    c.extents(r);
  }
  std::string layout = c.layout();
  if (!c.ok())
    return;
  std::vector<int64_t> s = c.nchw(small, layout), l = c.nchw(large, layout);
  if (s[0] != l[0] || s[1] != l[1])
    return c.fail("resizing " + text(s) + " to " + text(l) +
                  " (NCHW) changes the images or channels");
  if (large.elements() > 0 && (s[2] < 1 || s[3] < 1))
    c.fail("resizing " + text(s) + " to " + text(l) + " (NCHW) samples an empty image");
}

void resizeBilinear(Check &c) {
  if (c.counts(1, 1, 1, 1))
    resizeOf(c, c.in(0), c.out(0));
}

void resizeBilinearBackward(Check &c) {
  if (c.counts(1, 1, 1, 1)) // dy (large) -> dx (small)
    resizeOf(c, c.out(0), c.in(0));
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
