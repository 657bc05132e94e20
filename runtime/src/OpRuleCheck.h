//===- OpRuleCheck.h - the helpers the op rules are written with -*- C++ -*-===//
//
// Private to runtime/src/OpRules*.cpp (OpRules.h is the interface): Check,
// one kernel's check against its op's rule, and the spatial ops' rules,
// which live in OpRulesSpatial.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_SRC_OPRULECHECK_H
#define DLC_RUNTIME_SRC_OPRULECHECK_H

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

namespace dlc::rt::oprules {

/// Window sizes, strides, paddings, dilations and the extents they meet:
/// at most this, so that their products and sums stay inside int64.
constexpr int64_t kMaxExtent = int64_t(1) << 31;

inline std::string text(const std::vector<int64_t> &values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

inline std::string number(double v) {
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
inline int64_t around(const Ref &r, int64_t axis) {
  int64_t n = 1;
  for (int64_t d = 0; d < r.rank(); ++d)
    if (d != axis)
      n *= r.dim(d);
  return n;
}

/// The spatial ops' rules (OpRulesSpatial.cpp).
void conv2d(Check &c);
void conv2dBackwardData(Check &c);
void conv2dBackwardFilter(Check &c);
void batchNorm(Check &c);
void batchNormBackward(Check &c);
void pool(Check &c);
void maxPoolBackward(Check &c);
void avgPoolBackward(Check &c);
void globalAvgPool(Check &c);
void resizeBilinear(Check &c);
void resizeBilinearBackward(Check &c);

} // namespace dlc::rt::oprules

#endif // DLC_RUNTIME_SRC_OPRULECHECK_H
