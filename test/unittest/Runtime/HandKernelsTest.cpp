//===- HandKernelsTest.cpp - hand-written CUDA kernels against the CPU ----===//
//
// Every hand-written kernel, on random inputs, for a few shapes and
// attribute combinations, against the CPU reference kernel:
//   - on the host: the kernel sources compile as plain C++ (one block of one
//     thread, the prelude's host layer), run here, no GPU needed;
//   - under NVRTC: every family compiles for sm_80 and sm_90;
//   - on a GPU, through the CUDA executor (its "hand-written" path).
// float32 results agree within 1e-5 relative: the kernels compute in double
// where the CPU does, and only the order of a block reduction's additions
// differs (one thread here: a tree of one slot). Dropout masks, gathers,
// the embedding gradient (float sums in the CPU's order) and max pooling
// agree bit for bit. Half outputs agree within one unit in the last place
// (two for the tensor-core attention kernels, which round p' and ds too).
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/Collective.h"
#include "dlc/runtime/Half.h"
#include "dlc/runtime/cpu/CpuExecutor.h"
#include "dlc/runtime/cuda/CudaExecutor.h"
#include "dlc/runtime/cuda/HandKernels.h"
#include "dlc/runtime/cuda/KernelCompiler.h"
#include "dlc/runtime/Device.h"

#include "HostThreads.h"
#include "TestPlan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <iostream>
#include <iterator>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <unistd.h>

using namespace dlc::rt;
using namespace dlc::rt::cuda;

namespace {

constexpr BufferRole kIn = BufferRole::kInput, kOut = BufferRole::kGradient;

/// One kernel on one plan, with how closely it must match.
struct Case {
  std::string label;
  Plan plan;
  int64_t step = 0;
  /// The data-parallel rank whose dropout masks to draw (Collective.h).
  int64_t rank = 0;
  bool exact = false;
  /// A looser bound than the types' (0: tolerance() decides).
  double tol = 0;
  /// Errors relative to the output's largest magnitude rather than to each
  /// element: attention's outputs are float sums of products of either
  /// sign, whose rounding is relative to the terms, not to a result that
  /// cancels to near zero.
  bool normwise = false;
  /// Buffers given fixed values (labels, indices, loss-scale status).
  std::map<int32_t, std::vector<double>> fixed;
  /// Integer buffers without fixed values: uniform in [0, bound).
  std::map<int32_t, int64_t> intBound;

  int32_t buffer(const std::string &name, DType dtype, std::vector<int64_t> shape,
                 BufferRole role) {
    return dlc_test::appendBuffer(plan, name, dtype, std::move(shape), role);
  }
  void kernel(const std::string &op, std::vector<int32_t> in, std::vector<int32_t> out,
              PlanAttrs attrs = {}) {
    plan.kernels.push_back(dlc_test::makeKernel(op, std::move(in), std::move(out), std::move(attrs)));
  }
  const PlanKernel &theKernel() const { return plan.kernels.front(); }
};

bool isFloat(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16; }

float roundTo(DType t, float v) {
  if (t == DType::kF16)
    return halfToFloat(floatToHalf(v));
  if (t == DType::kBF16)
    return bfloat16ToFloat(floatToBfloat16(v));
  return v;
}

/// A buffer's values as floats (float buffers) and its bytes in its type.
struct Values {
  std::vector<std::vector<float>> f;     // float view (the reference's)
  std::vector<std::vector<int64_t>> ix;  // integer buffers
  std::vector<std::string> bytes;        // in the buffer's own type
};

std::string encode(const PlanBuffer &b, const std::vector<float> &f,
                   const std::vector<int64_t> &ix) {
  std::string bytes(b.bytes, '\0');
  // Padded rows (RowStride.h): every stored element, padding included.
  for (int64_t e = 0; e < storageElements(b); ++e)
    switch (b.dtype) {
    case DType::kF32: std::memcpy(&bytes[e * 4], &f[e], 4); break;
    case DType::kF16: {
      uint16_t h = floatToHalf(f[e]);
      std::memcpy(&bytes[e * 2], &h, 2);
      break;
    }
    case DType::kBF16: {
      uint16_t h = floatToBfloat16(f[e]);
      std::memcpy(&bytes[e * 2], &h, 2);
      break;
    }
    case DType::kI32: {
      int32_t v = static_cast<int32_t>(ix[e]);
      std::memcpy(&bytes[e * 4], &v, 4);
      break;
    }
    case DType::kI64: std::memcpy(&bytes[e * 8], &ix[e], 8); break;
    }
  return bytes;
}

std::vector<float> decode(const PlanBuffer &b, const std::string &bytes) {
  std::vector<float> f(storageElements(b));
  for (int64_t e = 0; e < storageElements(b); ++e) {
    uint16_t h;
    switch (b.dtype) {
    case DType::kF32: std::memcpy(&f[e], &bytes[e * 4], 4); break;
    case DType::kF16: std::memcpy(&h, &bytes[e * 2], 2), f[e] = halfToFloat(h); break;
    case DType::kBF16: std::memcpy(&h, &bytes[e * 2], 2), f[e] = bfloat16ToFloat(h); break;
    default: break;
    }
  }
  return f;
}

/// Random inputs (rounded to their type first, so both sides see the same
/// values), NaN in every output, and the bytes of both.
Values makeInputs(const Case &c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  const Plan &p = c.plan;
  Values v;
  v.f.resize(p.buffers.size());
  v.ix.resize(p.buffers.size());
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const PlanBuffer &b = p.buffers[i];
    int64_t n = storageElements(b); // a padded input's padding is random too
    auto fixed = c.fixed.find(static_cast<int32_t>(i));
    if (isFloat(b.dtype)) {
      v.f[i].resize(n);
      for (int64_t e = 0; e < n; ++e)
        v.f[i][e] = b.role == kOut ? NAN
                    : fixed != c.fixed.end() ? static_cast<float>(fixed->second[e])
                                             : roundTo(b.dtype, normal(rng));
      v.ix[i].assign(n, 0);
    } else {
      v.ix[i].resize(n);
      auto bound = c.intBound.find(static_cast<int32_t>(i));
      for (int64_t e = 0; e < n; ++e)
        v.ix[i][e] = fixed != c.fixed.end()
                         ? static_cast<int64_t>(fixed->second[e])
                         : static_cast<int64_t>(rng() % uint64_t(bound->second));
    }
    v.bytes.push_back(encode(b, v.f[i], v.ix[i]));
  }
  return v;
}

/// The CPU reference on float views (as the CPU executor runs half
/// buffers: widened, then each output rounded to its type).
std::vector<std::vector<float>> reference(const Case &c, Values v) {
  const Plan &p = c.plan;
  const PlanKernel &k = c.theKernel();
  std::vector<cpu::TensorRef> in, out;
  auto ref = [&](int32_t id) -> cpu::TensorRef {
    const PlanBuffer &b = p.buffers[id];
    if (isFloat(b.dtype))
      return {v.f[id].data(), DType::kF32, &b.shape, rowStride(b)};
    return {v.bytes[id].data(), b.dtype, &b.shape};
  };
  for (int32_t id : k.inputs)
    in.push_back(ref(id));
  for (int32_t id : k.outputs)
    out.push_back(ref(id));
  // Rank r's masks: the CPU's dropout takes the rank from its communicator.
  auto group = createThreadRankGroup(static_cast<int>(c.rank) + 1);
  cpu::KernelContext context(k, in, out, c.step, group[c.rank].get());
  auto cpuKernel = cpu::cpuKernels().find(k.id);
  if (cpuKernel == cpu::cpuKernels().end()) {
    ADD_FAILURE() << c.label << ": the CPU backend has no reference kernel for " << k.op;
    return v.f;
  }
  Status status = cpuKernel->second(context);
  EXPECT_TRUE(status.isOk()) << c.label << ": " << status.toString();
  for (int32_t id : k.outputs)
    for (float &x : v.f[id])
      x = roundTo(p.buffers[id].dtype, x);
  return v.f;
}

/// What the executor passes a hand-written kernel as its step: the step
/// counter, or for dropout the dropout counter (the step plus the rank's
/// offset, CudaExecutor.cpp).
long long stepRead(const Case &c, const HandKernel &hand) {
  return static_cast<long long>(static_cast<uint64_t>(c.step) +
                                (hand.readsDropoutCounter ? dropoutStepOffset(c.rank) : 0));
}

/// The largest error of `have` against `want` over the kernel's outputs:
/// relative to max(|want|, 1e-4) (normwise: to the output's largest
/// magnitude); any NaN mismatch is infinite.
double maxError(const Case &c, const std::vector<std::vector<float>> &want,
                const std::vector<std::vector<float>> &have) {
  double worst = 0;
  for (int32_t id : c.theKernel().outputs) {
    double floor = 1e-4;
    if (c.normwise)
      for (float w : want[id])
        if (std::isfinite(w))
          floor = std::max(floor, double(std::fabs(w)));
    for (size_t e = 0; e < want[id].size(); ++e) {
      float w = want[id][e], h = have[id][e];
      if (std::isnan(w) || std::isnan(h)) {
        if (std::isnan(w) != std::isnan(h))
          return INFINITY;
        continue;
      }
      if (c.exact && std::memcmp(&w, &h, 4) != 0)
        return INFINITY;
      worst = std::max(worst, std::fabs(double(h) - w) / std::max(std::fabs(double(w)), floor));
    }
  }
  return worst;
}

/// `tensorCores`: the attention kernels on the tensor cores (a `_tc_`
/// entry), which round p' and ds to the operands' type before their
/// products, a second rounding of that type's unit: twice the bound.
double tolerance(const Case &c, bool tensorCores = false) {
  double tol = std::max(1e-5, c.tol);
  for (int32_t id : c.theKernel().outputs) {
    if (c.plan.buffers[id].dtype == DType::kF16)
      tol = std::max(tol, (tensorCores ? 2.0 : 1.0) / 1024);
    if (c.plan.buffers[id].dtype == DType::kBF16)
      tol = std::max(tol, (tensorCores ? 2.0 : 1.0) / 128);
  }
  return tol;
}

bool onTensorCores(const std::string &entry) { return entry.find("_tc_") != std::string::npos; }

/// An [n, c, h, w] shape stored channels last.
std::vector<int64_t> nhwcOf(const std::vector<int64_t> &d) { return {d[0], d[2], d[3], d[1]}; }

PlanAttrs pool(std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> pad,
               int64_t ceil, int64_t includePad = 1) {
  return {{"kernel_size", k}, {"stride", s}, {"padding", pad}, {"ceil_mode", ceil},
          {"count_include_pad", includePad}};
}

/// `attrs` with `more` added.
PlanAttrs withAttrs(PlanAttrs attrs, const PlanAttrs &more) {
  for (const auto &[name, value] : more)
    attrs[name] = value;
  return attrs;
}

std::vector<Case> allCases() {
  std::vector<Case> cases;
  auto add = [&](const std::string &label) -> Case & {
    cases.emplace_back();
    cases.back().label = label;
    cases.back().plan.model = "hand_kernels_test";
    return cases.back();
  };
  const DType F = DType::kF32, H = DType::kF16, B = DType::kBF16;

  // softmax: last axis, a middle axis with scale, causal (more keys than
  // queries), a broadcast mask, mask and causal, half precision.
  {
    Case &c = add("softmax last axis");
    c.kernel("softmax", {c.buffer("x", F, {3, 5, 7}, kIn)}, {c.buffer("y", F, {3, 5, 7}, kOut)},
             {{"axis", int64_t(-1)}});
  }
  {
    Case &c = add("softmax axis 1, scale");
    c.kernel("softmax", {c.buffer("x", F, {3, 5, 7}, kIn)}, {c.buffer("y", F, {3, 5, 7}, kOut)},
             {{"axis", int64_t(1)}, {"scale", 0.5}});
  }
  {
    Case &c = add("softmax causal");
    c.kernel("softmax", {c.buffer("x", F, {2, 4, 6}, kIn)}, {c.buffer("y", F, {2, 4, 6}, kOut)},
             {{"causal", int64_t(1)}, {"scale", 0.125}});
  }
  {
    Case &c = add("softmax broadcast mask");
    int32_t x = c.buffer("x", F, {2, 3, 4, 6}, kIn), m = c.buffer("m", F, {2, 1, 4, 6}, kIn);
    c.kernel("softmax", {x, m}, {c.buffer("y", F, {2, 3, 4, 6}, kOut)});
  }
  {
    Case &c = add("softmax mask + causal");
    int32_t x = c.buffer("x", F, {2, 5, 5}, kIn), m = c.buffer("m", F, {5}, kIn);
    c.kernel("softmax", {x, m}, {c.buffer("y", F, {2, 5, 5}, kOut)},
             {{"causal", int64_t(1)}, {"scale", 2.0}});
  }
  {
    Case &c = add("softmax f16");
    c.kernel("softmax", {c.buffer("x", H, {3, 40}, kIn)}, {c.buffer("y", H, {3, 40}, kOut)});
  }
  {
    Case &c = add("softmax_backward last axis");
    int32_t dy = c.buffer("dy", F, {3, 5, 7}, kIn), y = c.buffer("y", F, {3, 5, 7}, kIn);
    c.kernel("softmax_backward", {dy, y}, {c.buffer("dx", F, {3, 5, 7}, kOut)},
             {{"axis", int64_t(-1)}, {"scale", 0.7}});
  }
  {
    Case &c = add("softmax_backward axis 0, bf16");
    int32_t dy = c.buffer("dy", B, {4, 6}, kIn), y = c.buffer("y", B, {4, 6}, kIn);
    c.kernel("softmax_backward", {dy, y}, {c.buffer("dx", B, {4, 6}, kOut)},
             {{"axis", int64_t(0)}});
  }
  // layer norm
  for (DType t : {F, H, B}) {
    Case &c = add(std::string("layer_norm ") + dtypeName(t));
    int32_t x = c.buffer("x", t, {2, 3, 33}, kIn), g = c.buffer("g", t, {33}, kIn),
            b = c.buffer("b", t, {33}, kIn);
    c.kernel("layer_norm", {x, g, b}, {c.buffer("y", t, {2, 3, 33}, kOut)},
             {{"epsilon", 1e-3}});
  }
  for (std::vector<int64_t> shape : {std::vector<int64_t>{5, 17}, {2, 3, 300}}) {
    Case &c = add("layer_norm_backward d=" + std::to_string(shape.back()));
    int64_t d = shape.back();
    int32_t dy = c.buffer("dy", F, shape, kIn), x = c.buffer("x", F, shape, kIn),
            g = c.buffer("g", F, {d}, kIn);
    c.kernel("layer_norm_backward", {dy, x, g},
             {c.buffer("dx", F, shape, kOut), c.buffer("dg", F, {d}, kOut),
              c.buffer("db", F, {d}, kOut)});
  }
  // cross-entropy: ignore_index present, a class axis with positions after
  // it and int32 labels, every label ignored.
  for (bool backward : {false, true}) {
    std::string op = backward ? "softmax_cross_entropy_backward" : "softmax_cross_entropy";
    auto inputs = [&](Case &c, int32_t logits, int32_t labels) {
      std::vector<int32_t> in = {logits, labels};
      if (backward) {
        int32_t dl = c.buffer("dloss", F, {}, kIn);
        c.fixed[dl] = {1.7};
        in.insert(in.begin(), dl);
      }
      return in;
    };
    {
      Case &c = add(op + " ignore_index");
      int32_t l = c.buffer("logits", F, {6, 10}, kIn), y = c.buffer("labels", DType::kI64, {6}, kIn);
      c.fixed[y] = {3, -100, 9, 0, -100, 5};
      c.kernel(op, inputs(c, l, y), {c.buffer("out", F, backward ? std::vector<int64_t>{6, 10}
                                                                  : std::vector<int64_t>{}, kOut)});
    }
    {
      Case &c = add(op + " class axis 1 of [2,5,3], int32, ignore 2");
      int32_t l = c.buffer("logits", F, {2, 5, 3}, kIn), y = c.buffer("labels", DType::kI32, {2, 3}, kIn);
      c.fixed[y] = {2, 4, 0, 1, 2, 3};
      c.kernel(op, inputs(c, l, y),
               {c.buffer("out", F, backward ? std::vector<int64_t>{2, 5, 3} : std::vector<int64_t>{}, kOut)},
               {{"class_axis", int64_t(1)}, {"ignore_index", int64_t(2)}});
    }
    {
      Case &c = add(op + " all ignored");
      int32_t l = c.buffer("logits", F, {3, 4}, kIn), y = c.buffer("labels", DType::kI64, {3}, kIn);
      c.fixed[y] = {-100, -100, -100};
      c.kernel(op, inputs(c, l, y),
               {c.buffer("out", F, backward ? std::vector<int64_t>{3, 4} : std::vector<int64_t>{}, kOut)});
    }
    // Lines many times the block's threads, so that each thread's running
    // maximum grows and its sum is rescaled (the online softmax): random
    // logits, and logits rising along every line (a new maximum at every
    // step of every thread) spanning 60, so that exp of the gaps underflows
    // float but not double.
    // And masked logits: -inf over each line's first 40 classes, so that
    // every thread's first values are -inf (they add 0, as on the CPU).
    for (const char *kind : {"", "rising logits, ", "masked logits, "}) {
      const std::string k0 = kind;
      Case &c = add(op + " " + k0 + "300 classes");
      int32_t l = c.buffer("logits", F, {4, 300}, kIn), y = c.buffer("labels", DType::kI64, {4}, kIn);
      c.fixed[y] = {60, 299, 217, 150};
      if (!k0.empty())
        for (int row = 0; row < 4; ++row)
          for (int k = 0; k < 300; ++k)
            c.fixed[l].push_back(k0[0] == 'm' && k < 40 ? -INFINITY
                                                        : -30.0 + 0.2 * k + row);
      c.kernel(op, inputs(c, l, y),
               {c.buffer("out", F, backward ? std::vector<int64_t>{4, 300} : std::vector<int64_t>{}, kOut)});
    }
    // Padded rows (RowStride.h): GPT-2's logits are 50,257 wide, padded to
    // 50,264; here 300 classes in rows of 304 (the gradient's of 308), the
    // logits' padding random, so reading it as a class shows.
    {
      Case &c = add(op + " rows padded to 304");
      int32_t l = c.buffer("logits", F, {2, 3, 300}, kIn);
      int32_t y = c.buffer("labels", DType::kI64, {2, 3}, kIn);
      c.fixed[y] = {0, 299, -100, 17, 150, 298};
      auto pad = [&](int32_t id, int64_t stride) {
        PlanBuffer &b = c.plan.buffers[id];
        b.init["row_stride"] = stride;
        b.bytes = storageElements(b) * dtypeBytes(b.dtype);
      };
      pad(l, 304);
      int32_t out = c.buffer("out", F, backward ? std::vector<int64_t>{2, 3, 300} : std::vector<int64_t>{}, kOut);
      if (backward)
        pad(out, 308);
      c.kernel(op, inputs(c, l, y), {out}, {{"class_axis", int64_t(2)}});
    }
  }
  // embeddings
  for (DType idType : {DType::kI64, DType::kI32}) {
    Case &c = add(std::string("embedding ") + dtypeName(idType) + " indices");
    int32_t t = c.buffer("table", F, {10, 8}, kIn), ids = c.buffer("ids", idType, {3, 4}, kIn);
    c.intBound[ids] = 10;
    c.exact = true;
    c.kernel("embedding", {t, ids}, {c.buffer("y", F, {3, 4, 8}, kOut)});
  }
  {
    Case &c = add("embedding f16 table");
    int32_t t = c.buffer("table", H, {7, 5}, kIn), ids = c.buffer("ids", DType::kI64, {6}, kIn);
    c.intBound[ids] = 7;
    c.exact = true;
    c.kernel("embedding", {t, ids}, {c.buffer("y", H, {6, 5}, kOut)});
  }
  {
    Case &c = add("embedding_backward repeated indices");
    int32_t dy = c.buffer("dy", F, {4, 5, 8}, kIn), ids = c.buffer("ids", DType::kI64, {4, 5}, kIn);
    c.intBound[ids] = 6; // 20 indices into 6 rows: many repeats
    c.exact = true;
    c.kernel("embedding_backward", {dy, ids}, {c.buffer("dt", F, {6, 8}, kOut)});
  }
  // 70 rows: three groups of 32 rows, the last one partial; d = 20:
  // columns beyond blockDim on the threaded host (16 threads). 200 indices
  // (tiles of blockDim, the last partial) keep one split: the CPU's sums bit
  // for bit. 600 indices split in three, whose partials the last split adds.
  for (int64_t n : {200, 600}) {
    Case &c = add("embedding_backward 70 rows, " + std::to_string(n) + " indices");
    int32_t dy = c.buffer("dy", F, {n, 20}, kIn), ids = c.buffer("ids", DType::kI32, {n}, kIn);
    c.intBound[ids] = 70;
    c.exact = n <= 256;
    // Re-associated float sums of about 9 terms of either sign: the error
    // is relative to the terms, and near-cancelling sums (the metric's
    // floor is 1e-4) magnify it. Measured 4.4e-5.
    c.tol = n <= 256 ? 0 : 2e-4;
    c.kernel("embedding_backward", {dy, ids}, {c.buffer("dt", F, {70, 20}, kOut)});
  }
  // The gradient's hit list (DLC_HW_EMBEDDING_HITS, 1024 entries): 4200
  // rows (132 row groups, the last partial) keep one split, and 1200 of
  // 1500 indices are row 0, so its group's hits overflow the list and each
  // column chunk lists them again a tile at a time (two tiles, the last
  // partial); rows 0 and 4199 are hit, and d = 300 makes two column chunks
  // of 256 threads on a GPU (19 of the threaded host's 16).
  {
    Case &c = add("embedding_backward 4200 rows, row 0 hit 1200 times");
    int32_t dy = c.buffer("dy", F, {1500, 300}, kIn), ids = c.buffer("ids", DType::kI64, {1500}, kIn);
    std::vector<double> idv(1500);
    for (int64_t i = 0; i < 1500; ++i)
      idv[i] = i % 5 != 4 ? 0 : i % 3 == 0 ? 4199 : (i * 677) % 4200;
    c.fixed[ids] = idv;
    c.exact = true;
    c.kernel("embedding_backward", {dy, ids}, {c.buffer("dt", F, {4200, 300}, kOut)});
  }
  // A 2-row table (BERT's token types) splits 70,000 indices 64 ways:
  // every position of a split (1093 or 1094) hits its group, more than the
  // list holds. Integer dy keeps every float sum exact, whatever the split
  // points, so the result is the CPU's bit for bit.
  {
    Case &c = add("embedding_backward 2 rows, splits over the hit list");
    int32_t dy = c.buffer("dy", F, {70000, 3}, kIn), ids = c.buffer("ids", DType::kI32, {70000}, kIn);
    std::vector<double> dyv(70000 * 3), idv(70000);
    for (size_t i = 0; i < dyv.size(); ++i)
      dyv[i] = double(int64_t(i * 7 % 5) - 2);
    for (size_t i = 0; i < idv.size(); ++i)
      idv[i] = double(i * 13 % 7 < 3);
    c.fixed[dy] = dyv;
    c.fixed[ids] = idv;
    c.exact = true;
    c.kernel("embedding_backward", {dy, ids}, {c.buffer("dt", F, {2, 3}, kOut)});
  }
  // dropout: the mask bit for bit, two steps.
  for (int64_t step : {0, 3}) {
    Case &c = add("dropout step " + std::to_string(step));
    c.step = step;
    c.exact = true;
    c.kernel("dropout", {c.buffer("x", F, {1000}, kIn)}, {c.buffer("y", F, {1000}, kOut)},
             {{"rate", 0.3}, {"seed", int64_t(42)}});
  }
  // Rank 3's masks, which the hand-written kernel draws from the dropout
  // counter (the step plus the rank's offset) as the executor passes it.
  {
    Case &c = add("dropout rank 3 step 2");
    c.step = 2;
    c.rank = 3;
    c.exact = true;
    c.kernel("dropout", {c.buffer("x", F, {1000}, kIn)}, {c.buffer("y", F, {1000}, kOut)},
             {{"rate", 0.3}, {"seed", int64_t(42)}});
  }
  {
    Case &c = add("dropout f16");
    c.exact = true;
    c.kernel("dropout", {c.buffer("x", H, {257}, kIn)}, {c.buffer("y", H, {257}, kOut)},
             {{"rate", 0.5}, {"seed", int64_t(7)}});
  }
  // pooling: padding, ceil mode, count_include_pad off, overlapping windows.
  struct PoolShape {
    std::string label;
    std::vector<int64_t> in, out;
    PlanAttrs attrs;
  };
  std::vector<PoolShape> pools = {
      {"k3 s2 p1", {2, 3, 9, 9}, {2, 3, 5, 5}, pool({3, 3}, {2, 2}, {1, 1}, 0)},
      {"k3 s2 ceil", {1, 2, 8, 8}, {1, 2, 4, 4}, pool({3, 3}, {2, 2}, {0, 0}, 1)},
      {"k2x3 s1x2 p1 ceil, no pad count", {1, 2, 7, 6}, {1, 2, 8, 4},
       pool({2, 3}, {1, 2}, {1, 1}, 1, 0)},
  };
  // Each also channels last (dlc-convert-layout's NHWC pooling), against
  // the CPU's, which runs it through NCHW copies.
  for (const PoolShape &nchw : pools) {
    PoolShape nhwc{nchw.label + " NHWC", nhwcOf(nchw.in), nhwcOf(nchw.out), nchw.attrs};
    nhwc.attrs["layout"] = std::string("NHWC");
    for (const PoolShape &s : {nchw, nhwc})
      for (std::string kind : {"max", "avg"}) {
        {
          Case &c = add(kind + "_pool2d " + s.label);
          c.exact = kind == "max";
          c.kernel(kind + "_pool2d", {c.buffer("x", F, s.in, kIn)},
                   {c.buffer("y", F, s.out, kOut)}, s.attrs);
        }
        {
          Case &c = add(kind + "_pool2d_backward " + s.label);
          int32_t dy = c.buffer("dy", F, s.out, kIn);
          std::vector<int32_t> in = {dy};
          if (kind == "max")
            in.push_back(c.buffer("x", F, s.in, kIn));
          c.kernel(kind + "_pool2d_backward", in, {c.buffer("dx", F, s.in, kOut)}, s.attrs);
        }
      }
  }
  {
    // Ties: integer values in a small range, so windows hold equal maxima.
    Case &c = add("max_pool2d_backward ties");
    int32_t dy = c.buffer("dy", F, {1, 1, 4, 4}, kIn), x = c.buffer("x", F, {1, 1, 9, 9}, kIn);
    std::vector<double> xs(81);
    for (int i = 0; i < 81; ++i)
      xs[i] = (i * 7) % 3;
    c.fixed[x] = xs;
    c.kernel("max_pool2d_backward", {dy, x}, {c.buffer("dx", F, {1, 1, 9, 9}, kOut)},
             pool({3, 3}, {2, 2}, {0, 0}, 0));
  }
  // Planes of several 16 x 32 tiles (edge tiles partial), ties across tile
  // borders: the tiled gradient's shared windows; channels last too, where
  // a tile's pixels are C apart.
  for (bool nhwc : {false, true}) {
    Case &c = add(std::string("max_pool2d_backward ") + (nhwc ? "NHWC " : "") +
                  "tiles of a 37x70 plane, ties");
    auto shape = [&](int64_t h, int64_t w) {
      return nhwc ? std::vector<int64_t>{1, h, w, 3} : std::vector<int64_t>{1, 3, h, w};
    };
    int32_t dy = c.buffer("dy", F, shape(19, 35), kIn), x = c.buffer("x", F, shape(37, 70), kIn);
    std::vector<double> xs(3 * 37 * 70);
    for (size_t i = 0; i < xs.size(); ++i)
      xs[i] = double((i * 7) % 5);
    c.fixed[x] = xs;
    PlanAttrs attrs = pool({3, 3}, {2, 2}, {1, 1}, 0);
    if (nhwc)
      attrs["layout"] = std::string("NHWC");
    c.kernel("max_pool2d_backward", {dy, x}, {c.buffer("dx", F, shape(37, 70), kOut)}, attrs);
  }
  {
    // Channels last with more channels than a tile's 32: two images, a
    // partial channel tile (37 = 32 + 5) and partial pixel tiles (4 x 8,
    // and 16 x 8 in the 32-bit kernel); ties.
    Case &c = add("max_pool2d_backward NHWC channel tiles of 37 channels, ties");
    int32_t dy = c.buffer("dy", F, {2, 7, 6, 37}, kIn), x = c.buffer("x", F, {2, 13, 11, 37}, kIn);
    std::vector<double> xs(2 * 13 * 11 * 37);
    for (size_t i = 0; i < xs.size(); ++i)
      xs[i] = double((i * 11) % 4);
    c.fixed[x] = xs;
    PlanAttrs attrs = pool({3, 3}, {2, 2}, {1, 1}, 0);
    attrs["layout"] = std::string("NHWC");
    c.kernel("max_pool2d_backward", {dy, x}, {c.buffer("dx", F, {2, 13, 11, 37}, kOut)}, attrs);
  }
  // The 32-bit NHWC gradient (dlc_hw_max_pool2d_backward_nhwc), ResNet's
  // 3x3 windows of stride 2: 37 x 21 pixels in 16 x 8 tiles, partial at
  // both edges, 40 channels (a full and a partial channel tile), two
  // images, ties, NaN (the CPU's rule: it wins, the last of several in a
  // window) and -inf in some windows; amp's data, f16 with 64 channels
  // (two channel tiles), ties.
  struct NhwcPool {
    std::string label;
    DType t;
    std::vector<int64_t> dy, x;
    std::function<double(size_t)> value; // x's element i
  };
  for (const NhwcPool &s :
       {NhwcPool{"16x8 tiles of 40 channels, ties, NaN, -inf", F, {2, 19, 11, 40}, {2, 37, 21, 40},
                 [](size_t i) {
                   return i % 131 == 0 || i % 131 == 40 ? NAN
                          : i % 97 == 0                 ? -INFINITY
                                                        : double((i * 13) % 4);
                 }},
        NhwcPool{"f16, 64 channels, ties", H, {1, 10, 9, 64}, {1, 20, 17, 64},
                 [](size_t i) { return double((i * 5) % 3); }}}) {
    Case &c = add("max_pool2d_backward NHWC " + s.label);
    int32_t dy = c.buffer("dy", s.t, s.dy, kIn), x = c.buffer("x", s.t, s.x, kIn);
    std::vector<double> xs(s.x[0] * s.x[1] * s.x[2] * s.x[3]);
    for (size_t i = 0; i < xs.size(); ++i)
      xs[i] = s.value(i);
    c.fixed[x] = xs;
    c.exact = true;
    PlanAttrs attrs = pool({3, 3}, {2, 2}, {1, 1}, 0);
    attrs["layout"] = std::string("NHWC");
    c.kernel("max_pool2d_backward", {dy, x}, {c.buffer("dx", s.t, s.x, kOut)}, attrs);
  }
  {
    // Channels last, windows beyond shared memory: 13 x 17 windows of 5
    // channels cover a 4 x 8 tile of the general kernel, 25 x 17 a 16 x 8
    // tile of the 32-bit one.
    Case &c = add("max_pool2d_backward NHWC windows beyond shared memory");
    int32_t dy = c.buffer("dy", F, {1, 11, 31, 5}, kIn), x = c.buffer("x", F, {1, 20, 40, 5}, kIn);
    PlanAttrs attrs = pool({10, 10}, {1, 1}, {0, 0}, 0);
    attrs["layout"] = std::string("NHWC");
    c.kernel("max_pool2d_backward", {dy, x}, {c.buffer("dx", F, {1, 20, 40, 5}, kOut)}, attrs);
  }
  {
    // 10 x 10 windows of stride 1 over a 20 x 40 plane: 25 x 41 windows
    // cover a tile, more than shared memory holds, so each input finds its
    // windows' maxima itself.
    Case &c = add("max_pool2d_backward windows beyond shared memory");
    int32_t dy = c.buffer("dy", F, {1, 1, 11, 31}, kIn), x = c.buffer("x", F, {1, 1, 20, 40}, kIn);
    c.kernel("max_pool2d_backward", {dy, x}, {c.buffer("dx", F, {1, 1, 20, 40}, kOut)},
             pool({10, 10}, {1, 1}, {0, 0}, 0));
  }
  // optimizers: first and later steps, nesterov, the loss-scale status
  // (a multiplier, then a skipped step).
  struct Opt {
    std::string label;
    int64_t step;
    std::vector<double> status; // empty: no status operand
  };
  for (const Opt &o : {Opt{"step 0", 0, {}}, Opt{"step 2, status 0.5", 2, {0.5, 0}},
                       Opt{"skipped", 1, {0.25, 1}}}) {
    for (int64_t nesterov : {0, 1}) {
      Case &c = add("sgd_update " + o.label + (nesterov ? ", nesterov" : ""));
      c.step = o.step;
      std::vector<int32_t> in = {c.buffer("p", F, {37}, kIn), c.buffer("g", F, {37}, kIn),
                                 c.buffer("m", F, {37}, kIn)};
      if (!o.status.empty()) {
        in.push_back(c.buffer("status", F, {2}, kIn));
        c.fixed[in.back()] = o.status;
      }
      c.kernel("sgd_update", in, {c.buffer("p2", F, {37}, kOut), c.buffer("m2", F, {37}, kOut)},
               {{"lr", 0.1}, {"momentum", 0.9}, {"weight_decay", 1e-2}, {"nesterov", nesterov}});
    }
    Case &c = add("adamw_update " + o.label);
    c.step = o.step;
    int32_t v = c.buffer("v", F, {37}, kIn);
    std::vector<double> vs(37);
    for (int i = 0; i < 37; ++i)
      vs[i] = 0.01 * (i + 1); // the second moment is never negative
    c.fixed[v] = vs;
    std::vector<int32_t> in = {c.buffer("p", F, {37}, kIn), c.buffer("g", F, {37}, kIn),
                               c.buffer("m", F, {37}, kIn), v};
    if (!o.status.empty()) {
      in.push_back(c.buffer("status", F, {2}, kIn));
      c.fixed[in.back()] = o.status;
    }
    c.kernel("adamw_update", in,
             {c.buffer("p2", F, {37}, kOut), c.buffer("m2", F, {37}, kOut),
              c.buffer("v2", F, {37}, kOut)},
             {{"lr", 1e-3}, {"weight_decay", 0.1}});
  }
  // the dynamic loss scale: an overflow backs off, the interval's last
  // good step grows, another good step counts.
  for (const auto &[label, good, overflow] :
       {std::tuple<const char *, double, double>{"overflow", 3, 1}, {"growth", 4, 0},
        {"count", 1, 0}}) {
    Case &c = add(std::string("update_loss_scale ") + label);
    int32_t scale = c.buffer("scale", F, {1}, kIn), steps = c.buffer("good", F, {1}, kIn),
            status = c.buffer("status", F, {2}, kIn);
    c.fixed[scale] = {65536};
    c.fixed[steps] = {good};
    c.fixed[status] = {1.0 / 65536, overflow};
    c.exact = true;
    c.kernel("update_loss_scale", {scale, steps, status},
             {c.buffer("scale2", F, {1}, kOut), c.buffer("good2", F, {1}, kOut)},
             {{"growth_interval", int64_t(5)}, {"growth_factor", 4.0}});
  }
  {
    Case &c = add("sgd_update no momentum");
    c.kernel("sgd_update",
             {c.buffer("p", F, {9}, kIn), c.buffer("g", F, {9}, kIn), c.buffer("m", F, {9}, kIn)},
             {c.buffer("p2", F, {9}, kOut), c.buffer("m2", F, {9}, kOut)}, {{"lr", 0.5}});
  }
  // the loss-scale status: ten gradients (more than DlcHandArgs' pointers,
  // so through the operand table) of mixed types, clean, then with an inf
  // in the last element of the last one, a NaN in a middle one, an inf in
  // an f16 gradient; a single gradient; none.
  struct StatusCase {
    std::string label;
    int gradients;
    int bad;      // the gradient holding a non-finite value, or -1
    double value; // and that value
  };
  for (const StatusCase &s : {StatusCase{"10 gradients, finite", 10, -1, 0},
                              {"10 gradients, inf in the last", 10, 9, INFINITY},
                              {"10 gradients, NaN in bf16 gradient 4", 10, 4, NAN},
                              {"10 gradients, -inf in f16 gradient 2", 10, 2, -INFINITY},
                              {"one gradient, finite", 1, -1, 0},
                              {"no gradient", 0, -1, 0}}) {
    Case &c = add("loss_scale_status " + s.label);
    c.exact = true;
    int32_t scale = c.buffer("scale", F, {}, kIn);
    c.fixed[scale] = {3.0}; // 1/3 rounds: both sides divide in float
    std::vector<int32_t> in = {scale};
    for (int g = 0; g < s.gradients; ++g) {
      int64_t n = 1 + 37 * g % 53;
      DType t = g % 3 == 2 ? H : g % 3 == 1 ? B : F;
      in.push_back(c.buffer("g" + std::to_string(g), t, {n}, kIn));
      if (g == s.bad) {
        std::vector<double> values(n, 0.5);
        values[n - 1] = s.value;
        c.fixed[in.back()] = values;
      }
    }
    c.kernel("loss_scale_status", in, {c.buffer("status", F, {2}, kOut)});
  }
  // A gradient long enough for the kernel's four loads a step (the cases
  // above are shorter than four grid strides): one non-finite value in the
  // body, in the tail, or none.
  for (int64_t at : {int64_t(-1), int64_t(1234), int64_t(2999)}) {
    Case &c = add("loss_scale_status 3001 elements, " +
                  (at < 0 ? std::string("finite") : "inf at " + std::to_string(at)));
    c.exact = true;
    int32_t scale = c.buffer("scale", F, {}, kIn);
    c.fixed[scale] = {2.0};
    int32_t g = c.buffer("g", H, {3001}, kIn);
    std::vector<double> values(3001, -0.25);
    if (at >= 0)
      values[at] = INFINITY;
    c.fixed[g] = values;
    c.kernel("loss_scale_status", {scale, g}, {c.buffer("status", F, {2}, kOut)});
  }
  // batch norm (training): 4-d, 2-d (one position per channel), 5-d, more
  // channels than blocks in the threaded run, one element per channel (the
  // unbiased running variance is NaN), mixed precision (x and y in f16 or
  // bf16, the statistics in f32), all-bf16, and channels split over blocks.
  struct BnShape {
    std::string label;
    std::vector<int64_t> x; // as stored: [n, h, w, c] when nhwc
    DType data, stats;
    bool nhwc = false;
  };
  for (const BnShape &s : {BnShape{"[4,3,5,6]", {4, 3, 5, 6}, F, F},
                           {"[6,5]", {6, 5}, F, F},
                           {"[2,3,2,3,4]", {2, 3, 2, 3, 4}, F, F},
                           {"[2,9,3,3]", {2, 9, 3, 3}, F, F},
                           {"[1,2,1,1]", {1, 2, 1, 1}, F, F},
                           {"[3,4,7,5] f16 data", {3, 4, 7, 5}, H, F},
                           {"[2,3,4,4] bf16 data", {2, 3, 4, 4}, B, F},
                           {"[2,3,5,5] all bf16", {2, 3, 5, 5}, B, B},
                           // Channels of more than 4096 elements split
                           // over blocks: 3 splits, then 2 in f16.
                           {"[4,2,64,48] three splits", {4, 2, 64, 48}, F, F},
                           {"[2,3,48,48] f16 data, two splits", {2, 3, 48, 48}, H, F},
                           // Channels last (amp-bf16's and the paddle gate's
                           // layout), with H != W != C, and split.
                           {"NHWC [3,5,4,6]", {3, 5, 4, 6}, F, F, true},
                           {"NHWC [2,4,3,5] bf16 data", {2, 4, 3, 5}, B, F, true},
                           {"NHWC [2,3,5,7] f16 data", {2, 3, 5, 7}, H, F, true},
                           {"NHWC [4,64,48,2] three splits", {4, 64, 48, 2}, F, F, true}}) {
    int64_t ch = s.nhwc ? s.x[3] : s.x[1];
    PlanAttrs layout;
    if (s.nhwc)
      layout["layout"] = std::string("NHWC");
    {
      Case &c = add("batch_norm " + s.label);
      int32_t x = c.buffer("x", s.data, s.x, kIn), g = c.buffer("g", s.stats, {ch}, kIn),
              b = c.buffer("b", s.stats, {ch}, kIn), rm = c.buffer("rm", s.stats, {ch}, kIn),
              rv = c.buffer("rv", s.stats, {ch}, kIn);
      std::vector<double> vars(ch);
      for (int64_t k = 0; k < ch; ++k)
        vars[k] = 0.5 + 0.25 * k;
      c.fixed[rv] = vars;
      c.kernel("batch_norm", {x, g, b, rm, rv},
               {c.buffer("y", s.data, s.x, kOut), c.buffer("rm2", s.stats, {ch}, kOut),
                c.buffer("rv2", s.stats, {ch}, kOut)},
               withAttrs(layout, {{"epsilon", 1e-3}, {"momentum", 0.2}}));
    }
    {
      Case &c = add("batch_norm_backward " + s.label);
      int32_t dy = c.buffer("dy", s.data, s.x, kIn), x = c.buffer("x", s.data, s.x, kIn),
              g = c.buffer("g", s.stats, {ch}, kIn);
      c.kernel("batch_norm_backward", {dy, x, g},
               {c.buffer("dx", s.data, s.x, kOut), c.buffer("dg", s.stats, {ch}, kOut),
                c.buffer("db", s.stats, {ch}, kOut)},
               withAttrs(layout, {{"epsilon", 1e-3}}));
    }
  }
  {
    Case &c = add("batch_norm default attributes");
    int32_t x = c.buffer("x", F, {5, 2, 4}, kIn);
    std::vector<int32_t> in = {x};
    for (const char *name : {"g", "b", "rm", "rv"})
      in.push_back(c.buffer(name, F, {2}, kIn));
    c.fixed[in[4]] = {1.0, 2.0};
    c.kernel("batch_norm", in,
             {c.buffer("y", F, {5, 2, 4}, kOut), c.buffer("rm2", F, {2}, kOut),
              c.buffer("rv2", F, {2}, kOut)});
  }
  // bilinear resize: up, down, mixed, to 1x1 (align_corners' scale 0),
  // from 1 row, each with align_corners off and on; half types.
  struct ResizeShape {
    std::string label;
    std::vector<int64_t> in, out;
    DType t;
  };
  for (const ResizeShape &s :
       {ResizeShape{"up [2,3,4,5]->[7,9]", {2, 3, 4, 5}, {2, 3, 7, 9}, F},
        {"down [1,2,9,7]->[4,3]", {1, 2, 9, 7}, {1, 2, 4, 3}, F},
        {"mixed [2,1,3,8]->[8,3]", {2, 1, 3, 8}, {2, 1, 8, 3}, F},
        {"x2 [1,3,5,5]->[10,10]", {1, 3, 5, 5}, {1, 3, 10, 10}, F},
        {"to 1x1 [1,2,3,4]->[1,1]", {1, 2, 3, 4}, {1, 2, 1, 1}, F},
        {"from one row [1,2,1,4]->[3,6]", {1, 2, 1, 4}, {1, 2, 3, 6}, F},
        {"f16 [2,2,5,4]->[8,7]", {2, 2, 5, 4}, {2, 2, 8, 7}, H},
        {"bf16 [1,2,6,6]->[4,9]", {1, 2, 6, 6}, {1, 2, 4, 9}, B}}) {
    for (int64_t align : {0, 1}) {
      std::string suffix = s.label + (align ? " align_corners" : "");
      {
        Case &c = add("resize_bilinear " + suffix);
        c.kernel("resize_bilinear", {c.buffer("x", s.t, s.in, kIn)},
                 {c.buffer("y", s.t, s.out, kOut)}, {{"align_corners", align}});
      }
      {
        Case &c = add("resize_bilinear_backward " + suffix);
        c.kernel("resize_bilinear_backward", {c.buffer("dy", s.t, s.out, kIn)},
                 {c.buffer("dx", s.t, s.in, kOut)}, {{"align_corners", align}});
      }
      // Channels last (dlc-convert-layout's NHWC resize), against the
      // CPU's, which runs it through NCHW copies: the same values.
      if (s.t != F)
        continue;
      PlanAttrs attrs = {{"align_corners", align}, {"layout", std::string("NHWC")}};
      {
        Case &c = add("resize_bilinear NHWC " + suffix);
        c.kernel("resize_bilinear", {c.buffer("x", s.t, nhwcOf(s.in), kIn)},
                 {c.buffer("y", s.t, nhwcOf(s.out), kOut)}, attrs);
      }
      {
        Case &c = add("resize_bilinear_backward NHWC " + suffix);
        c.kernel("resize_bilinear_backward", {c.buffer("dy", s.t, nhwcOf(s.out), kIn)},
                 {c.buffer("dx", s.t, nhwcOf(s.in), kOut)}, attrs);
      }
    }
  }
  // attention and its gradient (the flash kernels): head dimensions 32, 64
  // and 128, sequence lengths that are not multiples of the tiles (32 / 16
  // queries, 16 keys, 8 queries in the gradient's first phase), causal with
  // more keys than queries and with more queries than keys (the first rows
  // see no key: o is NaN and lse -inf, as the softmax of a row of -inf), a
  // BERT-style [N, 1, 1, Sk] mask and a full [Sq, Sk] one, dropout, f16 and
  // bf16 operands.
  struct AttentionShape {
    std::string label;
    std::vector<int64_t> batch;
    int64_t sq, sk, d, dv;
    DType t;
    bool causal;
    std::vector<int64_t> mask; // empty: none
    double rate;
  };
  for (const AttentionShape &s : {
           AttentionShape{"[2,3] x 5 q x 7 k, d 32", {2, 3}, 5, 7, 32, 32, F, false, {}, 0},
           {"[2,2] x 37 q x 45 k, d 64, causal", {2, 2}, 37, 45, 64, 64, F, true, {}, 0},
           {"[2,2] x 50 q x 33 k, d 128, [2,1,1,33] mask, dropout", {2, 2}, 50, 33, 128, 128, F,
            false, {2, 1, 1, 33}, 0.2},
           {"[3] x 20 q x 20 k, d 32 dv 16, causal, [20,20] mask, dropout", {3}, 20, 20, 32, 16, F,
            true, {20, 20}, 0.3},
           {"[2] x 21 q x 9 k, d 32, causal, rows without keys", {2}, 21, 9, 32, 32, F, true, {},
            0.1},
           {"[2,2] x 33 q x 40 k, d 64, f16, causal, dropout", {2, 2}, 33, 40, 64, 64, H, true, {},
            0.1},
           {"[1,3] x 17 q x 17 k, d 128, bf16, [1,17] mask", {1, 3}, 17, 17, 128, 128, B, false,
            {1, 17}, 0},
           // BERT-base's and GPT-2's attention as the xla plans hold them
           // (fewer heads; GPT-2's sequence cut to 200, off the tiles).
           {"BERT [2,4] x 128 q x 128 k, d 64, bf16, [2,1,1,128] mask, dropout", {2, 4}, 128, 128,
            64, 64, B, false, {2, 1, 1, 128}, 0.1},
           {"GPT-2 [1,2] x 200 q x 200 k, d 64, f16, causal, dropout", {1, 2}, 200, 200, 64, 64, H,
            true, {}, 0.1},
           // The tensor-core kernels' edges: the smallest head, a value
           // head unlike the query head, more queries than keys (rows
           // without keys) and a full mask with batch strides.
           {"[3] x 70 q x 45 k, d 16 dv 48, bf16, causal, dropout", {3}, 70, 45, 16, 48, B, true,
            {}, 0.2},
           {"[1,2] x 9 q x 100 k, d 32, f16, [1,2,9,100] mask", {1, 2}, 9, 100, 32, 32, H, false,
            {1, 2, 9, 100}, 0}}) {
    auto dims = [&](int64_t rows, int64_t cols) {
      std::vector<int64_t> v = s.batch;
      v.push_back(rows);
      if (cols > 0)
        v.push_back(cols);
      return v;
    };
    PlanAttrs attrs = {{"scale", 1.0 / std::sqrt(double(s.d))},
                       {"causal", int64_t(s.causal)},
                       {"dropout_rate", s.rate},
                       {"seed", int64_t(17)}};
    for (bool backward : {false, true}) {
      Case &c = add(std::string(backward ? "attention_backward " : "attention ") + s.label);
      c.step = 2;
      c.normwise = true;
      int32_t q = c.buffer("q", s.t, dims(s.sq, s.d), kIn), k = c.buffer("k", s.t, dims(s.sk, s.d), kIn),
              v = c.buffer("v", s.t, dims(s.sk, s.dv), kIn);
      std::vector<int32_t> in = {q, k, v};
      if (backward) {
        in.push_back(c.buffer("o", s.t, dims(s.sq, s.dv), kIn));
        in.push_back(c.buffer("do", s.t, dims(s.sq, s.dv), kIn));
        in.push_back(c.buffer("lse", F, dims(s.sq, 0), kIn));
      }
      if (!s.mask.empty())
        in.push_back(c.buffer("m", s.t, s.mask, kIn));
      if (backward)
        c.kernel("attention_backward", in,
                 {c.buffer("dq", s.t, dims(s.sq, s.d), kOut), c.buffer("dk", s.t, dims(s.sk, s.d), kOut),
                  c.buffer("dv", s.t, dims(s.sk, s.dv), kOut)},
                 attrs);
      else
        c.kernel("attention", in,
                 {c.buffer("out", s.t, dims(s.sq, s.dv), kOut), c.buffer("lse", F, dims(s.sq, 0), kOut)},
                 attrs);
    }
  }
  // Rank 3's dropout masks.
  {
    Case &c = add("attention dropout rank 3 step 5");
    c.step = 5;
    c.normwise = true;
    c.rank = 3;
    int32_t q = c.buffer("q", F, {2, 9, 32}, kIn), k = c.buffer("k", F, {2, 19, 32}, kIn),
            v = c.buffer("v", F, {2, 19, 32}, kIn);
    c.kernel("attention", {q, k, v},
             {c.buffer("out", F, {2, 9, 32}, kOut), c.buffer("lse", F, {2, 9}, kOut)},
             {{"scale", 0.2}, {"dropout_rate", 0.4}, {"seed", int64_t(3)}});
  }
  return cases;
}

std::string tempDir() {
  char pattern[] = "/tmp/dlc-handkernels-XXXXXX";
  const char *dir = mkdtemp(pattern);
  return dir ? dir : "";
}

using HostKernel = void (*)(HandKernelArgs, const long long *);

/// A stand-in for the prelude's host layer that runs many threads: every
/// block's threads run at once as std::threads, __syncthreads() is a
/// barrier, __shared__ arrays are statics (one block runs at a time), and
/// the blocks run one after another. The kernels' block reductions, strided
/// and grid-stride loops and multi-block splits then run as on a GPU (in a
/// different interleaving), which the one-thread layer cannot show.
const std::string kThreadedLayer = std::string(R"src(#define DLC_KERNEL_PRELUDE
#include <math.h>
#include <limits>
#define __global__
#define __launch_bounds__(n)
#define __shared__ static
#define DLC_DEVICE inline
#define DLC_NEG_INF (-std::numeric_limits<float>::infinity())
)src") + dlc_test::kHostThreadLayer;

const char *const kThreadedLaunch = R"src(
struct DlcSimCall {
  void (*kernel)(DlcHandArgs, const long long *);
  DlcHandArgs a;
  const long long *step;
};
extern "C" void dlc_sim_launch(void (*kernel)(DlcHandArgs, const long long *), DlcHandArgs a,
                               const long long *step, unsigned grid, unsigned block) {
  DlcSimCall call{kernel, a, step};
  dlc_sim_grid([](void *c) {
    const DlcSimCall &call = *static_cast<const DlcSimCall *>(c);
    call.kernel(call.a, call.step);
  }, &call, grid, block);
}
)src";

using SimLaunch = void (*)(HostKernel, HandKernelArgs, const long long *, unsigned, unsigned);

} // namespace

TEST(HandKernels, SmallEmbeddingTablesSplitTheirIndices) {
  // BERT-base's three tables at batch 32 x 128: the 2 token types and 512
  // positions split the 4096 indices (their partials in scratch, 16 MiB at
  // most: 10 splits of the positions); the 30522-word table has row groups
  // enough and keeps the CPU's exact sums.
  for (auto [rows, splits, scratch] :
       {std::tuple<int64_t, int64_t, int64_t>{2, 16, 16 + 16 * 2 * 768 * 4},
        {512, 10, 64 + 10 * 512 * 768 * 4}, {30522, 1, 0}}) {
    Case c;
    int32_t dy = c.buffer("dy", DType::kF16, {4096, 768}, kIn);
    int32_t ids = c.buffer("ids", DType::kI64, {32, 128}, kIn);
    c.kernel("embedding_backward", {dy, ids}, {c.buffer("dt", DType::kF16, {rows, 768}, kOut)});
    auto hand = planHandKernel(c.plan, c.theKernel());
    ASSERT_TRUE(hand.isOk()) << hand.status().toString();
    EXPECT_EQ(hand->args.i[3], splits) << rows << " rows";
    EXPECT_EQ(hand->scratchBytes, scratch) << rows << " rows";
    EXPECT_EQ(hand->blocks, (rows + 31) / 32 * splits) << rows << " rows";
  }
}

TEST(HandKernels, NhwcMaxPoolGradientsUnder2To31ElementsTakeTheNarrowKernel) {
  // ResNet-50's stem at batch 256 (x [256, 112, 112, 64] NHWC, 206 M
  // elements): the 32-bit kernel, one block per 16 x 8 pixels of 32
  // channels. The same stem NCHW, and NHWC at batch 4096 (3.3 G elements,
  // past 32-bit indices): the general kernel and its tiles (16 x 32 pixels
  // of a plane; 4 x 8 pixels of 32 channels).
  for (auto [batch, nhwc, name, blocks] :
       {std::tuple<int64_t, bool, const char *, int64_t>{
            256, true, "dlc_hw_max_pool2d_backward_nhwc", 256 * 2 * 7 * 14},
        {256, false, "dlc_hw_max_pool2d_backward", 256 * 64 * 7 * 4},
        {4096, true, "dlc_hw_max_pool2d_backward", 4096 * 2 * 28 * 14}}) {
    Case c;
    auto shape = [&](int64_t hw) {
      return nhwc ? std::vector<int64_t>{batch, hw, hw, 64} : std::vector<int64_t>{batch, 64, hw, hw};
    };
    PlanAttrs attrs = pool({3, 3}, {2, 2}, {1, 1}, 0);
    if (nhwc)
      attrs["layout"] = std::string("NHWC");
    int32_t dy = c.buffer("dy", DType::kF16, shape(56), kIn), x = c.buffer("x", DType::kF16, shape(112), kIn);
    c.kernel("max_pool2d_backward", {dy, x}, {c.buffer("dx", DType::kF16, shape(112), kOut)}, attrs);
    auto hand = planHandKernel(c.plan, c.theKernel());
    ASSERT_TRUE(hand.isOk()) << hand.status().toString();
    EXPECT_EQ(hand->name, name) << batch << (nhwc ? " NHWC" : " NCHW");
    EXPECT_EQ(hand->blocks, blocks) << batch << (nhwc ? " NHWC" : " NCHW");
  }
}

TEST(HandKernels, HalfAttentionWithHeadsUpTo64TakesTheTensorCores) {
  // GPT-2's attention ([8, 12] x 1024 q x 1024 k, d 64) in f16 and bf16:
  // the tensor-core kernels, 64-query forward tiles and 32-key / 32-query
  // backward tiles. f32, a head of 128 or of 40, and DLC_CUDA_ATTENTION=simt:
  // the SIMT kernels.
  struct Want {
    DType t;
    int64_t d;
    bool simtByEnv;
    const char *forward, *backward;
    int64_t forwardBlocks, backwardBlocks;
  };
  const int64_t heads = 8 * 12;
  for (const Want &w : {
           Want{DType::kF16, 64, false, "dlc_hw_attention_tc_f16",
                "dlc_hw_attention_backward_tc_f16", heads * 16, heads * 32},
           {DType::kBF16, 64, false, "dlc_hw_attention_tc_bf16",
            "dlc_hw_attention_backward_tc_bf16", heads * 16, heads * 32},
           {DType::kF32, 64, false, "dlc_hw_attention", "dlc_hw_attention_backward", heads * 32,
            heads * 64},
           {DType::kBF16, 128, false, "dlc_hw_attention", "dlc_hw_attention_backward", heads * 32,
            heads * 64},
           {DType::kF16, 40, false, "dlc_hw_attention", "dlc_hw_attention_backward", heads * 32,
            heads * 64},
           {DType::kF16, 64, true, "dlc_hw_attention", "dlc_hw_attention_backward", heads * 32,
            heads * 64}}) {
    if (w.simtByEnv)
      setenv("DLC_CUDA_ATTENTION", "simt", 1);
    for (bool backward : {false, true}) {
      Case c;
      std::vector<int64_t> x = {8, 12, 1024, w.d};
      int32_t q = c.buffer("q", w.t, x, kIn), k = c.buffer("k", w.t, x, kIn),
              v = c.buffer("v", w.t, x, kIn), lse = c.buffer("lse", DType::kF32, {8, 12, 1024}, kIn);
      PlanAttrs attrs = {{"scale", 0.125}, {"causal", int64_t(1)}};
      if (backward)
        c.kernel("attention_backward",
                 {q, k, v, c.buffer("o", w.t, x, kIn), c.buffer("do", w.t, x, kIn), lse},
                 {c.buffer("dq", w.t, x, kOut), c.buffer("dk", w.t, x, kOut),
                  c.buffer("dv", w.t, x, kOut)},
                 attrs);
      else
        c.kernel("attention", {q, k, v}, {c.buffer("o", w.t, x, kOut), lse}, attrs);
      auto hand = planHandKernel(c.plan, c.theKernel());
      ASSERT_TRUE(hand.isOk()) << hand.status().toString();
      EXPECT_EQ(hand->name, backward ? w.backward : w.forward) << dtypeName(w.t) << " d " << w.d;
      EXPECT_EQ(hand->blocks, backward ? w.backwardBlocks : w.forwardBlocks)
          << dtypeName(w.t) << " d " << w.d;
      EXPECT_EQ(hand->blockSize, DLC_ATTENTION_THREADS);
    }
    unsetenv("DLC_CUDA_ATTENTION");
  }
}

TEST(HandKernels, SoftmaxLinesTakeTheThreadsTheyNeed) {
  // BERT's attention scores: lines of 128 keys get 128 threads; a 1000-
  // class line 256; a 5-element line one warp.
  for (auto [keys, threads] : {std::pair<int64_t, int>{128, 128}, {1000, 256}, {5, 32}}) {
    Case c;
    int32_t x = c.buffer("x", DType::kF16, {2, 12, 7, keys}, kIn);
    c.kernel("softmax", {x}, {c.buffer("y", DType::kF16, {2, 12, 7, keys}, kOut)});
    auto hand = planHandKernel(c.plan, c.theKernel());
    ASSERT_TRUE(hand.isOk()) << hand.status().toString();
    EXPECT_EQ(hand->blockSize, threads) << keys << " keys";
    EXPECT_EQ(hand->blocks, 2 * 12 * 7);
  }
}

TEST(HandKernels, CrossEntropyRunsABlockPerPosition) {
  // GPT-2 small's 8192 positions of 50,257 classes: a block each (256
  // blocks streamed its logits at a fraction of the bandwidth), 256
  // threads; ResNet-50's 256 positions of 1000 classes the same; 40,000
  // positions of 10 classes stop at the cap, one warp each.
  for (auto [positions, classes, blocks, threads] :
       {std::tuple<int64_t, int64_t, int64_t, int>{8192, 50257, 8192, 256},
        {256, 1000, 256, 256},
        {40000, 10, 32768, 32}}) {
    for (bool backward : {false, true}) {
      Case c;
      int32_t l = c.buffer("logits", DType::kBF16, {positions, classes}, kIn);
      int32_t y = c.buffer("labels", DType::kI64, {positions}, kIn);
      std::vector<int32_t> in = {l, y};
      if (backward)
        in.insert(in.begin(), c.buffer("dloss", DType::kF32, {}, kIn));
      c.kernel(backward ? "softmax_cross_entropy_backward" : "softmax_cross_entropy", in,
               {c.buffer("out", DType::kF32,
                         backward ? std::vector<int64_t>{positions, classes} : std::vector<int64_t>{},
                         kOut)});
      auto hand = planHandKernel(c.plan, c.theKernel());
      ASSERT_TRUE(hand.isOk()) << hand.status().toString();
      EXPECT_EQ(hand->blockSize, threads) << classes << " classes";
      // The gradient has no partials to combine, so no cap.
      EXPECT_EQ(hand->blocks, backward ? positions : blocks) << positions << " positions";
    }
  }
}

TEST(HandKernels, BatchNormSplitsChannelsOverBlocksInPhases) {
  // ResNet-50's stem at batch 256: 64 channels of 256 x 112 x 112 elements
  // split 8 ways (512 blocks); the test's [4,2,64,48] 3 ways; a small
  // tensor keeps one block per channel. Forward 3 phases, backward 4.
  for (auto [shape, splits] : {std::pair<std::vector<int64_t>, int64_t>{{256, 64, 112, 112}, 8},
                               {{4, 2, 64, 48}, 3},
                               {{2, 9, 3, 3}, 1}}) {
    for (bool backward : {false, true}) {
      Case c;
      int64_t ch = shape[1];
      int32_t x = c.buffer("x", DType::kF32, shape, kIn);
      std::vector<int32_t> stats;
      for (const char *name : {"g", "b", "rm", "rv", "rm2", "rv2"})
        stats.push_back(c.buffer(name, DType::kF32, {ch}, kIn));
      if (backward)
        c.kernel("batch_norm_backward", {x, x, stats[0]},
                 {c.buffer("dx", DType::kF32, shape, kOut), stats[4], stats[5]});
      else
        c.kernel("batch_norm", {x, stats[0], stats[1], stats[2], stats[3]},
                 {c.buffer("y", DType::kF32, shape, kOut), stats[4], stats[5]});
      auto hand = planHandKernel(c.plan, c.theKernel());
      ASSERT_TRUE(hand.isOk()) << hand.status().toString();
      EXPECT_EQ(hand->args.i[3], splits);
      EXPECT_EQ(hand->blocks, ch * splits);
      EXPECT_EQ(hand->phases, backward ? 4 : 3);
      EXPECT_EQ(hand->scratchBytes, 16 + 4 * ch * splits * 8);
    }
  }
}

TEST(HandKernels, RegistryCoversTheOpsAndRefusesWithAReason) {
  std::set<std::string> ops(handKernelOps().begin(), handKernelOps().end());
  for (const char *op : {"softmax", "softmax_backward", "layer_norm", "layer_norm_backward",
                         "softmax_cross_entropy", "softmax_cross_entropy_backward", "embedding",
                         "embedding_backward", "dropout", "max_pool2d", "max_pool2d_backward",
                         "avg_pool2d", "avg_pool2d_backward", "sgd_update", "adamw_update",
                         "update_loss_scale", "loss_scale_status", "batch_norm",
                         "batch_norm_backward", "resize_bilinear", "resize_bilinear_backward",
                         "attention", "attention_backward"})
    EXPECT_TRUE(ops.count(op)) << op;
  for (const Case &c : allCases()) {
    auto hand = planHandKernel(c.plan, c.theKernel());
    EXPECT_TRUE(hand.isOk()) << c.label << ": " << hand.status().toString();
  }
  Case c;
  int32_t x = c.buffer("x", DType::kF32, {2, 3, 4}, kIn);
  c.kernel("conv2d", {x}, {c.buffer("y", DType::kF32, {2, 3, 4}, kOut)});
  c.kernel("max_pool2d", {x}, {c.plan.kernels[0].outputs[0]});
  c.kernel("dropout", {c.buffer("i", DType::kI64, {4}, kIn)},
           {c.buffer("o", DType::kI64, {4}, kOut)}, {{"rate", 0.1}});
  int32_t v = c.buffer("v", DType::kF32, {3}, kIn), s = c.buffer("s", DType::kF32, {1}, kOut);
  c.kernel("batch_norm", {v, v, v, v, v}, {v, v, v});
  c.kernel("batch_norm", {x, v, v, v, c.buffer("r", DType::kF32, {4}, kIn)}, {x, v, v});
  c.kernel("batch_norm_backward", {x, x, v}, {c.buffer("di", DType::kI64, {2, 3, 4}, kOut), v, v});
  c.kernel("resize_bilinear", {x}, {x}, {{"align_corners", int64_t(1)}});
  c.kernel("loss_scale_status", {v, x}, {s});
  c.kernel("loss_scale_status", {v, c.buffer("ig", DType::kI32, {4}, kIn)},
           {c.buffer("s2", DType::kF32, {2}, kOut)});
  int32_t q = c.buffer("q", DType::kF32, {2, 4, 160}, kIn);
  c.kernel("attention", {q, q, q},
           {c.buffer("ao", DType::kF32, {2, 4, 160}, kOut), c.buffer("al", DType::kF32, {2, 4}, kOut)});
  int32_t hq = c.buffer("hq", DType::kF16, {2, 4, 64}, kIn);
  c.kernel("attention", {hq, hq, hq},
           {c.buffer("ho", DType::kF16, {2, 4, 64}, kOut), c.buffer("hl", DType::kF16, {2, 4}, kOut)});
  c.kernel("attention", {hq, hq, hq, c.buffer("am", DType::kF16, {3, 4}, kIn)},
           {c.buffer("mo", DType::kF16, {2, 4, 64}, kOut), c.buffer("ml", DType::kF32, {2, 4}, kOut)});
  const char *reasons[] = {"no hand-written kernel",
                           "expects a 4-d input",
                           "is i64, not a float type",
                           "expects an input of rank >= 2",
                           "buffer 'r' does not hold one value per channel",
                           "buffer 'di' is i64, not a float type",
                           "expects a 4-d input and output",
                           "one 2-element status",
                           "buffer 'ig' is i32, not a float type",
                           "a head dimension past 128",
                           "expects lse as [B..., Sq] f32",
                           "the mask does not broadcast to [B..., Sq, Sk]"};
  ASSERT_EQ(std::size(reasons), c.plan.kernels.size());
  for (size_t k = 0; k < c.plan.kernels.size(); ++k) {
    auto hand = planHandKernel(c.plan, c.plan.kernels[k]);
    ASSERT_FALSE(hand.isOk()) << c.plan.kernels[k].op;
    EXPECT_NE(hand.status().message().find(reasons[k]), std::string::npos)
        << hand.status().message();
  }
}

#ifdef DLC_HOST_CXX
namespace {
/// Compiles `text` with the host compiler into a shared library in a fresh
/// directory and loads it.
void loadOnHost(const std::string &text, const std::string &flags, void *&library) {
  std::string dir = tempDir();
  ASSERT_FALSE(dir.empty());
  {
    std::ofstream(dir + "/hand.cpp") << text;
  }
  std::string command = std::string(DLC_HOST_CXX) + " -std=c++17 -O1 -shared -fPIC " + flags +
                        " -o " + dir + "/hand.so " + dir + "/hand.cpp 2> " + dir + "/log.txt";
  if (std::system(command.c_str()) != 0)
    FAIL() << "the host compiler refused the kernels:\n" << std::ifstream(dir + "/log.txt").rdbuf();
  library = dlopen((dir + "/hand.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
}

/// Runs every case's kernel from `library` through `run` on inputs drawn
/// with `seed` (its operand table, if it has one, in host memory as the
/// executor lays it out on the device) and compares its outputs with the
/// CPU reference; prints the worst error by op under `label`.
void checkEveryCase(void *library, const char *label, unsigned seed,
                    const std::function<void(HostKernel, HandKernelArgs, const Case &,
                                             const HandKernel &)> &run) {
  std::map<std::string, double> worstByOp;
  for (const Case &c : allCases()) {
    auto hand = planHandKernel(c.plan, c.theKernel());
    ASSERT_TRUE(hand.isOk()) << c.label << ": " << hand.status().toString();
    std::vector<std::vector<float>> want = reference(c, makeInputs(c, seed));
    // A kernel the planner routes to a narrower entry point (the NHWC max
    // pooling gradient's 32-bit one) runs through the general one too,
    // which the planner keeps for tensors past 2^31 elements.
    std::vector<std::string> entries = {hand->name};
    if (hand->name != "dlc_hw_" + c.theKernel().op)
      entries.push_back("dlc_hw_" + c.theKernel().op);
    for (const std::string &entry : entries) {
      auto kernel = reinterpret_cast<HostKernel>(dlsym(library, entry.c_str()));
      ASSERT_NE(kernel, nullptr) << entry;
      Values v = makeInputs(c, seed);
      HandKernelArgs args = hand->args;
      for (size_t i = 0; i < hand->buffers.size(); ++i)
        args.p[i] = hand->buffers[i] < 0 ? nullptr : v.bytes[hand->buffers[i]].data();
      std::vector<HandOperand> table = hand->table;
      if (hand->tableSlot >= 0) {
        for (size_t i = 0; i < table.size(); ++i)
          table[i].p = v.bytes[hand->tableBuffers[i]].data();
        args.p[hand->tableSlot] = table.data();
      }
      std::vector<double> scratch((hand->scratchBytes + 7) / 8, 0.0);
      if (hand->scratchSlot >= 0)
        args.p[hand->scratchSlot] = scratch.data();
      auto launchAll = [&] {
        for (int phase = 0; phase < hand->phases; ++phase) {
          args.i[HandKernel::kPhaseSlot] = phase;
          run(kernel, args, c, *hand);
        }
      };
      launchAll();
      if (hand->scratchSlot >= 0) {
        // The kernel left its arrival counters at zero (wherever its layout
        // puts them): launched again on the same scratch, as the next step
        // or graph replay would, it writes the same outputs.
        std::map<int32_t, std::string> first;
        for (int32_t id : c.theKernel().outputs) {
          first[id] = v.bytes[id];
          std::fill(v.bytes[id].begin(), v.bytes[id].end(), '\xff'); // NaN: written again?
        }
        launchAll();
        for (int32_t id : c.theKernel().outputs)
          EXPECT_TRUE(v.bytes[id] == first[id])
              << c.label << ": a second launch on the same scratch changed '"
              << c.plan.buffers[id].name << "'";
      }
      std::vector<std::vector<float>> have(c.plan.buffers.size());
      for (int32_t id : c.theKernel().outputs)
        have[id] = decode(c.plan.buffers[id], v.bytes[id]);
      double error = maxError(c, want, have);
      std::string where = c.label + (entry == hand->name ? "" : " [" + entry + "]");
      std::cout << "[ " << label << " ] " << where << ": max error " << error
                << (c.exact ? " (bitwise)" : "") << "\n";
      EXPECT_LE(error, c.exact ? 0.0 : tolerance(c, onTensorCores(entry))) << where;
      double &worst = worstByOp[c.theKernel().op];
      worst = std::max(worst, error);
    }
  }
  for (const auto &[op, worst] : worstByOp)
    std::cout << "[ worst    ] " << op << ": " << worst << "\n";
}
} // namespace
#endif

TEST(HandKernels, EveryKernelMatchesTheCpuReferenceOnTheHost) {
#ifndef DLC_HOST_CXX
  GTEST_SKIP() << "needs the host C++ compiler's path (DLC_HOST_CXX) at build time";
#else
  std::string text;
  for (const std::string &family : handKernelFamilies())
    text += handKernelSource(family) + "\n";
  void *library = nullptr;
  ASSERT_NO_FATAL_FAILURE(loadOnHost(text, "", library));
  checkEveryCase(library, "host    ", 11,
                 [](HostKernel kernel, HandKernelArgs args, const Case &c,
                    const HandKernel &hand) {
                   long long step = stepRead(c, hand); // the kernels read it from memory
                   kernel(args, &step);
                 });
  dlclose(library);
#endif
}

TEST(HandKernels, EveryKernelMatchesTheCpuReferenceWithManyThreadsOnTheHost) {
#ifndef DLC_HOST_CXX
  GTEST_SKIP() << "needs the host C++ compiler's path (DLC_HOST_CXX) at build time";
#else
  std::string text = kThreadedLayer;
  for (const std::string &family : handKernelFamilies())
    text += handKernelSource(family) + "\n";
  text += kThreadedLaunch;
  void *library = nullptr;
  ASSERT_NO_FATAL_FAILURE(loadOnHost(text, "-pthread", library));
  auto launch = reinterpret_cast<SimLaunch>(dlsym(library, "dlc_sim_launch"));
  ASSERT_NE(launch, nullptr);
  // 16 threads a block (a power of two, as the kernels require) and up to
  // 3 blocks, so every reduction is a tree and every grid-stride loop and
  // the layer-norm gradient's column chunks split across blocks.
  checkEveryCase(library, "threaded", 13,
                 [launch](HostKernel kernel, HandKernelArgs args, const Case &c,
                          const HandKernel &hand) {
                   long long step = stepRead(c, hand);
                   launch(kernel, args, &step,
                          static_cast<unsigned>(std::min<int64_t>(hand.blocks, 3)), 16);
                 });
  dlclose(library);
#endif
}

// The kernel text lives in runtime/src/cuda/kernels/*.cuh; what NVRTC and
// the host tests compile is those files byte for byte: the common parts in
// order, then the family's own file.
TEST(HandKernels, EveryFamilySourceIsItsKernelFilesAsTheyAre) {
  auto file = [](const std::string &name) {
    std::ifstream in(std::string(DLC_SOURCE_DIR) + "/runtime/src/cuda/kernels/" + name,
                     std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const std::map<std::string, std::string> files = {
      {"softmax", "Softmax.cuh"},     {"norm", "Norm.cuh"},
      {"loss", "Loss.cuh"},           {"embedding", "Embedding.cuh"},
      {"dropout", "Dropout.cuh"},     {"pool", "Pool.cuh"},
      {"optimizer", "Optimizer.cuh"}, {"batch_norm", "BatchNorm.cuh"},
      {"resize", "Resize.cuh"},       {"attention", "Attention.cuh"}};
  ASSERT_EQ(handKernelFamilies().size(), files.size());
  std::string types = file("TypeHeaders.cuh"), begin = file("CommonBegin.cuh"),
              common = file("Common.cuh");
  ASSERT_FALSE(types.empty() || begin.empty() || common.empty()) << "no kernel files";
  for (const std::string &family : handKernelFamilies()) {
    ASSERT_TRUE(files.count(family)) << family;
    std::string source = handKernelSource(family), own = file(files.at(family));
    ASSERT_FALSE(own.empty()) << files.at(family);
    EXPECT_EQ(source.rfind(types, 0), 0u) << family << " does not start with TypeHeaders.cuh";
    size_t at = source.find(begin);
    EXPECT_NE(at, std::string::npos) << family;
    EXPECT_EQ(source.size() - own.size() - common.size(), source.rfind(common))
        << family << ": Common.cuh does not come right before " << files.at(family);
    EXPECT_EQ(source.substr(source.size() - own.size()), own)
        << family << " does not end with " << files.at(family) << " as it is";
  }
}

TEST(HandKernels, EveryFamilyCompilesWithNvrtcForSm80AndSm90) {
  if (!nvrtcBuilt())
    GTEST_SKIP() << "needs NVRTC: " << nvrtcVersionString().status().toString();
  KernelCompiler compiler("");
  for (const std::string &family : handKernelFamilies())
    for (const char *arch : {"sm_80", "sm_90"}) {
      auto cubin = compiler.compile("dlc_hw_" + family, handKernelSource(family), arch);
      ASSERT_TRUE(cubin.isOk()) << family << " " << arch << ": " << cubin.status().toString();
      EXPECT_FALSE(cubin->empty());
    }
}

TEST(HandKernels, EveryKernelMatchesTheCpuReferenceOnTheGpu) {
  auto devices = listCudaDevices();
  if (!devices.isOk())
    GTEST_SKIP() << "needs a GPU: " << devices.status().toString();
  // Batch norm twice: as routed (cuDNN for f32 / f16 data) and on the
  // hand-written kernel (DLC_CUDA_BATCH_NORM=hand-written).
  for (const Case &c : allCases())
    for (bool handBatchNorm : {false, true}) {
      bool isBatchNorm = c.theKernel().op.rfind("batch_norm", 0) == 0;
      if (handBatchNorm && !isBatchNorm)
        continue;
      if (handBatchNorm)
        setenv("DLC_CUDA_BATCH_NORM", "hand-written", 1);
      CudaOptions options;
      options.rank = static_cast<int>(c.rank);
      auto created = CudaExecutor::create(c.plan, options);
      unsetenv("DLC_CUDA_BATCH_NORM");
      ASSERT_TRUE(created.isOk()) << c.label << ": " << created.status().toString();
      CudaExecutor &gpu = **created;
      ASSERT_EQ(gpu.launchesByPath()["hand-written"] +
                    (isBatchNorm && !handBatchNorm ? gpu.launchesByPath()["cudnn"] : 0),
                1)
          << c.label << ": " << gpu.launchPaths().front().reason;
      Values v = makeInputs(c, 11);
      std::vector<std::vector<float>> want = reference(c, v);
      for (size_t i = 0; i < c.plan.buffers.size(); ++i)
        ASSERT_TRUE(
            gpu.write(c.plan.buffers[i].name, v.bytes[i].data(), v.bytes[i].size()).isOk());
      // The step index is the executor's step count: run up to the case's.
      for (int64_t s = 0; s <= c.step; ++s)
        ASSERT_TRUE(gpu.step().isOk()) << c.label;
      ASSERT_TRUE(gpu.synchronize().isOk());
      std::vector<std::vector<float>> have(c.plan.buffers.size());
      for (int32_t id : c.theKernel().outputs)
        have[id] = decode(c.plan.buffers[id], gpu.bytesOf(id));
      double error = maxError(c, want, have);
      bool cudnn = gpu.launchesByPath()["cudnn"] == 1;
      std::cout << "[ gpu      ] " << c.label << (cudnn ? " [cudnn]" : "") << ": max error "
                << error << "\n";
      // The device's exp, log and pow may differ from the host's by an ulp
      // in double, and its block reductions add in a tree of 256. cuDNN's
      // batch norm keeps float statistics: up to 7.6e-5 from the CPU's on
      // the small cases, 5.4e-4 on [4,2,64,48] (24,576 values a channel;
      // H100, cuDNN 9.19, 2026-11-25). The hand-written kernel is exact.
      auto hand = planHandKernel(c.plan, c.theKernel());
      bool tensorCores = hand.isOk() && onTensorCores(hand->name);
      EXPECT_LE(error, c.exact && !cudnn
                           ? 0.0
                           : std::max(tolerance(c, tensorCores), cudnn ? 1e-3 : 1e-5))
          << c.label;
    }
}
