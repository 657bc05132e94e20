//===- DnnlTest.cpp - oneDNN kernels against the CPU reference ------------===//
//
// Every kernel of dnnlKernels() runs beside its reference (cpuKernels()) on
// the same seeded random inputs, over geometries chosen to reach the edges
// (odd sizes, strides, dilation, padding, groups, ceil mode, transposes,
// broadcast batches) in both layouts, and must agree to
// max |fast - ref| / max |ref| <= 1e-4 on every result. Skipped, saying
// why, in a build without oneDNN.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/Half.h"
#include "dlc/runtime/Parallel.h"
#include "dlc/runtime/cpu/Dnnl.h"
#include "dlc/runtime/cpu/Spatial.h"

#include "TestPlan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace dlc::rt;
using namespace dlc::rt::cpu;
using dlc_test::PlanBuilder;

namespace {

/// max |fast - ref| / max |ref| that float rounding may leave between a
/// float32 oneDNN kernel and the double-accumulating reference.
constexpr double kTolerance = 1e-4;

using Shape = std::vector<int64_t>;

/// One kernel in a plan (PlanBuilder's), its buffers as host vectors.
class OneKernel {
public:
  explicit OneKernel(uint32_t seed = 1) : rng(seed) {}

  /// An operand filled with uniform values in [lo, hi).
  int32_t input(Shape shape, float lo = -1, float hi = 1) {
    int32_t id = add(std::move(shape));
    std::uniform_real_distribution<float> u(lo, hi);
    for (float &v : values[id])
      v = u(rng);
    return id;
  }
  /// An operand of values drawn from {0, 1, 2}: many ties in every window.
  int32_t ties(Shape shape) {
    int32_t id = add(std::move(shape));
    std::uniform_int_distribution<int> u(0, 2);
    for (float &v : values[id])
      v = static_cast<float>(u(rng));
    return id;
  }
  /// An operand as a relu leaves it, with the values max pooling treats
  /// specially: about half zeros (ties), some -inf and, if `nans`, NaNs.
  int32_t afterRelu(Shape shape, bool nans) {
    int32_t id = add(std::move(shape));
    std::uniform_real_distribution<float> u(0, 1);
    for (float &v : values[id]) {
      float r = u(rng);
      v = r < 0.5f ? 0.0f : r < 0.55f ? -INFINITY : nans && r < 0.58f ? NAN : r;
    }
    return id;
  }
  int32_t output(Shape shape) { return add(std::move(shape)); }
  /// A buffer's values, to fill by hand.
  std::vector<float> &data(int32_t id) { return values[id]; }
  /// An output that starts as NaNs, so that an element the kernel does not
  /// write shows.
  int32_t poisonedOutput(Shape shape) {
    int32_t id = add(std::move(shape));
    std::fill(values[id].begin(), values[id].end(), NAN);
    return id;
  }
  void kernel(const std::string &op, std::vector<int32_t> in, std::vector<int32_t> out,
              PlanAttrs attrs) {
    b.kernel(op, std::move(in), std::move(out), std::move(attrs));
  }
  const PlanKernel &planKernel() const { return b.plan.kernels.back(); }

  /// Every buffer after running the kernel with `fn` on copies of them;
  /// `aliases` maps an output to the input whose storage it shares.
  std::vector<std::vector<float>> run(const KernelFn &fn,
                                      std::vector<std::pair<size_t, size_t>> aliases = {}) {
    std::vector<std::vector<float>> v = values;
    const PlanKernel &k = planKernel();
    std::vector<TensorRef> in, out;
    for (int32_t id : k.inputs)
      in.push_back({v[id].data(), DType::kF32, &b.plan.buffers[id].shape});
    for (int32_t id : k.outputs)
      out.push_back({v[id].data(), DType::kF32, &b.plan.buffers[id].shape});
    for (auto [o, i] : aliases)
      out[o].data = in[i].data;
    Status s = fn(KernelContext(k, in, out, 0));
    EXPECT_TRUE(s.isOk()) << s.toString();
    for (auto [o, i] : aliases)
      v[k.outputs[o]] = v[k.inputs[i]];
    return v;
  }

  /// Runs the oneDNN kernel and the reference; expects each result to
  /// agree within kTolerance, and oneDNN to have run it itself unless
  /// `byReference`. Returns the oneDNN results.
  std::vector<std::vector<float>> compare(const std::string &what,
                                          std::vector<std::pair<size_t, size_t>> aliases = {},
                                          bool byReference = false) {
    const std::string &op = planKernel().op;
    OpId id = planKernel().id;
    EXPECT_TRUE(dnnlKernels().count(id)) << op;
    if (!dnnlKernels().count(id))
      return {};
    int64_t before = dnnlReferenceCalls();
    auto fast = run(dnnlKernels().at(id), aliases);
    EXPECT_EQ(dnnlReferenceCalls() - before, byReference ? 1 : 0)
        << what << ": " << op << (byReference ? " did not run" : " ran")
        << " the reference kernel";
    auto ref = run(cpuKernels().at(id), aliases);
    for (size_t o = 0; o < planKernel().outputs.size(); ++o) {
      int32_t id = planKernel().outputs[o];
      double err = 0, scale = 0;
      for (size_t i = 0; i < ref[id].size(); ++i) {
        err = std::max(err, double(std::fabs(fast[id][i] - ref[id][i])));
        scale = std::max(scale, double(std::fabs(ref[id][i])));
      }
      EXPECT_LE(err, kTolerance * scale)
          << what << ": result " << o << " of " << op << ": max |fast - ref| " << err
          << ", max |ref| " << scale;
    }
    return fast;
  }

private:
  int32_t add(Shape shape) {
    int32_t id = b.add("b" + std::to_string(values.size()), DType::kF32, shape,
                       BufferRole::kTemporary);
    values.emplace_back(b.plan.buffers[id].numElements());
    return id;
  }

  PlanBuilder b;
  std::vector<std::vector<float>> values;
  std::mt19937 rng;
};

/// A rank-4 shape given as [n, c, h, w] in `layout`'s order ("NHWC" puts
/// c last; an OIHW filter becomes OHWI the same way).
Shape inLayout(const std::string &layout, int64_t n, int64_t c, int64_t h, int64_t w) {
  return layout == "NHWC" ? Shape{n, h, w, c} : Shape{n, c, h, w};
}

class Dnnl : public testing::Test {
protected:
  void SetUp() override {
    if (!dnnlAvailable())
      GTEST_SKIP() << dnnlDescription();
  }
};

const char *const kLayouts[] = {"NCHW", "NHWC"};

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

struct ConvCase {
  int64_t n, c, h, w, k, kh, kw, sh, sw, ph, pw, dh, dw, groups, bias;
};

const ConvCase kConvCases[] = {
    {2, 3, 7, 6, 4, 3, 3, 1, 1, 0, 0, 1, 1, 1, 1},     // plain, with bias
    {2, 4, 9, 8, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0},     // strided, padded
    {1, 3, 10, 9, 5, 3, 2, 2, 3, 2, 1, 2, 3, 1, 1},    // dilated, non-square
    {2, 6, 7, 8, 4, 3, 3, 1, 2, 1, 0, 1, 1, 2, 1},     // two groups
    {2, 5, 8, 7, 5, 3, 3, 2, 1, 1, 1, 1, 1, 5, 1},     // depthwise
    {1, 3, 6, 5, 6, 1, 1, 2, 2, 0, 0, 1, 1, 3, 0},     // depthwise x2, 1x1
    {1, 2, 5, 5, 3, 5, 5, 1, 1, 2, 2, 1, 1, 1, 1},     // kernel = input
    {3, 16, 15, 13, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0}, // blocked channels, odd
    {2, 32, 9, 9, 16, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},   // 1x1, blocked
    {2, 24, 11, 7, 36, 3, 3, 1, 1, 2, 2, 2, 2, 4, 0},  // groups of 6 -> 9, dilated
    {2, 48, 9, 9, 48, 3, 3, 2, 2, 1, 1, 1, 1, 48, 0},  // depthwise, blocked channels
    {2, 64, 7, 7, 64, 3, 3, 1, 1, 1, 1, 1, 1, 4, 0},   // groups of 16, blocked
};

std::string describe(const ConvCase &cs, const std::string &layout) {
  char text[160];
  std::snprintf(text, sizeof(text),
                "%s n%ld c%ld %ldx%ld k%ld %ldx%ld s%ld,%ld p%ld,%ld d%ld,%ld g%ld",
                layout.c_str(), long(cs.n), long(cs.c), long(cs.h), long(cs.w),
                long(cs.k), long(cs.kh), long(cs.kw), long(cs.sh), long(cs.sw),
                long(cs.ph), long(cs.pw), long(cs.dh), long(cs.dw), long(cs.groups));
  return text;
}

PlanAttrs convAttrs(const ConvCase &cs, const std::string &layout) {
  return {{"stride", std::vector<int64_t>{cs.sh, cs.sw}},
          {"padding", std::vector<int64_t>{cs.ph, cs.pw}},
          {"dilation", std::vector<int64_t>{cs.dh, cs.dw}},
          {"groups", cs.groups},
          {"layout", layout}};
}

/// x, w and y shapes of a case in a layout.
struct ConvShapes {
  Shape x, w, y;
};

ConvShapes convShapes(const ConvCase &cs, const std::string &layout) {
  int64_t oh = convOutputSize(cs.h, cs.kh, cs.sh, cs.ph, cs.dh);
  int64_t ow = convOutputSize(cs.w, cs.kw, cs.sw, cs.pw, cs.dw);
  return {inLayout(layout, cs.n, cs.c, cs.h, cs.w),
          inLayout(layout, cs.k, cs.c / cs.groups, cs.kh, cs.kw),
          inLayout(layout, cs.n, cs.k, oh, ow)};
}

TEST_F(Dnnl, Conv2dForwardMatchesReference) {
  for (const ConvCase &cs : kConvCases)
    for (const char *layout : kLayouts) {
      ConvShapes s = convShapes(cs, layout);
      OneKernel k;
      std::vector<int32_t> in{k.input(s.x), k.input(s.w)};
      if (cs.bias)
        in.push_back(k.input({cs.k}));
      k.kernel("conv2d", in, {k.output(s.y)}, convAttrs(cs, layout));
      k.compare(describe(cs, layout));
    }
}

TEST_F(Dnnl, Conv2dBackwardDataMatchesReference) {
  for (const ConvCase &cs : kConvCases)
    for (const char *layout : kLayouts) {
      ConvShapes s = convShapes(cs, layout);
      OneKernel k;
      k.kernel("conv2d_backward_data", {k.input(s.y), k.input(s.w)}, {k.output(s.x)},
               convAttrs(cs, layout));
      k.compare(describe(cs, layout));
    }
}

TEST_F(Dnnl, Conv2dBackwardFilterMatchesReference) {
  for (const ConvCase &cs : kConvCases)
    for (const char *layout : kLayouts) {
      ConvShapes s = convShapes(cs, layout);
      OneKernel k;
      k.kernel("conv2d_backward_filter", {k.input(s.y), k.input(s.x)}, {k.output(s.w)},
               convAttrs(cs, layout));
      k.compare(describe(cs, layout));
    }
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

TEST_F(Dnnl, MatmulMatchesReference) {
  struct Case {
    Shape a, b, y;
    bool ta, tb;
  };
  const Case cases[] = {
      {{5, 7}, {7, 3}, {5, 3}, false, false},
      {{7, 5}, {7, 3}, {5, 3}, true, false},
      {{5, 7}, {3, 7}, {5, 3}, false, true},
      {{7, 5}, {3, 7}, {5, 3}, true, true},
      {{2, 3, 5, 7}, {2, 3, 7, 4}, {2, 3, 5, 4}, false, false}, // batched
      {{4, 5, 7}, {7, 3}, {4, 5, 3}, false, false},             // x @ W, folded
      {{4, 7, 5}, {3, 7}, {4, 5, 3}, true, true},               // shared rhs, transposed
      {{5, 7}, {3, 7, 4}, {3, 5, 4}, false, false},             // shared lhs
      {{2, 1, 5, 7}, {1, 3, 4, 7}, {2, 3, 5, 4}, false, true},  // both broadcast
      {{3, 2, 9, 6}, {3, 2, 9, 11}, {3, 2, 6, 11}, true, false},
  };
  for (const Case &cs : cases) {
    OneKernel k;
    k.kernel("matmul", {k.input(cs.a), k.input(cs.b)}, {k.output(cs.y)},
             {{"transpose_lhs", int64_t(cs.ta)}, {"transpose_rhs", int64_t(cs.tb)}});
    k.compare("matmul a rank " + std::to_string(cs.a.size()) + " ta " +
              std::to_string(cs.ta) + " tb " + std::to_string(cs.tb));
  }
}

TEST_F(Dnnl, LinearMatchesReference) {
  struct Case {
    Shape x;
    int64_t out;
    bool bias;
  };
  const Case cases[] = {{{6, 10}, 7, true}, {{2, 3, 10}, 5, false}, {{1, 33}, 17, true}};
  for (const Case &cs : cases) {
    OneKernel k;
    std::vector<int32_t> in{k.input(cs.x), k.input({cs.out, cs.x.back()})};
    if (cs.bias)
      in.push_back(k.input({cs.out}));
    Shape y = cs.x;
    y.back() = cs.out;
    k.kernel("linear", in, {k.output(y)}, {});
    k.compare("linear to " + std::to_string(cs.out));
  }
}

//===----------------------------------------------------------------------===//
// Batch norm
//===----------------------------------------------------------------------===//

struct NormCase {
  Shape x; ///< in the layout's order
  std::string layout;
  double eps, momentum;
};

const NormCase kNormCases[] = {
    {{4, 6, 5, 3}, "NCHW", 1e-5, 0.1},
    {{4, 5, 3, 6}, "NHWC", 1e-5, 0.1},
    {{2, 7, 7, 40}, "NHWC", 1e-3, 0.3}, // channel blocks of 16 and a tail
    {{8, 5}, "NCHW", 1e-5, 0.1},        // rank 2 (after a linear)
    {{3, 9, 11}, "NCHW", 1e-4, 0.2},    // rank 3
    {{2, 48, 48, 20}, "NHWC", 1e-5, 0.1}, // 4608 rows: 64 chunks of statistics
    {{2, 20, 37, 23}, "NCHW", 1e-5, 0.1}, // planes that fill no 16 lanes
};

int64_t channelsOf(const NormCase &cs) {
  return cs.layout == "NHWC" && cs.x.size() == 4 ? cs.x[3] : cs.x[1];
}

TEST_F(Dnnl, BatchNormMatchesReferenceIncludingRunningStats) {
  for (const NormCase &cs : kNormCases)
    for (bool inPlace : {false, true}) {
      int64_t c = channelsOf(cs);
      OneKernel k;
      // x offset from 0 so that the mean matters.
      int32_t x = k.input(cs.x, 0.5f, 3);
      int32_t scale = k.input({c}), bias = k.input({c});
      int32_t mean = k.input({c}), var = k.input({c}, 0.5f, 2);
      k.kernel("batch_norm", {x, scale, bias, mean, var},
               {k.output(cs.x), k.output({c}), k.output({c})},
               {{"epsilon", cs.eps}, {"momentum", cs.momentum}, {"layout", cs.layout}});
      std::vector<std::pair<size_t, size_t>> aliases;
      if (inPlace)
        aliases = {{1, 3}, {2, 4}};
      k.compare(cs.layout + " rank " + std::to_string(cs.x.size()) +
                    (inPlace ? " in place" : ""),
                aliases);
    }
}

TEST_F(Dnnl, BatchNormStatisticsAreTheSameForEveryThreadCount) {
  // The statistics are summed in chunks fixed by the shape and added in
  // chunk order: a thread count must not change a bit of y or dx.
  for (const NormCase &cs : kNormCases) {
    int64_t c = channelsOf(cs);
    OneKernel k;
    // A mean far from 0 against the spread, where a one-pass variance in
    // float would cancel.
    int32_t x = k.input(cs.x, 300.f, 300.5f);
    k.kernel("batch_norm",
             {x, k.input({c}), k.input({c}), k.input({c}), k.input({c}, 0.5f, 2)},
             {k.output(cs.x), k.output({c}), k.output({c})},
             {{"epsilon", cs.eps}, {"momentum", cs.momentum}, {"layout", cs.layout}});
    std::vector<std::vector<float>> one;
    {
      ScopedCpuThreads scoped(1);
      one = k.run(dnnlKernels().at(OpId::kBatchNorm));
    }
    for (int threads : {2, 3}) {
      ScopedCpuThreads scoped(threads);
      EXPECT_EQ(k.run(dnnlKernels().at(OpId::kBatchNorm)), one)
          << cs.layout << " rank " << cs.x.size() << " on " << threads << " threads";
    }
    k.compare(cs.layout + " rank " + std::to_string(cs.x.size()) + ", mean 300");
  }
}

TEST_F(Dnnl, BatchNormBackwardMatchesReference) {
  for (const NormCase &cs : kNormCases) {
    int64_t c = channelsOf(cs);
    OneKernel k;
    k.kernel("batch_norm_backward", {k.input(cs.x), k.input(cs.x, 0.5f, 3), k.input({c})},
             {k.output(cs.x), k.output({c}), k.output({c})},
             {{"epsilon", cs.eps}, {"layout", cs.layout}});
    k.compare(cs.layout + " rank " + std::to_string(cs.x.size()));
  }
}

TEST_F(Dnnl, BatchNormNormalizesInDoubleWhereTheMeanDwarfsTheSpread) {
  // Mean 3000, spread 0.01: the float mean oneDNN would normalize with is
  // off by about 1e-4, a shift of 0.06 in every normalized value; such
  // channels are normalized again in double, as the reference does.
  for (const NormCase &cs : kNormCases) {
    int64_t c = channelsOf(cs);
    OneKernel k;
    int32_t x = k.input(cs.x, 3000.f, 3000.01f);
    k.kernel("batch_norm",
             {x, k.input({c}, 0.5f, 2), k.input({c}), k.input({c}), k.input({c}, 0.5f, 2)},
             {k.output(cs.x), k.output({c}), k.output({c})},
             {{"epsilon", 1e-9}, {"momentum", cs.momentum}, {"layout", cs.layout}});
    k.compare(cs.layout + " rank " + std::to_string(cs.x.size()) + ", mean 3000, spread 0.01");
  }
}

TEST_F(Dnnl, BatchNormBackwardSumsTheParameterGradientsInDouble) {
  // dy's second sample is the first one negated and reversed, values of
  // magnitude 1000 on a 2^-14 grid: the bias gradients are sums of
  // thousands of such terms that largely cancel, which a sum in double
  // gets exactly and a float sum does not.
  for (const char *layout : {"NCHW", "NHWC"}) {
    bool nhwc = std::string(layout) == "NHWC";
    Shape shape = nhwc ? Shape{2, 48, 48, 3} : Shape{2, 3, 48, 48};
    OneKernel k;
    int32_t dy = k.output(shape), x = k.input(shape), scale = k.input({3});
    int32_t dx = k.output(shape), dscale = k.output({3}), dbias = k.output({3});
    std::vector<float> &g = k.data(dy);
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> u(0, 1 << 14);
    const size_t half = g.size() / 2;
    for (size_t i = 0; i < half; ++i) {
      g[i] = (i % 3 ? 1000.0f : -1000.0f) + std::ldexp(float(u(rng)), -14);
      g[g.size() - 1 - i] = -g[i];
    }
    k.kernel("batch_norm_backward", {dy, x, scale}, {dx, dscale, dbias},
             {{"epsilon", 1e-5}, {"layout", layout}});
    auto fast = k.compare(layout);
    for (int64_t ch = 0; ch < 3; ++ch) {
      double exact = 0;
      for (size_t i = 0; i < g.size(); ++i)
        if (int64_t(nhwc ? i % 3 : i / (48 * 48) % 3) == ch)
          exact += g[i];
      EXPECT_EQ(fast[dbias][ch], float(exact)) << layout << ": the bias gradient of channel " << ch;
    }
  }
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

struct PoolCase {
  int64_t n, c, h, w, kh, kw, sh, sw, ph, pw, ceil, includePad;
};

const PoolCase kPoolCases[] = {
    {2, 3, 9, 8, 3, 3, 2, 2, 1, 1, 0, 1},    // ResNet's stem pool, odd size
    {1, 4, 8, 8, 2, 2, 2, 2, 0, 0, 0, 1},    // 2x2 / 2
    {2, 3, 8, 10, 3, 3, 2, 2, 0, 0, 1, 1},   // ceil: a last window over the edge
    {1, 2, 8, 7, 3, 2, 2, 1, 1, 0, 1, 0},    // ceil, exclude padding
    {2, 16, 10, 11, 3, 3, 3, 3, 1, 1, 1, 0}, // ceil drops an all-padding window
    {1, 5, 6, 6, 3, 3, 1, 1, 1, 1, 0, 0},    // overlapping, exclude padding
    {1, 3, 7, 7, 2, 3, 3, 2, 1, 1, 0, 1},    // floor drops a remainder
};

Shape poolOut(const PoolCase &cs, const std::string &layout) {
  return inLayout(layout, cs.n, cs.c, poolOutputSize(cs.h, cs.kh, cs.sh, cs.ph, cs.ceil),
                  poolOutputSize(cs.w, cs.kw, cs.sw, cs.pw, cs.ceil));
}

PlanAttrs poolAttrs(const PoolCase &cs, const std::string &layout) {
  return {{"kernel_size", std::vector<int64_t>{cs.kh, cs.kw}},
          {"stride", std::vector<int64_t>{cs.sh, cs.sw}},
          {"padding", std::vector<int64_t>{cs.ph, cs.pw}},
          {"ceil_mode", cs.ceil},
          {"count_include_pad", cs.includePad},
          {"layout", layout}};
}

std::string describe(const PoolCase &cs, const std::string &layout) {
  char text[160];
  std::snprintf(text, sizeof(text), "%s %ldx%ld k%ldx%ld s%ld,%ld p%ld,%ld ceil %ld pad %ld",
                layout.c_str(), long(cs.h), long(cs.w), long(cs.kh), long(cs.kw),
                long(cs.sh), long(cs.sw), long(cs.ph), long(cs.pw), long(cs.ceil),
                long(cs.includePad));
  return text;
}

TEST_F(Dnnl, PoolingMatchesReference) {
  for (const PoolCase &cs : kPoolCases)
    for (const char *layout : kLayouts) {
      Shape x = inLayout(layout, cs.n, cs.c, cs.h, cs.w), y = poolOut(cs, layout);
      PlanAttrs attrs = poolAttrs(cs, layout);
      std::string what = describe(cs, layout);
      for (bool tied : {false, true}) {
        OneKernel fwd;
        int32_t in = tied ? fwd.ties(x) : fwd.input(x);
        fwd.kernel("max_pool2d", {in}, {fwd.output(y)}, attrs);
        fwd.compare(what);
        // Ties are where the first maximum of a window matters.
        OneKernel bwd;
        bwd.kernel("max_pool2d_backward",
                   {bwd.input(y), tied ? bwd.ties(x) : bwd.input(x)}, {bwd.output(x)},
                   attrs);
        bwd.compare(what + (tied ? " tied" : ""));
      }
      // Counting the padding, a window that ceil mode adds is the reference's.
      bool ceilAdds = poolOutputSize(cs.h, cs.kh, cs.sh, cs.ph, cs.ceil) !=
                          poolOutputSize(cs.h, cs.kh, cs.sh, cs.ph, false) ||
                      poolOutputSize(cs.w, cs.kw, cs.sw, cs.pw, cs.ceil) !=
                          poolOutputSize(cs.w, cs.kw, cs.sw, cs.pw, false);
      bool byReference = cs.includePad && ceilAdds;
      OneKernel avg;
      avg.kernel("avg_pool2d", {avg.input(x)}, {avg.output(y)}, attrs);
      avg.compare(what, {}, byReference);
      OneKernel avgBwd;
      avgBwd.kernel("avg_pool2d_backward", {avgBwd.input(y)}, {avgBwd.output(x)}, attrs);
      avgBwd.compare(what, {}, byReference);
    }
}

TEST_F(Dnnl, ChannelsLastMaxPoolIsTheReferencesWithTiesInfinitiesAndNans) {
  // dlc's own kernel (DnnlPool.cpp, maxPoolNhwc), element by element: a
  // NaN where the reference has one, every other value within rounding
  // (the reference sums gradients in double), and the same bytes on 1 and
  // 2 threads.
  const PoolCase cases[] = {
      {1, 64, 12, 11, 3, 3, 2, 2, 1, 1, 0, 1}, // ResNet's stem pool: one block
      {2, 70, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1},   // a block and 6 channels, ceil
      {1, 5, 8, 8, 2, 2, 2, 2, 0, 0, 0, 1},    // 2x2 / 2
      {2, 19, 7, 9, 3, 3, 1, 1, 1, 1, 0, 1},   // 3x3 / 1: nine windows a pixel
      {1, 130, 7, 8, 2, 3, 3, 2, 0, 1, 0, 1},  // rows no window reaches
      {1, 3, 10, 7, 2, 3, 3, 2, 0, 1, 1, 1},   // a middle row no window reaches
  };
  for (const PoolCase &cs : cases)
    for (bool nans : {false, true})
      for (bool backward : {false, true}) {
        Shape x = inLayout("NHWC", cs.n, cs.c, cs.h, cs.w), y = poolOut(cs, "NHWC");
        OneKernel k;
        int32_t in = k.afterRelu(x, nans);
        const char *op = backward ? "max_pool2d_backward" : "max_pool2d";
        if (backward)
          k.kernel(op, {k.input(y), in}, {k.poisonedOutput(x)}, poolAttrs(cs, "NHWC"));
        else
          k.kernel(op, {in}, {k.poisonedOutput(y)}, poolAttrs(cs, "NHWC"));
        std::string what = describe(cs, "NHWC") + " " + op + (nans ? " with NaNs" : "");
        int64_t before = dnnlReferenceCalls();
        std::vector<std::vector<float>> fast[2];
        for (int threads : {1, 2}) {
          ScopedCpuThreads scoped(threads);
          fast[threads - 1] = k.run(dnnlKernels().at(k.planKernel().id));
        }
        EXPECT_EQ(dnnlReferenceCalls(), before) << what;
        auto ref = k.run(cpuKernels().at(k.planKernel().id));
        int32_t out = k.planKernel().outputs[0];
        const std::vector<float> &one = fast[0][out], &two = fast[1][out], &r = ref[out];
        EXPECT_EQ(0, std::memcmp(one.data(), two.data(), one.size() * 4)) << what;
        double scale = 0;
        for (float v : r)
          if (std::isfinite(v))
            scale = std::max(scale, double(std::fabs(v)));
        int64_t nanCount = 0;
        for (size_t i = 0; i < r.size(); ++i) {
          nanCount += std::isnan(r[i]);
          bool close = std::isfinite(r[i])
                           ? std::fabs(one[i] - r[i]) <= 1e-5 * scale
                           : one[i] == r[i] || (std::isnan(one[i]) && std::isnan(r[i]));
          EXPECT_TRUE(close) << what << ": element " << i << " " << one[i] << ", reference "
                             << r[i];
        }
        // The forward pass passes the inputs' NaNs on.
        if (nans && !backward) {
          EXPECT_GT(nanCount, 0) << what;
        }
      }
}

TEST_F(Dnnl, OnlyAvgPoolCeilWithPaddingCountedRunsTheReference) {
  // Ceil mode that adds a window, with count_include_pad: that window
  // reaches past the padding, where oneDNN would divide by the whole kernel
  // (DnnlPool.cpp).
  PoolCase past{1, 2, 8, 8, 3, 3, 2, 2, 0, 0, 1, 1};
  for (const char *op : {"avg_pool2d", "max_pool2d"}) {
    OneKernel k;
    Shape x = inLayout("NCHW", 1, 2, 8, 8);
    k.kernel(op, {k.input(x)}, {k.output(poolOut(past, "NCHW"))}, poolAttrs(past, "NCHW"));
    k.compare(op, {}, /*byReference=*/std::string(op) == "avg_pool2d");
  }
}

//===----------------------------------------------------------------------===//
// Determinism, operand checks
//===----------------------------------------------------------------------===//

TEST_F(Dnnl, RepeatedRunsAreBitIdentical) {
  ConvCase cs{4, 32, 14, 14, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0};
  for (const char *layout : kLayouts) {
    ConvShapes s = convShapes(cs, layout);
    OneKernel k;
    k.kernel("conv2d_backward_filter", {k.input(s.y), k.input(s.x)}, {k.output(s.w)},
             convAttrs(cs, layout));
    auto first = k.run(dnnlKernels().at(OpId::kConv2dBackwardFilter));
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(k.run(dnnlKernels().at(OpId::kConv2dBackwardFilter)), first) << layout;
    OneKernel bn;
    bn.kernel("batch_norm_backward", {bn.input(s.x), bn.input(s.x), bn.input({cs.c})},
              {bn.output(s.x), bn.output({cs.c}), bn.output({cs.c})}, {{"layout", layout}});
    auto bnFirst = bn.run(dnnlKernels().at(OpId::kBatchNormBackward));
    EXPECT_EQ(bn.run(dnnlKernels().at(OpId::kBatchNormBackward)), bnFirst) << layout;
  }
}

TEST_F(Dnnl, HalfPrecisionOperandsAreRefusedNotMisread) {
  // The executor widens fp16 / bf16 buffers before every kernel; a kernel
  // handed one directly says so.
  Shape x{1, 2, 4, 4}, w{2, 2, 3, 3}, y{1, 2, 2, 2};
  std::vector<uint16_t> half(32);
  std::vector<float> wv(36), yv(8);
  PlanBuilder b;
  b.kernel("conv2d", {0, 1}, {2});
  const PlanKernel &k = b.plan.kernels.back();
  Status s = dnnlKernels().at(OpId::kConv2d)(
      KernelContext(k, {{half.data(), DType::kF16, &x}, {wv.data(), DType::kF32, &w}},
                    {{yv.data(), DType::kF32, &y}}, 0));
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("f16"), std::string::npos) << s.toString();
}

TEST_F(Dnnl, Bf16ProductsRunInBf16WhereTheCpuComputesIt) {
  if (!dnnlNativeBf16Ops().count(OpId::kLinear))
    GTEST_SKIP() << "oneDNN computes no bf16 on this CPU (" << dnnlDescription()
                 << "): the executor widens bf16 to float";
  // A linear over bf16 buffers, as amp-bf16's plan holds them, against the
  // reference on the same values widened: the one difference allowed is
  // the result's rounding to bf16 (half a unit, 2^-9 relative) after a sum
  // in float rather than double.
  Shape x{6, 40}, w{24, 40}, bias{24}, y{6, 24};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  auto values = [&](const Shape &shape, std::vector<uint16_t> &bits, std::vector<float> &f) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    bits.resize(n);
    f.resize(n);
    for (int64_t i = 0; i < n; ++i)
      f[i] = bfloat16ToFloat(bits[i] = floatToBfloat16(u(rng)));
  };
  std::vector<uint16_t> xb, wb, bb, yb(6 * 24);
  std::vector<float> xf, wf, bf, yf(6 * 24);
  values(x, xb, xf);
  values(w, wb, wf);
  values(bias, bb, bf);
  PlanBuilder b;
  for (const Shape *shape : {&x, &w, &bias, &y})
    b.add("b" + std::to_string(b.plan.buffers.size()), DType::kBF16, *shape,
          BufferRole::kTemporary);
  b.kernel("linear", {0, 1, 2}, {3});
  const PlanKernel &k = b.plan.kernels.back();
  EXPECT_TRUE(CpuExecutor::takesBf16(k, b.plan, CpuExecutor::fastOptions()));
  EXPECT_FALSE(CpuExecutor::takesBf16(k, b.plan, CpuExecutor::Options()));
  Status native = dnnlKernels().at(OpId::kLinear)(KernelContext(
      k,
      {{xb.data(), DType::kBF16, &x}, {wb.data(), DType::kBF16, &w},
       {bb.data(), DType::kBF16, &bias}},
      {{yb.data(), DType::kBF16, &y}}, 0));
  ASSERT_TRUE(native.isOk()) << native.toString();
  ASSERT_TRUE(cpuKernels()
                  .at(OpId::kLinear)(KernelContext(k,
                                              {{xf.data(), DType::kF32, &x},
                                               {wf.data(), DType::kF32, &w},
                                               {bf.data(), DType::kF32, &bias}},
                                              {{yf.data(), DType::kF32, &y}}, 0))
                  .isOk());
  for (size_t i = 0; i < yf.size(); ++i)
    EXPECT_NEAR(bfloat16ToFloat(yb[i]), yf[i], std::ldexp(std::fabs(yf[i]), -8) + 1e-6)
        << "y[" << i << "]";
  // An fp16 buffer anywhere: the whole kernel is widened.
  b.plan.buffers[2].dtype = DType::kF16;
  EXPECT_FALSE(CpuExecutor::takesBf16(k, b.plan, CpuExecutor::fastOptions()));
}

TEST_F(Dnnl, DescribesItsThreading) {
  std::string d = dnnlDescription();
  EXPECT_NE(d.find("oneDNN"), std::string::npos) << d;
  EXPECT_NE(d.find("threads"), std::string::npos) << d;
}

} // namespace
