//===- FastHostKernelsTest.cpp - fast host kernels against the reference --===//
//
// fastKernels()' own versions of reference kernels (runtime/src/cpu/Fast*.cpp:
// layer norm, embedding, bilinear resize, the loss scale's status) run
// beside cpuKernels()' on seeded operands of awkward shapes: odd widths, one
// row, rows longer than a part, NCHW and NHWC. Each must agree with the
// reference within float rounding and give the same bytes on 1, 2 and 3
// threads. These kernels see float buffers only: the executor widens
// half-precision ones around them (CpuExecutor::takesBf16).
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/Parallel.h"
#include "dlc/runtime/Shape.h"
#include "dlc/runtime/cpu/CpuExecutor.h"
#include "dlc/runtime/cpu/HostGemm.h"

#include "TestPlan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace dlc::rt;
using namespace dlc::rt::cpu;
using dlc_test::PlanBuilder;

namespace {

/// One kernel's operands and results in host memory: float operands are
/// seeded normals unless set, index operands are given.
class OneKernel {
public:
  OneKernel(const std::string &op, PlanAttrs attrs = {}) : op_(op), attrs_(std::move(attrs)) {}

  /// Adds a float operand of seeded normals; returns its index.
  size_t input(std::vector<int64_t> shape, unsigned seed) {
    std::vector<float> values(static_cast<size_t>(numElements(shape)));
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.5f, 2.f);
    for (float &v : values)
      v = normal(rng);
    return input(std::move(shape), values);
  }
  size_t input(std::vector<int64_t> shape, const std::vector<float> &values) {
    return add(inputs_, DType::kF32, std::move(shape), values.data(), values.size() * 4);
  }
  size_t indices(std::vector<int64_t> shape, const std::vector<int64_t> &values) {
    return add(inputs_, DType::kI64, std::move(shape), values.data(), values.size() * 8);
  }
  void output(std::vector<int64_t> shape) {
    const size_t bytes = static_cast<size_t>(numElements(shape)) * 4;
    add(outputs_, DType::kF32, std::move(shape), nullptr, bytes);
  }
  std::vector<float> &values(size_t input) { return inputs_[input].floats; }

  /// Runs the kernel of `registry` on fresh copies of the operands; the
  /// results' floats, or the kernel's status.
  Status run(const KernelRegistry &registry, std::vector<std::vector<float>> &results) const {
    std::vector<Operand> in = inputs_, out = outputs_;
    std::vector<TensorRef> inRefs, outRefs;
    for (Operand &o : in)
      inRefs.push_back(o.ref());
    for (Operand &o : out) {
      o.floats.assign(o.floats.size(), std::numeric_limits<float>::quiet_NaN());
      outRefs.push_back(o.ref());
    }
    PlanKernel kernel = dlc_test::makeKernel(op_, {}, {}, attrs_);
    Status status = registry.at(kernel.id)(KernelContext(kernel, inRefs, outRefs, 0));
    results.clear();
    for (Operand &o : out)
      results.push_back(o.floats);
    return status;
  }

  /// Fast against the reference within `tolerance` times each result's
  /// largest magnitude (0: the same bytes), and the fast bytes the same on
  /// 1, 2 and 3 threads.
  void expectMatchesReference(double tolerance) const {
    std::vector<std::vector<float>> ref, fast;
    ASSERT_TRUE(run(cpuKernels(), ref).isOk());
    for (int threads : {1, 2, 3}) {
      std::vector<std::vector<float>> results;
      {
        ScopedCpuThreads scoped(threads);
        ASSERT_EQ(cpuThreadCount(), threads);
        Status status = run(fastKernels(), results);
        ASSERT_TRUE(status.isOk()) << status.toString();
      }
      if (threads == 1) {
        fast = results;
        continue;
      }
      for (size_t r = 0; r < fast.size(); ++r)
        EXPECT_EQ(0, std::memcmp(results[r].data(), fast[r].data(), fast[r].size() * 4))
            << "result " << r << " on " << threads << " threads";
    }
    for (size_t r = 0; r < ref.size(); ++r) {
      double err = 0, scale = 0;
      for (size_t i = 0; i < ref[r].size(); ++i) {
        EXPECT_FALSE(std::isnan(fast[r][i])) << "result " << r << " element " << i;
        err = std::max(err, double(std::fabs(fast[r][i] - ref[r][i])));
        scale = std::max(scale, double(std::fabs(ref[r][i])));
      }
      EXPECT_LE(err, tolerance * std::max(scale, 1e-30)) << "result " << r;
      if (tolerance == 0) {
        EXPECT_EQ(0, std::memcmp(fast[r].data(), ref[r].data(), ref[r].size() * 4))
            << "result " << r << ": not the reference's bytes";
      }
    }
  }

private:
  struct Operand {
    DType dtype;
    std::vector<int64_t> shape;
    std::vector<float> floats;
    std::vector<int64_t> ints;
    TensorRef ref() {
      void *data = dtype == DType::kI64 ? static_cast<void *>(ints.data()) : floats.data();
      return TensorRef{data, dtype, &shape};
    }
  };
  size_t add(std::vector<Operand> &list, DType dtype, std::vector<int64_t> shape,
             const void *data, size_t bytes) {
    Operand o{dtype, std::move(shape), {}, {}};
    if (dtype == DType::kI64)
      o.ints.assign(static_cast<const int64_t *>(data),
                    static_cast<const int64_t *>(data) + bytes / 8);
    else if (data)
      o.floats.assign(static_cast<const float *>(data),
                      static_cast<const float *>(data) + bytes / 4);
    else
      o.floats.resize(bytes / 4);
    list.push_back(std::move(o));
    return list.size() - 1;
  }

  std::string op_;
  PlanAttrs attrs_;
  std::vector<Operand> inputs_, outputs_;
};

//===----------------------------------------------------------------------===//
// Layer norm
//===----------------------------------------------------------------------===//

/// Float statistics and products against the reference's double.
constexpr double kNormTolerance = 2e-5;

void checkLayerNorm(std::vector<int64_t> shape) {
  SCOPED_TRACE(::testing::PrintToString(shape));
  const int64_t d = shape.back();
  PlanAttrs attrs{{"epsilon", 1e-5}};
  OneKernel forward("layer_norm", attrs);
  forward.input(shape, 1);
  forward.input({d}, 2);
  forward.input({d}, 3);
  forward.output(shape);
  forward.expectMatchesReference(kNormTolerance);

  OneKernel backward("layer_norm_backward", attrs);
  backward.input(shape, 4);
  backward.input(shape, 5);
  backward.input({d}, 6);
  backward.output(shape);
  backward.output({d});
  backward.output({d});
  backward.expectMatchesReference(kNormTolerance);
}

TEST(FastHostKernels, LayerNormMatchesTheReference) {
  checkLayerNorm({1, 1, 7});         // one short row
  checkLayerNorm({3, 5, 33});        // odd rows past a lane block
  checkLayerNorm({2, 257, 768});     // BERT's width, many parts
  checkLayerNorm({3, 20000});        // rows longer than a part
  checkLayerNorm({4099, 3});         // many narrow rows
}

TEST(FastHostKernels, LayerNormBackwardMayWriteItsInputGradientOverTheOutputGradient) {
  // The arena may give dx dy's storage; each element is read before it is
  // written.
  const int64_t rows = 9, d = 45;
  OneKernel apart("layer_norm_backward", {{"epsilon", 1e-5}});
  apart.input({rows, d}, 11);
  apart.input({rows, d}, 12);
  apart.input({d}, 13);
  apart.output({rows, d});
  apart.output({d});
  apart.output({d});
  std::vector<std::vector<float>> expected;
  ASSERT_TRUE(apart.run(fastKernels(), expected).isOk());

  std::vector<float> dy = apart.values(0), x = apart.values(1), gamma = apart.values(2);
  std::vector<float> dg(d), db(d);
  std::vector<int64_t> shape = {rows, d}, row = {d};
  TensorRef DY{dy.data(), DType::kF32, &shape}, X{x.data(), DType::kF32, &shape},
      G{gamma.data(), DType::kF32, &row}, DG{dg.data(), DType::kF32, &row},
      DB{db.data(), DType::kF32, &row};
  PlanKernel kernel = dlc_test::makeKernel("layer_norm_backward", {}, {}, {{"epsilon", 1e-5}});
  ASSERT_TRUE(fastKernels().at(OpId::kLayerNormBackward)(
                  KernelContext(kernel, {DY, X, G}, {DY, DG, DB}, 0))
                  .isOk());
  EXPECT_EQ(dy, expected[0]);
  EXPECT_EQ(dg, expected[1]);
  EXPECT_EQ(db, expected[2]);
}

//===----------------------------------------------------------------------===//
// Embedding
//===----------------------------------------------------------------------===//

/// Positions' rows of a `rows`-row table: repeats, and rows never used.
std::vector<int64_t> someRows(int64_t positions, int64_t rows) {
  std::vector<int64_t> out(static_cast<size_t>(positions));
  for (int64_t i = 0; i < positions; ++i)
    out[i] = (i * 7919 + i / 3) % rows % std::max<int64_t>(1, rows - 2);
  return out;
}

void checkEmbedding(int64_t rows, int64_t d, std::vector<int64_t> positions) {
  SCOPED_TRACE("table " + std::to_string(rows) + " x " + std::to_string(d));
  const int64_t n = numElements(positions);
  std::vector<int64_t> outShape = positions;
  outShape.push_back(d);
  OneKernel forward("embedding");
  forward.input({rows, d}, 21);
  forward.indices(positions, someRows(n, rows));
  forward.output(outShape);
  // A copy: the reference's bytes.
  forward.expectMatchesReference(0);

  OneKernel backward("embedding_backward");
  backward.input(outShape, 22);
  backward.indices(positions, someRows(n, rows));
  backward.output({rows, d});
  // The reference's sums in the reference's order.
  backward.expectMatchesReference(0);
}

TEST(FastHostKernels, EmbeddingMatchesTheReferenceBitForBit) {
  checkEmbedding(1, 1, {1});
  checkEmbedding(5, 3, {2, 7});             // every row hit many times
  checkEmbedding(30522, 64, {4, 128});      // BERT's vocabulary, most rows untouched
  checkEmbedding(513, 1029, {3, 41});       // rows longer than a part
}

TEST(FastHostKernels, AnEmbeddingIndexOutOfRangeIsTheReferencesError) {
  for (const char *op : {"embedding", "embedding_backward"}) {
    SCOPED_TRACE(op);
    OneKernel k(op);
    k.input({4, 3}, 31);
    k.indices({4}, {0, 3, 4, 1});
    k.output({4, 3});
    std::vector<std::vector<float>> out;
    Status fast = k.run(fastKernels(), out), ref = k.run(cpuKernels(), out);
    EXPECT_FALSE(fast.isOk());
    EXPECT_EQ(fast.message(), ref.message());
  }
}

//===----------------------------------------------------------------------===//
// Bilinear resize
//===----------------------------------------------------------------------===//

/// Float blends against the reference's double.
constexpr double kResizeTolerance = 1e-5;

/// [n, c, h, w] resized to (outH, outW), in `layout`, forward and backward.
void checkResize(std::vector<int64_t> nchw, int64_t outH, int64_t outW, bool alignCorners,
                 const std::string &layout) {
  SCOPED_TRACE(layout + " " + ::testing::PrintToString(nchw) + " -> " +
               std::to_string(outH) + "x" + std::to_string(outW) +
               (alignCorners ? " align_corners" : ""));
  auto inLayout = [&](int64_t h, int64_t w) {
    return layout == "NHWC" ? std::vector<int64_t>{nchw[0], h, w, nchw[1]}
                            : std::vector<int64_t>{nchw[0], nchw[1], h, w};
  };
  PlanAttrs attrs{{"align_corners", int64_t(alignCorners)}, {"layout", layout}};
  OneKernel forward("resize_bilinear", attrs);
  forward.input(inLayout(nchw[2], nchw[3]), 41);
  forward.output(inLayout(outH, outW));
  forward.expectMatchesReference(kResizeTolerance);

  OneKernel backward("resize_bilinear_backward", attrs);
  backward.input(inLayout(outH, outW), 42);
  backward.output(inLayout(nchw[2], nchw[3]));
  backward.expectMatchesReference(kResizeTolerance);
}

TEST(FastHostKernels, BilinearResizeMatchesTheReference) {
  for (const char *layout : {"NCHW", "NHWC"})
    for (bool align : {false, true}) {
      checkResize({2, 3, 7, 5}, 28, 20, align, layout);   // DeepLab's 4x upsampling
      checkResize({1, 5, 9, 11}, 4, 3, align, layout);    // downsampling
      checkResize({3, 2, 1, 1}, 3, 5, align, layout);     // one pixel
      checkResize({1, 1, 6, 6}, 1, 1, align, layout);     // to one pixel
      checkResize({2, 19, 33, 33}, 129, 129, align, layout); // many parts
    }
}

TEST(FastHostKernels, AResizeOfAnUnknownLayoutIsTheReferencesError) {
  OneKernel k("resize_bilinear", {{"layout", std::string("NCWH")}});
  k.input({1, 1, 2, 2}, 51);
  k.output({1, 1, 4, 4});
  std::vector<std::vector<float>> out;
  Status fast = k.run(fastKernels(), out), ref = k.run(cpuKernels(), out);
  EXPECT_FALSE(fast.isOk());
  EXPECT_EQ(fast.message(), ref.message());
}

//===----------------------------------------------------------------------===//
// The loss scale's status
//===----------------------------------------------------------------------===//

/// loss_scale_status over gradients of these sizes, with `bad` written at
/// element `at` of gradient `which` (none where which < 0).
std::vector<float> lossScaleStatus(const std::vector<int64_t> &sizes, int which, int64_t at,
                                   float bad, const KernelRegistry &registry) {
  OneKernel k("loss_scale_status");
  k.input({}, std::vector<float>{1024.f});
  for (size_t g = 0; g < sizes.size(); ++g)
    k.input({sizes[g]}, 60 + unsigned(g));
  if (which >= 0)
    k.values(1 + which)[at] = bad;
  k.output({2});
  std::vector<std::vector<float>> out;
  EXPECT_TRUE(k.run(registry, out).isOk());
  return out[0];
}

TEST(FastHostKernels, TheLossScaleStatusFindsEveryInfAndNan) {
  const std::vector<int64_t> sizes = {3, 70001, 1, 16384, 16385};
  const float inf = std::numeric_limits<float>::infinity(),
              nan = std::numeric_limits<float>::quiet_NaN();
  for (int threads : {1, 2}) {
    ScopedCpuThreads scoped(threads);
    EXPECT_EQ(lossScaleStatus(sizes, -1, 0, 0, fastKernels()),
              (std::vector<float>{1.f / 1024, 0.f}));
    for (int g = 0; g < int(sizes.size()); ++g)
      for (int64_t at : {int64_t(0), sizes[g] / 2, sizes[g] - 1})
        for (float bad : {inf, -inf, nan}) {
          SCOPED_TRACE("gradient " + std::to_string(g) + " element " + std::to_string(at) +
                       " " + std::to_string(bad) + ", " + std::to_string(threads) +
                       " threads");
          std::vector<float> fast = lossScaleStatus(sizes, g, at, bad, fastKernels());
          EXPECT_EQ(fast, lossScaleStatus(sizes, g, at, bad, cpuKernels()));
          EXPECT_EQ(fast[1], 1.f);
        }
  }
  // The largest finite float is finite.
  EXPECT_EQ(lossScaleStatus(sizes, 1, 5, std::numeric_limits<float>::max(), fastKernels())[1],
            0.f);
}

//===----------------------------------------------------------------------===//
// Attention (FastAttention.cpp against OpsAttention.cpp, and the reference
// against the unfused ops it replaces)
//===----------------------------------------------------------------------===//

struct AttentionCase {
  std::vector<int64_t> batch; // B...
  int64_t sq, sk, d;
  bool causal, masked;
  double rate;
};

std::string describe(const AttentionCase &c) {
  return "Sq " + std::to_string(c.sq) + " Sk " + std::to_string(c.sk) + " D " +
         std::to_string(c.d) + (c.causal ? " causal" : "") + (c.masked ? " masked" : "") +
         " rate " + std::to_string(c.rate);
}

std::vector<int64_t> withTail(std::vector<int64_t> shape, std::initializer_list<int64_t> tail) {
  shape.insert(shape.end(), tail);
  return shape;
}

PlanAttrs attentionAttrs(const AttentionCase &c) {
  return {{"scale", 1.0 / std::sqrt(double(c.d))},
          {"causal", int64_t(c.causal)},
          {"dropout_rate", c.rate},
          {"seed", int64_t(11)}};
}

/// A padding mask [B0, 1, .., Sk]: 0, or -10000 for the last keys of
/// every other sample, as BERT's extended attention mask.
std::vector<float> paddingMask(const AttentionCase &c, std::vector<int64_t> &shape) {
  shape.assign(c.batch.size() + 2, 1);
  shape[0] = c.batch[0];
  shape.back() = c.sk;
  std::vector<float> mask(static_cast<size_t>(c.batch[0] * c.sk), 0.0f);
  for (int64_t b = 1; b < c.batch[0]; b += 2)
    for (int64_t j = c.sk - c.sk / 3; j < c.sk; ++j)
      mask[b * c.sk + j] = -10000.0f;
  return mask;
}

/// The forward's operands (q, k, v, mask?) of a case.
void attentionOperands(OneKernel &k, const AttentionCase &c) {
  k.input(withTail(c.batch, {c.sq, c.d}), 21);
  k.input(withTail(c.batch, {c.sk, c.d}), 22);
  k.input(withTail(c.batch, {c.sk, c.d}), 23);
  // Scores of unit scale, so that the softmax is neither flat nor one-hot.
  for (size_t i : {0, 1})
    for (float &x : k.values(i))
      x *= 0.35f;
  if (c.masked) {
    std::vector<int64_t> shape;
    std::vector<float> mask = paddingMask(c, shape);
    k.input(shape, mask);
  }
}

/// The reference forward's (o, lse).
std::vector<std::vector<float>> referenceAttention(const AttentionCase &c) {
  OneKernel forward("attention", attentionAttrs(c));
  attentionOperands(forward, c);
  forward.output(withTail(c.batch, {c.sq, c.d}));
  forward.output(withTail(c.batch, {c.sq}));
  std::vector<std::vector<float>> out;
  EXPECT_TRUE(forward.run(cpuKernels(), out).isOk());
  return out;
}

/// Relative to the largest magnitude: float accumulation against double.
constexpr double kAttentionTolerance = 2e-5;

void checkFastAttention(const AttentionCase &c) {
  SCOPED_TRACE(describe(c));
  OneKernel forward("attention", attentionAttrs(c));
  attentionOperands(forward, c);
  forward.output(withTail(c.batch, {c.sq, c.d}));
  forward.output(withTail(c.batch, {c.sq}));
  forward.expectMatchesReference(kAttentionTolerance);

  std::vector<std::vector<float>> ol = referenceAttention(c);
  OneKernel backward("attention_backward", attentionAttrs(c));
  backward.input(withTail(c.batch, {c.sq, c.d}), 21);
  backward.input(withTail(c.batch, {c.sk, c.d}), 22);
  backward.input(withTail(c.batch, {c.sk, c.d}), 23);
  for (size_t i : {0, 1})
    for (float &x : backward.values(i))
      x *= 0.35f;
  backward.input(withTail(c.batch, {c.sq, c.d}), ol[0]);
  backward.input(withTail(c.batch, {c.sq, c.d}), 24); // do
  backward.input(withTail(c.batch, {c.sq}), ol[1]);
  if (c.masked) {
    std::vector<int64_t> shape;
    std::vector<float> mask = paddingMask(c, shape);
    backward.input(shape, mask);
  }
  backward.output(withTail(c.batch, {c.sq, c.d}));
  backward.output(withTail(c.batch, {c.sk, c.d}));
  backward.output(withTail(c.batch, {c.sk, c.d}));
  backward.expectMatchesReference(kAttentionTolerance);
}

TEST(FastHostKernels, AttentionMatchesTheReference) {
  // Sequence lengths off the 64-row tiles, head dims 32, 64 and 128;
  // causal (GPT-2's), masked (BERT's), each with and without dropout.
  for (int64_t d : {32, 64, 128})
    for (double rate : {0.0, 0.2}) {
      checkFastAttention({{2, 3}, 70, 70, d, /*causal=*/true, /*masked=*/false, rate});
      checkFastAttention({{3, 2}, 37, 130, d, /*causal=*/false, /*masked=*/true, rate});
    }
  // Fewer queries than keys, causal: query i sees keys up to i + (Sk - Sq).
  checkFastAttention({{1, 2}, 50, 129, 32, true, true, 0.1});
  // One query (a decoding step) against a few keys.
  checkFastAttention({{1}, 1, 5, 32, false, false, 0.0});
}

TEST(FastHostKernels, AttentionOnTheLoopGemmMatchesTheReference) {
  // The GEMMs of a build without oneDNN (HostGemm.cpp's loops), on the
  // shapes above: key counts off the 64-row blocks, causal and masked.
  ScopedLoopGemm loops;
  checkFastAttention({{2, 3}, 70, 70, 64, true, false, 0.2});
  checkFastAttention({{3, 2}, 37, 130, 32, false, true, 0.0});
  checkFastAttention({{1, 2}, 50, 129, 128, true, true, 0.1});
}

TEST(FastHostKernels, HostGemmMatchesDoubleProducts) {
  // hostGemm (oneDNN's sgemm where dlc has it) and its loops, every
  // transpose, beta 0 and 1, sizes off any vector width, strides past the
  // rows: against the product in double.
  const int64_t m = 37, n = 70, k = 19, lda = 41, ldb = 75, ldc = 73;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> a(80 * lda), b(80 * ldb), c0(m * ldc);
  for (std::vector<float> *v : {&a, &b, &c0})
    for (float &x : *v)
      x = normal(rng);
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (float beta : {0.f, 1.f}) {
        SCOPED_TRACE(std::string(ta ? "T" : "N") + (tb ? "T" : "N") + " beta " +
                     std::to_string(beta));
        std::vector<double> want(m * n);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double dot = 0;
            for (int64_t p = 0; p < k; ++p)
              dot += double(ta ? a[p * lda + i] : a[i * lda + p]) *
                     (tb ? b[j * ldb + p] : b[p * ldb + j]);
            want[i * n + j] = 0.5 * dot + beta * c0[i * ldc + j];
          }
        for (bool loops : {false, true}) {
          std::vector<float> c = c0;
          if (loops)
            loopGemm(ta, tb, m, n, k, 0.5f, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
          else
            hostGemm(ta, tb, m, n, k, 0.5f, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
          double err = 0;
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j)
              err = std::max(err, std::fabs(c[i * ldc + j] - want[i * n + j]));
          EXPECT_LE(err, 2e-5) << (loops ? "loops" : "hostGemm");
          // Past each row's n columns, C is not written.
          EXPECT_EQ(c[n], c0[n]) << (loops ? "loops" : "hostGemm");
        }
      }
}

/// One reference kernel over float buffers (inputs given, outputs sized).
std::vector<std::vector<float>> runReference(const std::string &op, PlanAttrs attrs,
                                             std::vector<std::pair<std::vector<int64_t>,
                                                                   std::vector<float>>> in,
                                             std::vector<std::vector<int64_t>> out) {
  OneKernel k(op, std::move(attrs));
  for (auto &[shape, values] : in)
    k.input(shape, values);
  for (auto &shape : out)
    k.output(shape);
  std::vector<std::vector<float>> results;
  EXPECT_TRUE(k.run(cpuKernels(), results).isOk()) << op;
  return results;
}

void expectClose(const std::vector<float> &actual, const std::vector<float> &expected,
                 double tolerance, const char *what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  double err = 0, scale = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    err = std::max(err, double(std::fabs(actual[i] - expected[i])));
    scale = std::max(scale, double(std::fabs(expected[i])));
  }
  EXPECT_LE(err, tolerance * std::max(scale, 1e-30)) << what << ": largest " << scale;
  EXPECT_GT(scale, 0) << what;
}

TEST(FastHostKernels, ReferenceAttentionIsTheUnfusedOps) {
  // matmul(q, k^T) -> softmax(scale, mask, causal) -> dropout -> matmul(p, v),
  // and the gradients the unfused ops' rules give, from the same seed.
  for (AttentionCase c : {AttentionCase{{2, 2}, 19, 19, 32, true, false, 0.25},
                          AttentionCase{{2, 3}, 13, 27, 64, false, true, 0.1}}) {
    SCOPED_TRACE(describe(c));
    OneKernel operands("attention", attentionAttrs(c));
    attentionOperands(operands, c);
    std::vector<int64_t> qs = withTail(c.batch, {c.sq, c.d}), ks = withTail(c.batch, {c.sk, c.d}),
                         ss = withTail(c.batch, {c.sq, c.sk});
    std::vector<float> q = operands.values(0), k = operands.values(1), v = operands.values(2);
    std::vector<std::pair<std::vector<int64_t>, std::vector<float>>> softmaxIn;
    std::vector<float> s = runReference("matmul", {{"transpose_rhs", int64_t(1)}},
                                        {{qs, q}, {ks, k}}, {ss})[0];
    softmaxIn.push_back({ss, s});
    if (c.masked) {
      std::vector<int64_t> shape;
      std::vector<float> mask = paddingMask(c, shape);
      softmaxIn.push_back({shape, mask});
    }
    PlanAttrs attrs = attentionAttrs(c);
    std::vector<float> p =
        runReference("softmax", {{"scale", attrs["scale"]}, {"causal", attrs["causal"]}},
                     softmaxIn, {ss})[0];
    PlanAttrs drop{{"rate", c.rate}, {"seed", attrs["seed"]}};
    std::vector<float> pd = runReference("dropout", drop, {{ss, p}}, {ss})[0];
    std::vector<float> o = runReference("matmul", {}, {{ss, pd}, {ks, v}}, {qs})[0];
    std::vector<std::vector<float>> fused = referenceAttention(c);
    expectClose(fused[0], o, 1e-6, "output");

    std::vector<float> g(o.size());
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0.f, 1.f);
    for (float &x : g)
      x = normal(rng);
    std::vector<float> dpd = runReference("matmul", {{"transpose_rhs", int64_t(1)}},
                                          {{qs, g}, {ks, v}}, {ss})[0];
    std::vector<float> dp = runReference("dropout", drop, {{ss, dpd}}, {ss})[0];
    std::vector<float> ds = runReference("softmax_backward", {{"scale", attrs["scale"]}},
                                         {{ss, dp}, {ss, p}}, {ss})[0];
    std::vector<float> dq = runReference("matmul", {}, {{ss, ds}, {ks, k}}, {qs})[0];
    std::vector<float> dk =
        runReference("matmul", {{"transpose_lhs", int64_t(1)}}, {{ss, ds}, {qs, q}}, {ks})[0];
    std::vector<float> dv =
        runReference("matmul", {{"transpose_lhs", int64_t(1)}}, {{ss, pd}, {qs, g}}, {ks})[0];

    std::vector<std::pair<std::vector<int64_t>, std::vector<float>>> in = {
        {qs, q}, {ks, k}, {ks, v}, {qs, fused[0]}, {qs, g}, {withTail(c.batch, {c.sq}), fused[1]}};
    if (c.masked)
      in.push_back(softmaxIn[1]);
    std::vector<std::vector<float>> grads =
        runReference("attention_backward", attrs, in, {qs, ks, ks});
    expectClose(grads[0], dq, 1e-5, "dq");
    expectClose(grads[1], dk, 1e-5, "dk");
    expectClose(grads[2], dv, 1e-5, "dv");
  }
}

} // namespace
